package fft

import (
	"github.com/goluon/goluon/nd"
)

// checkArray fails unless x is a floating-point array; cplx says it
// must also end in an axis of 2 (real, imaginary) with at least one axis
// before it. It returns the shape of the signal (without the pair axis).
func checkArray(op string, x *nd.NDArray, cplx bool) []int {
	if x == nil {
		nd.Panicf(op, nd.ErrArgument, "nil array")
	}
	if dt := x.DType(); !dt.IsFloat() {
		nd.Panicf(op, nd.ErrDType, "needs a floating-point array, got %v (shape %v)", dt, x.Shape())
	}
	s := x.Shape()
	if !cplx {
		if len(s) == 0 {
			nd.Panicf(op, nd.ErrShape, "needs at least one axis, got a scalar")
		}
		return s
	}
	if len(s) < 2 || s[len(s)-1] != 2 {
		nd.Panicf(op, nd.ErrShape, "needs a complex array: at least one axis and a trailing axis of 2 (real, imaginary), got shape %v", s)
	}
	return s[:len(s)-1]
}

// read copies x to the host as a complex array; cplx says x holds
// (real, imaginary) pairs in its last axis.
func read(x *nd.NDArray, cplx bool) host {
	v := x.Float64s()
	s := x.Shape()
	if !cplx {
		h := host{shape: s, v: make([]complex128, len(v))}
		for i, r := range v {
			h.v[i] = complex(r, 0)
		}
		return h
	}
	h := host{shape: s[:len(s)-1], v: make([]complex128, len(v)/2)}
	for i := range h.v {
		h.v[i] = complex(v[2*i], v[2*i+1])
	}
	return h
}

// write makes an array of like's session, context and dtype from h: its
// real parts alone when realOut, else (real, imaginary) pairs in a trailing
// axis of 2.
func write(like *nd.NDArray, h host, realOut bool) *nd.NDArray {
	var v []float64
	shape := append([]int(nil), h.shape...)
	if realOut {
		v = make([]float64, len(h.v))
		for i, z := range h.v {
			v[i] = real(z)
		}
	} else {
		v = make([]float64, 2*len(h.v))
		for i, z := range h.v {
			v[2*i], v[2*i+1] = real(z), imag(z)
		}
		shape = append(shape, 2)
	}
	a := nd.Reshape(like.Session().FromSlice(like.Context(), v, len(v)), shape...)
	if like.DType() == nd.Float64 {
		return a
	}
	out := a.AsType(like.DType())
	a.Release()
	return out
}

// transform runs steps on x (complex pairs when inComplex) and returns the
// result (complex pairs when outComplex), recording the steps' adjoints
// as its gradient.
func transform(op string, x *nd.NDArray, inComplex, outComplex bool, steps []step) *nd.NDArray {
	y, lens := run(read(x, inComplex), steps)
	out := write(x, y, !outComplex)
	// The transform is linear: its gradient is the adjoint applied to g,
	// and the adjoint's own gradient is the transform again, so GradWith's
	// CreateGraph differentiates it to any order (adjointOf records it).
	adj := func(g *nd.NDArray) *nd.NDArray {
		return write(x.Detach(), adjoint(read(g, outComplex), steps, lens), !inComplex)
	}
	nd.RecordDiff(op, out, []*nd.NDArray{x}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		return []*nd.NDArray{adj(g)}
	}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		gx := adj(g)
		fwd := func(h *nd.NDArray, _ []bool) []*nd.NDArray {
			return []*nd.NDArray{transform(op, h, inComplex, outComplex, steps)}
		}
		nd.RecordDiff(op+"Backward", gx, []*nd.NDArray{g}, fwd, fwd)
		return []*nd.NDArray{gx}
	})
	return out
}
