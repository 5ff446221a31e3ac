// Package optimizer holds the update rules a gluon.Trainer applies to
// parameters and the learning-rate schedules they follow, with the
// semantics of MXNet 1.x (python/mxnet/optimizer/optimizer.py and
// lr_scheduler.py) unless a rule says otherwise:
//
//	SGD (sgd, nag)            SGD with momentum, Nesterov momentum
//	Adam (adam)               Adam, optionally AMSGrad
//	AdamW (adamw)             Adam with decoupled weight decay (PyTorch's)
//	RMSProp (rmsprop)         Tieleman and Hinton's, or Graves' centered form
//	AdaGrad (adagrad)         AdaGrad, MXNet 1.x's or PyTorch's form
//	AdaDelta (adadelta)       AdaDelta, MXNet 1.x's or PyTorch's form
//	Adamax (adamax)           Adam's infinity-norm variant
//	Nadam (nadam)             Adam with Nesterov momentum and its schedule
//	RAdam (radam)             rectified Adam (PyTorch's)
//	FTRL (ftrl)               follow the regularized leader, proximal
//	LAMB (lamb)               layer-wise adaptive moments (per-parameter norms)
//	LARS (lars)               layer-wise adaptive rate scaling on SGD
//	Signum (signum, signsgd)  the sign of the momentum, or of the gradient
//
// with their Create names in parentheses. Each type's documentation gives
// its update equations and says where MXNet and PyTorch differ and which
// form it follows (a switch such as TorchForm selects the other where the
// two genuinely differ).
//
// An Optimizer updates one parameter array in place from its gradient.
// The Trainer owns the bookkeeping: it calls Update once per parameter
// replica per step, passing the step number, so an optimizer holds no
// per-step counters itself and the same value can serve every device.
//
// # Step numbering
//
// Param.Step is 1-based: 1 is the first update of a parameter, as MXNet's
// per-parameter update count (Adam's t) is 1 at its first update.
// Param.Update is the Trainer's update number, also 1-based, as MXNet's
// num_update: it counts the Trainer's steps whichever parameters they
// updated, so it runs ahead of Step for a parameter that was frozen for a
// while. A Scheduler receives Update (Step when Update is 0); each
// scheduler documents what it returns for it.
//
// # Gradient preparation
//
// Every rule first turns the raw gradient into the one it uses, with
// Hyper's RescaleGrad, ClipGradient and WD. MXNet does not do this in one
// order for all rules, and this package follows it rule by rule:
//
//	SGD, NAG, RAdam, LARS, Signum with momentum,
//	AdaGrad and AdaDelta with TorchForm:   g = clip(rescale·grad) + wd·w
//	Adam, RMSProp, Adamax, Nadam:          g = clip(rescale·grad + wd·w)
//	AdaGrad, AdaDelta (MXNet 1.x default): g = clip(rescale·grad); wd·w is added to the step, not to g
//	AdamW, Signum without momentum:        g = clip(rescale·grad); the weight decays by 1 − lr·wd first
//	LAMB:                                  g = clip(rescale·grad); wd·w is added to the normalised step
//	FTRL:                                  g = clip(rescale·grad); wd is the L2 term of its projection
//
// where clip is elementwise to [-ClipGradient, ClipGradient] (no clipping
// when ClipGradient is 0), wd = WD·WDMult and lr = LearningRate(n)·LRMult,
// n being Param.Update (Param.Step when Update is 0).
//
// # Memory and autograd
//
// Update works on views of the weight and gradient in a session of its own
// that never records and opens no scope (see autograd.Session), so it is
// never recorded on the autograd tape, even inside autograd.Record, and no
// goroutine's scope tracks its temporaries: it releases them itself before
// returning (a Trainer may update the replicas of different devices from
// concurrent goroutines, beside other goroutine trees).
package optimizer

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/nd"
)

// State is an optimizer's per-parameter state (momentum buffers, moment
// estimates), living on the parameter's context. Its arrays are saved and
// restored with the Trainer's state, in order.
type State []*nd.NDArray

// Param tells Update which parameter it is updating and where training is.
type Param struct {
	Name   string  // the parameter's full name, e.g. "conv0.weight"
	Step   int     // 1 for the first update of this parameter, 2 for the second, ...
	Update int     // the Trainer's update number, which the schedule follows (0: Step)
	LRMult float64 // the parameter's learning-rate multiplier, taken literally (0 freezes it, but in AdaDelta's MXNet 1.x form, which has no learning rate); see NewParam
	WDMult float64 // the parameter's weight-decay multiplier, taken literally (0: no decay)
	// Rescale multiplies this update's gradient (0 is taken as 1): the
	// Trainer passes 1/global batch here, so the summed gradient becomes
	// a mean, without writing into the optimizer's hyper-parameters.
	Rescale float64
}

// StepFree is implemented by rules that can say whether their update
// ignores Param.Step, the parameter's own update count (SGD, RMSProp,
// AdaGrad, AdaDelta, FTRL, Signum and LARS do; the bias corrections and
// schedules of Adam, AdamW, Adamax, Nadam, RAdam and LAMB read it). The
// schedule reads Param.Update, the same for every parameter. When StepFree returns true
// a Trainer may update parameters whose counts differ (one was frozen for
// a while) with one call, as Elementwise allows. A type that embeds a
// rule of this package inherits its method: one whose Update reads
// Param.Step must override StepFree to return false.
type StepFree interface {
	Optimizer
	StepFree() bool
}

// Elementwise is implemented by rules that can say whether their update of
// an element depends only on that element of the weight, the gradient and
// the state, and on Param's scalars (every rule of this package but LAMB
// and LARS says yes; those two do not implement it).
// When Elementwise returns true a Trainer may update several parameters
// that share those scalars with one call, on flat arrays that hold them
// side by side, as it does per gradient bucket. A type that embeds a rule
// of this package inherits its method: one whose Update uses more than the
// element (a norm per layer, as LARS and LAMB do) must override
// Elementwise to return false.
type Elementwise interface {
	Optimizer
	Elementwise() bool
}

// Optimizer is one update rule.
type Optimizer interface {
	// Name names the rule ("sgd", "adam", ...).
	Name() string
	// CreateState returns zero-initialised state for weight, on weight's
	// context and of its dtype (nil when the rule keeps none). The rules
	// here make it with nd.Persistent, so no nd.Scope tracks it; an
	// Optimizer written elsewhere should do the same.
	CreateState(weight *nd.NDArray) State
	// Update applies one step to weight in place. grad is the summed
	// gradient, not yet rescaled; weight, grad and state share a context.
	// Update does not record on the autograd tape.
	Update(p Param, weight, grad *nd.NDArray, state State)
	// Hyperparams returns the hyper-parameters common to every rule, for the
	// Trainer to read and adjust (learning rate, rescaling).
	Hyperparams() *Hyper
}

// Hyper holds what every optimizer shares, with MXNet's meaning.
type Hyper struct {
	// LR is the base learning rate; Scheduler, when set, overrides it.
	LR float64
	// WD is the L2 weight decay coefficient (times Param.WDMult); where
	// each rule applies it is given in the package documentation.
	WD float64
	// RescaleGrad multiplies every gradient first (0 is taken as 1), on
	// top of each update's Param.Rescale; the Trainer leaves it alone
	// (MXNet's rescale_grad as a user-set constant).
	RescaleGrad float64
	// ClipGradient, when > 0, clips each gradient element to
	// [-ClipGradient, ClipGradient] (see the package documentation for
	// whether the weight-decay term is clipped too).
	ClipGradient float64
	// Scheduler, when set, gives the learning rate of each step.
	Scheduler Scheduler
}

// LearningRate returns the base learning rate at update number step.
func (h *Hyper) LearningRate(step int) float64 {
	if h.Scheduler != nil {
		return h.Scheduler.LR(step)
	}
	return h.LR
}

// Scheduler maps an update number (1-based) to a learning rate.
type Scheduler interface {
	LR(step int) float64
}

// updateParams returns the scalars every update program needs for this
// update of p (nd.SGDProgram, nd.RMSPropProgram): the scheduled,
// multiplied learning rate and weight decay, the rescale factor and the
// gradient clip.
func (h *Hyper) updateParams(p Param) nd.OptimizerParams {
	return nd.OptimizerParams{LR: h.lr(p), WD: h.wd(p), RescaleGrad: h.rescale(p), ClipGradient: h.ClipGradient}
}

// rescale is the factor of this update's gradient: Param.Rescale times
// RescaleGrad, either taken as 1 when 0.
func (h *Hyper) rescale(p Param) float64 {
	r, pr := h.RescaleGrad, p.Rescale
	if r == 0 {
		r = 1
	}
	if pr == 0 {
		pr = 1
	}
	return r * pr
}

// updates is the session Update computes in: it never records and has no
// scopes, so its arrays are tracked by nothing and released by temps.
var updates = nd.NewSession("optimizer")

// temps collects the temporaries of one Update and releases them together.
// It is goroutine-local, unlike an nd.Scope.
type temps []*nd.NDArray

// view returns a view of a in the updates session, owned by t: every op
// on it runs there and is not recorded.
func (t *temps) view(a *nd.NDArray) *nd.NDArray { return t.add(updates.Use(a)) }

// add remembers a for release and returns it.
func (t *temps) add(a *nd.NDArray) *nd.NDArray {
	*t = append(*t, a)
	return a
}

// scalar returns a 0-d array holding v, of like's dtype and on its
// context, owned by t (it broadcasts against any shape).
func (t *temps) scalar(like *nd.NDArray, v float64) *nd.NDArray {
	return t.add(updates.Full(like.Context(), like.DType(), v))
}

// release gives every remembered array back to its pool.
func (t *temps) release() {
	for _, a := range *t {
		a.Release()
	}
	*t = nil
}

// rescaled returns clip(rescale·grad), a new array owned by t. grad is
// read through a detached view, so nothing is recorded.
func (h *Hyper) rescaled(t *temps, p Param, grad *nd.NDArray) *nd.NDArray {
	g := t.add(nd.MulScalar(t.view(grad), h.rescale(p)))
	if h.ClipGradient > 0 {
		g = t.add(nd.Clip(g, -h.ClipGradient, h.ClipGradient))
	}
	return g
}

// prepare returns the gradient SGD, NAG and AdaGrad's TorchForm see:
// clip(rescale·grad) + wd·weight, a new array owned by t.
func (h *Hyper) prepare(t *temps, p Param, weight, grad *nd.NDArray) *nd.NDArray {
	g := h.rescaled(t, p, grad)
	if wd := h.wd(p); wd != 0 {
		nd.AddTo(g, t.add(nd.MulScalar(t.view(weight), wd)))
	}
	return g
}

// prepareClipLast returns the gradient Adam and RMSProp see:
// clip(rescale·grad + wd·weight), a new array owned by t.
func (h *Hyper) prepareClipLast(t *temps, p Param, weight, grad *nd.NDArray) *nd.NDArray {
	g := t.add(nd.MulScalar(t.view(grad), h.rescale(p)))
	if wd := h.wd(p); wd != 0 {
		nd.AddTo(g, t.add(nd.MulScalar(t.view(weight), wd)))
	}
	if h.ClipGradient > 0 {
		g = t.add(nd.Clip(g, -h.ClipGradient, h.ClipGradient))
	}
	return g
}

// NewParam returns the Param of update number step of the named parameter
// with both multipliers 1.
func NewParam(name string, step int) Param {
	return Param{Name: name, Step: step, LRMult: 1, WDMult: 1}
}

// lr returns the learning rate for this update of p.
func (h *Hyper) lr(p Param) float64 {
	n := p.Update
	if n == 0 {
		n = p.Step
	}
	return h.LearningRate(n) * p.LRMult
}

// wd returns the weight decay for p.
func (h *Hyper) wd(p Param) float64 { return h.WD * p.WDMult }

// needState panics with an *nd.Error unless state holds n arrays.
func needState(op string, state State, n int) {
	if len(state) != n {
		nd.Panicf(op, nd.ErrArgument, "want the %d state arrays CreateState returns, got %d", n, len(state))
	}
}

func checkHyper(name string, h Hyper) error {
	switch {
	case h.LR < 0 || !finite(h.LR):
		return fmt.Errorf("optimizer %s: learning rate %g must be finite and >= 0", name, h.LR)
	case h.WD < 0 || !finite(h.WD):
		return fmt.Errorf("optimizer %s: weight decay %g must be finite and >= 0", name, h.WD)
	case !finite(h.RescaleGrad):
		return fmt.Errorf("optimizer %s: rescale_grad %g must be finite", name, h.RescaleGrad)
	case h.ClipGradient < 0 || math.IsNaN(h.ClipGradient):
		return fmt.Errorf("optimizer %s: clip_gradient %g must be >= 0", name, h.ClipGradient)
	}
	return nil
}

// checkUnit reports an error unless 0 <= v < 1.
func checkUnit(name, what string, v float64) error {
	if !(v >= 0 && v < 1) {
		return fmt.Errorf("optimizer %s: %s %g outside [0, 1)", name, what, v)
	}
	return nil
}

// checkNonNeg reports an error unless v is finite and >= 0.
func checkNonNeg(name, what string, v float64) error {
	if v < 0 || !finite(v) {
		return fmt.Errorf("optimizer %s: %s %g must be finite and >= 0", name, what, v)
	}
	return nil
}

// checkEps reports an error unless eps is finite and >= 0.
func checkEps(name string, eps float64) error {
	if eps < 0 || !finite(eps) {
		return fmt.Errorf("optimizer %s: epsilon %g must be finite and >= 0", name, eps)
	}
	return nil
}

// checkDivEps reports an error unless eps, a denominator's epsilon, is
// finite and > 0: with 0, an element whose gradient has been 0 so far
// divides 0 by 0 (as in PyTorch with eps=0). A struct literal that leaves
// it out gets 0; the constructors set the usual value.
func checkDivEps(name string, eps float64) error {
	if !(eps > 0) || !finite(eps) {
		return fmt.Errorf("optimizer %s: epsilon %g must be finite and > 0 (0 gives 0/0 = NaN where a gradient has been 0; New%s sets the usual value)", name, eps, ctorName[name])
	}
	return nil
}

// ctorName names each optimizer's constructor (after "New").
var ctorName = map[string]string{
	"adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSProp", "adagrad": "AdaGrad",
	"adadelta": "AdaDelta", "adamax": "Adamax", "nadam": "Nadam", "radam": "RAdam", "lamb": "LAMB",
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// zerosLike returns optimizer state for w: zeros of w's shape, dtype and
// context that no scope tracks and any session may use (nd.Persistent).
func zerosLike(w *nd.NDArray) *nd.NDArray {
	return nd.PersistentSession().Zeros(w.Context(), w.DType(), w.Shape()...)
}
