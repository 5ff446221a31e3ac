package nd_test

import (
	"runtime"
	"slices"
	"testing"

	"github.com/goluon/goluon/nd"
)

// An output that is a view at an offset of a planned buffer is copied out
// after the forward kernels: the plan keeps its buffer until then, so a
// later slot cannot take it first.
func TestTraceSlicedOutput(t *testing.T) {
	x := randn(1, 4, 3)
	f := func(in []*nd.NDArray) []*nd.NDArray {
		y := nd.Tanh(in[0])
		return []*nd.NDArray{nd.SliceAxis(y, 1, 3, 0), nd.Neg(nd.Sigmoid(in[0]))}
	}
	want := f([]*nd.NDArray{x})
	g := nd.Trace("slice", f, []*nd.NDArray{x}, nil)
	defer g.Release()
	got := g.Call([]*nd.NDArray{x})
	for i := range want {
		if w, gg := want[i].Float32s(), got[i].Float32s(); !slices.Equal(w, gg) {
			t.Errorf("output %d: replay %v, eager %v", i, gg, w)
		}
	}
}

// BoundTo is about the arrays, not their memory: a parameter released and
// replaced by a new array (which the pool may give the same buffer) makes
// the graph stale.
func TestTraceBoundToIsIdentity(t *testing.T) {
	x := randn(1, 4, 3)
	p := randn(2, 4, 3).Persist()
	p.AttachGrad(nd.GradWrite)
	exit := nd.EnterRecording(true)
	g := nd.Trace("mul", func(in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{nd.Mul(in[0], p)}
	}, []*nd.NDArray{x}, []*nd.NDArray{p})
	exit()
	defer g.Release()
	if !g.BoundTo([]*nd.NDArray{p}) {
		t.Fatal("BoundTo(the traced parameter) = false")
	}
	p.Release()
	q := nd.Ones(cpu0, nd.Float32, 4, 3).Persist()
	q.AttachGrad(nd.GradWrite)
	if g.BoundTo([]*nd.NDArray{q}) || g.BoundTo([]*nd.NDArray{p}) {
		t.Fatal("BoundTo is true for a new array or a released one")
	}
}

// Releasing a recorded replay's output before Backward works where the
// backward pass does not need it, as eagerly.
func TestTraceOutputReleasedBeforeBackward(t *testing.T) {
	for _, traced := range []bool{false, true} {
		x := randn(1, 4, 3)
		p := randn(2, 4, 3)
		p.AttachGrad(nd.GradWrite)
		f := func(in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{nd.Mul(in[0], p)} }
		err := nd.Catch(func() {
			exit := nd.EnterRecording(true)
			var y *nd.NDArray
			if traced {
				g := nd.Trace("mul", f, []*nd.NDArray{x}, []*nd.NDArray{p})
				y = g.Call([]*nd.NDArray{x})[0]
			} else {
				y = f([]*nd.NDArray{x})[0]
			}
			loss := nd.Sum(y)
			exit()
			y.Release()
			nd.Backward([]*nd.NDArray{loss}, nil, false)
		})
		if err != nil {
			t.Errorf("traced=%v: %v (eager passes)", traced, err)
		}
	}
}

// Two inputs that are views of one array (Split halves) replay as eagerly.
func TestTraceInputsSharingMemory(t *testing.T) {
	parts := nd.Split(randn(1, 4, 3), 2, 0)
	f := func(in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{nd.Sub(nd.Exp(in[0]), in[1])} }
	want := f(parts)[0].Float32s()
	g := nd.Trace("mul", f, parts, nil)
	defer g.Release()
	if got := g.Call(parts)[0].Float32s(); !slices.Equal(got, want) {
		t.Fatalf("replay %v, eager %v", got, want)
	}
}

// A random draw inside a computation traced in session A and replayed in
// session B comes from B's generators, as the eager call in B would.
func TestTraceRandomDrawsFromReplayingSession(t *testing.T) {
	a, b := nd.NewSession("A"), nd.NewSession("B")
	f := func(in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{nd.Add(in[0], nd.RandomNormalLike(in[0], 0, 1))}
	}
	xa := a.Zeros(cpu0, nd.Float32, 2, 3)
	g := nd.Trace("noise", f, []*nd.NDArray{xa}, nil)
	defer g.Release()
	nd.Seed(7)
	want := f([]*nd.NDArray{b.Zeros(cpu0, nd.Float32, 2, 3)})[0].Float32s()
	nd.Seed(7)
	got := g.Call([]*nd.NDArray{b.Zeros(cpu0, nd.Float32, 2, 3)})[0].Float32s()
	if !slices.Equal(got, want) {
		t.Fatalf("replay in session B %v, eager in B %v", got, want)
	}
}

// Recorded replays from several goroutines, some dropped without a
// backward pass (their buffer sets come back through the GC cleanup)
// while others backpropagate; run under -race.
func TestTraceRecordedReplaysWithGC(t *testing.T) {
	w := randn(2, 16, 16).Persist()
	w.AttachGrad(nd.GradAdd)
	exit := nd.EnterRecording(true)
	x0 := randn(1, 4, 16)
	g := nd.Trace("dense", func(in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{nd.Tanh(nd.FullyConnected(nd.Tanh(in[0]), w, nil))}
	}, []*nd.NDArray{x0}, []*nd.NDArray{w})
	exit()
	defer g.Release()
	done := make(chan error, 4)
	for k := range 4 {
		go func() {
			done <- nd.Catch(func() {
				s := nd.NewSession("")
				for i := range 200 {
					x := s.RandomNormal(cpu0, nd.Float32, 0, 1, 4, 16)
					var y *nd.NDArray
					s.Record(func() { y = g.Call([]*nd.NDArray{x})[0] })
					if (i+k)%3 == 0 {
						nd.Backward([]*nd.NDArray{y}, nil, false)
					}
					if i%20 == 0 {
						runtime.GC()
					}
				}
			})
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%+v", g.Stats())
}

// An output that no kernel touched (a captured array returned as it is)
// gets a slot of its own and is copied out of it.
func TestTraceUntouchedOutput(t *testing.T) {
	x := randn(1, 2, 3)
	c := nd.Full(cpu0, nd.Float32, 5, 2, 3).Persist()
	f := func(in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{nd.Exp(in[0]), c} }
	g := nd.Trace("const", f, []*nd.NDArray{x}, nil)
	defer g.Release()
	got := g.Call([]*nd.NDArray{x})[1].Float32s()
	if want := c.Float32s(); !slices.Equal(got, want) {
		t.Fatalf("output 1: replay %v, eager %v", got, want)
	}
}

// Pack between a recorded replay and its backward pass (a Trainer made
// after the first forward pass) moves the parameter, or an input, to other
// memory and gives the old buffer back to the pool: the backward replay
// reads them where they are then, as eager does.
func TestTracePackBetweenForwardAndBackward(t *testing.T) {
	for _, packInput := range []bool{false, true} {
		run := func(traced bool) []float32 {
			x := randn(1, 4, 3).Persist()
			x.AttachGrad(nd.GradWrite)
			w := randn(2, 4, 3).Persist()
			w.AttachGrad(nd.GradWrite)
			other := randn(3, 5).Persist()
			f := func(in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{nd.Mul(in[0], w)} }
			exit := nd.EnterRecording(true)
			var y *nd.NDArray
			if traced {
				g := nd.Trace("mul", f, []*nd.NDArray{x}, []*nd.NDArray{w})
				y = g.Call([]*nd.NDArray{x})[0]
			} else {
				y = f([]*nd.NDArray{x})[0]
			}
			exit()
			moved, other2 := w, x
			if packInput {
				moved, other2 = x, w
			}
			nd.Pack([]*nd.NDArray{moved, other})
			junk := nd.Full(cpu0, nd.Float32, 99, 4, 3) // takes the old buffer from the pool
			defer junk.Release()
			nd.Backward([]*nd.NDArray{y}, nil, false)
			return other2.Grad().Float32s()
		}
		want, got := run(false), run(true)
		if !slices.Equal(got, want) {
			t.Fatalf("packing the input=%v: gradient replayed %v, eager %v", packInput, got, want)
		}
	}
}

// AttachGrad inside a trace is an ErrTrace error; RandomInt inside one is
// drawn again on each replay, as eagerly.
func TestTraceAttachGradAndRandomInt(t *testing.T) {
	x := randn(1, 2, 3)
	wantTraceError(t, nd.ErrTrace, func() {
		nd.Trace("attach", func(in []*nd.NDArray) []*nd.NDArray {
			y := nd.Exp(in[0])
			y.AttachGrad(nd.GradWrite)
			return []*nd.NDArray{y}
		}, []*nd.NDArray{x}, nil)
	})
	f := func(in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{nd.Add(in[0], nd.RandomInt(cpu0, nd.Int64, 0, 1000, 2, 3).AsType(nd.Float32))}
	}
	g := nd.Trace("randint", f, []*nd.NDArray{x}, nil)
	defer g.Release()
	nd.Seed(3)
	want := [][]float32{f([]*nd.NDArray{x})[0].Float32s(), f([]*nd.NDArray{x})[0].Float32s()}
	nd.Seed(3)
	for i := range want {
		if got := g.Call([]*nd.NDArray{x})[0].Float32s(); !slices.Equal(got, want[i]) {
			t.Fatalf("call %d: replay %v, eager %v", i, got, want[i])
		}
	}
}

// A recorded computation with a float and an integer output (logits and
// their argmax) traces: only the float output joins the tape node.
func TestTraceRecordedMixedDTypeOutputs(t *testing.T) {
	x := randn(1, 4, 3)
	f := func(w *nd.NDArray) func(in []*nd.NDArray) []*nd.NDArray {
		return func(in []*nd.NDArray) []*nd.NDArray {
			y := nd.Mul(in[0], w)
			return []*nd.NDArray{y, nd.ArgMax(y, 1)}
		}
	}
	run := func(traced bool) [][]float32 {
		w := randn(2, 4, 3)
		w.AttachGrad(nd.GradWrite)
		exit := nd.EnterRecording(true)
		var outs []*nd.NDArray
		if traced {
			g := nd.Trace("two", f(w), []*nd.NDArray{x}, []*nd.NDArray{w})
			defer g.Release()
			outs = g.Call([]*nd.NDArray{x})
		} else {
			outs = f(w)([]*nd.NDArray{x})
		}
		exit()
		nd.Backward([]*nd.NDArray{outs[0]}, nil, false)
		return [][]float32{outs[0].Float32s(), outs[1].AsType(nd.Float32).Float32s(), w.Grad().Float32s()}
	}
	want, got := run(false), run(true)
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("array %d: replay %v, eager %v", i, got[i], want[i])
		}
	}
}

func TestTraceNilInputRecorded(t *testing.T) {
	x := randn(1, 4, 3)
	w := randn(2, 4, 3)
	w.AttachGrad(nd.GradWrite)
	f := func(in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{nd.Mul(in[0], w)} }
	exit := nd.EnterRecording(true)
	g := nd.Trace("nil", f, []*nd.NDArray{x, nil}, []*nd.NDArray{w})
	y := g.Call([]*nd.NDArray{x, nil})[0]
	exit()
	nd.Backward([]*nd.NDArray{y}, nil, false)
	if !slices.Equal(w.Grad().Float32s(), x.Float32s()) {
		t.Fatal("grad")
	}
}
