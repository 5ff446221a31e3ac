package nd

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// poolDiff returns the differentiable backward function of the 2-D pooling
// p of x. An average's gradient is linear in g with a fixed pattern: its
// adjoint is the pooling itself (linearDiff). A maximum's sends g to the
// position of each window's maximum: the positions are found on the host
// from x, by the backward kernels' rule, at each call (the pass's own
// scope owns them), and g is index-added there, a recorded op whose own
// gradient gathers (Take) from the same positions.
func poolDiff(op string, p backend.PoolParams, o PoolOpts, x *NDArray, back func(g *NDArray) *NDArray) BackwardFunc {
	if p.Type != PoolMax {
		return linearDiff(op, 0, 1, back, func(h *NDArray) *NDArray { return Pool2D(h, o) })
	}
	return func(g *NDArray, _ []bool) []*NDArray {
		idx, keep := maxPoolArgmax(p, x)
		src := Reshape(g, g.Size())
		if keep != nil { // windows of padding only send nothing
			src = Mul(src, keep)
		}
		flat := Reshape(ZerosLike(x), x.Size())
		return []*NDArray{Reshape(IndexAdd(flat, idx, src, 0), x.shape...)}
	}
}

// maxPoolArgmax returns, as a flat Int64 array on x's context, the flat
// index into x of each window's maximum as the backward kernels find it:
// scanning the window (clipped to the input) in row-major order, the
// first element, then each one greater than the best so far (a NaN is
// chosen only as the first element). keep is nil, or, when some window
// holds only padding, 1 for the windows that send their gradient and 0
// for those that send none.
func maxPoolArgmax(p backend.PoolParams, x *NDArray) (idx, keep *NDArray) {
	xs := x.Float64s()
	clip := func(o, stride, pad, k, in int) (int, int) {
		start := o*stride - pad
		return max(start, 0), min(start+k, in)
	}
	at0 := make([]int64, 0, p.N*p.C*p.OutH*p.OutW)
	var kept []float64 // nil until a window of padding only
	for nc := 0; nc < p.N*p.C; nc++ {
		base := nc * p.InH * p.InW
		for oh := 0; oh < p.OutH; oh++ {
			h0, h1 := clip(oh, p.StrideH, p.PadH, p.KH, p.InH)
			for ow := 0; ow < p.OutW; ow++ {
				w0, w1 := clip(ow, p.StrideW, p.PadW, p.KW, p.InW)
				best, at := math.Inf(-1), -1
				for h := h0; h < h1; h++ {
					for w := w0; w < w1; w++ {
						if v := xs[base+h*p.InW+w]; v > best || at < 0 {
							best, at = v, base+h*p.InW+w
						}
					}
				}
				if at < 0 && kept == nil {
					kept = make([]float64, len(at0), cap(at0))
					for i := range kept {
						kept[i] = 1
					}
				}
				if kept != nil {
					k := 1.0
					if at < 0 {
						k = 0
					}
					kept = append(kept, k)
				}
				at0 = append(at0, int64(max(at, base)))
			}
		}
	}
	idx = x.Session().FromSlice(x.st.dev, at0, len(at0))
	if kept != nil {
		keep = x.Session().FromSlice(x.st.dev, kept, len(kept)).AsType(x.dtype)
	}
	return idx, keep
}
