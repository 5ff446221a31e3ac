package nd_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// twoLayer returns y = sum(tanh(x·w1)·w2) recorded, with w1 and w2 leaves.
func twoLayer(t *testing.T, w1, w2 *nd.NDArray) *nd.NDArray {
	t.Helper()
	x := nd.FromSlice(ctx.CPU(0), []float64{1, -2, 0.5, 3, 1, -1}, 2, 3)
	var y *nd.NDArray
	nd.DefaultSession().Record(func() {
		y = nd.Sum(nd.MatMul(nd.Tanh(nd.MatMul(x, w1)), w2))
	})
	return y
}

func newLeaf(vals []float64, shape ...int) *nd.NDArray {
	w := nd.FromSlice(ctx.CPU(0), vals, shape...)
	w.AttachGrad(nd.GradWrite)
	return w
}

// TestGradHookOrder: the leaf nearest the loss is final first, and its
// Ready hook runs before the other leaf's gradient is written; Before
// sees the old gradient and Ready the new one.
func TestGradHookOrder(t *testing.T) {
	w1 := newLeaf([]float64{0.1, 0.2, -0.3, 0.4, 0.5, -0.6}, 3, 2)
	w2 := newLeaf([]float64{1, -1}, 2, 1)
	var events []string
	for _, l := range []struct {
		name string
		w    *nd.NDArray
	}{{"w1", w1}, {"w2", w2}} {
		l.w.AddGradHook(nd.GradHook{
			Before: func(a *nd.NDArray) {
				if a != l.w || a.GradStamp() != 0 {
					t.Errorf("Before %s: wrong array or stamp %d", l.name, a.GradStamp())
				}
				events = append(events, "before "+l.name)
			},
			Ready: func(a *nd.NDArray) {
				if a.GradStamp() != 1 {
					t.Errorf("Ready %s: stamp %d, want 1", l.name, a.GradStamp())
				}
				events = append(events, "ready "+l.name)
				if l.name == "w2" && w1.GradStamp() != 0 {
					t.Error("w1's gradient was written before w2's Ready hook ran")
				}
			},
		})
	}
	nd.Backward([]*nd.NDArray{twoLayer(t, w1, w2)}, nil, false)
	want := []string{"before w2", "ready w2", "before w1", "ready w1"}
	if !slices.Equal(events, want) {
		t.Fatalf("hook events %v, want %v", events, want)
	}
}

// TestGradHookEnd: End hooks run once per leaf whose Ready ran, after the
// whole pass, in the order the leaves became final; a leaf with only End
// hooks and GradNull runs none.
func TestGradHookEnd(t *testing.T) {
	w1 := newLeaf([]float64{0.1, 0.2, -0.3, 0.4, 0.5, -0.6}, 3, 2)
	w2 := newLeaf([]float64{1, -1}, 2, 1)
	var events []string
	for _, l := range []struct {
		name string
		w    *nd.NDArray
	}{{"w1", w1}, {"w2", w2}} {
		l.w.AddGradHook(nd.GradHook{
			Ready: func(*nd.NDArray) { events = append(events, "ready "+l.name) },
			End:   func(*nd.NDArray) { events = append(events, "end "+l.name) },
		})
	}
	nd.Backward([]*nd.NDArray{twoLayer(t, w1, w2)}, nil, false)
	want := []string{"ready w2", "ready w1", "end w2", "end w1"}
	if !slices.Equal(events, want) {
		t.Fatalf("hook events %v, want %v", events, want)
	}
	events = nil
	w1.AttachGrad(nd.GradNull)
	nd.Backward([]*nd.NDArray{twoLayer(t, w1, w2)}, nil, false)
	if want := []string{"ready w2", "end w2"}; !slices.Equal(events, want) {
		t.Fatalf("with w1 GradNull: hook events %v, want %v", events, want)
	}
}

// TestGradHookSurvivesAttachAndRemove: AttachGrad keeps the hooks; the
// returned function removes one; a GradNull leaf runs none.
func TestGradHookSurvivesAttachAndRemove(t *testing.T) {
	w1 := newLeaf([]float64{0.1, 0.2, -0.3, 0.4, 0.5, -0.6}, 3, 2)
	w2 := newLeaf([]float64{1, -1}, 2, 1)
	var a, b int
	removeA := w1.AddGradHook(nd.GradHook{Ready: func(*nd.NDArray) { a++ }})
	w1.AddGradHook(nd.GradHook{Ready: func(*nd.NDArray) { b++ }})
	w1.AttachGrad(nd.GradWrite)
	nd.Backward([]*nd.NDArray{twoLayer(t, w1, w2)}, nil, false)
	removeA()
	nd.Backward([]*nd.NDArray{twoLayer(t, w1, w2)}, nil, false)
	w1.SetGradReq(nd.GradNull)
	nd.Backward([]*nd.NDArray{twoLayer(t, w1, w2)}, nil, false)
	if a != 1 || b != 2 {
		t.Fatalf("hook calls a=%d b=%d, want 1 and 2", a, b)
	}
	if err := nd.Catch(func() { nd.Ones(ctx.CPU(0), nd.Float32, 2).AddGradHook(nd.GradHook{}) }); err == nil {
		t.Fatal("AddGradHook on an array without a gradient did not fail")
	}
}

// TestPackGrads: gradients become views of one flat array, keep their
// identity and values, and Backward writes (and adds) through them.
func TestPackGrads(t *testing.T) {
	for _, req := range []nd.GradReq{nd.GradWrite, nd.GradAdd} {
		t.Run(req.String(), func(t *testing.T) {
			w1 := newLeaf([]float64{0.1, 0.2, -0.3, 0.4, 0.5, -0.6}, 3, 2)
			w2 := newLeaf([]float64{1, -1}, 2, 1)
			// The expected gradients, from unpacked copies.
			r1 := newLeaf(w1.Float64s(), 3, 2)
			r2 := newLeaf(w2.Float64s(), 2, 1)
			for _, w := range []*nd.NDArray{w1, w2, r1, r2} {
				w.SetGradReq(req)
			}
			nd.FillInPlace(w2.Grad(), 7)
			nd.FillInPlace(r2.Grad(), 7)
			g1, g2 := w1.Grad(), w2.Grad()
			flat, offs := nd.PackGrads([]*nd.NDArray{w2, w1})
			if w1.Grad() != g1 || w2.Grad() != g2 {
				t.Fatal("PackGrads changed the gradient arrays' identity")
			}
			if !slices.Equal(offs, []int{0, 2}) || flat.Size() != 8 {
				t.Fatalf("offsets %v, flat size %d", offs, flat.Size())
			}
			if got := flat.Float64s(); !slices.Equal(got, []float64{7, 7, 0, 0, 0, 0, 0, 0}) {
				t.Fatalf("flat after packing %v", got)
			}
			for range 2 {
				nd.Backward([]*nd.NDArray{twoLayer(t, w1, w2)}, nil, false)
				nd.Backward([]*nd.NDArray{twoLayer(t, r1, r2)}, nil, false)
			}
			want := append(r2.Grad().Float64s(), r1.Grad().Float64s()...)
			if got := flat.Float64s(); !slices.Equal(got, want) {
				t.Fatalf("flat %v, want %v", got, want)
			}
			nd.FillInPlace(flat.Span(2, 8), 0)
			if got := w1.Grad().Float64s(); !slices.Equal(got, make([]float64, 6)) {
				t.Fatalf("w1's gradient after clearing its span: %v", got)
			}
		})
	}
	f32 := nd.FromSlice(ctx.CPU(0), []float32{1}, 1)
	f32.AttachGrad(nd.GradWrite)
	other := nd.FromSlice(ctx.CPU(1), []float64{1}, 1)
	other.AttachGrad(nd.GradWrite)
	for _, bad := range [][]*nd.NDArray{{newLeaf([]float64{1}, 1), f32}, {newLeaf([]float64{1}, 1), other}, {nd.Ones(ctx.CPU(0), nd.Float32, 1)}, nil} {
		if err := nd.Catch(func() { nd.PackGrads(bad) }); err == nil {
			t.Fatalf("PackGrads(%v) did not fail", bad)
		}
	}
	if err := nd.Catch(func() { nd.Ones(ctx.CPU(0), nd.Float32, 4).Span(2, 5) }); err == nil {
		t.Fatal("Span past the end did not fail")
	}
}
