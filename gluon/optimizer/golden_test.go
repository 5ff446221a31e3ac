package optimizer

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// The goldens come from testdata/make_goldens.py (PyTorch 1.13, float64):
// a few steps of every rule from fixed weights and gradients, computed by
// torch.optim where its rule coincides with MXNet's and by MXNet's formula
// written out by hand where it does not (the script says which is which).

type goldenParams struct {
	LR        float64  `json:"lr"`
	Momentum  float64  `json:"momentum"`
	WD        float64  `json:"wd"`
	Rescale   float64  `json:"rescale"`
	Clip      float64  `json:"clip"`
	LRMult    *float64 `json:"lr_mult"` // absent: 1, as in the script
	WDMult    *float64 `json:"wd_mult"`
	Beta1     float64  `json:"beta1"`
	Beta2     float64  `json:"beta2"`
	Eps       float64  `json:"eps"`
	Gamma1    float64  `json:"gamma1"`
	Gamma2    float64  `json:"gamma2"`
	KerasEps  bool     `json:"keras_eps"`
	Centered  bool     `json:"centered"`
	TorchForm bool     `json:"torch_form"`
}

type goldenCase struct {
	Name      string       `json:"name"`
	Source    string       `json:"source"`
	Optimizer string       `json:"optimizer"`
	Params    goldenParams `json:"params"`
	LRs       []float64    `json:"lrs"`
	Weights   [][]float64  `json:"weights"`
}

type goldenFile struct {
	Steps int          `json:"steps"`
	Shape []int        `json:"shape"`
	W0    []float64    `json:"w0"`
	Grads [][]float64  `json:"grads"`
	Cases []goldenCase `json:"cases"`
}

func loadGoldens(t *testing.T) goldenFile {
	t.Helper()
	b, err := os.ReadFile("testdata/goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var f goldenFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 || len(f.Grads) != f.Steps {
		t.Fatalf("goldens.json: %d cases, %d gradients for %d steps", len(f.Cases), len(f.Grads), f.Steps)
	}
	return f
}

// listSchedule returns lrs[step-1]: the per-step rates of a golden case.
type listSchedule []float64

func (l listSchedule) LR(step int) float64 { return l[step-1] }

// buildGolden makes the optimizer a golden case describes.
func buildGolden(t *testing.T, c goldenCase) Optimizer {
	t.Helper()
	p := c.Params
	var o Optimizer
	switch c.Optimizer {
	case "sgd":
		s := NewSGD(p.LR)
		s.Momentum = p.Momentum
		o = s
	case "nag":
		o = NewNAG(p.LR, p.Momentum)
	case "adam":
		a := NewAdam(p.LR)
		a.Beta1, a.Beta2, a.Epsilon = p.Beta1, p.Beta2, p.Eps
		o = a
	case "adamw":
		a := NewAdamW(p.LR, p.WD)
		a.Beta1, a.Beta2, a.Epsilon = p.Beta1, p.Beta2, p.Eps
		o = a
	case "rmsprop":
		r := NewRMSProp(p.LR)
		r.Gamma1, r.Epsilon, r.Centered, r.KerasEpsilon = p.Gamma1, p.Eps, p.Centered, p.KerasEps
		if p.Gamma2 != 0 {
			r.Gamma2 = p.Gamma2
		}
		o = r
	case "adagrad":
		a := NewAdaGrad(p.LR)
		a.Epsilon, a.TorchForm = p.Eps, p.TorchForm
		o = a
	default:
		t.Fatalf("case %s: unknown optimizer %q", c.Name, c.Optimizer)
	}
	h := o.Hyperparams()
	h.WD, h.RescaleGrad, h.ClipGradient = p.WD, p.Rescale, p.Clip
	if c.LRs != nil {
		h.Scheduler = listSchedule(c.LRs)
	}
	if err := o.(interface{ Validate() error }).Validate(); err != nil {
		t.Fatalf("case %s: %v", c.Name, err)
	}
	return o
}

func fromFloat64s(dev ctx.Context, dt nd.DType, v []float64, shape []int) *nd.NDArray {
	if dt == nd.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return nd.FromSlice(dev, f, shape...)
	}
	return nd.FromSlice(dev, v, shape...)
}

func TestGoldens(t *testing.T) {
	f := loadGoldens(t)
	dev := ctx.CPU(0)
	for _, dt := range []struct {
		dt  nd.DType
		tol float64
	}{{nd.Float64, 1e-12}, {nd.Float32, 3e-6}} {
		for _, c := range f.Cases {
			t.Run(fmt.Sprintf("%v/%s_%s", dt.dt, c.Source, c.Name), func(t *testing.T) {
				o := buildGolden(t, c)
				w := fromFloat64s(dev, dt.dt, f.W0, f.Shape)
				defer w.Release()
				st := o.CreateState(w)
				for i, a := range st {
					if a.DType() != dt.dt || a.Context() != dev || a.Size() != w.Size() {
						t.Fatalf("state %d: %v %v %v, want the weight's dtype, context and size", i, a.DType(), a.Context(), a.Shape())
					}
				}
				for s := range f.Steps {
					g := fromFloat64s(dev, dt.dt, f.Grads[s], f.Shape)
					o.Update(Param{Name: "w", Step: s + 1, LRMult: orOne(c.Params.LRMult), WDMult: orOne(c.Params.WDMult)}, w, g, st)
					g.Release()
					if w.DType() != dt.dt {
						t.Fatalf("step %d: weight became %v", s+1, w.DType())
					}
					got, want := w.Float64s(), c.Weights[s]
					for i := range want {
						if d := math.Abs(got[i] - want[i]); d > dt.tol*(1+math.Abs(want[i])) || math.IsNaN(got[i]) {
							t.Fatalf("step %d, element %d: got %.12g, want %.12g (diff %.3g)", s+1, i, got[i], want[i], d)
						}
					}
				}
				for _, a := range st {
					a.Release()
				}
			})
		}
	}
}

// orOne reads an optional multiplier: absent means 1.
func orOne(m *float64) float64 {
	if m == nil {
		return 1
	}
	return *m
}
