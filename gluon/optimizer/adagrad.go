package optimizer

import (
	"github.com/goluon/goluon/nd"
)

// AdaGrad is the AdaGrad rule of Duchi et al. By default it is MXNet 1.x's
// dense adagrad: weight decay stays out of the history and ε sits under
// the square root,
//
//	g  = clip(rescale·grad)
//	h += g²
//	w -= lr·(g/sqrt(h + ε) + wd·w)
//
// TorchForm selects the form of MXNet 2.x, PyTorch (lr_decay 0, initial
// accumulator 0) and Keras, with weight decay folded into the gradient and
// ε outside the square root:
//
//	g  = clip(rescale·grad) + wd·w
//	h += g²
//	w -= lr·g/(sqrt(h) + ε)
//
// PyTorch's default ε is 1e-10; MXNet's and this package's is 1e-7.
type AdaGrad struct {
	Hyper
	// Epsilon keeps the division finite (NewAdaGrad sets 1e-7; a struct literal must set it).
	Epsilon float64
	// TorchForm selects the MXNet 2.x / PyTorch form described above.
	TorchForm bool
}

var _ Optimizer = (*AdaGrad)(nil)

// NewAdaGrad returns AdaGrad in MXNet 1.x's form with the given learning
// rate and ε = 1e-7 (MXNet's default learning rate is 0.01).
func NewAdaGrad(lr float64) *AdaGrad {
	return &AdaGrad{Hyper: Hyper{LR: lr}, Epsilon: 1e-7}
}

// Validate reports invalid hyper-parameters.
func (o *AdaGrad) Validate() error {
	if err := checkDivEps("adagrad", o.Epsilon); err != nil {
		return err
	}
	return checkHyper("adagrad", o.Hyper)
}

// Name returns "adagrad".
// Elementwise reports true: the rule is elementwise (see Elementwise).
func (*AdaGrad) Elementwise() bool { return true }

// StepFree reports true: the update does not read Param.Step.
func (*AdaGrad) StepFree() bool { return true }

func (o *AdaGrad) Name() string { return "adagrad" }

// Hyperparams returns the shared hyper-parameters.
func (o *AdaGrad) Hyperparams() *Hyper { return &o.Hyper }

// CreateState returns the history h of squared gradients.
func (o *AdaGrad) CreateState(w *nd.NDArray) State {
	return State{zerosLike(w)}
}

// Update applies one AdaGrad step in place.
func (o *AdaGrad) Update(p Param, weight, grad *nd.NDArray, state State) {
	needState("optimizer.adagrad.Update", state, 1)
	var t temps
	defer t.release()
	lr := o.lr(p)
	w := t.view(weight)
	h := t.view(state[0])
	var g *nd.NDArray
	if o.TorchForm {
		g = o.prepare(&t, p, weight, grad)
	} else {
		g = o.rescaled(&t, p, grad)
	}
	nd.AddTo(h, t.add(nd.Square(g)))

	var d *nd.NDArray
	if o.TorchForm {
		d = t.add(nd.Div(g, t.add(nd.AddScalar(t.add(nd.Sqrt(h)), o.Epsilon))))
	} else {
		d = t.add(nd.Div(g, t.add(nd.Sqrt(t.add(nd.AddScalar(h, o.Epsilon))))))
		if wd := o.wd(p); wd != 0 {
			nd.AddTo(d, t.add(nd.MulScalar(w, wd)))
		}
	}
	nd.ScaleInPlace(d, -lr)
	nd.AddTo(w, d)
}
