package rnn_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/internal/goldentest"
	"github.com/goluon/goluon/nd"
)

// normCase is a case of testdata/norms_goldens.json
// (make_goldens_norms.py, PyTorch 1.13, float64): a layer one of whose
// weights is spectrally or weight normalised, after one training-mode
// forward and backward pass.
type normCase struct {
	Name       string `json:"name"`
	Mode       string `json:"mode"`
	Norm       string `json:"norm"` // "spectral" or "weight"
	Weight     string `json:"weight"`
	Iterations int    `json:"iterations"`
	Config     struct {
		Input, Hidden, Layers int
	} `json:"config"`
	Params  map[string]tensor `json:"params"`
	U0      tensor            `json:"u0"`
	V0      tensor            `json:"v0"`
	U       tensor            `json:"u"`
	V       tensor            `json:"v"`
	Inputs  map[string]tensor `json:"inputs"`
	Heads   []tensor          `json:"heads"`
	Outputs []tensor          `json:"outputs"`
	Grads   map[string]tensor `json:"grads"`
}

// TestNormGoldens: a layer reads each weight once per forward call, so a
// spectrally normalised recurrent weight runs its power method once per
// training-mode call (Iterations times), as PyTorch's parametrization
// does, not once per time step: the outputs, every gradient and the
// power method's vectors after the pass match PyTorch's.
func TestNormGoldens(t *testing.T) {
	dev := ctx.CPU(0)
	for _, c := range goldentest.Cases[normCase](t, "testdata/norms_goldens.json") {
		t.Run(c.Name, func(t *testing.T) {
			l := rnn.NewLayer(modes[c.Mode], c.Config.Hidden, rnn.Opts{NumLayers: c.Config.Layers, InputSize: c.Config.Input})
			params := gluon.CollectParams(l)
			for _, p := range params.List() {
				p.SetDType(nd.Float64)
			}
			if err := params.Initialize(nil, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			for name, v := range c.Params {
				params.Get(name).SetData(v.Array(dev))
			}
			var sn *nn.SpectralNorm
			if c.Norm == "spectral" {
				sn = nn.ApplySpectralNorm(l, nn.SpectralNormOpts{Name: c.Weight, Iterations: c.Iterations})
				sn.U.SetData(c.U0.Array(dev))
				sn.V.SetData(c.V0.Array(dev))
			} else {
				nn.ApplyWeightNorm(l, nn.WeightNormOpts{Name: c.Weight})
			}
			x := c.Inputs["x"].Array(dev)
			x.AttachGrad(nd.GradWrite)
			var outs []*nd.NDArray
			autograd.Record(func() {
				outs = l.ForwardMulti(x)
				heads := make([]*nd.NDArray, len(c.Heads))
				for i, h := range c.Heads {
					heads[i] = h.Array(dev)
				}
				autograd.BackwardHeads(outs, autograd.BackwardOpts{HeadGrads: heads})
			})
			if len(outs) != len(c.Outputs) {
				t.Fatalf("%d outputs, PyTorch %d", len(outs), len(c.Outputs))
			}
			for i, o := range outs {
				goldentest.Compare(t, "output "+string(rune('0'+i)), o, c.Outputs[i], goldenTol)
			}
			params = gluon.CollectParams(l)
			for _, name := range slices.Sorted(maps.Keys(c.Grads)) {
				g := x.Grad()
				if name != "x" {
					p := params.Get(name)
					if p == nil {
						t.Fatalf("no parameter %q among %v", name, params.Names())
					}
					g = p.Grad(dev)
				}
				goldentest.Compare(t, "gradient of "+name, g, c.Grads[name], goldenTol)
			}
			if sn != nil {
				goldentest.Compare(t, "u after the pass", sn.U.Data(dev), c.U, goldenTol)
				goldentest.Compare(t, "v after the pass", sn.V.Data(dev), c.V, goldenTol)
			}
		})
	}
}

// TestNormCellPerStep: a Cell reads its weights at each call, so a
// spectrally normalised cell stepped by hand iterates once per step (as
// PyTorch's RNNCell with spectral_norm does per call) and its original
// weight gets a gradient.
func TestNormCellPerStep(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(4)
	c := rnn.NewLSTMCell(3, 4)
	params := gluon.CollectParams(c)
	for _, p := range params.List() {
		p.SetDType(nd.Float64)
	}
	if err := params.Initialize(nil, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	sn := nn.ApplySpectralNorm(c, nn.SpectralNormOpts{Name: "weight_hh"})
	u0 := sn.U.Data(dev).Float64s()
	x := nd.RandomNormal(dev, nd.Float64, 0, 1, 2, 3)
	autograd.Record(func() {
		st := c.ForwardMulti(x)
		st = c.ForwardMulti(x, st[0], st[1])
		autograd.Backward(nd.Sum(st[0]))
	})
	if u := sn.U.Data(dev).Float64s(); slices.Equal(u, u0) {
		t.Error("U did not move in two training-mode steps")
	}
	if g := nd.Sum(nd.Abs(sn.Orig.Grad(dev))).Scalar(); g == 0 {
		t.Error("weight_hh_orig got no gradient")
	}
}
