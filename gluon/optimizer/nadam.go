package optimizer

import (
	"math"
	"sync"

	"github.com/goluon/goluon/nd"
)

// Nadam is Adam with Nesterov momentum (Dozat 2016) and its warming
// momentum schedule, at update number t = Param.Step, with ψ =
// ScheduleDecay:
//
//	g  = clip(rescale·grad + wd·w)
//	μ_t = β1·(1 − 0.5·0.96^(t·ψ))
//	Π_t = μ_1·μ_2·…·μ_t
//	m  = β1·m + (1−β1)·g
//	v  = β2·v + (1−β2)·g²
//	m̄  = (1−μ_t)·g/(1−Π_t) + μ_(t+1)·m/(1−Π_t·μ_(t+1))
//	w -= lr·m̄/(sqrt(v/(1−β2^t)) + ε)
//
// This is the rule of MXNet's nadam (schedule_decay ψ) and of PyTorch's
// torch.optim.NAdam (momentum_decay ψ), which agree but for where Π_t
// lives. PyTorch keeps it per parameter, as here; MXNet 1.x and 2.x keep
// one product for the whole optimizer and multiply it at every
// parameter's update, so with more than one parameter their Π_t falls
// faster than the schedule says (it is this rule for a model of one
// parameter). PyTorch 1.13's default (single-tensor) NAdam multiplies
// μ_t twice into Π_t·μ_(t+1), a bug fixed later (pytorch/pytorch#92699);
// its foreach=True path and the fixed releases are the rule above. PyTorch does not
// clip. Π_t depends only on t, β1 and ψ, so the state holds m and v
// alone.
type Nadam struct {
	Hyper
	// Beta1 is the decay rate of the first moment (NewNadam sets 0.9; a struct literal must set it).
	Beta1 float64
	// Beta2 is the decay rate of the second moment (NewNadam sets 0.999; a struct literal must set it).
	Beta2 float64
	// Epsilon keeps the division finite (NewNadam sets 1e-8; a struct literal must set it).
	Epsilon float64
	// ScheduleDecay is ψ, MXNet's schedule_decay and PyTorch's
	// momentum_decay (NewNadam sets both's 0.004).
	ScheduleDecay float64
}

var _ Optimizer = (*Nadam)(nil)

// NewNadam returns Nadam with the given learning rate and the defaults
// MXNet and PyTorch share: β1 = 0.9, β2 = 0.999, ε = 1e-8, ψ = 0.004
// (MXNet's default learning rate is 0.001, PyTorch's 0.002).
func NewNadam(lr float64) *Nadam {
	return &Nadam{Hyper: Hyper{LR: lr}, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, ScheduleDecay: 0.004}
}

// Validate reports invalid hyper-parameters.
func (o *Nadam) Validate() error {
	if err := checkNonNeg("nadam", "schedule_decay", o.ScheduleDecay); err != nil {
		return err
	}
	return validateMoments("nadam", o.Beta1, o.Beta2, o.Epsilon, o.Hyper)
}

// Name returns "nadam".
func (o *Nadam) Name() string { return "nadam" }

// Elementwise reports true: the rule is elementwise (see Elementwise).
func (*Nadam) Elementwise() bool { return true }

// Hyperparams returns the shared hyper-parameters.
func (o *Nadam) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns the first and second moment estimates m and v.
func (o *Nadam) CreateState(w *nd.NDArray) State {
	return State{zerosLike(w), zerosLike(w)}
}

// momentum returns μ_t.
func (o *Nadam) momentum(t int) float64 {
	return o.Beta1 * (1 - 0.5*math.Pow(0.96, float64(t)*o.ScheduleDecay))
}

// Update applies one Nadam step in place. It panics with an *nd.Error
// when p.Step < 1, since the schedule and bias correction start at 1.
func (o *Nadam) Update(p Param, weight, grad *nd.NDArray, state State) {
	checkStep("optimizer.nadam.Update", p, state, 2)
	var t temps
	defer t.release()
	lr := o.lr(p)
	mu, muNext := o.momentum(p.Step), o.momentum(p.Step+1)
	prod := o.product(p.Step)
	w := t.view(weight)
	g := o.prepareClipLast(&t, p, weight, grad)
	m, v := updateMoments(&t, state, g, o.Beta1, o.Beta2)

	bc2 := 1 - math.Pow(o.Beta2, float64(p.Step))
	den := t.add(nd.AddScalar(t.add(nd.DivScalar(t.add(nd.Sqrt(v)), math.Sqrt(bc2))), o.Epsilon))
	dg := t.add(nd.Div(g, den))
	nd.ScaleInPlace(dg, -lr*(1-mu)/(1-prod))
	dm := t.add(nd.Div(m, den))
	nd.ScaleInPlace(dm, -lr*muNext/(1-prod*muNext))
	nd.AddTo(w, dg)
	nd.AddTo(w, dm)
}

// nadamProducts caches Π_t for t = 1, 2, ... per (β1, ψ), computed in
// order as PyTorch does (Π_t = Π_(t−1)·μ_t), so that an update costs the
// same at every step. A list stops growing once Π_t ≤ 2⁻⁶⁰: from there
// on 1 − Π_t and 1 − Π_t·μ_(t+1) are 1 in float64, whatever the later
// factors, so its last entry serves for every later t (for β1 = 0.9 that
// is after about 400 steps).
var nadamProducts = struct {
	sync.Mutex
	m map[[2]float64][]float64
}{m: map[[2]float64][]float64{}}

// product returns Π_t, for t ≥ 1.
func (o *Nadam) product(t int) float64 {
	key := [2]float64{o.Beta1, o.ScheduleDecay}
	nadamProducts.Lock()
	defer nadamProducts.Unlock()
	ps := nadamProducts.m[key]
	for len(ps) < t {
		n := len(ps)
		if n > 0 && ps[n-1] <= 0x1p-60 {
			break
		}
		prev := 1.0
		if n > 0 {
			prev = ps[n-1]
		}
		ps = append(ps, prev*o.momentum(n+1))
	}
	nadamProducts.m[key] = ps
	return ps[min(t, len(ps))-1]
}
