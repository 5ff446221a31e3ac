package optimizer

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
)

// TestCycleSchedulesMatchPyTorch compares OneCycle, CosineWarmRestarts,
// Cyclic and Plateau with PyTorch's schedulers, step by step
// (testdata/make_goldens_sched.py).
func TestCycleSchedulesMatchPyTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/goldens_sched.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			Name, Kind string
			Config     map[string]any
			LRs        []float64  `json:"lrs"`
			Metrics    []*float64 `json:"metrics"`
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 18 {
		t.Fatalf("%d cases, want the generator's 18", len(f.Cases))
	}
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			num := func(k string, def float64) float64 {
				if v, ok := c.Config[k].(float64); ok {
					return v
				}
				return def
			}
			flag := func(k string) bool { v, _ := c.Config[k].(bool); return v }
			var s Scheduler
			var p *Plateau
			var err error
			switch c.Kind {
			case "onecycle":
				s, err = NewOneCycle(OneCycleOpts{MaxLR: num("max_lr", 0), TotalSteps: int(num("total_steps", 0)),
					PctStart: num("pct_start", 0), DivFactor: num("div_factor", 0), FinalDivFactor: num("final_div_factor", 0),
					Linear: c.Config["anneal"] == "linear", ThreePhase: flag("three_phase")})
			case "warmrestarts":
				s, err = NewCosineWarmRestarts(0.5, num("min_lr", 0), int(num("t0", 0)), int(num("mult", 0)))
			case "cyclic":
				mode := map[any]CyclicMode{"triangular": Triangular, "triangular2": Triangular2, "exp_range": ExpRange}[c.Config["mode"]]
				s, err = NewCyclic(CyclicOpts{BaseLR: num("base_lr", 0), MaxLR: num("max_lr", 0), StepUp: int(num("up", 0)),
					StepDown: int(num("down", 0)), Mode: mode, Gamma: num("gamma", 0)})
			case "linear":
				s, err = NewLinear(LinearOpts{BaseLR: 0.5, StartFactor: num("start", 0), EndFactor: num("end", 0), Steps: int(num("total", 0))})
			case "sequential":
				warm, _ := NewLinear(LinearOpts{BaseLR: 0.5, StartFactor: 0.1, EndFactor: 1, Steps: int(num("warm", 0))})
				decay, _ := NewLinear(LinearOpts{BaseLR: 0.5, StartFactor: 1, EndFactor: 0.1, Steps: int(num("decay", 0))})
				s, err = NewSequential([]Scheduler{warm, decay}, []int{int(num("warm", 0))})
			case "plateau":
				p, err = NewPlateau(PlateauOpts{LR: num("lr", 0), Maximize: flag("maximize"), Factor: num("factor", 0),
					Patience: int(num("patience", 0)), Threshold: num("threshold", 1e-4), AbsThreshold: flag("abs"),
					Cooldown: int(num("cooldown", 0)), MinLR: num("min_lr", 0), Eps: num("eps", 1e-8)})
				s = p
			}
			if err != nil {
				t.Fatal(err)
			}
			for n, want := range c.LRs {
				got := s.LR(n + 1)
				if math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("update %d: lr %.17g, PyTorch %.17g", n+1, got, want)
				}
				if p != nil {
					m := math.NaN()
					if c.Metrics[n] != nil {
						m = *c.Metrics[n]
					}
					p.Observe(m)
				}
			}
		})
	}
}

// TestCycleSchedulesErrors: invalid options are errors.
func TestCycleSchedulesErrors(t *testing.T) {
	for name, err := range map[string]error{
		"onecycle max lr":    second(NewOneCycle(OneCycleOpts{TotalSteps: 10})),
		"onecycle steps":     second(NewOneCycle(OneCycleOpts{MaxLR: 1, TotalSteps: 0})),
		"onecycle pct":       second(NewOneCycle(OneCycleOpts{MaxLR: 1, TotalSteps: 10, PctStart: 1})),
		"onecycle no length": second(NewOneCycle(OneCycleOpts{MaxLR: 1, TotalSteps: 10, PctStart: 0.1})),
		"restarts period":    second(NewCosineWarmRestarts(1, 0, 0, 1)),
		"linear factor":      second(NewLinear(LinearOpts{BaseLR: 1, StartFactor: 0, EndFactor: 1, Steps: 3})),
		"linear steps":       second(NewLinear(LinearOpts{BaseLR: 1, StartFactor: 0.5, EndFactor: 1})),
		"sequential count":   second(NewSequential([]Scheduler{Lambda(func(int) float64 { return 1 })}, []int{3})),
		"sequential order":   second(NewSequential([]Scheduler{Lambda(nil), Lambda(nil), Lambda(nil)}, []int{5, 5})),
		"restarts min":       second(NewCosineWarmRestarts(1, 2, 3, 1)),
		"cyclic steps":       second(NewCyclic(CyclicOpts{BaseLR: 0.1, MaxLR: 1})),
		"cyclic gamma":       second(NewCyclic(CyclicOpts{BaseLR: 0.1, MaxLR: 1, StepUp: 2, Gamma: -1})),
		"cyclic mode":        second(NewCyclic(CyclicOpts{BaseLR: 0.1, MaxLR: 1, StepUp: 2, Mode: 7})),
		"plateau factor":     second(NewPlateau(PlateauOpts{LR: 1, Factor: 1})),
		"plateau patience":   second(NewPlateau(PlateauOpts{LR: 1, Patience: -1})),
		"plateau lr":         second(NewPlateau(PlateauOpts{LR: math.NaN()})),
		"plateau threshold":  second(NewPlateau(PlateauOpts{LR: 1, Threshold: math.Inf(1)})),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Far steps stay in range (and take no longer than near ones).
	for _, mult := range []int{1, 2, 1 << 20} {
		s, _ := NewCosineWarmRestarts(1, 0, 1, mult)
		if lr := s.LR(math.MaxInt); !(lr >= 0 && lr <= 1) {
			t.Errorf("mult %d: lr %v at the last step", mult, lr)
		}
	}
}

// TestCycleSchedulesEdges: cases a review found, against PyTorch 1.13's
// values.
func TestCycleSchedulesEdges(t *testing.T) {
	lrs := func(s Scheduler, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = s.LR(i + 1)
		}
		return out
	}
	// Two and three steps with the default rise (shorter than one step).
	for n, want := range map[int][]float64{2: {0.81175, 0}, 3: {0.99442, 0.46264, 0}} {
		s, err := NewOneCycle(OneCycleOpts{MaxLR: 1, TotalSteps: n})
		if err != nil {
			t.Fatal(err)
		}
		got := lrs(s, n)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-5 {
				t.Fatalf("%d steps: %v, PyTorch %v", n, got, want)
			}
		}
	}
	// A three-phase schedule whose first two phases outlast it.
	s, err := NewOneCycle(OneCycleOpts{MaxLR: 1, TotalSteps: 10, PctStart: 0.6, ThreePhase: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := lrs(s, 10); math.Abs(got[0]-0.04) > 1e-12 || math.Abs(got[5]-1) > 1e-12 {
		t.Errorf("three-phase %v", got)
	}
	// Plateau thresholds and eps of zero are zero, not the defaults.
	p, _ := NewPlateau(PlateauOpts{LR: 1, Patience: 0})
	for _, m := range []float64{1, 0.99999, 0.99998} {
		p.Observe(m)
	}
	if lr := p.LR(0); lr != 1 {
		t.Errorf("threshold 0: lr %v, PyTorch keeps 1", lr)
	}
	p, _ = NewPlateau(PlateauOpts{LR: 1e-8, Factor: 0.5, Patience: 0})
	for range 3 {
		p.Observe(1)
	}
	if lr := p.LR(0); math.Abs(lr-2.5e-9) > 1e-20 {
		t.Errorf("eps 0: lr %v, PyTorch 2.5e-9", lr)
	}
	st := p.State()
	q, _ := NewPlateau(PlateauDefaults(1))
	if err := q.SetState(st); err != nil || q.LR(0) != p.LR(0) || q.State() != st {
		t.Errorf("state not carried over: %v %v", err, q.State())
	}
	// Restarts with mult > 1 agree with the cycle-by-cycle walk far out.
	r, _ := NewCosineWarmRestarts(1, 0.1, 3, 2)
	cur, length := 0, 3
	for n := 1; n <= 5000; n++ {
		want := 0.1 + 0.9*(1+math.Cos(math.Pi*float64(cur)/float64(length)))/2
		if got := r.LR(n); math.Abs(got-want) > 1e-12 {
			t.Fatalf("update %d: %v, want %v", n, got, want)
		}
		if cur++; cur == length {
			cur, length = 0, 2*length
		}
	}
}

// TestLambdaInSequential: a Lambda runs with its own update numbers after
// its milestone.
func TestLambdaInSequential(t *testing.T) {
	first := Lambda(func(step int) float64 { return float64(step) })
	second := Lambda(func(step int) float64 { return 100 + float64(step) })
	s, err := NewSequential([]Scheduler{first, second}, []int{3})
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for n := 1; n <= 5; n++ {
		got = append(got, s.LR(n))
	}
	if want := []float64{1, 2, 3, 101, 102}; !slices.Equal(got, want) {
		t.Errorf("rates %v, want %v", got, want)
	}
}
