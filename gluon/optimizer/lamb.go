package optimizer

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/nd"
)

// LAMB is layer-wise adaptive moments (You et al., "Large Batch
// Optimization for Deep Learning: Training BERT in 76 minutes"), as MXNet's
// lamb applies it (lamb_update_phase1 and _phase2); PyTorch has none. At
// update number t = Param.Step:
//
//	g  = clip(rescale·grad)
//	m  = β1·m + (1−β1)·g
//	v  = β2·v + (1−β2)·g²
//	m̂  = m/(1−β1^t),  v̂ = v/(1−β2^t)   (m̂ = m, v̂ = v with NoBiasCorrection)
//	u  = m̂/(sqrt(v̂) + ε) + wd·w
//	r1 = ‖w‖, raised to LowerBound and lowered to UpperBound where set
//	r2 = ‖u‖
//	w -= lr·(r1/r2)·u           (lr·u when r1 or r2 is 0)
//
// with ‖·‖ the L2 norm of the whole parameter. The trust ratio r1/r2 is
// one number per parameter, so the rule is not elementwise: a Trainer
// updates each parameter on its own (see Elementwise). The norms stay on
// the device, as MXNet's do, and are computed in the weight's dtype.
type LAMB struct {
	Hyper
	// Beta1 is the decay rate of the first moment (NewLAMB sets 0.9; a struct literal must set it).
	Beta1 float64
	// Beta2 is the decay rate of the second moment (NewLAMB sets 0.999; a struct literal must set it).
	Beta2 float64
	// Epsilon keeps the division finite (NewLAMB sets MXNet's 1e-6; a struct literal must set it).
	Epsilon float64
	// LowerBound and UpperBound, when > 0, bound ‖w‖ in the trust ratio
	// (MXNet's lower_bound and upper_bound; 0, the default, is none).
	LowerBound, UpperBound float64
	// NoBiasCorrection turns the bias correction off (MXNet's
	// bias_correction=False).
	NoBiasCorrection bool
}

var _ Optimizer = (*LAMB)(nil)

// NewLAMB returns LAMB with the given learning rate and MXNet's defaults
// β1 = 0.9, β2 = 0.999, ε = 1e-6, bias correction on and no bounds
// (MXNet's default learning rate is 0.001).
func NewLAMB(lr float64) *LAMB {
	return &LAMB{Hyper: Hyper{LR: lr}, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-6}
}

// Validate reports invalid hyper-parameters.
func (o *LAMB) Validate() error {
	for _, c := range []struct {
		what string
		v    float64
	}{{"beta1", o.Beta1}, {"beta2", o.Beta2}} {
		if err := checkUnit("lamb", c.what, c.v); err != nil {
			return err
		}
	}
	if err := checkDivEps("lamb", o.Epsilon); err != nil {
		return err
	}
	if err := checkBounds("lamb", o.LowerBound, o.UpperBound); err != nil {
		return err
	}
	return checkHyper("lamb", o.Hyper)
}

// checkBounds reports an error unless the norm bounds are finite, >= 0
// and, when both are set, ordered.
func checkBounds(name string, lo, hi float64) error {
	if err := checkNonNeg(name, "lower_bound", lo); err != nil {
		return err
	}
	if err := checkNonNeg(name, "upper_bound", hi); err != nil {
		return err
	}
	if lo > 0 && hi > 0 && lo > hi {
		return fmt.Errorf("optimizer %s: lower_bound %g above upper_bound %g", name, lo, hi)
	}
	return nil
}

// Name returns "lamb".
func (o *LAMB) Name() string { return "lamb" }

// Hyperparams returns the shared hyper-parameters.
func (o *LAMB) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns the first and second moment estimates m and v.
func (o *LAMB) CreateState(w *nd.NDArray) State {
	return State{zerosLike(w), zerosLike(w)}
}

// Update applies one LAMB step in place. It panics with an *nd.Error when
// p.Step < 1.
func (o *LAMB) Update(p Param, weight, grad *nd.NDArray, state State) {
	checkStep("optimizer.lamb.Update", p, state, 2)
	var t temps
	defer t.release()
	step := float64(p.Step)
	w := t.view(weight)
	g := o.rescaled(&t, p, grad)
	m, v := updateMoments(&t, state, g, o.Beta1, o.Beta2)
	if !o.NoBiasCorrection {
		m = t.add(nd.DivScalar(m, 1-math.Pow(o.Beta1, step)))
		v = t.add(nd.DivScalar(v, 1-math.Pow(o.Beta2, step)))
	}
	u := t.add(nd.Div(m, t.add(nd.AddScalar(t.add(nd.Sqrt(v)), o.Epsilon))))
	if wd := o.wd(p); wd != 0 {
		nd.AddTo(u, t.add(nd.MulScalar(w, wd)))
	}

	r1 := t.add(nd.Norm(w, 2))
	if o.LowerBound > 0 {
		r1 = t.add(nd.MaximumScalar(r1, o.LowerBound))
	}
	if o.UpperBound > 0 {
		r1 = t.add(nd.MinimumScalar(r1, o.UpperBound))
	}
	r2 := t.add(nd.Norm(u, 2))
	ratio := ratioOr1(&t, r1, r2, r1, r2)
	nd.AddTo(w, t.add(nd.Mul(u, t.add(nd.MulScalar(ratio, -o.lr(p))))))
}

// ratioOr1 returns num/den, of 0-d arrays, where the norms a and b are
// both > 0, and 1 elsewhere (a 0 norm, or a NaN), as a 0-d array owned by
// t.
func ratioOr1(t *temps, num, den, a, b *nd.NDArray) *nd.NDArray {
	zero := t.scalar(den, 0)
	ok := t.add(nd.LogicalAnd(t.add(nd.Greater(a, zero)), t.add(nd.Greater(b, zero))))
	return t.add(nd.Where(ok, t.add(nd.Div(num, den)), t.scalar(den, 1)))
}
