package rnn_test

import (
	"testing"

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
		if p.Data(cpu0) != p.Data(cpu0) {
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
	return nd.Concat(0, parts...)
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
				}, inputs, ndtest.GradTol{Eps: 1e-7})
			})
		}
	}
}
