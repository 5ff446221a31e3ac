package optimizer

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// AdamW is Adam with decoupled weight decay (Loshchilov and Hutter), as
// PyTorch's torch.optim.AdamW applies it at update number t = Param.Step:
//
//	g  = clip(rescale·grad)
//	w *= 1 − lr·wd                       (the decay, apart from the gradient)
//	m  = β1·m + (1−β1)·g
//	v  = β2·v + (1−β2)·g²
//	w -= lr/(1−β1^t) · m/(sqrt(v)/sqrt(1−β2^t) + ε)
//
// With wd = 0 it is PyTorch's Adam (note the ε: MXNet's Adam, above, puts
// it outside the bias correction). AMSGrad, as PyTorch's amsgrad=True,
// keeps the running maximum v̂ = max(v̂, v) and divides by sqrt(v̂) in
// place of sqrt(v).
type AdamW struct {
	Hyper
	// Beta1 is the decay rate of the first moment (NewAdamW sets 0.9; a struct literal must set it).
	Beta1 float64
	// Beta2 is the decay rate of the second moment (NewAdamW sets 0.999; a struct literal must set it).
	Beta2 float64
	// Epsilon keeps the division finite (NewAdamW sets 1e-8; a struct literal must set it).
	Epsilon float64
	// AMSGrad divides by the running maximum of v, a third state array
	// (see Adam).
	AMSGrad bool
}

var _ Optimizer = (*AdamW)(nil)

// NewAdamW returns AdamW with the given learning rate and weight decay and
// PyTorch's defaults β1 = 0.9, β2 = 0.999, ε = 1e-8 (PyTorch's default
// weight decay is 0.01).
func NewAdamW(lr, wd float64) *AdamW {
	return &AdamW{Hyper: Hyper{LR: lr, WD: wd}, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}
}

// Validate reports invalid hyper-parameters.
func (o *AdamW) Validate() error {
	return validateMoments("adamw", o.Beta1, o.Beta2, o.Epsilon, o.Hyper)
}

// Name returns "adamw".
// Elementwise reports true: the rule is elementwise (see Elementwise).
func (*AdamW) Elementwise() bool { return true }

func (o *AdamW) Name() string { return "adamw" }

// Hyperparams returns the shared hyper-parameters.
func (o *AdamW) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns the first and second moment estimates m and v,
// and with AMSGrad the maximum v̂ (PyTorch's order).
func (o *AdamW) CreateState(w *nd.NDArray) State { return momentStates(w, o.AMSGrad) }

// Update applies one AdamW step in place. It panics with an *nd.Error when
// p.Step < 1, since the bias correction is undefined there.
func (o *AdamW) Update(p Param, weight, grad *nd.NDArray, state State) {
	checkStep("optimizer.adamw.Update", p, state, numMoments(o.AMSGrad))
	var t temps
	defer t.release()
	step := float64(p.Step)
	lr := o.lr(p)
	w := t.view(weight)
	g := o.rescaled(&t, p, grad)
	if wd := o.wd(p); wd != 0 {
		nd.ScaleInPlace(w, 1-lr*wd)
	}
	m, v := updateMoments(&t, state, g, o.Beta1, o.Beta2)
	if o.AMSGrad {
		v = maxSoFar(&t, state[2], v)
	}

	den := t.add(nd.AddScalar(t.add(nd.MulScalar(t.add(nd.Sqrt(v)), 1/math.Sqrt(1-math.Pow(o.Beta2, step)))), o.Epsilon))
	d := t.add(nd.Div(m, den))
	nd.ScaleInPlace(d, -lr/(1-math.Pow(o.Beta1, step)))
	nd.AddTo(w, d)
}
