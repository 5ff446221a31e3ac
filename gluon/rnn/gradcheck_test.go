package rnn_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

var cpu0, cpu1 = ctx.CPU(0), ctx.CPU(1)

// randomParams makes b's parameters float64 on the given contexts with
// random values U(-0.6, 0.6) and returns their cpu(0) arrays.
func randomParams(t *testing.T, b gluon.Component, devs ...ctx.Context) []*nd.NDArray {
	t.Helper()
	params := gluon.CollectParams(b)
	for _, p := range params.List() {
		p.SetDType(nd.Float64)
	}
	if err := params.Initialize(nil, devs, false); err != nil {
		t.Fatal(err)
	}
	var arrs []*nd.NDArray
	for i, p := range params.List() {
		p.SetData(ndtest.Rand(cpu0, uint64(50+i), -0.6, 0.6, p.Shape()...))
		// The check perturbs these arrays in place: they must be the very
		// arrays the layer reads, or it would compare zeros with zeros.
		if first, second := p.Data(cpu0), p.Data(cpu0); first != second {
			t.Fatalf("%s: Data returns a new array each call", p.Name())
		}
		arrs = append(arrs, p.Data(cpu0))
	}
	return arrs
}

// flat concatenates every output, flattened, so that one check covers the
// sequence output and the final states.
func flat(outs []*nd.NDArray) *nd.NDArray {
	parts := make([]*nd.NDArray, len(outs))
	for i, o := range outs {
		parts[i] = nd.Reshape(o, -1)
	}
	return nd.Concat(parts, 0)
}

// TestGradients checks, in float64, the gradients of every output (the
// sequence and the final states) with respect to the input, the begin
// states and every parameter, for cells and layers of each mode.
func TestGradients(t *testing.T) {
	const n, in, hid = 2, 3, 4
	for _, m := range []rnn.Mode{rnn.RNNTanh, rnn.RNNReLU, rnn.LSTM, rnn.GRU} {
		states := 1
		if m == rnn.LSTM {
			states = 2
		}
		for _, tc := range []struct {
			name  string
			block func() gluon.Component
			x     []int
			state []int // nil: a cell
		}{
			{"cell", func() gluon.Component { return rnn.NewCell(m, in, hid) }, []int{n, in}, []int{n, hid}},
			{"layer-2-bidir-ntc", func() gluon.Component {
				return rnn.NewLayer(m, hid, rnn.Opts{NumLayers: 2, Bidirectional: true, Layout: "NTC", InputSize: in})
			}, []int{n, 3, in}, []int{4, n, hid}},
			{"layer-1-tnc", func() gluon.Component { return rnn.NewLayer(m, hid, rnn.Opts{InputSize: in}) }, []int{3, n, in}, []int{1, n, hid}},
		} {
			t.Run(m.String()+"/"+tc.name, func(t *testing.T) {
				b := tc.block()
				params := randomParams(t, b, cpu0)
				// A small step keeps RNNReLU's finite differences off its
				// kink at 0.
				inputs := []*nd.NDArray{ndtest.Rand(cpu0, 1, -1, 1, tc.x...)}
				for i := range states {
					inputs = append(inputs, ndtest.Rand(cpu0, uint64(2+i), -0.8, 0.8, tc.state...))
				}
				k := len(inputs)
				inputs = append(inputs, params...)
				ndtest.CheckGrad(t, func(a []*nd.NDArray) *nd.NDArray {
					return flat(gluon.Call(b, a[:k]...))
				}, inputs, ndtest.GradTol{Step: 1e-7})
			})
		}
	}
}

// TestGradientsWithDropout checks a 2-layer bidirectional layer with
// dropout between its layers in training mode: CheckGrad reseeds the
// generator before every evaluation, so each sees the same mask and the
// gradient must flow through the kept units only.
func TestGradientsWithDropout(t *testing.T) {
	const n, in, hid = 2, 3, 4
	for _, m := range []rnn.Mode{rnn.LSTM, rnn.GRU} {
		t.Run(m.String(), func(t *testing.T) {
			l := rnn.NewLayer(m, hid, rnn.Opts{NumLayers: 2, Bidirectional: true, Dropout: 0.4, InputSize: in})
			params := randomParams(t, l, cpu0)
			inputs := []*nd.NDArray{ndtest.Rand(cpu0, 1, -1, 1, 3, n, in)}
			inputs = append(inputs, ndtest.Rand(cpu0, 2, -0.8, 0.8, 4, n, hid))
			k := len(inputs)
			inputs = append(inputs, params...)
			ndtest.CheckGrad(t, func(a []*nd.NDArray) *nd.NDArray {
				return flat(gluon.Call(l, a[:k]...))
			}, inputs, ndtest.GradTol{Step: 1e-7, Train: true})
		})
	}
}

// TestGradientsReachEveryParameter makes sure the checks above compare
// something: in a 2-layer bidirectional layer with begin states, the input,
// the begin states and every parameter (both directions of both layers)
// get a gradient that is not all zero.
func TestGradientsReachEveryParameter(t *testing.T) {
	for _, m := range []rnn.Mode{rnn.RNNTanh, rnn.RNNReLU, rnn.LSTM, rnn.GRU} {
		t.Run(m.String(), func(t *testing.T) {
			l := rnn.NewLayer(m, 4, rnn.Opts{NumLayers: 2, Bidirectional: true, InputSize: 3})
			randomParams(t, l, cpu0)
			inputs := []*nd.NDArray{ndtest.Rand(cpu0, 1, -1, 1, 3, 2, 3)}
			names := []string{"x", "h0", "c0"}[:1+len(l.BeginState(inputs[0], 2))]
			for i := range names[1:] {
				inputs = append(inputs, ndtest.Rand(cpu0, uint64(2+i), -0.8, 0.8, 4, 2, 4))
			}
			for _, a := range inputs {
				a.AttachGrad(nd.GradWrite)
			}
			autograd.Record(func() {
				autograd.Backward(nd.Sum(nd.Square(flat(gluon.Call(l, inputs...)))))
			})
			grads := map[string]*nd.NDArray{}
			for i, a := range inputs {
				grads[names[i]] = a.Grad()
			}
			params := gluon.CollectParams(l)
			if len(params.Names()) != 16 {
				t.Fatalf("%d parameters, want 16 (4 per direction per layer)", len(params.Names()))
			}
			for _, p := range params.List() {
				grads[p.Name()] = p.Grad(cpu0)
			}
			for name, g := range grads {
				if g == nil {
					t.Errorf("%s has no gradient", name)
					continue
				}
				if !slices.ContainsFunc(g.Float64s(), func(v float64) bool { return v != 0 }) {
					t.Errorf("%s gradient is all zero", name)
				}
			}
		})
	}
}

// recordingTB is a testing.TB that records failures instead of reporting
// them, to test that the gradient check can fail.
type recordingTB struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recordingTB) Errorf(f string, a ...any) { r.failed, r.msg = true, fmt.Sprintf(f, a...) }
func (r *recordingTB) Error(a ...any)            { r.failed, r.msg = true, fmt.Sprint(a...) }
func (r *recordingTB) Fatalf(f string, a ...any) { r.failed, r.msg = true, fmt.Sprintf(f, a...) }
func (r *recordingTB) Helper()                   {}

// TestGradCheckCatchesWrongGradient makes sure the recurrent checks can
// fail. A cell unrolled by hand over a sequence passes; the same unrolling
// with the state detached between steps (truncated backpropagation through
// time: the gradient misses every path through a later step) must fail,
// and so must a layer whose begin state is detached (its gradient is zero,
// the numerical one is not).
func TestGradCheckCatchesWrongGradient(t *testing.T) {
	const T, n, in, hid = 3, 2, 3, 4
	for _, m := range []rnn.Mode{rnn.LSTM, rnn.GRU} {
		t.Run(m.String(), func(t *testing.T) {
			cell := rnn.NewCell(m, in, hid)
			randomParams(t, cell, cpu0)
			unroll := func(truncate bool) func(a []*nd.NDArray) *nd.NDArray {
				return func(a []*nd.NDArray) *nd.NDArray {
					x, st := a[0], a[1:]
					var hs []*nd.NDArray
					for i := range T {
						st = gluon.Call(cell, append([]*nd.NDArray{nd.Reshape(nd.SliceAxis(x, i, i+1, 0), n, in)}, st...)...)
						hs = append(hs, st[0])
						if truncate {
							for j := range st {
								st[j] = st[j].Detach()
							}
						}
					}
					return flat(append(hs, st...))
				}
			}
			inputs := func() []*nd.NDArray {
				a := []*nd.NDArray{ndtest.Rand(cpu0, 1, -1, 1, T, n, in)}
				for i := range cell.BeginState(a[0], n) {
					a = append(a, ndtest.Rand(cpu0, uint64(2+i), -0.8, 0.8, n, hid))
				}
				return a
			}
			ndtest.CheckGrad(t, unroll(false), inputs(), ndtest.GradTol{Step: 1e-7})
			rec := &recordingTB{TB: t}
			ndtest.CheckGrad(rec, unroll(true), inputs(), ndtest.GradTol{Step: 1e-7})
			if !rec.failed {
				t.Error("CheckGrad accepted the gradient of a truncated unrolling")
			}

			l := rnn.NewLayer(m, hid, rnn.Opts{NumLayers: 2, Bidirectional: true, InputSize: in})
			randomParams(t, l, cpu0)
			x, h0 := ndtest.Rand(cpu0, 1, -1, 1, T, n, in), ndtest.Rand(cpu0, 2, -0.8, 0.8, 4, n, hid)
			rec = &recordingTB{TB: t}
			ndtest.CheckGrad(rec, func(a []*nd.NDArray) *nd.NDArray {
				return flat(gluon.Call(l, a[0], a[1].Detach()))
			}, []*nd.NDArray{x, h0}, ndtest.GradTol{Step: 1e-7})
			if !rec.failed || !strings.Contains(rec.msg, "input 1") {
				t.Errorf("CheckGrad on a detached begin state: failed %v (%q), want a failure on input 1", rec.failed, rec.msg)
			}
		})
	}
}
