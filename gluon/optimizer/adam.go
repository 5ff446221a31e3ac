package optimizer

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/nd"
)

// Adam is the Adam rule of Kingma and Ba as MXNet 1.x applies it (adam
// with adam_update), at update number t = Param.Step (1 for the first):
//
//	g    = clip(rescale·grad + wd·w)
//	m    = β1·m + (1−β1)·g
//	v    = β2·v + (1−β2)·g²
//	lr_t = lr·sqrt(1−β2^t)/(1−β1^t)
//	w   -= lr_t·m/(sqrt(v) + ε)
//
// PyTorch's Adam divides by sqrt(v)/sqrt(1−β2^t) + ε instead, which is
// MXNet's rule with ε replaced by ε·sqrt(1−β2^t): the two agree exactly
// only for ε = 0 and differ by O(ε) otherwise.
//
// AMSGrad (Reddi et al.; PyTorch's amsgrad=True, which MXNet 1.x lacks)
// divides by the largest v seen so far instead of v, kept as a third
// state array:
//
//	v̂  = max(v̂, v)
//	w -= lr_t·m/(sqrt(v̂) + ε)
//
// With ε = 0 that is PyTorch's Adam with amsgrad=True exactly.
type Adam struct {
	Hyper
	// Beta1 is the decay rate of the first moment (NewAdam sets 0.9; a struct literal must set it).
	Beta1 float64
	// Beta2 is the decay rate of the second moment (NewAdam sets 0.999; a struct literal must set it).
	Beta2 float64
	// Epsilon keeps the division finite (NewAdam sets 1e-8; a struct literal must set it).
	Epsilon float64
	// AMSGrad divides by the running maximum of v (see Adam). It adds a
	// state array, so a Trainer's saved state loads only into an Adam
	// with the same setting.
	AMSGrad bool
}

var _ Optimizer = (*Adam)(nil)

// NewAdam returns Adam with the given learning rate and MXNet's defaults
// β1 = 0.9, β2 = 0.999, ε = 1e-8 (MXNet's default learning rate is 0.001).
func NewAdam(lr float64) *Adam {
	return &Adam{Hyper: Hyper{LR: lr}, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}
}

// Validate reports invalid hyper-parameters.
func (o *Adam) Validate() error { return validateMoments("adam", o.Beta1, o.Beta2, o.Epsilon, o.Hyper) }

// validateMoments checks the hyper-parameters Adam and AdamW share.
func validateMoments(name string, beta1, beta2, eps float64, h Hyper) error {
	if err := checkUnit(name, "beta1", beta1); err != nil {
		return err
	}
	if err := checkUnit(name, "beta2", beta2); err != nil {
		return err
	}
	if err := checkEps(name, eps); err != nil {
		return err
	}
	if beta1 == 0 && beta2 == 0 && eps == 0 {
		// ε = 0 alone is PyTorch's Adam exactly (see Adam), but all three
		// unset is a struct literal that meant the defaults, and divides 0
		// by 0 wherever a gradient has been 0.
		return fmt.Errorf("optimizer %s: beta1, beta2 and epsilon are all 0, which divides 0 by 0 where a gradient has been 0: a struct literal leaves them unset; use New%s for the defaults", name, ctorName[name])
	}
	return checkHyper(name, h)
}

// checkStep panics unless state holds the n arrays CreateState returns
// and p.Step is 1-based.
func checkStep(op string, p Param, state State, n int) {
	needState(op, state, n)
	if p.Step < 1 {
		nd.Panicf(op, nd.ErrArgument, "parameter %q: step %d, but Param.Step is 1-based", p.Name, p.Step)
	}
}

// updateMoments applies m = β1·m + (1−β1)·g and v = β2·v + (1−β2)·g² in
// place and returns t's views of m and v.
func updateMoments(t *temps, state State, g *nd.NDArray, beta1, beta2 float64) (m, v *nd.NDArray) {
	m, v = t.view(state[0]), t.view(state[1])
	nd.ScaleInPlace(m, beta1)
	nd.AddTo(m, t.add(nd.MulScalar(g, 1-beta1)))
	g2 := t.add(nd.Square(g))
	nd.ScaleInPlace(g2, 1-beta2)
	nd.ScaleInPlace(v, beta2)
	nd.AddTo(v, g2)
	return m, v
}

// momentStates returns the moment estimates m and v, and v̂ with amsgrad.
func momentStates(w *nd.NDArray, amsgrad bool) State {
	if amsgrad {
		return State{zerosLike(w), zerosLike(w), zerosLike(w)}
	}
	return State{zerosLike(w), zerosLike(w)}
}

// numMoments is the length of momentStates' state.
func numMoments(amsgrad bool) int {
	if amsgrad {
		return 3
	}
	return 2
}

// maxSoFar applies v̂ = max(v̂, v) to vmax in place and returns t's view of it.
func maxSoFar(t *temps, vmax, v *nd.NDArray) *nd.NDArray {
	vm := t.view(vmax)
	nd.Assign(vm, t.add(nd.Maximum(vm, v)))
	return vm
}

// Name returns "adam".
// Elementwise reports true: the rule is elementwise (see Elementwise).
func (*Adam) Elementwise() bool { return true }

func (o *Adam) Name() string { return "adam" }

// Hyperparams returns the shared hyper-parameters.
func (o *Adam) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns the first and second moment estimates m and v,
// and with AMSGrad the maximum v̂ (PyTorch's order).
func (o *Adam) CreateState(w *nd.NDArray) State { return momentStates(w, o.AMSGrad) }

// Update applies one Adam step in place. It panics with an *nd.Error when
// p.Step < 1, since the bias correction is undefined there.
func (o *Adam) Update(p Param, weight, grad *nd.NDArray, state State) {
	checkStep("optimizer.adam.Update", p, state, numMoments(o.AMSGrad))
	var t temps
	defer t.release()
	step := float64(p.Step)
	lrT := o.lr(p) * math.Sqrt(1-math.Pow(o.Beta2, step)) / (1 - math.Pow(o.Beta1, step))
	w := t.view(weight)
	g := o.prepareClipLast(&t, p, weight, grad)
	m, v := updateMoments(&t, state, g, o.Beta1, o.Beta2)
	if o.AMSGrad {
		v = maxSoFar(&t, state[2], v)
	}

	den := t.add(nd.AddScalar(t.add(nd.Sqrt(v)), o.Epsilon))
	d := t.add(nd.Div(m, den))
	nd.ScaleInPlace(d, -lrT)
	nd.AddTo(w, d)
}
