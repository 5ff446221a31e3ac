package optimizer

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// Adamax is the infinity-norm variant of Adam (Kingma and Ba, section 7),
// as MXNet 1.x's adamax and PyTorch's torch.optim.Adamax apply it, at
// update number t = Param.Step:
//
//	g  = clip(rescale·grad + wd·w)
//	m  = β1·m + (1−β1)·g
//	u  = max(β2·u, |g| + ε)
//	w -= lr/(1−β1^t) · m/u
//
// The two frameworks differ only in ε: PyTorch adds it to |g| as above
// (default 1e-8, which NewAdamax sets); MXNet has none, which is Epsilon
// = 0 here, and then an element whose gradient has been 0 so far divides
// 0 by 0. MXNet 2.x clips before adding the decay, g = clip(rescale·grad)
// + wd·w; PyTorch does not clip.
type Adamax struct {
	Hyper
	// Beta1 is the decay rate of the first moment (NewAdamax sets 0.9; a struct literal must set it).
	Beta1 float64
	// Beta2 is the decay of the infinity norm (NewAdamax sets 0.999; a struct literal must set it).
	Beta2 float64
	// Epsilon is added to |g| (NewAdamax sets PyTorch's 1e-8; 0 is MXNet's rule).
	Epsilon float64
}

var _ Optimizer = (*Adamax)(nil)

// NewAdamax returns Adamax with the given learning rate, β1 = 0.9,
// β2 = 0.999 (both frameworks' defaults) and PyTorch's ε = 1e-8 (MXNet's
// default learning rate is 0.002).
func NewAdamax(lr float64) *Adamax {
	return &Adamax{Hyper: Hyper{LR: lr}, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}
}

// Validate reports invalid hyper-parameters.
func (o *Adamax) Validate() error {
	return validateMoments("adamax", o.Beta1, o.Beta2, o.Epsilon, o.Hyper)
}

// Name returns "adamax".
func (o *Adamax) Name() string { return "adamax" }

// Elementwise reports true: the rule is elementwise (see Elementwise).
func (*Adamax) Elementwise() bool { return true }

// Hyperparams returns the shared hyper-parameters.
func (o *Adamax) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns the first moment m and the infinity norm u.
func (o *Adamax) CreateState(w *nd.NDArray) State {
	return State{zerosLike(w), zerosLike(w)}
}

// Update applies one Adamax step in place. It panics with an *nd.Error
// when p.Step < 1, since the bias correction is undefined there.
func (o *Adamax) Update(p Param, weight, grad *nd.NDArray, state State) {
	checkStep("optimizer.adamax.Update", p, state, 2)
	var t temps
	defer t.release()
	w := t.view(weight)
	g := o.prepareClipLast(&t, p, weight, grad)
	m, u := t.view(state[0]), t.view(state[1])
	nd.ScaleInPlace(m, o.Beta1)
	nd.AddTo(m, t.add(nd.MulScalar(g, 1-o.Beta1)))
	a := t.add(nd.Abs(g))
	if o.Epsilon != 0 {
		a = t.add(nd.AddScalar(a, o.Epsilon))
	}
	nd.ScaleInPlace(u, o.Beta2)
	nd.Assign(u, t.add(nd.Maximum(u, a)))

	d := t.add(nd.Div(m, u))
	nd.ScaleInPlace(d, -o.lr(p)/(1-math.Pow(o.Beta1, float64(p.Step))))
	nd.AddTo(w, d)
}
