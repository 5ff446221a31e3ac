package optimizer

import (
	"github.com/goluon/goluon/nd"
)

// RMSProp is MXNet's rmsprop in its two forms. With
// g = clip(rescale·grad + wd·w), the default (Tieleman and Hinton, MXNet's
// rmsprop_update) is
//
//	n  = γ1·n + (1−γ1)·g²
//	w -= lr·g/sqrt(n + ε)
//
// and the centered form (Centered; Graves 2013, MXNet's rmspropalex_update)
//
//	n  = γ1·n + (1−γ1)·g²
//	ḡ  = γ1·ḡ + (1−γ1)·g
//	Δ  = γ2·Δ − lr·g/sqrt(n − ḡ² + ε)
//	w += Δ
//
// KerasEpsilon moves ε out of the square root, as Keras and PyTorch
// place it: w -= lr·g/(sqrt(n) + ε), and Δ = γ2·Δ − lr·g/(sqrt(n − ḡ²) + ε)
// when centered. Keras' rho and PyTorch's alpha are γ1; PyTorch's centered
// RMSprop with momentum γ2 and a constant learning rate is the centered
// KerasEpsilon form. Keras' RMSprop(lr=1e-4, decay=1e-6) is
//
//	o := NewRMSProp(1e-4)
//	o.KerasEpsilon, o.Epsilon = true, 1e-7 // Keras' default epsilon
//	o.Scheduler, _ = NewInverseTime(1e-4, 1e-6)
//
// When ClipWeights > 0 the new weight is clipped to [−ClipWeights,
// ClipWeights], as MXNet's clip_weights.
type RMSProp struct {
	Hyper
	// Gamma1 is the decay of the moving averages (NewRMSProp sets 0.9; a struct literal must set it).
	Gamma1 float64
	// Gamma2 is the momentum of the centered form (NewRMSProp sets 0.9; a struct literal must set it).
	Gamma2 float64
	// Epsilon keeps the division finite (NewRMSProp sets 1e-8; a struct literal must set it).
	Epsilon float64
	// Centered selects Graves' centered form.
	Centered bool
	// KerasEpsilon adds Epsilon after the square root (Keras, PyTorch)
	// instead of under it (MXNet).
	KerasEpsilon bool
	// ClipWeights, when > 0, clips the updated weights to
	// [-ClipWeights, ClipWeights].
	ClipWeights float64
}

var _ Optimizer = (*RMSProp)(nil)

// NewRMSProp returns non-centered RMSProp with the given learning rate and
// MXNet's defaults γ1 = 0.9, γ2 = 0.9, ε = 1e-8 (MXNet's default learning
// rate is 0.001).
func NewRMSProp(lr float64) *RMSProp {
	return &RMSProp{Hyper: Hyper{LR: lr}, Gamma1: 0.9, Gamma2: 0.9, Epsilon: 1e-8}
}

// Validate reports invalid hyper-parameters.
func (o *RMSProp) Validate() error {
	if err := checkUnit("rmsprop", "gamma1", o.Gamma1); err != nil {
		return err
	}
	if err := checkUnit("rmsprop", "gamma2", o.Gamma2); err != nil {
		return err
	}
	if err := checkDivEps("rmsprop", o.Epsilon); err != nil {
		return err
	}
	if err := checkEps("rmsprop", o.ClipWeights); err != nil {
		return err
	}
	return checkHyper("rmsprop", o.Hyper)
}

// Name returns "rmsprop".
// Elementwise reports true: the rule is elementwise (see Elementwise).
func (*RMSProp) Elementwise() bool { return true }

// StepFree reports true: the update does not read Param.Step.
func (*RMSProp) StepFree() bool { return true }

func (o *RMSProp) Name() string { return "rmsprop" }

// Hyperparams returns the shared hyper-parameters.
func (o *RMSProp) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns n, and for the centered form also ḡ and Δ (MXNet's
// order).
func (o *RMSProp) CreateState(w *nd.NDArray) State {
	if o.Centered {
		return State{zerosLike(w), zerosLike(w), zerosLike(w)}
	}
	return State{zerosLike(w)}
}

// Update applies one RMSProp step in place.
func (o *RMSProp) Update(p Param, weight, grad *nd.NDArray, state State) {
	const op = "optimizer.rmsprop.Update"
	if o.Centered {
		needState(op, state, 3)
	} else {
		needState(op, state, 1)
	}
	if !o.Centered {
		up := o.updateParams(p)
		up.Gamma1, up.Epsilon, up.KerasEpsilon, up.ClipWeights = o.Gamma1, o.Epsilon, o.KerasEpsilon, o.ClipWeights
		nd.OptimizerUpdate(nd.RMSPropProgram(up), weight, grad, state[0])
		return
	}
	// The centred form (not a program: it keeps three states).
	lr := o.lr(p)
	var t temps
	defer t.release()
	w := t.view(weight)
	g := o.prepareClipLast(&t, p, weight, grad)

	n := t.view(state[0])
	g2 := t.add(nd.Square(g))
	nd.ScaleInPlace(g2, 1-o.Gamma1)
	nd.ScaleInPlace(n, o.Gamma1)
	nd.AddTo(n, g2)

	ms := n // the mean square the denominator uses
	if o.Centered {
		gbar := t.view(state[1])
		nd.ScaleInPlace(gbar, o.Gamma1)
		nd.AddTo(gbar, t.add(nd.MulScalar(g, 1-o.Gamma1)))
		ms = t.add(nd.Sub(n, t.add(nd.Square(gbar))))
	}
	var den *nd.NDArray
	if o.KerasEpsilon {
		den = t.add(nd.AddScalar(t.add(nd.Sqrt(ms)), o.Epsilon))
	} else {
		den = t.add(nd.Sqrt(t.add(nd.AddScalar(ms, o.Epsilon))))
	}
	d := t.add(nd.Div(g, den))
	nd.ScaleInPlace(d, -lr)
	if o.Centered {
		delta := t.view(state[2])
		nd.ScaleInPlace(delta, o.Gamma2)
		nd.AddTo(delta, d)
		d = delta
	}
	nd.AddTo(w, d)
	if o.ClipWeights > 0 {
		nd.Assign(w, t.add(nd.Clip(w, -o.ClipWeights, o.ClipWeights)))
	}
}
