package gluon_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

func TestSplitBounds(t *testing.T) {
	cases := []struct {
		n, k    int
		even    bool
		want    string
		errWant string
	}{
		{8, 4, true, "[[0 2] [2 4] [4 6] [6 8]]", ""},
		{10, 4, false, "[[0 3] [3 6] [6 8] [8 10]]", ""},
		{10, 4, true, "", "does not divide evenly"},
		{3, 4, false, "[[0 1] [1 2] [2 3]]", ""},
		{1, 1, true, "[[0 1]]", ""},
		{0, 2, false, "", "empty batch"},
		{5, 0, false, "", "0 parts"},
	}
	for _, c := range cases {
		got, err := gluon.SplitBounds(c.n, c.k, c.even)
		if c.errWant != "" {
			if err == nil || !strings.Contains(err.Error(), c.errWant) {
				t.Errorf("SplitBounds(%d, %d, %v) error %v, want %q", c.n, c.k, c.even, err, c.errWant)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != c.want {
			t.Errorf("SplitBounds(%d, %d, %v) = %v, %v; want %s", c.n, c.k, c.even, got, err, c.want)
		}
	}
}

func TestSplitAndLoad(t *testing.T) {
	batch := nd.FromSlice(ctx.CPU(0), []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 5, 2)
	parts, err := gluon.SplitAndLoad(batch, cpus(3), false)
	if err != nil {
		t.Fatal(err)
	}
	wantRows := [][]float32{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}
	for i, p := range parts {
		if p.Context() != ctx.CPU(i) || !slices.Equal(p.Float32s(), wantRows[i]) {
			t.Errorf("slice %d: %v on %v", i, p.Float32s(), p.Context())
		}
	}
	if _, err := gluon.SplitAndLoad(batch, cpus(2), true); err == nil {
		t.Error("indivisible batch with evenSplit accepted")
	}
	few, err := gluon.SplitAndLoad(nd.Ones(ctx.CPU(0), nd.Float32, 2, 3), cpus(4), false)
	if err != nil || len(few) != 2 {
		t.Errorf("2 samples over 4 contexts: %d slices, %v", len(few), err)
	}
}

func TestForEachDevice(t *testing.T) {
	seen := make([]bool, 4)
	if err := gluon.ForEachDevice(cpus(4), func(i int, dev ctx.Context) error {
		seen[i] = dev == ctx.CPU(i)
		return nil
	}); err != nil || slices.Contains(seen, false) {
		t.Fatalf("seen %v, err %v", seen, err)
	}
	// One context runs on the calling goroutine, more each on their own:
	// errors and panics come back alike.
	for _, n := range []int{1, 2, 3} {
		boom := errors.New("boom")
		if err := gluon.ForEachDevice(cpus(n), func(i int, _ ctx.Context) error {
			if i == n-1 {
				return boom
			}
			return nil
		}); !errors.Is(err, boom) {
			t.Errorf("%d contexts: error not returned: %v", n, err)
		}
		err := gluon.ForEachDevice(cpus(n), func(i int, dev ctx.Context) error {
			nd.Add(nd.Ones(dev, nd.Float32, 2), nd.Ones(ctx.CPU(9), nd.Float32, 2)) // a programmer mistake panics
			return nil
		})
		var e *nd.Error
		if !errors.As(err, &e) || e.Kind != nd.ErrContext {
			t.Errorf("%d contexts: panic in a device's function: got %v, want the *nd.Error", n, err)
		}
	}
}

// TestForEachDeviceConcurrent checks that every context's function runs at
// the same time as the others (each waits for all of them to arrive), over
// rounds that reuse the pool's goroutines, with calls nested inside a
// context's function and calls from several goroutines at once; and that
// the error returned is the first context's, in order.
func TestForEachDeviceConcurrent(t *testing.T) {
	arrive := func(n int) func() error {
		var in atomic.Int64
		return func() error {
			in.Add(1)
			deadline := time.Now().Add(10 * time.Second)
			for in.Load() < int64(n) {
				if time.Now().After(deadline) {
					return fmt.Errorf("%d of %d contexts arrived: one waits for another", in.Load(), n)
				}
				runtime.Gosched()
			}
			return nil
		}
	}
	round := func(n int, nested bool) error {
		wait := arrive(n)
		return gluon.ForEachDevice(cpus(n), func(i int, _ ctx.Context) error {
			if nested && i == 0 {
				inner := arrive(3)
				if err := gluon.ForEachDevice(cpus(3), func(int, ctx.Context) error { return inner() }); err != nil {
					return err
				}
			}
			return wait()
		})
	}
	for r := range 20 {
		if err := round(2+r%5, r%2 == 0); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- round(5, true) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	first, second := errors.New("first"), errors.New("second")
	err := gluon.ForEachDevice(cpus(4), func(i int, _ ctx.Context) error {
		switch i {
		case 1:
			time.Sleep(20 * time.Millisecond) // fails last
			return first
		case 3:
			return second
		}
		return nil
	})
	if !errors.Is(err, first) {
		t.Errorf("got %v, want the error of context 1", err)
	}
}
