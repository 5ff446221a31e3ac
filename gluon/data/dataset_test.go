package data

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

func TestArrayDataset(t *testing.T) {
	ts := []Tensor{
		{Shape: []int{2}, U8: []uint8{1, 2}},
		{Shape: []int{2}, F32: []float32{3, 4}},
	}
	ds, err := NewArrayDataset(ts, []float32{7, 8})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ds.Get(1, nil)
	if err != nil || s.Label != 8 || !reflect.DeepEqual(s.Data.F32, []float32{3, 4}) {
		t.Fatalf("Get(1) = %+v, %v", s, err)
	}
	for _, i := range []int{-1, 2} {
		if _, err := ds.Get(i, nil); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Get(%d): err = %v, want out of range", i, err)
		}
	}
	bad := []struct {
		name   string
		data   []Tensor
		labels []float32
		want   string
	}{
		{"label count", ts, []float32{1}, "2 tensors but 1 labels"},
		{"invalid tensor", []Tensor{{Shape: []int{3}, U8: []uint8{1}}}, nil, "tensor 0"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			if _, err := NewArrayDataset(c.data, c.labels); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestArrayDatasetFromND(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.Arange(dev, nd.Float32, 0, 12, 1)
	x = nd.Reshape(x, 3, 2, 2)
	cases := []struct {
		name   string
		labels *nd.NDArray
		want   []float32
		err    string
	}{
		{"flat labels", nd.FromSlice(dev, []float32{5, 6, 7}), []float32{5, 6, 7}, ""},
		{"column labels", nd.FromSlice(dev, []float32{5, 6, 7}, 3, 1), []float32{5, 6, 7}, ""},
		{"no labels", nil, []float32{0, 0, 0}, ""},
		{"wrong count", nd.FromSlice(dev, []float32{5, 6}), nil, "do not match"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds, err := NewArrayDatasetFromND(x, c.labels)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ds.Len() != 3 {
				t.Fatalf("Len = %d", ds.Len())
			}
			for i := range 3 {
				s, _ := ds.Get(i, nil)
				wantX := []float32{float32(4 * i), float32(4*i + 1), float32(4*i + 2), float32(4*i + 3)}
				if !reflect.DeepEqual(s.Data.Shape, []int{2, 2}) || !reflect.DeepEqual(s.Data.F32, wantX) || s.Label != c.want[i] {
					t.Fatalf("sample %d = %+v", i, s)
				}
			}
		})
	}
}

func TestShardCoversEverythingOnce(t *testing.T) {
	for _, length := range []int{0, 1, 7, 10, 33} {
		for _, n := range []int{1, 2, 3, 4, 8, 40} {
			ds := seqDataset(length, 1)
			seen := make([]int, length)
			prevEnd, sizes := 0, []int{}
			for i := range n {
				sh, err := Shard(ds, n, i)
				if err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, sh.Len())
				for j := range sh.Len() {
					s, err := sh.Get(j, nil)
					if err != nil {
						t.Fatal(err)
					}
					idx := int(s.Data.F32[0])
					if idx != prevEnd+j {
						t.Fatalf("len %d, %d shards: shard %d item %d is sample %d, want %d", length, n, i, j, idx, prevEnd+j)
					}
					seen[idx]++
				}
				prevEnd += sh.Len()
			}
			for idx, c := range seen {
				if c != 1 {
					t.Fatalf("len %d, %d shards: sample %d seen %d times", length, n, idx, c)
				}
			}
			for i := 1; i < len(sizes); i++ {
				if sizes[i] > sizes[i-1] || sizes[0]-sizes[i] > 1 {
					t.Fatalf("len %d, %d shards: unbalanced sizes %v", length, n, sizes)
				}
			}
		}
	}
}

func TestShardErrors(t *testing.T) {
	ds := seqDataset(10, 1)
	for _, c := range []struct{ n, i int }{{0, 0}, {-1, 0}, {3, 3}, {3, -1}} {
		if _, err := Shard(ds, c.n, c.i); err == nil {
			t.Errorf("Shard(n=%d, i=%d) gave no error", c.n, c.i)
		}
	}
	sh, _ := Shard(ds, 3, 2)
	if _, err := sh.Get(3, nil); err == nil {
		t.Error("Get past the shard's end gave no error")
	}
}

func TestSubset(t *testing.T) {
	ds := seqDataset(10, 1)
	sub, err := Subset(ds, []int{9, 0, 9, 4})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for i := range sub.Len() {
		s, _ := sub.Get(i, nil)
		got = append(got, int(s.Data.F32[0]))
	}
	if !reflect.DeepEqual(got, []int{9, 0, 9, 4}) {
		t.Fatalf("got %v", got)
	}
	if _, err := Subset(ds, []int{1, 10}); err == nil || !strings.Contains(err.Error(), "indices[1] = 10") {
		t.Fatalf("err = %v", err)
	}
}

func TestTransformFirstAndSample(t *testing.T) {
	base := SimpleDataset{
		{Data: Tensor{Shape: []int{1}, F32: []float32{1}}, Label: 3},
		{Data: Tensor{Shape: []int{1}, F32: []float32{2}}, Label: 4},
	}
	draw := func(x Tensor, rng *rand.Rand) (Tensor, error) {
		return Tensor{Shape: x.Shape, F32: []float32{x.F32[0] + rng.Float32()}}, nil
	}
	tf := TransformFirst(base, draw)
	s, err := tf.Get(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 + SampleRNG(0, 0, 1).Float32(); s.Data.F32[0] != want || s.Label != 4 {
		t.Fatalf("nil generator: got %+v, want data %v label 4", s, want)
	}
	s, _ = tf.Get(1, SampleRNG(9, 2, 1))
	if want := 2 + SampleRNG(9, 2, 1).Float32(); s.Data.F32[0] != want {
		t.Fatalf("given generator: got %v, want %v", s.Data.F32[0], want)
	}
	if base[1].Data.F32[0] != 2 {
		t.Fatal("transform modified the base dataset")
	}

	both := TransformSample(base, func(s Sample, _ *rand.Rand) (Sample, error) {
		s.Label *= 10
		return s, nil
	})
	if s, _ := both.Get(0, nil); s.Label != 30 || s.Data.F32[0] != 1 {
		t.Fatalf("TransformSample: got %+v", s)
	}

	boom := errors.New("boom")
	failing := TransformFirst(base, func(Tensor, *rand.Rand) (Tensor, error) { return Tensor{}, boom })
	if _, err := failing.Get(0, nil); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}
