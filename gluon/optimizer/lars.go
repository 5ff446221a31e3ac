package optimizer

import (
	"fmt"
	"strings"

	"github.com/goluon/goluon/nd"
)

// LARS is layer-wise adaptive rate scaling (You et al., "Large Batch
// Training of Convolutional Networks") on SGD with momentum, as MXNet
// 1.x's lars applies it; PyTorch has none. Each parameter's learning rate
// is scaled by its trust ratio
//
//	λ = η·‖w‖/(‖rescale·grad‖ + wd·‖w‖ + ε)   (1 when a norm is 0)
//
// with ‖·‖ the L2 norm of the whole parameter and the gradient's taken
// before clipping, except for a parameter whose name ends in "bias",
// "gamma" or "beta" (biases and normalisation layers: λ = 1), as MXNet
// decides by name. Then, with g = clip(rescale·grad) + wd·w, it is MXNet's
// SGD (see SGD):
//
//	m  = μ'·m − λ·lr·g;  w += m      (w -= λ·lr·g without momentum)
//
// where μ' is the momentum corrected for a change of the scheduled rate
// (Goyal et al., "Accurate, Large Minibatch SGD"): μ·lr(n)/lr(n−1) at
// update n, the rates before Param.LRMult, and μ itself at the first
// update, where lr(n−1) is 0, or with NoMomentumCorrection. MXNet keeps
// one previous rate for the whole optimizer, so only the first update call
// of a step sees the ratio; here every parameter does. MXNet computes the
// norms in float32; here they are in the weight's dtype, on the device.
// The trust ratio makes the rule not elementwise (see Elementwise).
type LARS struct {
	Hyper
	// Momentum is μ in [0, 1); 0, MXNet's default, disables it.
	Momentum float64
	// Eta is the trust coefficient η (NewLARS sets 0.001; a struct literal must set it).
	Eta float64
	// Epsilon is added to the trust ratio's denominator (MXNet's eps, 0 by default).
	Epsilon float64
	// NoMomentumCorrection keeps μ fixed when the learning rate changes
	// (MXNet's momentum_correction=False).
	NoMomentumCorrection bool
}

var _ Optimizer = (*LARS)(nil)

// NewLARS returns LARS with the given learning rate and MXNet 1.x's
// defaults: no momentum, η = 0.001, ε = 0, momentum correction on
// (MXNet's default learning rate is 0.01; set Momentum, usually 0.9).
func NewLARS(lr float64) *LARS {
	return &LARS{Hyper: Hyper{LR: lr}, Eta: 0.001}
}

// Validate reports invalid hyper-parameters.
func (o *LARS) Validate() error {
	if err := checkUnit("lars", "momentum", o.Momentum); err != nil {
		return err
	}
	if !(o.Eta > 0) || !finite(o.Eta) {
		return fmt.Errorf("optimizer lars: eta %g must be finite and > 0 (0 scales every step to nothing; NewLARS sets the usual 0.001)", o.Eta)
	}
	if err := checkEps("lars", o.Epsilon); err != nil {
		return err
	}
	return checkHyper("lars", o.Hyper)
}

// Name returns "lars".
func (o *LARS) Name() string { return "lars" }

// StepFree reports true: the update does not read Param.Step.
func (*LARS) StepFree() bool { return true }

// Hyperparams returns the shared hyper-parameters.
func (o *LARS) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns the momentum buffer (none without momentum).
func (o *LARS) CreateState(w *nd.NDArray) State {
	if o.Momentum == 0 {
		return nil
	}
	return State{zerosLike(w)}
}

// larsExempt reports whether MXNet leaves the parameter's rate unscaled.
func larsExempt(name string) bool {
	return strings.HasSuffix(name, "bias") || strings.HasSuffix(name, "gamma") || strings.HasSuffix(name, "beta")
}

// momentum returns μ', the momentum of this update of p.
func (o *LARS) momentum(p Param) float64 {
	n := p.Update
	if n == 0 {
		n = p.Step
	}
	if o.NoMomentumCorrection || n <= 1 {
		return o.Momentum
	}
	last := o.LearningRate(n - 1)
	if last == 0 {
		return o.Momentum
	}
	return o.Momentum * (o.LearningRate(n) / last)
}

// Update applies one LARS step in place.
func (o *LARS) Update(p Param, weight, grad *nd.NDArray, state State) {
	if o.Momentum != 0 {
		needState("optimizer.lars.Update", state, 1)
	}
	var t temps
	defer t.release()
	lr, wd := o.lr(p), o.wd(p)
	w := t.view(weight)
	rg := t.add(nd.MulScalar(t.view(grad), o.rescale(p)))
	g := rg
	if o.ClipGradient > 0 {
		g = t.add(nd.Clip(rg, -o.ClipGradient, o.ClipGradient))
	}
	if wd != 0 {
		g = t.add(nd.Add(g, t.add(nd.MulScalar(w, wd))))
	}

	var d *nd.NDArray
	if larsExempt(p.Name) {
		d = t.add(nd.MulScalar(g, -lr))
	} else {
		wn, gn := t.add(nd.Norm(w, 2)), t.add(nd.Norm(rg, 2))
		num := t.add(nd.MulScalar(wn, o.Eta))
		den := t.add(nd.AddScalar(t.add(nd.Add(gn, t.add(nd.MulScalar(wn, wd)))), o.Epsilon))
		rate := t.add(nd.MulScalar(ratioOr1(&t, num, den, wn, gn), -lr))
		d = t.add(nd.Mul(g, rate))
	}
	if o.Momentum != 0 {
		m := t.view(state[0])
		nd.ScaleInPlace(m, o.momentum(p))
		nd.AddTo(m, d)
		d = m
	}
	nd.AddTo(w, d)
}
