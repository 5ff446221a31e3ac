package optimizer

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// rules returns one optimizer of every kind and form, with momentum,
// centering and so on switched on, built fresh for each call.
func rules() []struct {
	name string
	make func() Optimizer
} {
	return []struct {
		name string
		make func() Optimizer
	}{
		{"sgd", func() Optimizer { return NewSGD(0.1) }},
		{"sgd_momentum", func() Optimizer { o := NewSGD(0.1); o.Momentum = 0.9; return o }},
		{"nag", func() Optimizer { return NewNAG(0.1, 0.9) }},
		{"adam", func() Optimizer { return NewAdam(0.01) }},
		{"rmsprop", func() Optimizer { return NewRMSProp(0.01) }},
		{"rmsprop_keras", func() Optimizer { o := NewRMSProp(0.01); o.KerasEpsilon = true; return o }},
		{"rmsprop_centered", func() Optimizer { o := NewRMSProp(0.01); o.Centered = true; return o }},
		{"adagrad", func() Optimizer { return NewAdaGrad(0.1) }},
		{"adagrad_torch", func() Optimizer { o := NewAdaGrad(0.1); o.TorchForm = true; return o }},
		{"adam_amsgrad", func() Optimizer { o := NewAdam(0.01); o.AMSGrad = true; return o }},
		{"adamw", func() Optimizer { return NewAdamW(0.01, 0.01) }},
		{"adamw_amsgrad", func() Optimizer { o := NewAdamW(0.01, 0.01); o.AMSGrad = true; return o }},
		{"adamax", func() Optimizer { return NewAdamax(0.01) }},
		{"nadam", func() Optimizer { return NewNadam(0.01) }},
		{"radam", func() Optimizer { o := NewRAdam(0.01); o.Beta2 = 0.9; return o }}, // rectified from step 6
		{"adadelta", func() Optimizer { return NewAdaDelta(1) }},
		{"adadelta_torch", func() Optimizer { o := NewAdaDelta(1); o.TorchForm = true; return o }},
		{"ftrl", func() Optimizer { return NewFTRL(0.1) }},
		{"lamb", func() Optimizer { return NewLAMB(0.01) }},
		{"lamb_bounds_nobias", func() Optimizer {
			o := NewLAMB(0.01)
			o.LowerBound, o.UpperBound, o.NoBiasCorrection = 0.5, 2, true
			return o
		}},
		{"lars", func() Optimizer { return NewLARS(0.1) }},
		{"lars_momentum", func() Optimizer { o := NewLARS(0.1); o.Momentum = 0.9; return o }},
		{"signum", func() Optimizer { o := NewSignum(0.01); o.WDLH = 0.1; return o }},
		{"signsgd", func() Optimizer { return NewSignSGD(0.01) }},
	}
}

var (
	testW = []float64{0.5, -1.2, 0.3, 2.0, -0.7, 0.05}
	testG = []float64{0.8, 0.3, -1.5, 0.02, -0.4, 1.1}
)

// run applies steps updates of o with gradient g to a copy of testW and
// returns the weights.
func run(o Optimizer, p Param, g []float64, steps int) []float64 {
	dev := ctx.CPU(0)
	w := nd.FromSlice(dev, testW, 2, 3)
	grad := nd.FromSlice(dev, g, 2, 3)
	st := o.CreateState(w)
	for s := 1; s <= steps; s++ {
		p.Step = s
		o.Update(p, w, grad, st)
	}
	out := w.Float64s()
	w.Release()
	grad.Release()
	for _, a := range st {
		a.Release()
	}
	return out
}

func scaled(v []float64, s float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * s
	}
	return out
}

func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*(1+math.Abs(want[i]))) {
			t.Fatalf("%s: element %d: got %.15g, want %.15g", what, i, got[i], want[i])
		}
	}
}

// TestHyperEquivalences checks how RescaleGrad, Param.Rescale, LRMult, WDMult and a
// clip that never bites enter every rule: each must equal the plain rule
// with the change made by hand.
func TestHyperEquivalences(t *testing.T) {
	const tol = 1e-13
	for _, r := range rules() {
		t.Run(r.name, func(t *testing.T) {
			base := func(lr, wd float64) Optimizer {
				o := r.make()
				h := o.Hyperparams()
				h.LR, h.WD = lr, wd
				return o
			}
			want := run(base(0.05, 0.01), Param{LRMult: 1, WDMult: 1}, scaled(testG, 0.25), 4)
			o := base(0.05, 0.01)
			o.Hyperparams().RescaleGrad = 0.25
			near(t, "RescaleGrad", run(o, Param{LRMult: 1, WDMult: 1}, testG, 4), want, tol)
			near(t, "Param.Rescale", run(base(0.05, 0.01), Param{LRMult: 1, WDMult: 1, Rescale: 0.25}, testG, 4), want, tol)
			o = base(0.05, 0.01)
			o.Hyperparams().RescaleGrad = 0.5
			near(t, "RescaleGrad × Param.Rescale", run(o, Param{LRMult: 1, WDMult: 1, Rescale: 0.5}, testG, 4), want, tol)

			o = base(0.05, 0.01)
			o.Hyperparams().ClipGradient = 100
			near(t, "loose clip", run(o, Param{LRMult: 1, WDMult: 1}, testG, 4), run(base(0.05, 0.01), Param{LRMult: 1, WDMult: 1}, testG, 4), tol)

			near(t, "LRMult", run(base(0.05, 0.01), Param{LRMult: 3, WDMult: 1}, testG, 4),
				run(base(0.15, 0.01), Param{LRMult: 1, WDMult: 1}, testG, 4), tol)
			near(t, "WDMult", run(base(0.05, 0.01), Param{WDMult: 4, LRMult: 1}, testG, 4),
				run(base(0.05, 0.04), Param{LRMult: 1, WDMult: 1}, testG, 4), tol)
			near(t, "WDMult 0 disables decay", run(base(0.05, 0.01), Param{LRMult: 1, WDMult: 0}, testG, 4),
				run(base(0.05, 0), Param{LRMult: 1, WDMult: 1}, testG, 4), 0)
			// The scheduler, not LR, sets the rate when present.
			o = base(123, 0.01)
			o.Hyperparams().Scheduler = listSchedule{0.05, 0.05, 0.05, 0.05}
			near(t, "Scheduler", run(o, Param{LRMult: 1, WDMult: 1}, testG, 4), run(base(0.05, 0.01), Param{LRMult: 1, WDMult: 1}, testG, 4), 0)
		})
	}
}

// TestSGDByHand checks one plain SGD step with every preparation at once:
// w − lr·(clip(rescale·g) + wd·w), the decay term unclipped (MXNet's
// sgd_update).
func TestSGDByHand(t *testing.T) {
	const lr, wd, rescale, clip = 0.1, 0.2, 0.5, 0.3
	o := NewSGD(lr)
	o.WD, o.RescaleGrad, o.ClipGradient = wd, rescale, clip
	for _, dt := range []nd.DType{nd.Float64, nd.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			w := fromFloat64s(ctx.CPU(0), dt, testW, []int{6})
			g := fromFloat64s(ctx.CPU(0), dt, testG, []int{6})
			o.Update(Param{Step: 1, LRMult: 2, WDMult: 0.5}, w, g, nil)
			want := make([]float64, len(testW))
			for i := range testW {
				gg := math.Max(-clip, math.Min(clip, rescale*testG[i]))
				want[i] = testW[i] - 2*lr*(gg+0.5*wd*testW[i])
			}
			tol := 1e-15
			if dt == nd.Float32 {
				tol = 1e-6
			}
			near(t, "weights", w.Float64s(), want, tol)
		})
	}
}

// TestUpdateNotRecorded updates a leaf inside autograd.Record and checks
// that nothing of the update reached the tape: the weight stays a leaf
// with its own gradient buffer, the values equal an unrecorded update, and
// a later recorded pass differentiates the new weight afresh.
func TestUpdateNotRecorded(t *testing.T) {
	dev := ctx.CPU(0)
	for _, r := range rules() {
		t.Run(r.name, func(t *testing.T) {
			o := r.make()
			o.Hyperparams().WD = 0.01
			w := nd.FromSlice(dev, testW, 2, 3)
			w.AttachGrad(nd.GradWrite)
			buf := w.Grad()
			x := nd.FromSlice(dev, testG, 2, 3)
			st := o.CreateState(w)
			autograd.Record(func() {
				autograd.Backward(nd.Sum(nd.Mul(w, x)))
				o.Update(Param{Name: "w", Step: 1, LRMult: 1, WDMult: 1}, w, w.Grad(), st)
			})
			if w.Grad() != buf || w.GradReq() != nd.GradWrite {
				t.Fatalf("the update replaced the weight's gradient buffer")
			}
			ref := r.make()
			ref.Hyperparams().WD = 0.01
			near(t, "recorded update", w.Float64s(), run(ref, Param{LRMult: 1, WDMult: 1}, testG, 1), 0)
			for _, a := range st {
				if err := nd.Catch(func() { nd.Backward([]*nd.NDArray{a}, nil, false) }); !errors.Is(err, &nd.Error{Kind: nd.ErrGraph}) {
					t.Fatalf("state has a graph: Backward gave %v", err)
				}
			}
			autograd.Record(func() { autograd.Backward(nd.Sum(nd.Square(w))) })
			near(t, "gradient after update", w.Grad().Float64s(), scaled(w.Float64s(), 2), 1e-15)
		})
	}
}

// TestNoLeak checks that 100 updates leave the context's memory in use
// where it was, both bare and inside an nd.Scope as a training loop runs.
func TestNoLeak(t *testing.T) {
	dev := ctx.CPU(6) // a context no other test uses
	for _, r := range rules() {
		t.Run(r.name, func(t *testing.T) {
			o := r.make()
			h := o.Hyperparams()
			h.WD, h.ClipGradient, h.RescaleGrad = 0.01, 0.5, 0.5
			w := nd.RandomNormal(dev, nd.Float32, 0, 1, 64, 32)
			g := nd.RandomNormal(dev, nd.Float32, 0, 1, 64, 32)
			st := o.CreateState(w)
			o.Update(Param{Step: 1, LRMult: 1, WDMult: 1}, w, g, st)
			before := nd.MemoryStats(dev).InUse
			for s := 2; s <= 101; s++ {
				o.Update(Param{Step: s, LRMult: 1, WDMult: 1}, w, g, st)
			}
			if after := nd.MemoryStats(dev).InUse; after != before {
				t.Fatalf("memory in use grew from %d to %d bytes over 100 updates", before, after)
			}
			sc := nd.NewScope()
			for s := 102; s <= 201; s++ {
				o.Update(Param{Step: s, LRMult: 1, WDMult: 1}, w, g, st)
			}
			if after := nd.MemoryStats(dev).InUse; after != before {
				t.Fatalf("inside a scope: memory in use grew from %d to %d bytes", before, after)
			}
			sc.Close()
			if w.Released() || g.Released() {
				t.Fatal("closing the scope released the weight or gradient")
			}
			w.Release()
			g.Release()
			for _, a := range st {
				a.Release()
			}
		})
	}
}

func TestUpdateMisuse(t *testing.T) {
	dev := ctx.CPU(0)
	w := nd.FromSlice(dev, testW, 6)
	g := nd.FromSlice(dev, testG, 6)
	for _, r := range rules() {
		o := r.make()
		if len(o.CreateState(w)) == 0 {
			continue
		}
		t.Run(r.name+"/no state", func(t *testing.T) {
			err := nd.Catch(func() { o.Update(Param{Step: 1, LRMult: 1, WDMult: 1}, w, g, nil) })
			if !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) || !strings.Contains(err.Error(), "optimizer.") {
				t.Fatalf("got %v, want an invalid-argument error naming the optimizer", err)
			}
		})
	}
	t.Run("adam/step 0", func(t *testing.T) {
		o := NewAdam(0.1)
		err := nd.Catch(func() { o.Update(Param{Name: "w", Step: 0, LRMult: 1, WDMult: 1}, w, g, o.CreateState(w)) })
		if !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) || !strings.Contains(err.Error(), "1-based") {
			t.Fatalf("got %v, want an error about 1-based steps", err)
		}
	})
	t.Run("context mismatch", func(t *testing.T) {
		o := NewAdam(0.1)
		other := nd.FromSlice(ctx.CPU(1), testG, 6)
		err := nd.Catch(func() { o.Update(Param{Step: 1, LRMult: 1, WDMult: 1}, w, other, o.CreateState(w)) })
		if !errors.Is(err, &nd.Error{Kind: nd.ErrContext}) {
			t.Fatalf("got %v, want a context error", err)
		}
	})
}

func TestValidate(t *testing.T) {
	type validator interface{ Validate() error }
	ok := []validator{NewSGD(0.1), NewNAG(0.1, 0.9), NewAdam(1e-3), NewRMSProp(1e-3), NewAdaGrad(0.01),
		NewAdamW(1e-3, 0.01), NewAdamax(2e-3), NewNadam(1e-3), NewRAdam(1e-3), NewAdaDelta(1), NewFTRL(0.1),
		NewLAMB(1e-3), NewLARS(0.01), NewSignum(0.01), NewSignSGD(0.01)}
	for _, v := range ok {
		if err := v.Validate(); err != nil {
			t.Errorf("%T defaults: %v", v, err)
		}
	}
	bad := []struct {
		name string
		v    validator
	}{
		{"sgd negative lr", NewSGD(-1)},
		{"sgd NaN lr", NewSGD(math.NaN())},
		{"sgd momentum 1", &SGD{Hyper: Hyper{LR: 0.1}, Momentum: 1}},
		{"nag negative momentum", NewNAG(0.1, -0.5)},
		{"sgd negative wd", &SGD{Hyper: Hyper{LR: 0.1, WD: -1}}},
		{"sgd negative clip", &SGD{Hyper: Hyper{LR: 0.1, ClipGradient: -1}}},
		{"sgd infinite rescale", &SGD{Hyper: Hyper{LR: 0.1, RescaleGrad: math.Inf(1)}}},
		{"adam beta1 1", &Adam{Hyper: Hyper{LR: 0.1}, Beta1: 1, Beta2: 0.999}},
		{"adam beta2 negative", &Adam{Hyper: Hyper{LR: 0.1}, Beta1: 0.9, Beta2: -0.1}},
		{"adam negative eps", &Adam{Hyper: Hyper{LR: 0.1}, Beta1: 0.9, Beta2: 0.999, Epsilon: -1}},
		{"rmsprop gamma1 1", &RMSProp{Hyper: Hyper{LR: 0.1}, Gamma1: 1}},
		{"rmsprop gamma2 NaN", &RMSProp{Hyper: Hyper{LR: 0.1}, Gamma1: 0.9, Gamma2: math.NaN()}},
		{"rmsprop negative clip_weights", &RMSProp{Hyper: Hyper{LR: 0.1}, Gamma1: 0.9, ClipWeights: -1}},
		{"adagrad negative eps", &AdaGrad{Hyper: Hyper{LR: 0.1}, Epsilon: -1e-7}},
		{"adamax beta2 1", &Adamax{Hyper: Hyper{LR: 0.1}, Beta1: 0.9, Beta2: 1}},
		{"nadam negative schedule_decay", &Nadam{Hyper: Hyper{LR: 0.1}, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, ScheduleDecay: -1}},
		{"radam negative lr", NewRAdam(-1)},
		{"adadelta rho 1", &AdaDelta{Hyper: Hyper{LR: 1}, Rho: 1, Epsilon: 1e-6}},
		{"ftrl negative lamda1", &FTRL{Hyper: Hyper{LR: 0.1}, Lamda1: -0.01, Beta: 1}},
		{"ftrl infinite beta", &FTRL{Hyper: Hyper{LR: 0.1}, Beta: math.Inf(1)}},
		{"lamb negative lower bound", &LAMB{Hyper: Hyper{LR: 0.1}, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-6, LowerBound: -1}},
		{"lamb bounds crossed", &LAMB{Hyper: Hyper{LR: 0.1}, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-6, LowerBound: 2, UpperBound: 1}},
		{"lars momentum 1", &LARS{Hyper: Hyper{LR: 0.1}, Eta: 0.001, Momentum: 1}},
		{"lars negative eps", &LARS{Hyper: Hyper{LR: 0.1}, Eta: 0.001, Epsilon: -1}},
		{"signum NaN momentum", &Signum{Hyper: Hyper{LR: 0.1}, Momentum: math.NaN()}},
		{"signum negative wd_lh", &Signum{Hyper: Hyper{LR: 0.1}, Momentum: 0.9, WDLH: -0.1}},
	}
	for _, c := range bad {
		if err := c.v.Validate(); err == nil {
			t.Errorf("%s: Validate accepted it", c.name)
		}
	}
	// Struct literals that leave the moments' parameters unset divide 0 by
	// 0 where a gradient has been 0 (NaN weights): refused, pointing at
	// the constructor.
	for _, c := range []struct {
		v    validator
		ctor string
	}{
		{&Adam{Hyper: Hyper{LR: 1e-3}}, "NewAdam"},
		{&AdamW{Hyper: Hyper{LR: 1e-3, WD: 0.01}}, "NewAdamW"},
		{&RMSProp{Hyper: Hyper{LR: 1e-3}, Gamma1: 0.9}, "NewRMSProp"},
		{&AdaGrad{Hyper: Hyper{LR: 1e-2}}, "NewAdaGrad"},
		{&Adamax{Hyper: Hyper{LR: 2e-3}}, "NewAdamax"},
		{&Nadam{Hyper: Hyper{LR: 1e-3}}, "NewNadam"},
		{&RAdam{Hyper: Hyper{LR: 1e-3}}, "NewRAdam"},
		{&AdaDelta{Hyper: Hyper{LR: 1}, Rho: 0.9}, "NewAdaDelta"},
		{&LAMB{Hyper: Hyper{LR: 1e-3}, Beta1: 0.9, Beta2: 0.999}, "NewLAMB"},
		{&LARS{Hyper: Hyper{LR: 0.1}}, "NewLARS"},
	} {
		if err := c.v.Validate(); err == nil || !strings.Contains(err.Error(), c.ctor) {
			t.Errorf("%T literal: %v, want an error pointing at %s", c.v, err, c.ctor)
		}
	}
	// ε = 0 with set betas is PyTorch's Adam exactly, and allowed.
	if err := (&Adam{Hyper: Hyper{LR: 1e-3}, Beta1: 0.9, Beta2: 0.999}).Validate(); err != nil {
		t.Errorf("Adam with epsilon 0: %v", err)
	}
}

func TestCreate(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"sgd", "sgd"}, {"NAG", "nag"}, {"adam", "adam"}, {"RMSProp", "rmsprop"}, {"adagrad", "adagrad"},
		{"adamw", "adamw"}, {"Adamax", "adamax"}, {"nadam", "nadam"}, {"RAdam", "radam"}, {"AdaDelta", "adadelta"},
		{"Ftrl", "ftrl"}, {"LAMB", "lamb"}, {"LARS", "lars"}, {"signum", "signum"}, {"signsgd", "signsgd"},
	} {
		o, err := Create(c.name, 0.01)
		if err != nil {
			t.Fatalf("Create(%q): %v", c.name, err)
		}
		if o.Name() != c.want || o.Hyperparams().LR != 0.01 {
			t.Errorf("Create(%q) = %s with lr %g", c.name, o.Name(), o.Hyperparams().LR)
		}
	}
	if a, _ := Create("adam", 1e-3); a.(*Adam).Beta2 != 0.999 {
		t.Error("Create(adam) lost the defaults")
	}
	if a, err := Create("adamw", 1e-3); err != nil || a.(*AdamW).WD != 0.01 {
		t.Errorf("Create(adamw) = %v, %v; want AdamW with PyTorch's weight decay 0.01", a, err)
	}
	if s, _ := Create("signum", 1e-3); s.(*Signum).Momentum != 0.9 {
		t.Error("Create(signum) lost MXNet's default momentum")
	}
	_, err := Create("adafactor", 0.01)
	if err == nil {
		t.Fatal("Create(adafactor) succeeded")
	}
	for _, n := range []string{"adafactor", "adamw", "sgd", "nag", "adam", "rmsprop", "adagrad", "adadelta", "adamax",
		"nadam", "radam", "ftrl", "lamb", "lars", "signum", "signsgd"} {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not mention %q", err, n)
		}
	}
	if _, err := Create("sgd", -0.1); err == nil {
		t.Error("Create accepted a negative learning rate")
	}
	if err := Register("SGD", func(lr float64) Optimizer { return NewSGD(lr) }); err == nil {
		t.Error("Register replaced sgd")
	}
	if err := Register("", nil); err == nil {
		t.Error("Register accepted an empty name")
	}
	t.Cleanup(func() {
		registry.Lock()
		delete(registry.m, "test-sgd-momentum")
		registry.Unlock()
	})
	if err := Register("test-sgd-momentum", func(lr float64) Optimizer {
		o := NewSGD(lr)
		o.Momentum = 0.9
		return o
	}); err != nil {
		t.Fatal(err)
	}
	if o, err := Create("Test-SGD-Momentum", 0.5); err != nil || o.(*SGD).Momentum != 0.9 {
		t.Fatalf("Create of a registered name: %v, %v", o, err)
	}
}

func TestCreateStateOnContext(t *testing.T) {
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		for _, r := range rules() {
			o := r.make()
			w := nd.Full(ctx.CPU(2), dt, 1, 3, 4)
			for i, a := range o.CreateState(w) {
				if a.Context() != ctx.CPU(2) || a.DType() != dt || !slices.Equal(a.Shape(), []int{3, 4}) {
					t.Errorf("%s %v: state %d is %v %v %v", r.name, dt, i, a.Context(), a.DType(), a.Shape())
				}
				if s := a.Float64s(); s[0] != 0 || s[11] != 0 {
					t.Errorf("%s: state %d not zero", r.name, i)
				}
			}
		}
	}
}

// TestRMSPropClipWeights checks MXNet's clip_weights on a large step.
func TestRMSPropClipWeights(t *testing.T) {
	o := NewRMSProp(10)
	o.ClipWeights = 0.6
	got := run(o, Param{LRMult: 1, WDMult: 1}, testG, 1)
	for i, v := range got {
		if v < -0.6 || v > 0.6 {
			t.Fatalf("element %d = %g outside [-0.6, 0.6]", i, v)
		}
	}
}

// TestConcurrentReplicas updates the replicas of one parameter on four
// contexts from four goroutines with one optimizer value, as a Trainer
// may, and checks each against a sequential run (go test -race checks the
// rest).
func TestConcurrentReplicas(t *testing.T) {
	for _, r := range rules() {
		t.Run(r.name, func(t *testing.T) {
			o := r.make()
			o.Hyperparams().WD = 0.01
			ref := r.make()
			ref.Hyperparams().WD = 0.01
			want := run(ref, Param{LRMult: 1, WDMult: 1}, testG, 20)
			got := make([][]float64, 4)
			var wg sync.WaitGroup
			for i := range got {
				wg.Go(func() {
					dev := ctx.CPU(10 + i)
					w := nd.FromSlice(dev, testW, 2, 3)
					g := nd.FromSlice(dev, testG, 2, 3)
					st := o.CreateState(w)
					for s := 1; s <= 20; s++ {
						o.Update(Param{Name: "w", Step: s, LRMult: 1, WDMult: 1}, w, g, st)
					}
					got[i] = w.Float64s()
				})
			}
			wg.Wait()
			for i := range got {
				near(t, fmt.Sprintf("replica %d", i), got[i], want, 0)
			}
		})
	}
}
