package optimizer

import (
	"github.com/goluon/goluon/nd"
)

// SGD is stochastic gradient descent with optional momentum and Nesterov
// momentum, as MXNet's sgd (sgd_update, sgd_mom_update) and nag
// (nag_mom_update). With g = clip(rescale·grad) + wd·w:
//
//	without momentum: w -= lr·g
//	with momentum:    m = momentum·m − lr·g;  w += m
//	Nesterov (nag):   m = momentum·m + g;     w -= lr·(g + momentum·m)
//
// The two momentum forms keep different buffers, as MXNet's do: SGD's
// buffer holds the step (lr inside), NAG's the gradient average (lr
// outside). With a constant learning rate both agree with PyTorch's SGD;
// when the learning rate changes, SGD's form differs from PyTorch's
// (buf = momentum·buf + g; w -= lr·buf), NAG's does not.
type SGD struct {
	Hyper
	// Momentum is the momentum coefficient in [0, 1); 0 disables it.
	Momentum float64
	// Nesterov selects Nesterov momentum (MXNet's "nag").
	Nesterov bool
}

var _ Optimizer = (*SGD)(nil)

// NewSGD returns SGD with the given learning rate and no momentum.
func NewSGD(lr float64) *SGD { return &SGD{Hyper: Hyper{LR: lr}} }

// NewNAG returns Nesterov SGD with the given learning rate and momentum
// (MXNet's NAG default momentum is 0, which makes it plain SGD).
func NewNAG(lr, momentum float64) *SGD {
	return &SGD{Hyper: Hyper{LR: lr}, Momentum: momentum, Nesterov: true}
}

// Validate reports invalid hyper-parameters.
func (o *SGD) Validate() error {
	if err := checkUnit(o.Name(), "momentum", o.Momentum); err != nil {
		return err
	}
	return checkHyper(o.Name(), o.Hyper)
}

// Name returns "sgd" or "nag".
// Elementwise reports true: the rule is elementwise (see Elementwise).
func (*SGD) Elementwise() bool { return true }

// StepFree reports true: the update does not read Param.Step.
func (*SGD) StepFree() bool { return true }

func (o *SGD) Name() string {
	if o.Nesterov {
		return "nag"
	}
	return "sgd"
}

// Hyperparams returns the shared hyper-parameters.
func (o *SGD) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns the momentum buffer (none without momentum).
func (o *SGD) CreateState(w *nd.NDArray) State {
	if o.Momentum == 0 {
		return nil
	}
	return State{zerosLike(w)}
}

// Update applies one SGD step in place: the rule is nd.SGDProgram,
// run by nd.OptimizerUpdate (fused where the backend can).
func (o *SGD) Update(p Param, weight, grad *nd.NDArray, state State) {
	var m *nd.NDArray
	if o.Momentum != 0 {
		needState("optimizer."+o.Name()+".Update", state, 1)
		m = state[0]
	}
	up := o.updateParams(p)
	up.Momentum, up.Nesterov = o.Momentum, o.Nesterov
	nd.OptimizerUpdate(nd.SGDProgram(up, o.Momentum != 0), weight, grad, m)
}
