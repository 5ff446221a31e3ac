package nd_test

import (
	"runtime"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// trainStep runs one SGD step of a small conv net: conv → relu → max pool
// → dense → log-softmax → pick → mean, backward, and an in-place update.
func trainStep(x, labels *nd.NDArray, params []*nd.NDArray) float64 {
	w1, b1, w2, b2 := params[0], params[1], params[2], params[3]
	var loss *nd.NDArray
	autograd.Record(func() {
		h := nd.Relu(nd.Conv2D(x, w1, b1, nd.ConvOpts{Pad: [2]int{1, 1}}))
		h = nd.Dropout(nd.MaxPool2D(h, [2]int{2, 2}, [2]int{}, [2]int{}), 0.1)
		logits := nd.FullyConnected(nd.Flatten(h), w2, b2)
		loss = nd.Neg(nd.Mean(nd.Pick(nd.LogSoftmax(logits, 1), labels, 1)))
		autograd.Backward(loss)
	})
	for _, p := range params {
		g := nd.MulScalar(p.Grad(), -0.05)
		nd.AddTo(p, g)
	}
	return loss.Scalar()
}

// TestMemoryFlatOverManySteps trains for thousands of steps, closing a
// Scope after each, and checks that the pool stops requesting memory from
// the system after warm-up and that nothing stays in use between steps.
func TestMemoryFlatOverManySteps(t *testing.T) {
	dev := ctx.CPU(7) // a context of its own, so other tests do not disturb the counts
	nd.Seed(1)
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 8, 2, 8, 8)
	labels := nd.FromSlice(dev, []float32{0, 1, 2, 3, 0, 1, 2, 3}, 8)
	params := []*nd.NDArray{
		nd.RandomNormal(dev, nd.Float32, 0, 0.1, 4, 2, 3, 3), nd.Zeros(dev, nd.Float32, 4),
		nd.RandomNormal(dev, nd.Float32, 0, 0.1, 4, 64), nd.Zeros(dev, nd.Float32, 4),
	}
	for _, p := range params {
		p.AttachGrad(nd.GradWrite)
	}
	steps := 3000
	if testing.Short() {
		steps = 500
	}
	step := func() float64 {
		s := nd.NewScope()
		defer s.Close()
		return trainStep(x, labels, params)
	}
	const warmup = 20
	first := 0.0
	for i := range warmup {
		l := step()
		if i == 0 {
			first = l
		}
	}
	base := nd.MemoryStats(dev)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap0 := ms.HeapAlloc
	last := 0.0
	for range steps {
		last = step()
		if st := nd.MemoryStats(dev); st.InUse != base.InUse {
			t.Fatalf("in-use memory after a step changed from %d to %d bytes", base.InUse, st.InUse)
		}
	}
	end := nd.MemoryStats(dev)
	if end.Allocated != base.Allocated {
		t.Errorf("pool requested %d more bytes from the system over %d steps", end.Allocated-base.Allocated, steps)
	}
	if end.Misses != base.Misses {
		t.Errorf("%d pool misses after warm-up", end.Misses-base.Misses)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grow := int64(ms.HeapAlloc) - int64(heap0); grow > 4<<20 {
		t.Errorf("Go heap grew by %d bytes over %d steps", grow, steps)
	}
	if !(last < first) {
		t.Errorf("loss did not decrease: %g -> %g", first, last)
	}
	t.Logf("%d steps: loss %.4f -> %.4f; pool in use %d B, allocated %d B, %d allocs, %d misses",
		steps, first, last, end.InUse, end.Allocated, end.Allocs, end.Misses)
}

// TestScopeKeep checks that kept arrays survive Close and move to the
// enclosing scope, and that untouched ones are released.
func TestScopeKeep(t *testing.T) {
	dev := ctx.CPU(0)
	outer := nd.NewScope()
	inner := nd.NewScope()
	s := nd.DefaultSession() // its creation methods track at once
	a, b := s.Ones(dev, nd.Float32, 3), s.Ones(dev, nd.Float32, 3)
	inner.Keep(a)
	inner.Close()
	if a.Released() || !b.Released() {
		t.Fatalf("after inner Close: a released=%v (want false), b released=%v (want true)", a.Released(), b.Released())
	}
	if outer.Len() != 1 {
		t.Fatalf("outer scope tracks %d arrays, want the kept one", outer.Len())
	}
	outer.Close()
	if !a.Released() {
		t.Fatal("kept array not released by the enclosing scope")
	}
	got := nd.WithScope(func() []*nd.NDArray {
		tmp := s.Ones(dev, nd.Float32, 2)
		return []*nd.NDArray{nd.AddScalar(tmp, 1)}
	})
	if got[0].Released() || got[0].Float32s()[0] != 2 {
		t.Fatal("WithScope released its result")
	}
}

// TestLongScopeDropsReleasedArrays: arrays released explicitly inside a
// long-lived scope do not pile up in its list.
func TestLongScopeDropsReleasedArrays(t *testing.T) {
	s := nd.NewScope()
	defer s.Close()
	for range 10000 {
		nd.Zeros(ctx.CPU(0), nd.Float32, 4).Release()
	}
	if n := s.Len(); n != 0 {
		t.Fatalf("scope still tracks %d arrays", n)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	for range 100000 {
		nd.Zeros(ctx.CPU(0), nd.Float32, 4).Release()
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grow := int64(ms.HeapAlloc) - int64(before); grow > 1<<20 {
		t.Errorf("heap grew %d bytes for 100000 released arrays", grow)
	}
}

// TestBackwardGradBuffer checks the hand-over of computed gradients to a
// leaf's gradient array: the array keeps its identity and gets the values,
// a view of it taken before Backward sees the new values too (Backward
// then copies instead of swapping buffers), and GradAdd accumulates.
func TestBackwardGradBuffer(t *testing.T) {
	dev := ctx.CPU(0)
	tests := []struct {
		name string
		req  nd.GradReq
		view bool
		want []float32 // gradient after two Backward passes of sum(3·x)
	}{
		{"write", nd.GradWrite, false, []float32{3, 3, 3, 3}},
		{"write with a view held", nd.GradWrite, true, []float32{3, 3, 3, 3}},
		{"add", nd.GradAdd, false, []float32{6, 6, 6, 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := nd.FromSlice(dev, []float32{1, 2, 3, 4})
			x.AttachGrad(tc.req)
			g := x.Grad()
			var v *nd.NDArray
			if tc.view {
				v = nd.Reshape(g, 2, 2)
				defer v.Release()
			}
			for range 2 {
				autograd.Record(func() {
					autograd.Backward(nd.Sum(nd.MulScalar(x, 3)))
				})
			}
			if x.Grad() != g {
				t.Fatal("the gradient array was replaced")
			}
			if got := g.Float32s(); !slices.Equal(got, tc.want) {
				t.Errorf("gradient %v, want %v", got, tc.want)
			}
			if v != nil {
				if got := v.Float32s(); !slices.Equal(got, tc.want) {
					t.Errorf("view of the gradient %v, want %v", got, tc.want)
				}
			}
		})
	}
	// The gradient reaching the leaf is a view of the caller's head
	// gradient (Reshape passes it through): its buffer is not Backward's
	// to give away.
	x := nd.FromSlice(dev, []float32{1, 2, 3, 4})
	x.AttachGrad(nd.GradWrite)
	head := nd.FromSlice(dev, []float32{5, 6, 7, 8})
	var y *nd.NDArray
	autograd.Record(func() { y = nd.Reshape(x, 2, 2) })
	nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{nd.Reshape(head, 2, 2)}, false)
	want := []float32{5, 6, 7, 8}
	if got := x.Grad().Float32s(); !slices.Equal(got, want) {
		t.Errorf("gradient through Reshape %v, want %v", got, want)
	}
	if got := head.Float32s(); !slices.Equal(got, want) {
		t.Errorf("head gradient changed to %v", got)
	}
}
