package loss_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/nd"
)

// The goldens come from testdata/make_goldens_extra.py (PyTorch 1.13,
// float64); see its docstring for the schema.

type extraConfig struct {
	Weight       float64 `json:"weight"`
	Margin       float64 `json:"margin"`
	Binary       bool    `json:"binary"`
	LogInput     bool    `json:"log_input"`
	FromLogits   bool    `json:"from_logits"`
	Full         bool    `json:"full"`
	Layout       string  `json:"layout"`
	Blank        int     `json:"blank"`
	ZeroInfinity bool    `json:"zero_infinity"`
	Axis         int     `json:"axis"`
	Sparse       bool    `json:"sparse"`
	UseIgnore    bool    `json:"use_ignore"`
	IgnoreLabel  int     `json:"ignore_label"`
	Smoothing    float64 `json:"label_smoothing"`
	FromSigmoid  bool    `json:"from_sigmoid"`
	TokenMean    bool    `json:"token_mean"`
}

type extraGolden struct {
	Name   string            `json:"name"`
	Kind   string            `json:"kind"`
	Config extraConfig       `json:"config"`
	Inputs map[string]tensor `json:"inputs"`
	Head   tensor            `json:"head"`
	Loss   tensor            `json:"loss"`
	Grads  map[string]tensor `json:"grads"`
}

// run computes the case's loss from inputs (by name) in their dtype.
func (g extraGolden) run(t *testing.T, in map[string]*nd.NDArray) *nd.NDArray {
	c := g.Config
	sw := in["sample_weight"]
	switch g.Kind {
	case "hinge":
		return loss.Hinge{Margin: c.Margin, Weight: c.Weight}.ForwardWeighted(in["pred"], in["label"], sw)
	case "squared_hinge":
		return loss.SquaredHinge{Margin: c.Margin, Weight: c.Weight}.ForwardWeighted(in["pred"], in["label"], sw)
	case "logistic":
		return loss.Logistic{BinaryLabels: c.Binary, Weight: c.Weight}.ForwardWeighted(in["pred"], in["label"], sw)
	case "triplet":
		return loss.Triplet{Margin: c.Margin, Weight: c.Weight}.ForwardWeighted(in["pred"], in["positive"], in["negative"], sw)
	case "cosine":
		return loss.CosineEmbedding{Margin: c.Margin, Weight: c.Weight}.ForwardWeighted(in["input1"], in["input2"], in["label"], sw)
	case "poisson":
		return loss.PoissonNLL{FromLogits: c.LogInput, ComputeFull: c.Full, Weight: c.Weight}.ForwardWeighted(in["pred"], in["label"], sw)
	case "ctc":
		l := loss.CTC{Layout: c.Layout, Blank: c.Blank, ZeroInfinity: c.ZeroInfinity, Weight: c.Weight}
		return l.ForwardWeighted(in["pred"], in["label"], in["pred_lengths"], in["label_lengths"], sw)
	case "softmax_ce_weighted":
		l := loss.SoftmaxCrossEntropy{Axis: c.Axis, Sparse: c.Sparse, FromLogits: c.FromLogits, Weight: c.Weight,
			UseIgnore: c.UseIgnore, IgnoreLabel: c.IgnoreLabel, LabelSmoothing: c.Smoothing, ClassWeight: in["class_weight"], TokenMean: c.TokenMean}
		return l.ForwardWeighted(in["pred"], in["label"], sw)
	case "bce_pos_weight":
		l := loss.SigmoidBCE{FromSigmoid: c.FromSigmoid, Weight: c.Weight, PosWeight: in["pos_weight"]}
		return l.ForwardWeighted(in["pred"], in["label"], sw)
	case "kl_log_target":
		return loss.KLDiv{FromLogits: true, LogTarget: true, Weight: c.Weight}.ForwardWeighted(in["pred"], in["label"], sw)
	}
	t.Fatalf("unknown kind %q", g.Kind)
	return nil
}

// TestGoldensExtra compares the per-sample losses and the gradients of
// every differentiable input with PyTorch in float64, and the losses in
// float32.
func TestGoldensExtra(t *testing.T) {
	b, err := os.ReadFile("testdata/goldens_extra.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []extraGolden `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 30 {
		t.Fatalf("%d golden cases, want the generator's 30", len(f.Cases))
	}
	for _, g := range f.Cases {
		checkLossGolden(t, g.Name, g.Inputs, g.Head, g.Loss, g.Grads, g.run)
	}
}

// checkLossGolden runs one loss golden: in float64 the loss and the
// gradients of its named inputs (weighted by head) against torch's, in
// float32 the loss within float32's tolerance.
func checkLossGolden(t *testing.T, name string, inputs map[string]tensor, head, loss tensor, grads map[string]tensor, run func(*testing.T, map[string]*nd.NDArray) *nd.NDArray) {
	dev := ctx.CPU(0)
	build := func(dt nd.DType) map[string]*nd.NDArray {
		in := map[string]*nd.NDArray{}
		for n, x := range inputs {
			in[n] = nd.FromSlice(dev, x.Data, x.Shape...).AsType(dt)
		}
		return in
	}
	t.Run(name+"/float64", func(t *testing.T) {
		in := build(nd.Float64)
		for n := range grads {
			in[n].AttachGrad(nd.GradWrite)
		}
		var out *nd.NDArray
		autograd.Record(func() { out = run(t, in) })
		if !slices.Equal(out.Shape(), loss.Shape) {
			t.Fatalf("loss shape %v, want %v", out.Shape(), loss.Shape)
		}
		closeTo(t, "loss", out.Float64s(), loss, 1e-10)
		h := nd.FromSlice(dev, head.Data, head.Shape...)
		nd.Backward([]*nd.NDArray{out}, []*nd.NDArray{h}, false)
		for n, want := range grads {
			closeTo(t, "grad "+n, in[n].Grad().Float64s(), want, 1e-9)
		}
	})
	t.Run(name+"/float32", func(t *testing.T) {
		out := run(t, build(nd.Float32))
		if out.DType() != nd.Float32 {
			t.Fatalf("dtype %v, want float32", out.DType())
		}
		closeTo(t, "loss", out.Float64s(), loss, 2e-5)
	})
}
