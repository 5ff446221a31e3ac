package data

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

func TestLoaderOrderIndependentOfWorkers(t *testing.T) {
	ds := TransformFirst(seqDataset(103, 3), jitter(300))
	for _, shuffle := range []bool{false, true} {
		for _, last := range []LastBatch{Keep, Discard, Rollover} {
			t.Run(fmt.Sprintf("shuffle=%v/%v", shuffle, last), func(t *testing.T) {
				var ref []hostBatchCopy
				for _, c := range []struct{ workers, prefetch int }{{0, 0}, {1, 0}, {4, 0}, {4, 1}, {3, 7}} {
					l := mustLoader(t, ds, LoaderOpts{BatchSize: 8, Shuffle: shuffle, Seed: 42, LastBatch: last,
						Workers: c.workers, Prefetch: c.prefetch})
					got, err := collect(t, l)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != l.bs.Len(0) {
						t.Fatalf("%d batches, Len %d", len(got), l.bs.Len(0))
					}
					if ref == nil {
						ref = got
						continue
					}
					sameBatches(t, fmt.Sprintf("workers=%d prefetch=%d", c.workers, c.prefetch), ref, got)
				}
			})
		}
	}
}

func TestLoaderBatchContents(t *testing.T) {
	// Every row is the sample of its index, drawn with
	// SampleRNG(seed, epoch, index); labels follow.
	const seed = 7
	l := mustLoader(t, seqDataset(20, 4), LoaderOpts{BatchSize: 6, Shuffle: true, Seed: seed, Workers: 2})
	for epoch := range 2 {
		batches, err := collect(t, l)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, b := range batches {
			if b.Shape[0] != len(b.Indices) || b.Shape[1] != 4 {
				t.Fatalf("shape %v for %d indices", b.Shape, len(b.Indices))
			}
			for k, idx := range b.Indices {
				seen[idx] = true
				rng := SampleRNG(seed, epoch, idx)
				want := []float32{float32(idx), rng.Float32(), rng.Float32(), rng.Float32()}
				if row := b.Data[4*k : 4*k+4]; !reflect.DeepEqual(row, want) {
					t.Fatalf("epoch %d sample %d: row %v, want %v", epoch, idx, row, want)
				}
				if b.Label[k] != float32(idx%7) {
					t.Fatalf("sample %d: label %v", idx, b.Label[k])
				}
			}
		}
		if len(seen) != 20 {
			t.Fatalf("epoch %d saw %d distinct samples", epoch, len(seen))
		}
	}
}

func TestLoaderSameSeedSameBatches(t *testing.T) {
	ds := TransformFirst(seqDataset(50, 3), jitter(100))
	run := func(seed uint64, workers int) [][]hostBatchCopy {
		l := mustLoader(t, ds, LoaderOpts{BatchSize: 7, Shuffle: true, Seed: seed, Workers: workers, LastBatch: Rollover})
		var epochs [][]hostBatchCopy
		for range 3 {
			b, err := collect(t, l)
			if err != nil {
				t.Fatal(err)
			}
			epochs = append(epochs, b)
		}
		return epochs
	}
	a, b := run(5, 0), run(5, 3)
	for e := range a {
		sameBatches(t, fmt.Sprintf("epoch %d", e), a[e], b[e])
	}
	if reflect.DeepEqual(a[0][0].Indices, a[1][0].Indices) {
		t.Fatal("epochs 0 and 1 start with the same batch")
	}
	if c := run(6, 3); reflect.DeepEqual(a[0][0], c[0][0]) {
		t.Fatal("seeds 5 and 6 give the same first batch")
	}
}

func TestLoaderLenAndEpochs(t *testing.T) {
	for _, c := range []struct {
		last LastBatch
		lens []int
	}{
		{Keep, []int{3, 3, 3, 3}},
		{Discard, []int{2, 2, 2, 2}},
		{Rollover, []int{2, 3, 2, 3}}, // 10 samples, batches of 4: epochs carry in 0, 2, 0, 2
	} {
		t.Run(c.last.String(), func(t *testing.T) {
			l := mustLoader(t, seqDataset(10, 1), LoaderOpts{BatchSize: 4, LastBatch: c.last, Workers: 1})
			for e, want := range c.lens {
				if l.Epoch() != e || l.Len() != want {
					t.Fatalf("before epoch %d: Epoch %d Len %d, want Len %d", e, l.Epoch(), l.Len(), want)
				}
				got, err := collect(t, l)
				if err != nil || len(got) != want {
					t.Fatalf("epoch %d: %d batches (err %v), want %d", e, len(got), err, want)
				}
			}
		})
	}
}

func TestLoaderRolloverCarriesSamples(t *testing.T) {
	l := mustLoader(t, seqDataset(10, 1), LoaderOpts{BatchSize: 4, LastBatch: Rollover, Workers: 2})
	e0, _ := collect(t, l)
	e1, _ := collect(t, l)
	if !reflect.DeepEqual(e0[len(e0)-1].Indices, []int{4, 5, 6, 7}) {
		t.Fatalf("epoch 0 ends with %v", e0[len(e0)-1].Indices)
	}
	if !reflect.DeepEqual(e1[0].Indices, []int{8, 9, 0, 1}) {
		t.Fatalf("epoch 1 starts with %v, want the leftover 8, 9 first", e1[0].Indices)
	}
}

func TestLoaderSetEpochReplays(t *testing.T) {
	l := mustLoader(t, TransformFirst(seqDataset(30, 2), jitter(50)), LoaderOpts{BatchSize: 4, Shuffle: true, Seed: 1, Workers: 2})
	collect(t, l)
	e1, _ := collect(t, l)
	l.SetEpoch(1)
	again, _ := collect(t, l)
	sameBatches(t, "replayed epoch 1", e1, again)
	if l.Epoch() != 2 {
		t.Fatalf("Epoch = %d after replaying 1", l.Epoch())
	}
}

func TestLoaderContext(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			l := mustLoader(t, seqDataset(9, 2), LoaderOpts{BatchSize: 4, Workers: workers, Context: ctx.CPU(1)})
			it := l.Iter(context.Background())
			defer it.Close()
			n := 0
			for it.Next() {
				b := it.Batch()
				if b.Data.Context() != ctx.CPU(1) || b.Label.Context() != ctx.CPU(1) {
					t.Fatalf("batch on %v and %v, want cpu(1)", b.Data.Context(), b.Label.Context())
				}
				if b.Data.DType() != nd.Float32 || b.Label.DType() != nd.Float32 {
					t.Fatal("batch is not float32")
				}
				n++
			}
			if it.Err() != nil || n != 3 {
				t.Fatalf("%d batches, err %v", n, it.Err())
			}
		})
	}
}

func TestLoaderUint8Samples(t *testing.T) {
	ts := []Tensor{
		{Shape: []int{2, 2}, U8: []uint8{0, 1, 2, 255}},
		{Shape: []int{2, 2}, U8: []uint8{9, 8, 7, 6}},
	}
	ds, _ := NewArrayDataset(ts, []float32{1, 0})
	l := mustLoader(t, ds, LoaderOpts{BatchSize: 2})
	b, err := collect(t, l)
	if err != nil {
		t.Fatal(err)
	}
	want := hostBatchCopy{Shape: []int{2, 2, 2}, Data: []float32{0, 1, 2, 255, 9, 8, 7, 6}, Label: []float32{1, 0}, Indices: []int{0, 1}}
	if len(b) != 1 || !reflect.DeepEqual(b[0], want) {
		t.Fatalf("got %+v, want %+v", b, want)
	}
}

func TestLoaderScopePerStep(t *testing.T) {
	// A training loop that opens a scope per step must get live batches,
	// although workers prefetch while the scopes are open.
	l := mustLoader(t, TransformFirst(seqDataset(64, 4), jitter(50)), LoaderOpts{BatchSize: 4, Workers: 4})
	it := l.Iter(context.Background())
	defer it.Close()
	var prev Batch
	for n := 0; ; n++ {
		s := nd.NewScope()
		if !it.Next() {
			s.Close()
			break
		}
		b := it.Batch()
		if b.Data.Released() || b.Label.Released() {
			t.Fatalf("step %d: batch released before use", n)
		}
		if n > 0 && !prev.Data.Released() {
			t.Fatalf("step %d: the previous step's scope did not release its batch", n)
		}
		_ = nd.Sum(b.Data)
		s.Close()
		prev = b
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestLoaderEmptyDataset(t *testing.T) {
	for _, workers := range []int{0, 2} {
		l := mustLoader(t, SimpleDataset{}, LoaderOpts{BatchSize: 3, Workers: workers})
		if b, err := collect(t, l); len(b) != 0 || err != nil || l.Len() != 0 {
			t.Fatalf("workers %d: %v, %v", workers, b, err)
		}
	}
}

func TestNewDataLoaderErrors(t *testing.T) {
	ds := seqDataset(4, 1)
	cases := []struct {
		name string
		o    LoaderOpts
		want string
	}{
		{"batch size", LoaderOpts{}, "batch size 0"},
		{"workers", LoaderOpts{BatchSize: 1, Workers: -1}, "negative Workers"},
		{"prefetch", LoaderOpts{BatchSize: 1, Prefetch: -2}, "negative Prefetch"},
		{"sampler and shuffle", LoaderOpts{BatchSize: 1, Shuffle: true, Sampler: SequentialSampler{N: 4}}, "Shuffle must be false"},
		{"policy", LoaderOpts{BatchSize: 1, LastBatch: LastBatch(7)}, "policy"},
		{"gpu", LoaderOpts{BatchSize: 1, Context: ctx.GPU(0)}, "gpu"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "gpu" && ctx.NumGPUs() > 0 {
				t.Skip("GPU present")
			}
			_, err := NewDataLoader(ds, c.o)
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.want)) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
	if _, err := NewDataLoader(nil, LoaderOpts{BatchSize: 1}); err == nil {
		t.Error("nil dataset accepted")
	}
}

func TestLoaderCustomSampler(t *testing.T) {
	l := mustLoader(t, seqDataset(10, 1), LoaderOpts{BatchSize: 2, Sampler: reverseSampler{n: 5}})
	b, err := collect(t, l)
	if err != nil {
		t.Fatal(err)
	}
	if got := [][]int{b[0].Indices, b[1].Indices, b[2].Indices}; !reflect.DeepEqual(got, [][]int{{4, 3}, {2, 1}, {0}}) {
		t.Fatalf("got %v", got)
	}
}

type reverseSampler struct{ n int }

func (s reverseSampler) Len() int { return s.n }
func (s reverseSampler) Order(int) []int {
	o := make([]int, s.n)
	for i := range o {
		o[i] = s.n - 1 - i
	}
	return o
}

func TestBuildDoesNotAllocatePerSample(t *testing.T) {
	// With a dataset whose Get does not allocate (an ArrayDataset), building
	// a batch of 64 reuses pooled buffers and one generator: no
	// allocation per sample, and none per batch once warm.
	ts := make([]Tensor, 64)
	for i := range ts {
		ts[i] = Tensor{Shape: []int{4, 4, 3}, U8: make([]uint8, 48)}
	}
	ds, _ := NewArrayDataset(ts, nil)
	l := mustLoader(t, ds, LoaderOpts{BatchSize: 64})
	b := newBuilder(ds, nil, 1, 0, &l.pool)
	idx := l.bs.Batches(0)[0]
	allocs := testing.AllocsPerRun(100, func() {
		h, err := b.build(nil, idx)
		if err != nil {
			t.Fatal(err)
		}
		l.pool.Put(h)
	})
	if allocs > 1 && !raceEnabled { // the race detector's sync.Pool drops buffers at random
		t.Fatalf("%v allocations per batch of 64", allocs)
	}
}
