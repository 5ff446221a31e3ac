package nd_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/nd"
)

// An output that needs no gradient (a Detach) whose buffer the backward
// pass reads (Sigmoid's backward reads its output) stays alive for that
// pass when the caller releases it, as eagerly.
func TestTraceDetachedOutputReadByBackward(t *testing.T) {
	var grads [2][]float32
	for k, traced := range []bool{false, true} {
		x := randn(1, 64, 64)
		x.AttachGrad(nd.GradWrite)
		f := func(in []*nd.NDArray) []*nd.NDArray {
			s := nd.Sigmoid(in[0])
			return []*nd.NDArray{nd.MulScalar(s, 2), s.Detach()}
		}
		exit := nd.EnterRecording(true)
		var outs []*nd.NDArray
		if traced {
			g := nd.Trace("sig", f, []*nd.NDArray{x}, nil)
			outs = g.Call([]*nd.NDArray{x})
		} else {
			outs = f([]*nd.NDArray{x})
		}
		loss := nd.Sum(outs[0])
		exit()
		outs[1].Release()
		junk := nd.Full(cpu0, nd.Float32, 1000, 64, 64) // may reuse the released buffer
		nd.Backward([]*nd.NDArray{loss}, nil, false)
		_ = junk
		grads[k] = x.Grad().Float32s()
	}
	if !slices.Equal(grads[0], grads[1]) {
		t.Fatalf("traced gradient %v..., eager %v...", grads[1][:4], grads[0][:4])
	}
}

// Inputs that overlap a bound array or another input without being the
// same array cannot be told apart by a trace: it says so (gluon.Hybridize
// runs such calls eagerly).
func TestTraceOverlappingRegions(t *testing.T) {
	p := randn(2, 4, 3)
	a := randn(1, 4, 3)
	cases := []struct {
		name          string
		inputs, bound []*nd.NDArray
	}{
		{"input is a parameter", []*nd.NDArray{p}, []*nd.NDArray{p}},
		{"input is a slice of a parameter", []*nd.NDArray{nd.SliceAxis(p, 0, 2, 0)}, []*nd.NDArray{p}},
		{"an input and a slice of it", []*nd.NDArray{a, nd.SliceAxis(a, 1, 3, 0)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantTraceError(t, nd.ErrTrace, func() {
				nd.Trace("overlap", func(in []*nd.NDArray) []*nd.NDArray {
					return []*nd.NDArray{nd.Sum(in[len(in)-1])}
				}, c.inputs, c.bound)
			})
		})
	}
}

// A zero-size input listed before an input sharing its buffer at the same
// offset catches none of the other input's operands.
func TestTraceZeroSizeInput(t *testing.T) {
	a := randn(1, 4, 3)
	empty := nd.SliceAxis(a, 0, 0, 0)
	f := func(in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{nd.Exp(in[1]), nd.MulScalar(in[0], 2)}
	}
	g := nd.Trace("z", f, []*nd.NDArray{empty, a}, nil)
	defer g.Release()
	b := randn(5, 4, 3)
	e := nd.Zeros(cpu0, nd.Float32, 0, 3)
	want := f([]*nd.NDArray{e, b})[0].Float32s()
	var got []float32
	err := nd.Catch(func() { got = g.Call([]*nd.NDArray{e, b})[0].Float32s() })
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("replay %v (err %v), eager %v", got, err, want)
	}
}

// One recorded call with outputs [no-grad, grad, no-grad, grad]: packed
// offsets and heads.
func TestTraceMixedGradOutputs(t *testing.T) {
	run := func(traced bool, which int) ([]float32, [][]float32) {
		x := randn(1, 4, 3)
		x.AttachGrad(nd.GradWrite)
		f := func(in []*nd.NDArray) []*nd.NDArray {
			a := nd.Exp(in[0])
			b := nd.Tanh(in[0])
			outs := []*nd.NDArray{nd.ArgMax(a, 1), nd.MulScalar(a, 3), b.Detach(), nd.SliceAxis(b, 1, 3, 0)}
			if which == 1 {
				outs = outs[:3]
			}
			return outs
		}
		exit := nd.EnterRecording(true)
		var outs []*nd.NDArray
		if traced {
			g := nd.Trace("mix", f, []*nd.NDArray{x}, nil)
			outs = g.Call([]*nd.NDArray{x})
		} else {
			outs = f([]*nd.NDArray{x})
		}
		loss := nd.MulScalar(nd.Sum(outs[1]), 2)
		if which == 0 {
			loss = nd.Add(loss, nd.Sum(nd.Mul(outs[3], outs[3])))
		}
		exit()
		var vals [][]float32
		for _, o := range outs {
			vals = append(vals, o.AsType(nd.Float32).Float32s())
		}
		nd.Backward([]*nd.NDArray{loss}, nil, false)
		return x.Grad().Float32s(), vals
	}
	for which := 0; which < 2; which++ {
		w, wv := run(false, which)
		g, gv := run(true, which)
		if !slices.Equal(w, g) {
			t.Errorf("%d: grad replay %v, eager %v", which, g, w)
		}
		for i := range wv {
			if !slices.Equal(wv[i], gv[i]) {
				t.Errorf("%d: out %d replay %v, eager %v", which, i, gv[i], wv[i])
			}
		}
	}
}

func TestTraceSharedResultSlot(t *testing.T) {
	run := func(traced bool) ([]float32, []float32) {
		x := randn(1, 4, 3)
		x.AttachGrad(nd.GradWrite)
		w := randn(2, 4, 3)
		w.AttachGrad(nd.GradWrite)
		f := func(in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{nd.Exp(nd.Add(in[0], w))} }
		exit := nd.EnterRecording(true)
		var y *nd.NDArray
		if traced {
			g := nd.Trace("e", f, []*nd.NDArray{x}, []*nd.NDArray{w})
			y = g.Call([]*nd.NDArray{x})[0]
		} else {
			y = f([]*nd.NDArray{x})[0]
		}
		exit()
		nd.Backward([]*nd.NDArray{y}, nil, false)
		return x.Grad().Float32s(), w.Grad().Float32s()
	}
	a, b := run(false)
	c, d := run(true)
	if !slices.Equal(a, c) || !slices.Equal(b, d) {
		t.Fatalf("replay %v %v, eager %v %v", c, d, a, b)
	}
}

func TestTraceConcurrentBound(t *testing.T) {
	w := randn(2, 64, 32).Persist()
	f := func(in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{nd.Tanh(nd.FullyConnected(in[0], w, nil))} }
	x0 := randn(1, 8, 32)
	g := nd.Trace("c", f, []*nd.NDArray{x0}, []*nd.NDArray{w})
	defer g.Release()
	done := make(chan string, 8)
	for k := 0; k < 8; k++ {
		go func(k int) {
			s := nd.NewSession("s")
			x := s.Ones(cpu0, nd.Float32, 8, 32)
			nd.Seed(0)
			want := f([]*nd.NDArray{x})[0].Float32s()
			for i := 0; i < 50; i++ {
				if got := g.Call([]*nd.NDArray{x})[0].Float32s(); !slices.Equal(got, want) {
					done <- "mismatch"
					return
				}
			}
			done <- ""
		}(k)
	}
	for k := 0; k < 8; k++ {
		if m := <-done; m != "" {
			t.Fatal(m)
		}
	}
}

func TestTraceZeroSize(t *testing.T) {
	for _, rec := range []bool{false, true} {
		x := randn(1, 4, 3)
		x.AttachGrad(nd.GradWrite)
		w := randn(2, 4, 3)
		w.AttachGrad(nd.GradWrite)
		f := func(in []*nd.NDArray) []*nd.NDArray {
			y := nd.Mul(in[0], w)
			return []*nd.NDArray{nd.SliceAxis(y, 0, 0, 0), y, nd.MulScalar(nd.SliceAxis(y, 1, 1, 0), 2), nd.Exp(in[1])}
		}
		e := nd.Zeros(cpu0, nd.Float32, 0, 3)
		err := nd.Catch(func() {
			exit := nd.EnterRecording(rec)
			g := nd.Trace("z", f, []*nd.NDArray{x, e}, []*nd.NDArray{w})
			outs := g.Call([]*nd.NDArray{x, nd.Zeros(cpu0, nd.Float32, 0, 3)})
			want := f([]*nd.NDArray{x, e})
			l := nd.Sum(outs[1])
			exit()
			for i := range outs {
				if !slices.Equal(outs[i].Float32s(), want[i].Float32s()) {
					t.Errorf("rec=%v out %d", rec, i)
				}
			}
			if rec {
				nd.Backward([]*nd.NDArray{l}, nil, false)
			}
		})
		if err != nil {
			t.Errorf("rec=%v: %v", rec, err)
		}
	}
}
