package optimizer

import (
	"github.com/goluon/goluon/nd"
)

// Signum is signSGD with momentum (Bernstein et al. 2018), as MXNet's
// signum (signum_update); PyTorch has none. With momentum μ > 0 and
// g = clip(rescale·grad) + wd·w:
//
//	m  = μ·m + (1−μ)·g
//	w  = (1 − lr·wd_lh)·w − lr·sign(m)
//
// and with μ = 0 (signSGD, MXNet's signsgd_update, which signum runs then):
//
//	w  = (1 − lr·(wd + wd_lh))·w − lr·sign(rescale·grad)
//
// so that weight decay enters the momentum's sign in one form and decays
// the weight directly in the other, as in MXNet. wd_lh (WDLH) is the
// decoupled decay of Loshchilov and Hutter; it is not scaled by
// Param.WDMult. MXNet 1.x takes wd_lh only with momentum; MXNet 2.x adds
// it to wd without, as here. MXNet's momentum buffer holds −m.
type Signum struct {
	Hyper
	// Momentum is μ in [0, 1); 0 is signSGD (Name "signsgd").
	Momentum float64
	// WDLH is MXNet's wd_lh, decoupled weight decay (0 by default).
	WDLH float64
}

var _ Optimizer = (*Signum)(nil)

// NewSignum returns Signum with the given learning rate and MXNet's
// default momentum 0.9 (MXNet's default learning rate is 0.01).
func NewSignum(lr float64) *Signum {
	return &Signum{Hyper: Hyper{LR: lr}, Momentum: 0.9}
}

// NewSignSGD returns signSGD: Signum without momentum.
func NewSignSGD(lr float64) *Signum { return &Signum{Hyper: Hyper{LR: lr}} }

// Validate reports invalid hyper-parameters.
func (o *Signum) Validate() error {
	if err := checkUnit(o.Name(), "momentum", o.Momentum); err != nil {
		return err
	}
	if err := checkNonNeg(o.Name(), "wd_lh", o.WDLH); err != nil {
		return err
	}
	return checkHyper(o.Name(), o.Hyper)
}

// Name returns "signum", or "signsgd" without momentum.
func (o *Signum) Name() string {
	if o.Momentum == 0 {
		return "signsgd"
	}
	return "signum"
}

// Elementwise reports true: the rule is elementwise (see Elementwise).
func (*Signum) Elementwise() bool { return true }

// StepFree reports true: the update does not read Param.Step.
func (*Signum) StepFree() bool { return true }

// Hyperparams returns the shared hyper-parameters.
func (o *Signum) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns the momentum buffer (none without momentum).
func (o *Signum) CreateState(w *nd.NDArray) State {
	if o.Momentum == 0 {
		return nil
	}
	return State{zerosLike(w)}
}

// Update applies one Signum step in place.
func (o *Signum) Update(p Param, weight, grad *nd.NDArray, state State) {
	if o.Momentum != 0 {
		needState("optimizer.signum.Update", state, 1)
	}
	var t temps
	defer t.release()
	lr := o.lr(p)
	w := t.view(weight)
	var s *nd.NDArray
	if o.Momentum == 0 {
		s = t.add(nd.Sign(o.rescaled(&t, p, grad)))
		if k := lr * (o.wd(p) + o.WDLH); k != 0 {
			nd.ScaleInPlace(w, 1-k)
		}
	} else {
		g := o.prepare(&t, p, weight, grad)
		m := t.view(state[0])
		decay(m, g, o.Momentum)
		s = t.add(nd.Sign(m))
		if o.WDLH != 0 {
			nd.ScaleInPlace(w, 1-lr*o.WDLH)
		}
	}
	nd.ScaleInPlace(s, -lr)
	nd.AddTo(w, s)
}
