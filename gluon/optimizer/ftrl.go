package optimizer

import (
	"github.com/goluon/goluon/nd"
)

// FTRL is Follow The Regularized Leader, proximal (McMahan et al., "Ad
// Click Prediction: a View from the Trenches"), as MXNet's ftrl
// (ftrl_update) applies it; PyTorch has none. With λ1 = Lamda1 and
// β = Beta:
//
//	g  = clip(rescale·grad)
//	z += g − (sqrt(n + g²) − sqrt(n))·w/lr
//	n += g²
//	w  = (sign(z)·λ1 − z)/((β + sqrt(n))/lr + wd)   where |z| > λ1
//	w  = 0                                          elsewhere
//
// wd acts as the L2 regulariser (λ2 in the paper). The new weight does not
// depend on the old one but through z, so the update is a projection, not
// a step. A zero learning rate (LRMult 0, or a schedule at 0) leaves the
// weight and state as they are, where MXNet would divide by it.
type FTRL struct {
	Hyper
	// Lamda1 is the L1 regularisation λ1 (MXNet's lamda1; NewFTRL sets 0.01).
	Lamda1 float64
	// Beta is the per-coordinate learning-rate offset β (NewFTRL sets 1).
	Beta float64
}

var _ Optimizer = (*FTRL)(nil)

// NewFTRL returns FTRL with the given learning rate and MXNet's defaults
// λ1 = 0.01, β = 1 (MXNet's default learning rate is 0.1).
func NewFTRL(lr float64) *FTRL {
	return &FTRL{Hyper: Hyper{LR: lr}, Lamda1: 0.01, Beta: 1}
}

// Validate reports invalid hyper-parameters.
func (o *FTRL) Validate() error {
	if err := checkNonNeg("ftrl", "lamda1", o.Lamda1); err != nil {
		return err
	}
	if err := checkNonNeg("ftrl", "beta", o.Beta); err != nil {
		return err
	}
	return checkHyper("ftrl", o.Hyper)
}

// Name returns "ftrl".
func (o *FTRL) Name() string { return "ftrl" }

// Elementwise reports true: the rule is elementwise (see Elementwise).
func (*FTRL) Elementwise() bool { return true }

// StepFree reports true: the update does not read Param.Step.
func (*FTRL) StepFree() bool { return true }

// Hyperparams returns the shared hyper-parameters.
func (o *FTRL) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns z and n (MXNet's order).
func (o *FTRL) CreateState(w *nd.NDArray) State {
	return State{zerosLike(w), zerosLike(w)}
}

// Update applies one FTRL step in place.
func (o *FTRL) Update(p Param, weight, grad *nd.NDArray, state State) {
	needState("optimizer.ftrl.Update", state, 2)
	lr := o.lr(p)
	if lr == 0 {
		return
	}
	var t temps
	defer t.release()
	w := t.view(weight)
	g := o.rescaled(&t, p, grad)
	z, n := t.view(state[0]), t.view(state[1])

	g2 := t.add(nd.Square(g))
	before := t.add(nd.Sqrt(n))
	nd.AddTo(n, g2)
	after := t.add(nd.Sqrt(n))
	sigma := t.add(nd.Mul(t.add(nd.Sub(after, before)), w))
	nd.AddTo(z, t.add(nd.Sub(g, t.add(nd.DivScalar(sigma, lr)))))

	num := t.add(nd.Sub(t.add(nd.MulScalar(t.add(nd.Sign(z)), o.Lamda1)), z))
	den := t.add(nd.AddScalar(t.add(nd.DivScalar(t.add(nd.AddScalar(after, o.Beta)), lr)), o.wd(p)))
	// The masked elements may divide 0 by 0 (β = 0, wd = 0, n = 0): Where
	// drops them.
	live := t.add(nd.Greater(t.add(nd.Abs(z)), t.scalar(z, o.Lamda1)))
	nd.Assign(w, t.add(nd.Where(live, t.add(nd.Div(num, den)), t.scalar(w, 0))))
}
