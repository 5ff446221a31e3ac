package optimizer

import (
	"github.com/goluon/goluon/nd"
)

// AdaDelta is Zeiler's AdaDelta. By default it is MXNet 1.x's adadelta,
// which has no learning rate (LR, the Scheduler and Param.LRMult do not
// enter it) and keeps weight decay out of the accumulators:
//
//	g   = clip(rescale·grad)
//	E_g = ρ·E_g + (1−ρ)·g²
//	Δ   = sqrt(E_Δ + ε)/sqrt(E_g + ε) · g
//	E_Δ = ρ·E_Δ + (1−ρ)·Δ²
//	w  -= Δ + wd·w
//
// TorchForm selects the form of MXNet 2.x and PyTorch's
// torch.optim.Adadelta, with weight decay folded into the gradient and the
// step scaled by the learning rate (both default it to 1):
//
//	g  = clip(rescale·grad) + wd·w
//	(E_g, Δ, E_Δ as above)
//	w -= lr·Δ
//
// ε sits under both square roots in every form. MXNet 1.x's default ε is
// 1e-5 (NewAdaDelta's); MXNet 2.x's and PyTorch's is 1e-6.
type AdaDelta struct {
	Hyper
	// Rho is the decay of both accumulators (NewAdaDelta sets 0.9).
	Rho float64
	// Epsilon keeps the step finite and starts it off (NewAdaDelta sets 1e-5; a struct literal must set it).
	Epsilon float64
	// TorchForm selects the MXNet 2.x / PyTorch form described above.
	TorchForm bool
}

var _ Optimizer = (*AdaDelta)(nil)

// NewAdaDelta returns AdaDelta in MXNet 1.x's form with ρ = 0.9 and
// ε = 1e-5. lr is only used with TorchForm (whose usual value is 1).
func NewAdaDelta(lr float64) *AdaDelta {
	return &AdaDelta{Hyper: Hyper{LR: lr}, Rho: 0.9, Epsilon: 1e-5}
}

// Validate reports invalid hyper-parameters.
func (o *AdaDelta) Validate() error {
	if err := checkUnit("adadelta", "rho", o.Rho); err != nil {
		return err
	}
	if err := checkDivEps("adadelta", o.Epsilon); err != nil {
		return err
	}
	return checkHyper("adadelta", o.Hyper)
}

// Name returns "adadelta".
func (o *AdaDelta) Name() string { return "adadelta" }

// Elementwise reports true: the rule is elementwise (see Elementwise).
func (*AdaDelta) Elementwise() bool { return true }

// StepFree reports true: the update does not read Param.Step.
func (*AdaDelta) StepFree() bool { return true }

// Hyperparams returns the shared hyper-parameters.
func (o *AdaDelta) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns the accumulators E_g and E_Δ.
func (o *AdaDelta) CreateState(w *nd.NDArray) State {
	return State{zerosLike(w), zerosLike(w)}
}

// Update applies one AdaDelta step in place.
func (o *AdaDelta) Update(p Param, weight, grad *nd.NDArray, state State) {
	needState("optimizer.adadelta.Update", state, 2)
	var t temps
	defer t.release()
	w := t.view(weight)
	var g *nd.NDArray
	if o.TorchForm {
		g = o.prepare(&t, p, weight, grad)
	} else {
		g = o.rescaled(&t, p, grad)
	}
	eg, ed := t.view(state[0]), t.view(state[1])
	decay(eg, t.add(nd.Square(g)), o.Rho)
	d := t.add(nd.Div(t.add(nd.Sqrt(t.add(nd.AddScalar(ed, o.Epsilon)))), t.add(nd.Sqrt(t.add(nd.AddScalar(eg, o.Epsilon))))))
	d = t.add(nd.Mul(d, g))
	decay(ed, t.add(nd.Square(d)), o.Rho)

	if o.TorchForm {
		nd.ScaleInPlace(d, -o.lr(p))
	} else {
		if wd := o.wd(p); wd != 0 {
			nd.AddTo(d, t.add(nd.MulScalar(w, wd)))
		}
		nd.ScaleInPlace(d, -1)
	}
	nd.AddTo(w, d)
}

// decay applies avg = ρ·avg + (1−ρ)·x in place, scaling x (a
// temporary) in place too.
func decay(avg, x *nd.NDArray, rho float64) {
	nd.ScaleInPlace(x, 1-rho)
	nd.ScaleInPlace(avg, rho)
	nd.AddTo(avg, x)
}
