package autograd

import (
	"fmt"

	"github.com/goluon/goluon/nd"
)

// The functions below are torch.autograd.functional's: derivatives of a
// function of arrays, taken at given points. They differentiate detached
// views of the inputs (the caller's arrays and their gradient buffers are
// left alone) and record in the inputs' session, inside Pause too
// (Session.EnableGrad), keeping its training or predict mode.

// Func is a function of several arrays, as the functional helpers take it.
type Func func(in []*nd.NDArray) *nd.NDArray

// leaves returns detached views of inputs with gradient buffers, and the
// session they belong to.
func leaves(op string, inputs []*nd.NDArray) ([]*nd.NDArray, *Session) {
	if len(inputs) == 0 {
		panic(&nd.Error{Op: op, Kind: nd.ErrArgument, Msg: "no inputs"})
	}
	xs := make([]*nd.NDArray, len(inputs))
	for i, in := range inputs {
		if in == nil {
			panic(&nd.Error{Op: op, Kind: nd.ErrArgument, Msg: fmt.Sprintf("input %d is nil", i)})
		}
		xs[i] = in.Detach()
		xs[i].AttachGrad(nd.GradWrite)
	}
	return xs, inputs[0].Session()
}

// zerosFor replaces the nil gradients in gs (inputs f does not depend on)
// with zeros of the inputs' shapes, as torch's strict=False does.
func zerosFor(gs, xs []*nd.NDArray) []*nd.NDArray {
	for i, g := range gs {
		if g == nil {
			gs[i] = nd.ZerosLike(xs[i])
		}
	}
	return gs
}

// checkVectors fails unless v holds one vector of each input's shape.
func checkVectors(op string, v, xs []*nd.NDArray) {
	if len(v) != len(xs) {
		panic(&nd.Error{Op: op, Kind: nd.ErrArgument, Msg: fmt.Sprintf("%d vectors for %d inputs", len(v), len(xs))})
	}
	for i := range v {
		checkLike(op, fmt.Sprintf("v[%d]", i), v[i], xs[i])
	}
}

// checkLike fails unless v has the shape of ref (for the vector of a
// product).
func checkLike(op, what string, v, ref *nd.NDArray) {
	if v == nil || !sameShape(v.Shape(), ref.Shape()) {
		got := "nil"
		if v != nil {
			got = fmt.Sprint(v.Shape())
		}
		panic(&nd.Error{Op: op, Kind: nd.ErrShape, Msg: fmt.Sprintf("%s has shape %s, want %v", what, got, ref.Shape())})
	}
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// VJP returns f(inputs) and the vector-Jacobian products vᵀ·∂f/∂xᵢ, one per
// input (torch.autograd.functional.vjp); v has f's output shape (nil: f
// must return one element, and v is 1).
func VJP(f Func, inputs []*nd.NDArray, v *nd.NDArray) (out *nd.NDArray, vjp []*nd.NDArray) {
	const op = "autograd.VJP"
	xs, s := leaves(op, inputs)
	s.EnableGrad(func() {
		out = f(xs)
		var hg []*nd.NDArray
		if v != nil {
			checkLike(op, "v", v, out)
			hg = []*nd.NDArray{v}
		}
		vjp = zerosFor(GradWith([]*nd.NDArray{out}, xs, GradOpts{HeadGrads: hg}), xs)
	})
	return out.Detach(), vjp
}

// JVP returns f(inputs) and the Jacobian-vector product Σᵢ ∂f/∂xᵢ·vᵢ
// (torch.autograd.functional.jvp), vᵢ of the inputs' shapes. Like
// torch's, it differentiates the vector-Jacobian product again with
// respect to the vector (the double-backward trick), so every op of f needs
// a differentiable backward function (see nd.GradOpts.CreateGraph).
func JVP(f Func, inputs, v []*nd.NDArray) (out, jvp *nd.NDArray) {
	const op = "autograd.JVP"
	xs, s := leaves(op, inputs)
	checkVectors(op, v, xs)
	s.EnableGrad(func() {
		out = f(xs)
		u := nd.ZerosLike(out.Detach())
		u.AttachGrad(nd.GradWrite)
		gs := GradWith([]*nd.NDArray{out}, xs, GradOpts{HeadGrads: []*nd.NDArray{u}, CreateGraph: true})
		var heads, hv []*nd.NDArray
		for i, g := range gs {
			if g != nil {
				heads, hv = append(heads, g), append(hv, v[i])
			}
		}
		if len(heads) == 0 {
			jvp = nd.ZerosLike(out.Detach())
			return
		}
		jvp = zerosFor(GradWith(heads, []*nd.NDArray{u}, GradOpts{HeadGrads: hv}), []*nd.NDArray{u})[0]
	})
	return out.Detach(), jvp
}

// HVP returns f(inputs), which must be one element, and the
// Hessian-vector products Σⱼ ∂²f/∂xᵢ∂xⱼ·vⱼ, one per input
// (torch.autograd.functional.hvp).
func HVP(f Func, inputs, v []*nd.NDArray) (out *nd.NDArray, hvp []*nd.NDArray) {
	const op = "autograd.HVP"
	xs, s := leaves(op, inputs)
	checkVectors(op, v, xs)
	s.EnableGrad(func() {
		out = f(xs)
		if out.Size() != 1 {
			panic(&nd.Error{Op: op, Kind: nd.ErrShape, Msg: fmt.Sprintf("f returned shape %v: want one element", out.Shape())})
		}
		gs := GradWith([]*nd.NDArray{out}, xs, GradOpts{CreateGraph: true})
		var dot *nd.NDArray
		for i, g := range gs {
			if g == nil {
				continue
			}
			t := nd.Sum(nd.Mul(g, v[i]))
			if dot == nil {
				dot = t
			} else {
				dot = nd.Add(dot, t)
			}
		}
		if dot == nil {
			hvp = zerosFor(make([]*nd.NDArray, len(xs)), xs)
			return
		}
		hvp = make([]*nd.NDArray, len(xs))
		if dot.RequiresGrad() { // else the gradient does not depend on the inputs (f is linear): H is 0
			hvp = GradWith([]*nd.NDArray{dot}, xs, GradOpts{})
		}
		hvp = zerosFor(hvp, xs)
	})
	return out.Detach(), hvp
}

// Jacobian returns the Jacobian of f at x, of shape f(x).Shape() followed
// by x.Shape() (torch.autograd.functional.jacobian for one input), one
// backward pass per output element.
func Jacobian(f func(x *nd.NDArray) *nd.NDArray, x *nd.NDArray) *nd.NDArray {
	const op = "autograd.Jacobian"
	xs, s := leaves(op, []*nd.NDArray{x})
	var jac *nd.NDArray
	s.EnableGrad(func() {
		out := f(xs[0])
		jac = rows(out, xs[0])
	})
	return jac
}

// Hessian returns the Hessian of f at x, f returning one element, of shape
// x.Shape() twice (torch.autograd.functional.hessian for one input): the
// Jacobian of its recorded gradient.
func Hessian(f func(x *nd.NDArray) *nd.NDArray, x *nd.NDArray) *nd.NDArray {
	const op = "autograd.Hessian"
	xs, s := leaves(op, []*nd.NDArray{x})
	var hess *nd.NDArray
	s.EnableGrad(func() {
		out := f(xs[0])
		if out.Size() != 1 {
			panic(&nd.Error{Op: op, Kind: nd.ErrShape, Msg: fmt.Sprintf("f returned shape %v: want one element", out.Shape())})
		}
		g := GradWith([]*nd.NDArray{out}, xs, GradOpts{CreateGraph: true})[0]
		if g == nil {
			g = nd.ZerosLike(xs[0])
		}
		hess = rows(g, xs[0])
	})
	return hess
}

// rows returns the Jacobian of out with respect to x, one gradient pass
// per element of out, as an array of shape out.Shape() followed by
// x.Shape(). An out that is not recorded (one that does not depend on x)
// has rows of zeros.
func rows(out, x *nd.NDArray) *nd.NDArray {
	n := out.Size()
	flat := make([]*nd.NDArray, n)
	dev := out.Context()
	for j := range n {
		e := make([]float64, n)
		e[j] = 1
		hg := nd.FromSlice(dev, e, out.Shape()...).AsType(out.DType())
		var g *nd.NDArray
		if out.RequiresGrad() {
			g = GradWith([]*nd.NDArray{out}, []*nd.NDArray{x}, GradOpts{HeadGrads: []*nd.NDArray{hg}, RetainGraph: true})[0]
		}
		if g == nil {
			g = nd.ZerosLike(x.Detach())
		}
		flat[j] = nd.Reshape(g, x.Size())
	}
	shape := append(out.Shape(), x.Shape()...)
	if n == 0 {
		return nd.Zeros(dev, x.DType(), shape...)
	}
	return nd.Reshape(nd.Stack(flat, 0), shape...)
}
