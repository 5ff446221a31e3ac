package optimizer

import (
	"fmt"
	"math"
	"testing"
)

// mxSched is a literal port of MXNet 1.x's stateful lr_scheduler.py
// (LRScheduler.get_warmup_lr and the __call__ of each scheduler), the
// reference our stateless schedules must match for increasing calls.
type mxSched struct {
	kind                        string
	baseLR, origLR, finalLR     float64
	warmSteps                   int
	warmBegin                   float64
	warmConst                   bool
	step, count, cur, maxUpdate int
	steps                       []int
	factor, stop, pwr           float64
}

func (m *mxSched) call(n int) float64 {
	if n < m.warmSteps {
		if m.warmConst {
			return m.warmBegin
		}
		return m.warmBegin + (m.origLR-m.warmBegin)*float64(n)/float64(m.warmSteps)
	}
	switch m.kind {
	case "factor":
		for n > m.count+m.step {
			m.count += m.step
			m.baseLR *= m.factor
			if m.baseLR < m.stop {
				m.baseLR = m.stop
			}
		}
	case "multifactor":
		for m.cur <= len(m.steps)-1 && n > m.steps[m.cur] {
			m.count = m.steps[m.cur]
			m.cur++
			m.baseLR *= m.factor
		}
	case "poly", "cosine":
		maxSteps := float64(m.maxUpdate - m.warmSteps)
		if n <= m.maxUpdate {
			frac := float64(n-m.warmSteps) / maxSteps
			if m.kind == "poly" {
				m.baseLR = m.finalLR + (m.origLR-m.finalLR)*math.Pow(1-frac, m.pwr)
			} else {
				m.baseLR = m.finalLR + (m.origLR-m.finalLR)*(1+math.Cos(math.Pi*frac))/2
			}
		}
	}
	return m.baseLR
}

func TestSchedulersMatchMXNet(t *testing.T) {
	must := func(s Scheduler, err error) Scheduler {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name string
		got  Scheduler
		ref  *mxSched
	}{
		{"factor", must(NewFactor(FactorOpts{Step: 3, Factor: 0.5, StopFactorLR: 0.01, BaseLR: 1})),
			&mxSched{kind: "factor", step: 3, factor: 0.5, stop: 0.01, baseLR: 1, origLR: 1}},
		{"factor_warmup_linear", must(NewFactor(FactorOpts{Step: 4, Factor: 0.9, StopFactorLR: 1e-8, BaseLR: 0.1, Warmup: Warmup{Steps: 5, BeginLR: 0.01, Mode: WarmupLinear}})),
			&mxSched{kind: "factor", step: 4, factor: 0.9, stop: 1e-8, baseLR: 0.1, origLR: 0.1, warmSteps: 5, warmBegin: 0.01}},
		{"multifactor", must(NewMultiFactor(MultiFactorOpts{Steps: []int{5, 12, 13}, Factor: 0.1, BaseLR: 1})),
			&mxSched{kind: "multifactor", steps: []int{5, 12, 13}, factor: 0.1, baseLR: 1, origLR: 1}},
		{"multifactor_warmup_constant", must(NewMultiFactor(MultiFactorOpts{Steps: []int{8, 20}, Factor: 0.5, BaseLR: 0.4, Warmup: Warmup{Steps: 6, BeginLR: 0.04, Mode: WarmupConstant}})),
			&mxSched{kind: "multifactor", steps: []int{8, 20}, factor: 0.5, baseLR: 0.4, origLR: 0.4, warmSteps: 6, warmBegin: 0.04, warmConst: true}},
		{"poly", must(NewPoly(PolyOpts{MaxUpdate: 30, BaseLR: 0.1, Pwr: 2, FinalLR: 0.001})),
			&mxSched{kind: "poly", maxUpdate: 30, pwr: 2, finalLR: 0.001, baseLR: 0.1, origLR: 0.1}},
		{"poly_warmup", must(NewPoly(PolyOpts{MaxUpdate: 30, BaseLR: 0.1, Pwr: 0.5, FinalLR: 0, Warmup: Warmup{Steps: 10, BeginLR: 0, Mode: WarmupLinear}})),
			&mxSched{kind: "poly", maxUpdate: 30, pwr: 0.5, baseLR: 0.1, origLR: 0.1, warmSteps: 10}},
		{"cosine", must(NewCosine(CosineOpts{MaxUpdate: 25, BaseLR: 0.5, FinalLR: 0.05})),
			&mxSched{kind: "cosine", maxUpdate: 25, finalLR: 0.05, baseLR: 0.5, origLR: 0.5}},
		{"cosine_warmup", must(NewCosine(CosineOpts{MaxUpdate: 25, BaseLR: 0.5, FinalLR: 0, Warmup: Warmup{Steps: 5, BeginLR: 0.1, Mode: WarmupLinear}})),
			&mxSched{kind: "cosine", maxUpdate: 25, baseLR: 0.5, origLR: 0.5, warmSteps: 5, warmBegin: 0.1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for n := 1; n <= 40; n++ {
				want := c.ref.call(n)
				if got := c.got.LR(n); math.Abs(got-want) > 1e-15*(1+want) {
					t.Fatalf("step %d: got %.17g, MXNet gives %.17g", n, got, want)
				}
			}
			// Stateless: asking again, out of order, changes nothing.
			if a, b := c.got.LR(7), c.got.LR(7); a != b {
				t.Fatalf("LR(7) changed from %g to %g", a, b)
			}
		})
	}
}

func TestSchedulerValues(t *testing.T) {
	mk := func(s Scheduler, err error) Scheduler {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	factor := mk(NewFactor(FactorOpts{Step: 2, Factor: 0.5, StopFactorLR: 0.01, BaseLR: 1}))
	multi := mk(NewMultiFactor(MultiFactorOpts{Steps: []int{3, 5}, Factor: 0.1, BaseLR: 1}))
	poly := mk(NewPoly(PolyOpts{MaxUpdate: 10, BaseLR: 0.1, Pwr: 2, FinalLR: 0.001}))
	polyLinear := mk(NewPoly(PolyOpts{MaxUpdate: 70, BaseLR: 5e-3, Pwr: 1, FinalLR: 0})) // MiniGoogLeNet's poly_decay, 70 epochs
	polyWarm := mk(NewPoly(PolyOpts{MaxUpdate: 10, BaseLR: 0.1, Pwr: 1, FinalLR: 0, Warmup: Warmup{Steps: 2, BeginLR: 0, Mode: WarmupLinear}}))
	cosine := mk(NewCosine(CosineOpts{MaxUpdate: 10, BaseLR: 1, FinalLR: 0}))
	cosineConst := mk(NewCosine(CosineOpts{MaxUpdate: 10, BaseLR: 1, FinalLR: 0, Warmup: Warmup{Steps: 3, BeginLR: 0.01, Mode: WarmupConstant}}))
	keras := mk(NewInverseTime(1e-4, 1e-6))
	for _, c := range []struct {
		name string
		s    Scheduler
		step int
		want float64
	}{
		{"factor", factor, 0, 1}, {"factor", factor, 1, 1}, {"factor", factor, 2, 1},
		{"factor", factor, 3, 0.5}, {"factor", factor, 4, 0.5}, {"factor", factor, 5, 0.25},
		{"factor stops", factor, 15, 0.01}, {"factor stops", factor, 1000, 0.01},
		{"multifactor", multi, 3, 1}, {"multifactor", multi, 4, 0.1}, {"multifactor", multi, 5, 0.1},
		{"multifactor", multi, 6, 0.01}, {"multifactor", multi, 100, 0.01},
		{"poly", poly, 0, 0.1}, {"poly", poly, 5, 0.001 + 0.099*0.25},
		{"poly final", poly, 10, 0.001}, {"poly past max", poly, 11, 0.001},
		{"poly_decay epoch 0", polyLinear, 0, 5e-3}, {"poly_decay epoch 35", polyLinear, 35, 2.5e-3},
		{"poly_decay epoch 69", polyLinear, 69, 5e-3 / 70}, {"poly_decay epoch 70", polyLinear, 70, 0},
		{"poly warmup", polyWarm, 1, 0.05}, {"poly warmup end", polyWarm, 2, 0.1},
		{"poly after warmup", polyWarm, 6, 0.05}, {"poly after warmup", polyWarm, 10, 0},
		{"cosine", cosine, 0, 1}, {"cosine", cosine, 2, (1 + math.Cos(0.2*math.Pi)) / 2},
		{"cosine half", cosine, 5, 0.5}, {"cosine final", cosine, 10, 0}, {"cosine past max", cosine, 50, 0},
		{"constant warmup", cosineConst, 1, 0.01}, {"constant warmup", cosineConst, 2, 0.01},
		{"constant warmup end", cosineConst, 3, 1}, {"after constant warmup", cosineConst, 10, 0},
		{"keras decay first update", keras, 1, 1e-4}, {"keras decay", keras, 1001, 1e-4 / 1.001},
		{"keras decay", keras, 1_000_001, 1e-4 / 2}, {"keras decay step 0", keras, 0, 1e-4},
	} {
		if got := c.s.LR(c.step); math.Abs(got-c.want) > 1e-15*(1+c.want) {
			t.Errorf("%s: LR(%d) = %.17g, want %.17g", c.name, c.step, got, c.want)
		}
	}
}

func TestSchedulerErrors(t *testing.T) {
	lin := Warmup{Steps: 5, Mode: WarmupLinear}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"factor step 0", second(NewFactor(FactorOpts{Step: 0, Factor: 0.5, StopFactorLR: 0, BaseLR: 1}))},
		{"factor above 1", second(NewFactor(FactorOpts{Step: 10, Factor: 1.5, StopFactorLR: 0, BaseLR: 1}))},
		{"factor 0", second(NewFactor(FactorOpts{Step: 10, Factor: 0, StopFactorLR: 0, BaseLR: 1}))},
		{"factor negative stop", second(NewFactor(FactorOpts{Step: 10, Factor: 0.5, StopFactorLR: -1, BaseLR: 1}))},
		{"factor negative base", second(NewFactor(FactorOpts{Step: 10, Factor: 0.5, StopFactorLR: 0, BaseLR: -1}))},
		{"factor NaN base", second(NewFactor(FactorOpts{Step: 10, Factor: 0.5, StopFactorLR: 0, BaseLR: math.NaN()}))},
		{"multifactor empty", second(NewMultiFactor(MultiFactorOpts{Steps: nil, Factor: 0.5, BaseLR: 1}))},
		{"multifactor not increasing", second(NewMultiFactor(MultiFactorOpts{Steps: []int{5, 5}, Factor: 0.5, BaseLR: 1}))},
		{"multifactor step 0", second(NewMultiFactor(MultiFactorOpts{Steps: []int{0, 5}, Factor: 0.5, BaseLR: 1}))},
		{"multifactor factor", second(NewMultiFactor(MultiFactorOpts{Steps: []int{5}, Factor: 2, BaseLR: 1}))},
		{"poly max 0", second(NewPoly(PolyOpts{MaxUpdate: 0, BaseLR: 0.1, Pwr: 1, FinalLR: 0}))},
		{"poly pwr negative", second(NewPoly(PolyOpts{MaxUpdate: 10, BaseLR: 0.1, Pwr: -1, FinalLR: 0}))},
		{"poly negative final", second(NewPoly(PolyOpts{MaxUpdate: 10, BaseLR: 0.1, Pwr: 1, FinalLR: -0.1}))},
		{"poly warmup = max", second(NewPoly(PolyOpts{MaxUpdate: 5, BaseLR: 0.1, Pwr: 1, FinalLR: 0, Warmup: lin}))},
		{"cosine max negative", second(NewCosine(CosineOpts{MaxUpdate: -1, BaseLR: 0.1, FinalLR: 0}))},
		{"cosine warmup past max", second(NewCosine(CosineOpts{MaxUpdate: 3, BaseLR: 0.1, FinalLR: 0, Warmup: lin}))},
		{"warmup begin above base", second(NewCosine(CosineOpts{MaxUpdate: 100, BaseLR: 0.1, FinalLR: 0, Warmup: Warmup{Steps: 5, BeginLR: 0.2, Mode: WarmupLinear}}))},
		{"warmup negative steps", second(NewFactor(FactorOpts{Step: 10, Factor: 0.5, StopFactorLR: 0, BaseLR: 1, Warmup: Warmup{Steps: -1, BeginLR: 0, Mode: WarmupLinear}}))},
		{"warmup negative begin", second(NewMultiFactor(MultiFactorOpts{Steps: []int{5}, Factor: 0.5, BaseLR: 1, Warmup: Warmup{Steps: 3, BeginLR: -0.1, Mode: WarmupLinear}}))},
		{"warmup bad mode", second(NewPoly(PolyOpts{MaxUpdate: 100, BaseLR: 0.1, Pwr: 1, FinalLR: 0, Warmup: Warmup{Steps: 5, BeginLR: 0, Mode: WarmupMode(7)}}))},
		{"inverse negative decay", second(NewInverseTime(0.1, -1))},
		{"inverse infinite base", second(NewInverseTime(math.Inf(1), 0))},
	} {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestWarmupModeString(t *testing.T) {
	for m, want := range map[WarmupMode]string{WarmupLinear: "linear", WarmupConstant: "constant", 9: "WarmupMode(9)"} {
		if got := fmt.Sprint(m); got != want {
			t.Errorf("%d: %q, want %q", int(m), got, want)
		}
	}
}

// TestPolyDefaultPower checks that a zero Pwr takes MXNet's default, 2.
func TestPolyDefaultPower(t *testing.T) {
	a, _ := NewPoly(PolyOpts{MaxUpdate: 10, BaseLR: 1})
	b, _ := NewPoly(PolyOpts{MaxUpdate: 10, BaseLR: 1, Pwr: 2})
	for step := range 12 {
		if a.LR(step) != b.LR(step) {
			t.Fatalf("step %d: %g with the default power, %g with 2", step, a.LR(step), b.LR(step))
		}
	}
}
