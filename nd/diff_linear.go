package nd

import "github.com/goluon/goluon/nd/backend"

// linearDiff returns the differentiable backward function of an op that
// is linear in its one differentiable input and whose backward reads no
// values of it (a slice, a gather, an average pooling): back, the op's own
// backward on g, is recorded as an op of g whose gradient is the forward
// op fwd applied to the incoming gradient — the adjoint of the adjoint —
// so that its result can be differentiated again, to any order. slot is
// the input's position among the op's inputs.
func linearDiff(op string, slot, nIn int, back func(g *NDArray) *NDArray, fwd func(h *NDArray) *NDArray) BackwardFunc {
	adj := func(h *NDArray, _ []bool) []*NDArray { return []*NDArray{fwd(h)} }
	return func(g *NDArray, need []bool) []*NDArray {
		res := make([]*NDArray, nIn)
		if !need[slot] {
			return res
		}
		out := back(g)
		RecordDiff(op+"Backward", out, []*NDArray{g}, adj, adj)
		res[slot] = out
		return res
	}
}

// selfAdjoint records apply(g), a linear map that is its own adjoint (a
// dropout mask applied from its seed), as a recorded op of g, to any
// order.
func selfAdjoint(op string, g *NDArray, apply func(*NDArray) *NDArray) *NDArray {
	back := func(h *NDArray, _ []bool) []*NDArray { return []*NDArray{selfAdjoint(op, h, apply)} }
	out := apply(g)
	RecordDiff(op+"Backward", out, []*NDArray{g}, func(h *NDArray, _ []bool) []*NDArray { return []*NDArray{apply(h)} }, back)
	return out
}

// positiveMask returns 1 where y > 0 and 0 elsewhere (ReLU's derivative
// read from its output), a constant of the pass.
func positiveMask(y *NDArray) *NDArray {
	one := OnesLike(y)
	defer one.Release()
	return binaryRaw("mask", backend.ReluGrad, y, one)
}

// identityDiff is the differentiable backward function of an identity
// (a view handed to another session): g itself.
func identityDiff(g *NDArray, _ []bool) []*NDArray { return []*NDArray{g} }
