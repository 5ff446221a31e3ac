package rnn_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/internal/goldentest"
	"github.com/goluon/goluon/nd"
)

// The goldens come from testdata/make_goldens.py (PyTorch, float64): each
// case is a layer or cell with its state_dict, inputs, head gradients for
// every output, the outputs, and the gradients of the inputs and of every
// parameter.

type tensor = goldentest.Tensor

type goldenCase struct {
	Name   string `json:"name"`
	Mode   string `json:"mode"`
	Kind   string `json:"kind"`
	Config struct {
		Input, Hidden, Layers int
		Bidirectional         bool
		BatchFirst            bool    `json:"batch_first"`
		Lengths               []int64 `json:"lengths"` // a packed, padded batch
	} `json:"config"`
	Params  map[string]tensor `json:"params"`
	Inputs  map[string]tensor `json:"inputs"`
	Heads   []tensor          `json:"heads"`
	Outputs []tensor          `json:"outputs"`
	Grads   map[string]tensor `json:"grads"`
}

const goldenTol = 1e-10

var modes = map[string]rnn.Mode{"rnn_tanh": rnn.RNNTanh, "rnn_relu": rnn.RNNReLU, "lstm": rnn.LSTM, "gru": rnn.GRU}

// build returns the case's layer or cell with float64 parameters on cpu(0)
// holding the case's values, and the names of the state inputs in order.
func build(t *testing.T, c goldenCase) (gluon.Component, []string) {
	t.Helper()
	m, ok := modes[c.Mode]
	if !ok {
		t.Fatalf("unknown mode %q", c.Mode)
	}
	var b gluon.Component
	states := []string{"h0", "c0"}
	switch c.Kind {
	case "layer":
		layout := "TNC"
		if c.Config.BatchFirst {
			layout = "NTC"
		}
		b = rnn.NewLayer(m, c.Config.Hidden, rnn.Opts{NumLayers: c.Config.Layers,
			Bidirectional: c.Config.Bidirectional, Layout: layout, InputSize: c.Config.Input})
	case "cell":
		b = rnn.NewCell(m, c.Config.Input, c.Config.Hidden)
		states = []string{"h", "c"}
	default:
		t.Fatalf("unknown kind %q", c.Kind)
	}
	if m != rnn.LSTM {
		states = states[:1]
	}
	params := gluon.CollectParams(b)
	if got, want := params.Names(), slices.Sorted(maps.Keys(c.Params)); !sameSet(got, want) {
		t.Fatalf("parameters %v, PyTorch's state_dict %v", got, want)
	}
	for _, p := range params.List() {
		p.SetDType(nd.Float64)
	}
	if err := params.Initialize(nil, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	for _, name := range params.Names() {
		v := c.Params[name]
		params.Get(name).SetData(nd.FromSlice(ctx.CPU(0), v.Data, v.Shape...))
	}
	return b, states
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func TestGoldens(t *testing.T) {
	worst := 0.0
	for _, c := range goldentest.Cases[goldenCase](t, "testdata/goldens.json") {
		t.Run(c.Name, func(t *testing.T) {
			worst = max(worst, runGolden(t, c))
		})
	}
	t.Logf("largest difference from PyTorch %.3g (relative to 1+|PyTorch|)", worst)
}

func runGolden(t *testing.T, c goldenCase) float64 {
	dev := ctx.CPU(0)
	b, states := build(t, c)
	in := map[string]*nd.NDArray{}
	args := []*nd.NDArray{nil}
	for name, v := range c.Inputs {
		in[name] = nd.FromSlice(dev, v.Data, v.Shape...)
		in[name].AttachGrad(nd.GradWrite)
	}
	args[0] = in["x"]
	for _, s := range states {
		args = append(args, in[s]) // nil when the case starts from zeros
	}
	if len(c.Config.Lengths) > 0 {
		args = append(args, nd.FromSlice(dev, c.Config.Lengths))
	}
	var outs []*nd.NDArray
	autograd.Record(func() { outs = gluon.Call(b, args...) })
	if len(outs) != len(c.Outputs) || len(c.Heads) != len(outs) {
		t.Fatalf("%d outputs, PyTorch %d (%d heads)", len(outs), len(c.Outputs), len(c.Heads))
	}
	heads := make([]*nd.NDArray, len(outs))
	for i, h := range c.Heads {
		heads[i] = nd.FromSlice(dev, h.Data, h.Shape...)
	}
	autograd.BackwardHeads(outs, autograd.BackwardOpts{HeadGrads: heads})
	worst := 0.0
	for i, o := range outs {
		worst = max(worst, goldentest.Compare(t, "output "+string(rune('0'+i)), o, c.Outputs[i], goldenTol))
	}
	params := gluon.CollectParams(b)
	for _, name := range slices.Sorted(maps.Keys(c.Grads)) {
		var g *nd.NDArray
		if a, ok := in[name]; ok {
			g = a.Grad()
		} else if p := params.Get(name); p != nil {
			g = p.Grad(dev)
		} else {
			t.Fatalf("gradient of unknown %q", name)
		}
		worst = max(worst, goldentest.Compare(t, "grad "+name, g, c.Grads[name], goldenTol))
	}
	return worst
}
