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

// The goldens come from testdata/make_goldens_extra2.py (PyTorch 1.13,
// float64); see its docstring for the schema.

type extra2Config struct {
	Weight      float64 `json:"weight"`
	Margin      float64 `json:"margin"`
	P           int     `json:"p"`
	Full        bool    `json:"full"`
	Eps         float64 `json:"eps"`
	IgnoreLabel int     `json:"ignore_label"`
}

type extra2Golden struct {
	Name   string            `json:"name"`
	Kind   string            `json:"kind"`
	Config extra2Config      `json:"config"`
	Inputs map[string]tensor `json:"inputs"`
	Head   tensor            `json:"head"`
	Loss   tensor            `json:"loss"`
	Grads  map[string]tensor `json:"grads"`
}

// run computes the case's loss from inputs (by name) in their dtype.
func (g extra2Golden) run(t *testing.T, in map[string]*nd.NDArray) *nd.NDArray {
	c := g.Config
	sw := in["sample_weight"]
	switch g.Kind {
	case "gaussian_nll":
		return loss.GaussianNLL{Full: c.Full, Epsilon: c.Eps, Weight: c.Weight}.ForwardWeighted(in["pred"], in["label"], in["var"], sw)
	case "multi_margin":
		l := loss.MultiMargin{P: c.P, Margin: c.Margin, ClassWeight: in["class_weight"], Weight: c.Weight}
		return l.ForwardWeighted(in["pred"], in["label"], sw)
	case "margin_ranking":
		return loss.MarginRanking{Margin: c.Margin, Weight: c.Weight}.ForwardWeighted(in["input1"], in["input2"], in["label"], sw)
	case "nll":
		// PyTorch's NLLLoss: SoftmaxCrossEntropy on log-probabilities.
		l := loss.SoftmaxCrossEntropy{Axis: 1, Sparse: true, FromLogits: true, UseIgnore: true, IgnoreLabel: c.IgnoreLabel,
			TokenMean: true, ClassWeight: in["class_weight"], Weight: c.Weight}
		return l.ForwardWeighted(in["pred"], in["label"], sw)
	case "multilabel_soft_margin":
		// PyTorch's MultiLabelSoftMarginLoss: SigmoidBCE, class weights as
		// sample weights [1, C].
		var cw *nd.NDArray
		if w := in["class_weight"]; w != nil {
			cw = nd.Reshape(w, 1, w.Size())
		}
		return loss.SigmoidBCE{Weight: c.Weight}.ForwardWeighted(in["pred"], in["label"], cw)
	}
	t.Fatalf("unknown kind %q", g.Kind)
	return nil
}

// TestGoldensExtra2 compares the per-sample losses and the gradients of
// every differentiable input with PyTorch in float64, and the losses in
// float32.
func TestGoldensExtra2(t *testing.T) {
	b, err := os.ReadFile("testdata/goldens_extra2.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []extra2Golden `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 16 {
		t.Fatalf("%d golden cases, want the generator's 16", len(f.Cases))
	}
	dev := ctx.CPU(0)
	for _, g := range f.Cases {
		inputs := func(dt nd.DType) map[string]*nd.NDArray {
			in := map[string]*nd.NDArray{}
			for name, x := range g.Inputs {
				in[name] = nd.FromSlice(dev, x.Data, x.Shape...).AsType(dt)
			}
			return in
		}
		t.Run(g.Name+"/float64", func(t *testing.T) {
			in := inputs(nd.Float64)
			for name := range g.Grads {
				in[name].AttachGrad(nd.GradWrite)
			}
			var out *nd.NDArray
			autograd.Record(func() { out = g.run(t, in) })
			if !slices.Equal(out.Shape(), g.Loss.Shape) {
				t.Fatalf("loss shape %v, want %v", out.Shape(), g.Loss.Shape)
			}
			closeTo(t, "loss", out.Float64s(), g.Loss, 1e-10)
			head := nd.FromSlice(dev, g.Head.Data, g.Head.Shape...)
			nd.Backward([]*nd.NDArray{out}, []*nd.NDArray{head}, false)
			for name, want := range g.Grads {
				closeTo(t, "grad "+name, in[name].Grad().Float64s(), want, 1e-9)
			}
		})
		t.Run(g.Name+"/float32", func(t *testing.T) {
			out := g.run(t, inputs(nd.Float32))
			if out.DType() != nd.Float32 {
				t.Fatalf("dtype %v, want float32", out.DType())
			}
			closeTo(t, "loss", out.Float64s(), g.Loss, 2e-5)
		})
	}
}
