package data

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/nd"
)

// seqPairs returns n samples: data [len_i, 2] (rows (i, t)) with
// len_i = 1 + i%4, a target sequence [tlen_i] (uint8 values i, i+1, ...)
// with tlen_i = 1 + (i+1)%3, and a stacked extra [2] (i, −i).
func seqPairs(n int) FuncDataset {
	return FuncDataset{N: n, Fn: func(i int, _ *rand.Rand) (Sample, error) {
		l, tl := 1+i%4, 1+(i+1)%3
		x := make([]float32, 0, 2*l)
		for t := range l {
			x = append(x, float32(i), float32(t))
		}
		y := make([]uint8, tl)
		for j := range y {
			y[j] = uint8(i + j)
		}
		return Sample{Data: Tensor{Shape: []int{l, 2}, F32: x}, Label: float32(i),
			Extra: []Tensor{{Shape: []int{tl}, U8: y}, {Shape: []int{2}, F32: []float32{float32(i), float32(-i)}}}}, nil
	}}
}

// TestCollatePad pads variable-length data and targets, stacks the rest,
// reports the lengths, and gives the same batches with workers.
func TestCollatePad(t *testing.T) {
	ds := seqPairs(10)
	for _, workers := range []int{0, 3} {
		l, err := NewDataLoader(ds, LoaderOpts{BatchSize: 4, Workers: workers,
			Collate: []Collate{{Pad: true, Axis: 0}, {Pad: true, Axis: -1, Value: -1}}})
		if err != nil {
			t.Fatal(err)
		}
		it := l.Iter(context.Background())
		for it.Next() {
			b := it.Batch()
			idx := b.Indices
			wantLen := func(f func(i int) int) []int {
				var out []int
				for _, i := range idx {
					out = append(out, f(i))
				}
				return out
			}
			dl, tl := wantLen(func(i int) int { return 1 + i%4 }), wantLen(func(i int) int { return 1 + (i+1)%3 })
			if !slices.Equal(b.Lengths[0], dl) || !slices.Equal(b.Lengths[1], tl) || b.Lengths[2] != nil {
				t.Fatalf("lengths %v, want %v %v nil", b.Lengths, dl, tl)
			}
			maxD, maxT := slices.Max(dl), slices.Max(tl)
			if got := b.Data.Shape(); !slices.Equal(got, []int{len(idx), maxD, 2}) {
				t.Fatalf("data shape %v", got)
			}
			data := b.Data.Float32s()
			for k, i := range idx {
				for r := range maxD {
					a, c := data[(k*maxD+r)*2], data[(k*maxD+r)*2+1]
					if r < dl[k] && (a != float32(i) || c != float32(r)) || r >= dl[k] && (a != 0 || c != 0) {
						t.Fatalf("sample %d row %d = (%v, %v)", i, r, a, c)
					}
				}
			}
			tgt := b.Extra[0].Float32s()
			for k, i := range idx {
				for j := range maxT {
					want := float32(-1)
					if j < tl[k] {
						want = float32(i + j)
					}
					if tgt[k*maxT+j] != want {
						t.Fatalf("target %d[%d] = %v, want %v", i, j, tgt[k*maxT+j], want)
					}
				}
			}
			st := b.Extra[1].Float32s()
			for k, i := range idx {
				if st[2*k] != float32(i) || st[2*k+1] != float32(-i) {
					t.Fatalf("stacked extra %v", st)
				}
			}
			b.Release()
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCollatePadInnerAxis pads [C, T] samples along T: each channel's row
// is padded, not the end of the buffer.
func TestCollatePadInnerAxis(t *testing.T) {
	ds := FuncDataset{N: 2, Fn: func(i int, _ *rand.Rand) (Sample, error) {
		tl := 2 + i // 2, 3
		x := make([]float32, 2*tl)
		for c := range 2 {
			for j := range tl {
				x[c*tl+j] = float32(10*c + j + 1)
			}
		}
		return Sample{Data: Tensor{Shape: []int{2, tl}, F32: x}}, nil
	}}
	l, err := NewDataLoader(ds, LoaderOpts{BatchSize: 2, Collate: []Collate{{Pad: true, Axis: 1, Value: math.Float32frombits(0x7fc00000)}}})
	if err != nil {
		t.Fatal(err)
	}
	it := l.Iter(context.Background())
	if !it.Next() {
		t.Fatal(it.Err())
	}
	got := it.Batch().Data.Float32s()
	nan := float32(math.NaN())
	want := []float32{1, 2, nan, 11, 12, nan, 1, 2, 3, 11, 12, 13}
	for i := range want {
		if got[i] != want[i] && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
			t.Fatalf("batch %v, want %v", got, want)
		}
	}
	it.Close()
}

// TestCollateErrors: samples that do not fit their batch's rules are
// SampleErrors naming the sample and the field.
func TestCollateErrors(t *testing.T) {
	extra := func(shape []int, n int) FuncDataset {
		return FuncDataset{N: 4, Fn: func(i int, _ *rand.Rand) (Sample, error) {
			s := Sample{Data: Tensor{Shape: []int{1}, F32: []float32{0}}}
			if i < n {
				sh := slices.Clone(shape)
				sh[0] += i
				m := 1
				for _, d := range sh {
					m *= d
				}
				s.Extra = []Tensor{{Shape: sh, F32: make([]float32, m)}}
			}
			return s, nil
		}}
	}
	for name, c := range map[string]struct {
		ds      FuncDataset
		collate []Collate
		want    string
	}{
		"extra shapes differ":   {extra([]int{2}, 4), nil, "sample 1's extra array 0 has shape [3]"},
		"extra count differs":   {extra([]int{2}, 2), nil, "sample 2 has 0 extra arrays"},
		"pad axis out of range": {extra([]int{2}, 4), []Collate{{}, {Pad: true, Axis: 1}}, "no axis 1"},
		"padded others differ":  {extra([]int{2, 3}, 4), []Collate{{}, {Pad: true, Axis: 1}}, "the other axes must agree"},
		"too many rules":        {extra([]int{2}, 4), []Collate{{}, {}, {}}, "3 collate rules"},
	} {
		l, err := NewDataLoader(c.ds, LoaderOpts{BatchSize: 4, Collate: c.collate})
		if err != nil {
			t.Fatal(err)
		}
		it := l.Iter(context.Background())
		for it.Next() {
		}
		err = it.Err()
		var se *SampleError
		var ne *nd.Error
		if !errors.As(err, &se) || !errors.As(err, &ne) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a SampleError mentioning %q", name, err, c.want)
		}
	}
}

// TestWeightedRandomSampler checks the draw frequencies against the
// weights, zero weights, determinism, and draws without replacement.
func TestWeightedRandomSampler(t *testing.T) {
	w := []float64{1, 0, 3, 6}
	s, err := NewWeightedRandomSampler(w, 100000, true, 7)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, len(w))
	for _, i := range s.Order(0) {
		counts[i]++
	}
	for i, c := range counts {
		p := w[i] / 10
		sd := math.Sqrt(p * (1 - p) * 100000)
		if math.Abs(float64(c)-p*100000) > 5*sd+0.5 {
			t.Errorf("index %d drawn %d times of 100000, want %v±%.0f", i, c, p*100000, 5*sd)
		}
	}
	if !slices.Equal(s.Order(3), s.Order(3)) || slices.Equal(s.Order(3)[:50], s.Order(4)[:50]) {
		t.Error("epochs do not replay, or two epochs drew the same")
	}
	// Without replacement: distinct indices, never a zero weight, and the
	// heavier index first more often.
	s, err = NewWeightedRandomSampler(w, 3, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]int, len(w))
	for e := range 2000 {
		o := s.Order(e)
		if slices.Contains(o, 1) || o[0] == o[1] || o[1] == o[2] || o[0] == o[2] {
			t.Fatalf("epoch %d: %v", e, o)
		}
		first[o[0]]++
	}
	if !(first[3] > first[2] && first[2] > first[0]) {
		t.Errorf("first draws %v, want ordered by weight", first)
	}
	// The tiniest weights are drawn in random order, not by index (their
	// keys overflowed and tied).
	s, err = NewWeightedRandomSampler([]float64{1e-310, 1e-310, 1e-310}, 3, false, 2)
	if err != nil {
		t.Fatal(err)
	}
	firsts := make([]int, 3)
	for e := range 3000 {
		firsts[s.Order(e)[0]]++
	}
	for i, c := range firsts {
		if c < 800 || c > 1200 {
			t.Errorf("tiny weights: index %d first %d times of 3000, want about 1000", i, c)
		}
	}
	for name, f := range map[string]func() (*WeightedRandomSampler, error){
		"negative": func() (*WeightedRandomSampler, error) { return NewWeightedRandomSampler([]float64{1, -1}, 2, true, 0) },
		"NaN": func() (*WeightedRandomSampler, error) {
			return NewWeightedRandomSampler([]float64{math.NaN()}, 2, true, 0)
		},
		"zero sum":   func() (*WeightedRandomSampler, error) { return NewWeightedRandomSampler([]float64{0, 0}, 2, true, 0) },
		"no samples": func() (*WeightedRandomSampler, error) { return NewWeightedRandomSampler([]float64{1}, 0, true, 0) },
		"too many": func() (*WeightedRandomSampler, error) {
			return NewWeightedRandomSampler([]float64{1, 0, 2}, 3, false, 0)
		},
		"infinite sum": func() (*WeightedRandomSampler, error) {
			return NewWeightedRandomSampler([]float64{math.MaxFloat64, math.MaxFloat64}, 1, true, 0)
		},
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
