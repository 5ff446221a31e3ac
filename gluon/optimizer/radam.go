package optimizer

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// RAdam is rectified Adam (Liu et al. 2019) as PyTorch's torch.optim.RAdam
// applies it (MXNet 1.x has none; MXNet 2.x's radam is the same rule), at
// update number t = Param.Step:
//
//	g   = clip(rescale·grad) + wd·w
//	m   = β1·m + (1−β1)·g
//	v   = β2·v + (1−β2)·g²
//	m̂   = m/(1−β1^t)
//	ρ∞  = 2/(1−β2) − 1
//	ρ_t = ρ∞ − 2t·β2^t/(1−β2^t)
//	w  -= lr·r_t·sqrt(1−β2^t)·m̂/(sqrt(v) + ε)   when ρ_t > 5, with
//	      r_t = sqrt((ρ_t−4)(ρ_t−2)ρ∞/((ρ∞−4)(ρ∞−2)ρ_t))
//	w  -= lr·m̂                                  otherwise (the first steps)
//
// The gradient is prepared in MXNet 2.x's order (PyTorch does not clip);
// MXNet 2.x rectifies when ρ_t ≥ 5, PyTorch when ρ_t > 5, as here.
type RAdam struct {
	Hyper
	// Beta1 is the decay rate of the first moment (NewRAdam sets 0.9; a struct literal must set it).
	Beta1 float64
	// Beta2 is the decay rate of the second moment (NewRAdam sets 0.999; a struct literal must set it).
	Beta2 float64
	// Epsilon keeps the division finite (NewRAdam sets 1e-8; a struct literal must set it).
	Epsilon float64
}

var _ Optimizer = (*RAdam)(nil)

// NewRAdam returns RAdam with the given learning rate and PyTorch's
// defaults β1 = 0.9, β2 = 0.999, ε = 1e-8 (PyTorch's default learning
// rate is 0.001).
func NewRAdam(lr float64) *RAdam {
	return &RAdam{Hyper: Hyper{LR: lr}, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}
}

// Validate reports invalid hyper-parameters.
func (o *RAdam) Validate() error {
	return validateMoments("radam", o.Beta1, o.Beta2, o.Epsilon, o.Hyper)
}

// Name returns "radam".
func (o *RAdam) Name() string { return "radam" }

// Elementwise reports true: the rule is elementwise (see Elementwise).
func (*RAdam) Elementwise() bool { return true }

// Hyperparams returns the shared hyper-parameters.
func (o *RAdam) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns the first and second moment estimates m and v.
func (o *RAdam) CreateState(w *nd.NDArray) State {
	return State{zerosLike(w), zerosLike(w)}
}

// Update applies one RAdam step in place. It panics with an *nd.Error
// when p.Step < 1, since the bias correction is undefined there.
func (o *RAdam) Update(p Param, weight, grad *nd.NDArray, state State) {
	checkStep("optimizer.radam.Update", p, state, 2)
	var t temps
	defer t.release()
	step := float64(p.Step)
	lr := o.lr(p)
	w := t.view(weight)
	g := o.prepare(&t, p, weight, grad)
	m, v := updateMoments(&t, state, g, o.Beta1, o.Beta2)

	bc2 := 1 - math.Pow(o.Beta2, step)
	mhat := t.add(nd.DivScalar(m, 1-math.Pow(o.Beta1, step)))
	rhoInf := 2/(1-o.Beta2) - 1
	rho := rhoInf - 2*step*math.Pow(o.Beta2, step)/bc2
	if rho > 5 {
		r := math.Sqrt((rho - 4) * (rho - 2) * rhoInf / ((rhoInf - 4) * (rhoInf - 2) * rho))
		d := t.add(nd.Div(mhat, t.add(nd.AddScalar(t.add(nd.Sqrt(v)), o.Epsilon))))
		nd.ScaleInPlace(d, -lr*math.Sqrt(bc2)*r)
		nd.AddTo(w, d)
		return
	}
	nd.ScaleInPlace(mhat, -lr)
	nd.AddTo(w, mhat)
}
