package nd

import (
	"testing"

	"github.com/goluon/goluon/ctx"
)

// An op that pinned an array before Pack moved it to a flat storage
// unpins the storage it pinned: the old one is freed, the flat one's count
// stays balanced.
func TestPackWhilePinned(t *testing.T) {
	dev := ctx.CPU(0)
	a, b := Ones(dev, Float32, 3), Full(dev, Float32, 2, 4)
	old := a.st
	p := checkLive("reader", a) // an op on another goroutine, still running
	flat, _ := Pack([]*NDArray{a, b})
	p.done() // the op returns
	if old.pins.Load() != freeing || !old.freed.Load() {
		t.Errorf("a's old storage: pins %d, freed %v; want %d (freed, no pin), true", old.pins.Load(), old.freed.Load(), freeing)
	}
	if n := flat.st.pins.Load(); n != 0 {
		t.Errorf("flat storage pins %d, want 0", n)
	}
}

// A trace that panics midway leaves no trace registered and no pins.
func TestTracePanicCleansUp(t *testing.T) {
	dev := ctx.CPU(0)
	x := Ones(dev, Float32, 3).Persist()
	err := Catch(func() {
		Trace("boom", func(in []*NDArray) []*NDArray {
			y := Exp(in[0])
			y.Scalar()
			return []*NDArray{y}
		}, []*NDArray{x}, nil)
	})
	if err == nil {
		t.Fatal("no error")
	}
	if traceCount.Load() != 0 || Tracing() || x.st.pins.Load() != 0 {
		t.Fatalf("after a failed trace: traceCount %d, tracing %v, pins %d", traceCount.Load(), Tracing(), x.st.pins.Load())
	}
	func() {
		defer func() { recover() }()
		Trace("boom2", func(in []*NDArray) []*NDArray { panic("user panic") }, []*NDArray{x}, nil)
	}()
	if traceCount.Load() != 0 || Tracing() || x.st.pins.Load() != 0 {
		t.Fatalf("after a panicking trace: traceCount %d, tracing %v, pins %d", traceCount.Load(), Tracing(), x.st.pins.Load())
	}
}

// The leaf view a recorded trace makes of an input that needs a gradient
// is released when the trace ends: releasing the input afterwards frees its
// memory.
func TestTraceReleasesLeafViews(t *testing.T) {
	dev := ctx.CPU(0)
	x := Ones(dev, Float32, 4, 3).Persist()
	x.AttachGrad(GradWrite)
	exit := EnterRecording(true)
	g := Trace("exp", func(in []*NDArray) []*NDArray { return []*NDArray{Exp(in[0])} }, []*NDArray{x}, nil)
	exit()
	defer g.Release()
	st := x.st
	x.Release()
	if !st.freed.Load() {
		t.Fatalf("input released after the trace: refs %d, freed %v", st.refs.Load(), st.freed.Load())
	}
}

// A graph whose replay works on the host (writing constant data, drawing
// random numbers, drawing dropout seeds or masks) is marked so, and is
// never captured as a device graph; one that only computes is not.
func TestTraceHostSteps(t *testing.T) {
	dev := ctx.CPU(0)
	x := Ones(dev, Float32, 4, 3).Persist()
	cases := []struct {
		name  string
		train bool
		fused bool // SetFusedKernels: the applied dropout (a seed) or a stored mask
		host  bool
		f     func(x *NDArray) *NDArray
	}{
		{"compute", false, true, false, func(x *NDArray) *NDArray { return Exp(x) }},
		{"write", false, true, true, func(x *NDArray) *NDArray { return Add(x, FromSlice(dev, []float32{1, 2, 3})) }},
		{"random", false, true, true, func(x *NDArray) *NDArray { return Add(x, RandomNormalLike(x, 0, 1)) }},
		{"dropout-seed", true, true, true, func(x *NDArray) *NDArray { return Dropout(x, 0.5) }},
		{"dropout-mask", true, false, true, func(x *NDArray) *NDArray { return Dropout(x, 0.5) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer SetFusedKernels(SetFusedKernels(c.fused))
			defer EnterMode(c.train)()
			g := Trace(c.name, func(in []*NDArray) []*NDArray { return []*NDArray{c.f(in[0])} }, []*NDArray{x}, nil)
			defer g.Release()
			if g.host != c.host {
				t.Errorf("host steps %v, want %v", g.host, c.host)
			}
		})
	}
}
