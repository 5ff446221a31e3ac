package loss_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/nd"
)

// The goldens come from testdata/make_goldens.py (PyTorch 1.13, float64);
// see its docstring for the schema.

type tensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

type config struct {
	Weight      float64 `json:"weight"`
	Axis        int     `json:"axis"`
	Sparse      bool    `json:"sparse"`
	FromLogits  bool    `json:"from_logits"`
	FromSigmoid bool    `json:"from_sigmoid"`
	UseIgnore   bool    `json:"use_ignore"`
	IgnoreLabel int     `json:"ignore_label"`
	Smoothing   float64 `json:"label_smoothing"`
	Rho         float64 `json:"rho"`
}

type golden struct {
	Name         string  `json:"name"`
	Kind         string  `json:"kind"`
	Config       config  `json:"config"`
	Pred         tensor  `json:"pred"`
	Label        tensor  `json:"label"`
	SampleWeight *tensor `json:"sample_weight"`
	Head         tensor  `json:"head"`
	Loss         tensor  `json:"loss"`
	GradPred     tensor  `json:"grad_pred"`
}

func loadGoldens(t *testing.T) []golden {
	t.Helper()
	b, err := os.ReadFile("testdata/goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []golden `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("no golden cases")
	}
	return f.Cases
}

// build returns the loss a golden case describes.
func (g golden) build(t *testing.T) loss.Weighted {
	c := g.Config
	switch g.Kind {
	case "l2":
		return loss.L2{Weight: c.Weight}
	case "l1":
		return loss.L1{Weight: c.Weight}
	case "sigmoid_bce":
		return loss.SigmoidBCE{FromSigmoid: c.FromSigmoid, Weight: c.Weight}
	case "softmax_ce":
		return loss.SoftmaxCrossEntropy{Axis: c.Axis, Sparse: c.Sparse, FromLogits: c.FromLogits, Weight: c.Weight}
	case "softmax_ce_ignore":
		return loss.SoftmaxCrossEntropy{Axis: c.Axis, Sparse: true, Weight: c.Weight,
			UseIgnore: c.UseIgnore, IgnoreLabel: c.IgnoreLabel, LabelSmoothing: c.Smoothing}
	case "kl_div":
		return loss.KLDiv{FromLogits: c.FromLogits, Axis: c.Axis, Weight: c.Weight}
	case "huber":
		return loss.Huber{Rho: c.Rho, Weight: c.Weight}
	}
	t.Fatalf("unknown kind %q", g.Kind)
	return nil
}

// inputs returns the case's pred, label and sample weights (nil when the
// case has none) in dtype dt.
func (g golden) inputs(dt nd.DType) (pred, label, sw *nd.NDArray) {
	dev := ctx.CPU(0)
	mk := func(x tensor) *nd.NDArray {
		return nd.FromSlice(dev, x.Data, x.Shape...).AsType(dt)
	}
	pred, label = mk(g.Pred), mk(g.Label)
	if g.SampleWeight != nil {
		sw = mk(*g.SampleWeight)
	}
	return pred, label, sw
}

func closeTo(t *testing.T, what string, got []float64, want tensor, tol float64) {
	t.Helper()
	if len(got) != len(want.Data) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want.Data))
	}
	for i := range got {
		if d := math.Abs(got[i] - want.Data[i]); !(d <= tol*(1+math.Abs(want.Data[i]))) {
			t.Errorf("%s[%d] = %.15g, PyTorch %.15g", what, i, got[i], want.Data[i])
		}
	}
}

// TestGoldens compares per-sample losses and the gradients with respect to
// the predictions with PyTorch, in float64 (forward and backward) and in
// float32 (forward).
func TestGoldens(t *testing.T) {
	for _, g := range loadGoldens(t) {
		t.Run(g.Name+"/float64", func(t *testing.T) {
			l := g.build(t)
			pred, label, sw := g.inputs(nd.Float64)
			pred.AttachGrad(nd.GradWrite)
			var out *nd.NDArray
			autograd.Record(func() {
				out = l.ForwardWeighted(pred, label, sw)
			})
			if !slices.Equal(out.Shape(), g.Loss.Shape) {
				t.Fatalf("loss shape %v, want %v", out.Shape(), g.Loss.Shape)
			}
			closeTo(t, "loss", out.Float64s(), g.Loss, 1e-10)
			head := nd.FromSlice(ctx.CPU(0), g.Head.Data, g.Head.Shape...)
			nd.Backward([]*nd.NDArray{out}, []*nd.NDArray{head}, false)
			closeTo(t, "grad", pred.Grad().Float64s(), g.GradPred, 1e-9)
		})
		t.Run(g.Name+"/float32", func(t *testing.T) {
			pred, label, sw := g.inputs(nd.Float32)
			out := g.build(t).ForwardWeighted(pred, label, sw)
			if out.DType() != nd.Float32 {
				t.Fatalf("dtype %v, want float32", out.DType())
			}
			closeTo(t, "loss", out.Float64s(), g.Loss, 2e-5)
		})
	}
}
