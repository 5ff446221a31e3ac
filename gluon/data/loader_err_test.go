package data

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goluon/goluon/nd"
)

// failAt returns a dataset of n samples whose Get fails with err at index
// bad, after sleeping a little so that workers overlap.
func failAt(n, bad int, err error) Dataset {
	base := seqDataset(n, 2)
	return FuncDataset{N: n, Fn: func(i int, rng *rand.Rand) (Sample, error) {
		time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond)
		if i == bad {
			return Sample{}, err
		}
		return base.Fn(i, rng)
	}}
}

func TestLoaderErrorSurfaces(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		workers, prefetch int
		shuffle           bool
	}{{0, 0, false}, {1, 0, false}, {4, 0, false}, {4, 1, false}, {4, 0, true}, {8, 16, true}} {
		t.Run(fmt.Sprintf("workers=%d/prefetch=%d/shuffle=%v", c.workers, c.prefetch, c.shuffle), func(t *testing.T) {
			defer checkLeaks(t)()
			l := mustLoader(t, failAt(100, 37, boom), LoaderOpts{BatchSize: 10, Workers: c.workers, Prefetch: c.prefetch, Shuffle: c.shuffle})
			var got []hostBatchCopy
			var err error
			within(t, 10*time.Second, func() { got, err = collect(t, l) })
			if err == nil || !strings.Contains(err.Error(), "sample 37") || !errors.Is(err, boom) {
				t.Fatalf("err = %v, want one naming sample 37 and wrapping boom", err)
			}
			var se *SampleError
			if !errors.As(err, &se) || se.Index != 37 || se.Epoch != 0 {
				t.Fatalf("SampleError = %+v", se)
			}
			// The batch holding sample 37 and every later one are never delivered.
			for k, b := range got {
				for _, idx := range b.Indices {
					if idx == 37 {
						t.Fatalf("batch %d holding sample 37 was delivered", k)
					}
				}
			}
			if len(got) >= l.bs.Len(0) {
				t.Fatalf("iteration went on: %d batches", len(got))
			}
			if c.workers == 0 && !c.shuffle && len(got) != 3 {
				t.Fatalf("workers 0: %d batches before the failing one, want 3", len(got))
			}
		})
	}
}

// TestLoaderErrorInBatchOrder: with two failing samples, the error is the
// one of the earlier batch, whatever the timing and the number of workers
// (a late failure of batch 1 against an immediate one of batch 15 used to
// report batch 15's with several workers), and every batch before it is
// delivered.
func TestLoaderErrorInBatchOrder(t *testing.T) {
	base := seqDataset(100, 2)
	ds := FuncDataset{N: 100, Fn: func(i int, rng *rand.Rand) (Sample, error) {
		switch i {
		case 5:
			time.Sleep(30 * time.Millisecond)
			return Sample{}, errors.New("slow failure")
		case 60:
			return Sample{}, errors.New("fast failure")
		}
		return base.Fn(i, rng)
	}}
	for _, workers := range []int{0, 1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			defer checkLeaks(t)()
			l := mustLoader(t, ds, LoaderOpts{BatchSize: 4, Workers: workers, Prefetch: 20})
			got, err := collect(t, l)
			var se *SampleError
			if !errors.As(err, &se) || se.Index != 5 {
				t.Fatalf("err = %v, want the SampleError of sample 5", err)
			}
			if len(got) != 1 {
				t.Errorf("%d batches delivered, want 1 (the one before sample 5's)", len(got))
			}
		})
	}
}

func TestLoaderPanicBecomesError(t *testing.T) {
	cases := []struct {
		name  string
		value any
		check func(error) bool
	}{
		{"string", "kaboom", func(err error) bool { return strings.Contains(err.Error(), "panic: kaboom") }},
		{"nd error", &nd.Error{Op: "X", Kind: nd.ErrShape, Msg: "bad"}, func(err error) bool {
			return errors.Is(err, &nd.Error{Kind: nd.ErrShape})
		}},
	}
	for _, c := range cases {
		for _, workers := range []int{0, 3} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.name, workers), func(t *testing.T) {
				defer checkLeaks(t)()
				ds := TransformFirst(seqDataset(40, 2), func(x Tensor, _ *rand.Rand) (Tensor, error) {
					if x.F32[0] == 5 {
						panic(c.value)
					}
					return x, nil
				})
				l := mustLoader(t, ds, LoaderOpts{BatchSize: 4, Workers: workers})
				var err error
				within(t, 10*time.Second, func() { _, err = collect(t, l) })
				var pe *PanicError
				if err == nil || !strings.Contains(err.Error(), "sample 5") || !errors.As(err, &pe) || !c.check(err) {
					t.Fatalf("err = %v", err)
				}
				if len(pe.Stack) == 0 {
					t.Error("no stack recorded")
				}
			})
		}
	}
}

func TestLoaderShapeMismatch(t *testing.T) {
	mk := func(shape ...int) Sample {
		n := 1
		for _, s := range shape {
			n *= s
		}
		return Sample{Data: Tensor{Shape: shape, F32: make([]float32, n)}}
	}
	ds := SimpleDataset{mk(2, 3), mk(2, 3), mk(2, 3), mk(3, 2), mk(2, 3), mk(2, 3)}
	for _, workers := range []int{0, 2} {
		l := mustLoader(t, ds, LoaderOpts{BatchSize: 4, Workers: workers})
		_, err := collect(t, l)
		if err == nil || !errors.Is(err, &nd.Error{Kind: nd.ErrShape}) {
			t.Fatalf("workers %d: err = %v, want a shape error", workers, err)
		}
		for _, want := range []string{"sample 3 has shape [3 2]", "sample 0", "[2 3]"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("workers %d: %q does not mention %q", workers, err, want)
			}
		}
	}
	// Different batches may have different shapes.
	l := mustLoader(t, SimpleDataset{mk(2), mk(2), mk(5), mk(5)}, LoaderOpts{BatchSize: 2})
	if b, err := collect(t, l); err != nil || len(b) != 2 || b[1].Shape[1] != 5 {
		t.Fatalf("per-batch shapes: %v, %v", b, err)
	}
	// A tensor that does not fill its shape is reported too.
	l = mustLoader(t, SimpleDataset{{Data: Tensor{Shape: []int{4}, F32: []float32{1}}}}, LoaderOpts{BatchSize: 1})
	if _, err := collect(t, l); err == nil || !strings.Contains(err.Error(), "sample 0") {
		t.Fatalf("invalid tensor: err = %v", err)
	}
}

// slowDataset sleeps d in every Get and counts the calls.
func slowDataset(n int, d time.Duration, calls *atomic.Int64) Dataset {
	base := seqDataset(n, 2)
	return FuncDataset{N: n, Fn: func(i int, rng *rand.Rand) (Sample, error) {
		calls.Add(1)
		time.Sleep(d)
		return base.Fn(i, rng)
	}}
}

func TestLoaderCancellation(t *testing.T) {
	for _, workers := range []int{0, 1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			defer checkLeaks(t)()
			var calls atomic.Int64
			l := mustLoader(t, slowDataset(1000, time.Millisecond, &calls), LoaderOpts{BatchSize: 4, Workers: workers})
			goctx, cancel := context.WithCancel(context.Background())
			it := l.Iter(goctx)
			n := 0
			var stoppedIn time.Duration
			within(t, 10*time.Second, func() {
				for it.Next() {
					it.Batch().Release()
					if n++; n == 3 {
						cancel()
						start := time.Now()
						for it.Next() {
							it.Batch().Release()
							n++
						}
						stoppedIn = time.Since(start)
					}
				}
			})
			if stoppedIn > time.Second {
				t.Fatalf("took %v to stop after cancel", stoppedIn)
			}
			if err := it.Err(); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "epoch 0") {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if n > 3+1 {
				t.Fatalf("%d batches delivered after cancel", n-3)
			}
			it.Close()
			it.Close()
			if after := calls.Load(); after > int64(4*(3+1+2*workers+workers+2)) {
				t.Fatalf("%d samples loaded for 3 batches: workers kept going", after)
			}
		})
	}
}

func TestLoaderCancelWhileNotReading(t *testing.T) {
	defer checkLeaks(t)()
	var calls atomic.Int64
	l := mustLoader(t, slowDataset(400, 100*time.Microsecond, &calls), LoaderOpts{BatchSize: 2, Workers: 4, Prefetch: 3})
	goctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	it := l.Iter(goctx)
	<-goctx.Done() // workers fill the queue and block
	within(t, 5*time.Second, func() {
		if it.Next() {
			t.Error("Next delivered a batch after the deadline")
		}
	})
	if !errors.Is(it.Err(), context.DeadlineExceeded) {
		t.Fatalf("err = %v", it.Err())
	}
	if c := calls.Load(); c > int64(2*(3+1+4+1)) {
		t.Fatalf("%d samples loaded with prefetch 3: the queue is not bounded", c)
	}
}

func TestLoaderClose(t *testing.T) {
	for _, workers := range []int{0, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			defer checkLeaks(t)()
			var calls atomic.Int64
			l := mustLoader(t, slowDataset(200, 50*time.Microsecond, &calls), LoaderOpts{BatchSize: 4, Workers: workers})

			// Close after a partial epoch, twice.
			//lint:ignore SA1012 Iter documents nil as context.Background, which this exercises
			it := l.Iter(nil)
			for range 2 {
				if !it.Next() {
					t.Fatal(it.Err())
				}
				it.Batch().Release()
			}
			it.Close()
			it.Close()
			if it.Next() || it.Err() != nil {
				t.Fatalf("after Close: Next true or err %v", it.Err())
			}

			// Close from another goroutine unblocks a waiting Next.
			var slow atomic.Int64
			sl := mustLoader(t, slowDataset(100, 20*time.Millisecond, &slow), LoaderOpts{BatchSize: 10, Workers: workers})
			it = sl.Iter(context.Background())
			go func() {
				time.Sleep(30 * time.Millisecond)
				it.Close()
			}()
			within(t, 5*time.Second, func() {
				for it.Next() {
					it.Batch().Release()
				}
			})
			if it.Err() != nil {
				t.Fatalf("closed epoch: err %v", it.Err())
			}

			// Close after a full epoch.
			it = l.Iter(context.Background())
			for it.Next() {
				it.Batch().Release()
			}
			it.Close()
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
		})
	}
}
