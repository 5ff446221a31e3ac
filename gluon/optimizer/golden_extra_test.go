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

// The goldens of the rules added after goldens.json come from
// testdata/make_goldens_extra.py (PyTorch 1.13, float64): eight steps on
// three named tensors, computed by torch.optim where it has the rule and
// by MXNet's update equations written out by hand where it does not (the
// script says which is which). Param.Name is the tensor's name, since
// LARS reads it, and Param.Update the step, as a Trainer passes it.

type goldenExtraParams struct {
	goldenParams
	Rho           float64 `json:"rho"`
	ScheduleDecay float64 `json:"schedule_decay"`
	Lamda1        float64 `json:"lamda1"`
	Beta          float64 `json:"beta"`
	Eta           float64 `json:"eta"`
	LowerBound    float64 `json:"lower_bound"`
	UpperBound    float64 `json:"upper_bound"`
	NoBiasCorr    bool    `json:"no_bias_correction"`
	NoMomCorr     bool    `json:"no_momentum_correction"`
	WDLH          float64 `json:"wd_lh"`
	AMSGrad       bool    `json:"amsgrad"`
}

type goldenExtraCase struct {
	Name      string                 `json:"name"`
	Source    string                 `json:"source"`
	Optimizer string                 `json:"optimizer"`
	Params    goldenExtraParams      `json:"params"`
	LRs       []float64              `json:"lrs"`
	Weights   map[string][][]float64 `json:"weights"` // per tensor, per step
}

type goldenTensor struct {
	Name  string      `json:"name"`
	Shape []int       `json:"shape"`
	W0    []float64   `json:"w0"`
	Grads [][]float64 `json:"grads"`
}

type goldenExtraFile struct {
	Steps   int               `json:"steps"`
	Tensors []goldenTensor    `json:"tensors"`
	Cases   []goldenExtraCase `json:"cases"`
}

func loadGoldensExtra(t *testing.T) goldenExtraFile {
	t.Helper()
	b, err := os.ReadFile("testdata/goldens_extra.json")
	if err != nil {
		t.Fatal(err)
	}
	var f goldenExtraFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 || len(f.Tensors) == 0 || f.Steps < 5 {
		t.Fatalf("goldens_extra.json: %d cases, %d tensors, %d steps", len(f.Cases), len(f.Tensors), f.Steps)
	}
	for _, x := range f.Tensors {
		if len(x.Grads) != f.Steps {
			t.Fatalf("goldens_extra.json: tensor %s has %d gradients for %d steps", x.Name, len(x.Grads), f.Steps)
		}
	}
	return f
}

// buildGoldenExtra makes the optimizer a golden case describes.
func buildGoldenExtra(t *testing.T, c goldenExtraCase) Optimizer {
	t.Helper()
	p := c.Params
	var o Optimizer
	switch c.Optimizer {
	case "adam":
		a := NewAdam(p.LR)
		a.Beta1, a.Beta2, a.Epsilon, a.AMSGrad = p.Beta1, p.Beta2, p.Eps, p.AMSGrad
		o = a
	case "adamw":
		a := NewAdamW(p.LR, p.WD)
		a.Beta1, a.Beta2, a.Epsilon, a.AMSGrad = p.Beta1, p.Beta2, p.Eps, p.AMSGrad
		o = a
	case "adamax":
		a := NewAdamax(p.LR)
		a.Beta1, a.Beta2, a.Epsilon = p.Beta1, p.Beta2, p.Eps
		o = a
	case "nadam":
		a := NewNadam(p.LR)
		a.Beta1, a.Beta2, a.Epsilon, a.ScheduleDecay = p.Beta1, p.Beta2, p.Eps, p.ScheduleDecay
		o = a
	case "radam":
		a := NewRAdam(p.LR)
		a.Beta1, a.Beta2, a.Epsilon = p.Beta1, p.Beta2, p.Eps
		o = a
	case "adadelta":
		a := NewAdaDelta(p.LR)
		a.Rho, a.Epsilon, a.TorchForm = p.Rho, p.Eps, p.TorchForm
		o = a
	case "ftrl":
		f := NewFTRL(p.LR)
		f.Lamda1, f.Beta = p.Lamda1, p.Beta
		o = f
	case "signum", "signsgd":
		s := NewSignum(p.LR)
		s.Momentum, s.WDLH = p.Momentum, p.WDLH
		o = s
	case "lamb":
		l := NewLAMB(p.LR)
		l.Beta1, l.Beta2, l.Epsilon = p.Beta1, p.Beta2, p.Eps
		l.LowerBound, l.UpperBound, l.NoBiasCorrection = p.LowerBound, p.UpperBound, p.NoBiasCorr
		o = l
	case "lars":
		l := NewLARS(p.LR)
		l.Momentum, l.Eta, l.Epsilon, l.NoMomentumCorrection = p.Momentum, p.Eta, p.Eps, p.NoMomCorr
		o = l
	default:
		t.Fatalf("case %s: unknown optimizer %q", c.Name, c.Optimizer)
	}
	if o.Name() != c.Optimizer {
		t.Fatalf("case %s: built %s, want %s", c.Name, o.Name(), c.Optimizer)
	}
	h := o.Hyperparams()
	h.WD, h.RescaleGrad, h.ClipGradient = p.WD, p.Rescale, p.Clip
	if c.LRs != nil {
		h.Scheduler = listSchedule(c.LRs)
	}
	if err := Validate(o); err != nil {
		t.Fatalf("case %s: %v", c.Name, err)
	}
	return o
}

func TestGoldensExtra(t *testing.T) {
	f := loadGoldensExtra(t)
	dev := ctx.CPU(0)
	covered := map[string]bool{}
	for _, dt := range []struct {
		dt  nd.DType
		tol float64
	}{{nd.Float64, 1e-12}, {nd.Float32, 3e-6}} {
		for _, c := range f.Cases {
			covered[c.Optimizer] = true
			t.Run(fmt.Sprintf("%v/%s_%s", dt.dt, c.Source, c.Name), func(t *testing.T) {
				o := buildGoldenExtra(t, c)
				worst := 0.0
				for _, x := range f.Tensors {
					want := c.Weights[x.Name]
					if len(want) != f.Steps {
						t.Fatalf("tensor %s: %d steps of weights, want %d", x.Name, len(want), f.Steps)
					}
					w := fromFloat64s(dev, dt.dt, x.W0, x.Shape)
					st := o.CreateState(w)
					for s := range f.Steps {
						g := fromFloat64s(dev, dt.dt, x.Grads[s], x.Shape)
						p := Param{Name: x.Name, Step: s + 1, Update: s + 1, LRMult: orOne(c.Params.LRMult), WDMult: orOne(c.Params.WDMult)}
						o.Update(p, w, g, st)
						g.Release()
						got := w.Float64s()
						for i := range want[s] {
							d := math.Abs(got[i] - want[s][i])
							worst = math.Max(worst, d/(1+math.Abs(want[s][i])))
							if d > dt.tol*(1+math.Abs(want[s][i])) || math.IsNaN(got[i]) {
								t.Fatalf("%s, step %d, element %d: got %.12g, want %.12g (diff %.3g)", x.Name, s+1, i, got[i], want[s][i], d)
							}
						}
					}
					w.Release()
					for _, a := range st {
						a.Release()
					}
				}
				t.Logf("largest error %.3g (relative to 1+|want|)", worst)
			})
		}
	}
	// Every rule added with these goldens has cases.
	for _, n := range []string{"adam", "adamw", "adamax", "nadam", "radam", "adadelta", "ftrl", "signum", "signsgd", "lamb", "lars"} {
		if !covered[n] {
			t.Errorf("no golden case for %s", n)
		}
	}
}
