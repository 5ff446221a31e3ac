package probability

import (
	"slices"

	"github.com/goluon/goluon/nd"
)

// check panics with an *nd.Error unless the parameters are live floating
// arrays of one dtype on one context.
func check(op string, params ...*nd.NDArray) {
	for i, p := range params {
		if p == nil {
			nd.Panicf(op, nd.ErrArgument, "parameter %d is nil", i)
		}
		if !p.DType().IsFloat() {
			nd.Panicf(op, nd.ErrDType, "parameter %d is %v: want a floating dtype", i, p.DType())
		}
		if p.DType() != params[0].DType() || p.Context() != params[0].Context() {
			nd.Panicf(op, nd.ErrArgument, "parameters of %v on %v and %v on %v: want one dtype and context",
				params[0].DType(), params[0].Context(), p.DType(), p.Context())
		}
	}
}

// batchShape is the broadcast shape of the arrays.
func batchShape(arrs ...*nd.NDArray) []int {
	shape := []int{}
	for _, a := range arrs {
		shape = broadcast(shape, a.Shape())
	}
	return shape
}

// broadcast is NumPy's broadcast of two shapes.
func broadcast(p, q []int) []int {
	if len(p) < len(q) {
		p, q = q, p
	}
	out := slices.Clone(p)
	off := len(p) - len(q)
	for i, d := range q {
		switch o := out[off+i]; {
		case o == d || d == 1:
		case o == 1:
			out[off+i] = d
		default:
			nd.Panicf("probability", nd.ErrShape, "shapes %v and %v do not broadcast", p, q)
		}
	}
	return out
}

func sameShape(a, b []int) bool { return slices.Equal(a, b) }
