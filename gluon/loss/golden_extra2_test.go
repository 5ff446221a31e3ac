package loss_test

import (
	"encoding/json"
	"os"
	"testing"

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
	for _, g := range f.Cases {
		checkLossGolden(t, g.Name, g.Inputs, g.Head, g.Loss, g.Grads, g.run)
	}
}
