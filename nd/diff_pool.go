package nd

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// poolDiff returns the differentiable backward function of the 2-D pooling
// p of x into y. An average's gradient is linear in g with a fixed
// pattern: its adjoint is the pooling itself (linearDiff). A maximum's
// sends g to the position of each window's maximum: the positions are
// found once (on the host) and g is index-added there, a recorded op whose
// own gradient gathers (Take) from the same positions.
func poolDiff(op string, p backend.PoolParams, o PoolOpts, x, y *NDArray, back func(g *NDArray) *NDArray) BackwardFunc {
	if p.Type != PoolMax {
		return linearDiff(op, 0, 1, back, func(h *NDArray) *NDArray { return Pool2D(h, o) })
	}
	var idx *NDArray
	return func(g *NDArray, _ []bool) []*NDArray {
		if idx == nil {
			idx = maxPoolArgmax(p, x, y)
		}
		flat := Reshape(ZerosLike(x), x.Size())
		return []*NDArray{Reshape(IndexAdd(flat, idx, Reshape(g, g.Size()), 0), x.shape...)}
	}
}

// maxPoolArgmax returns, as a flat Int64 array on x's context, the flat
// index into x of each output's maximum: the first position in the
// window (row-major) holding the output's value.
func maxPoolArgmax(p backend.PoolParams, x, y *NDArray) *NDArray {
	xs, ys := x.Float64s(), y.Float64s()
	idx := make([]int64, len(ys))
	o := 0
	for nc := 0; nc < p.N*p.C; nc++ {
		base := nc * p.InH * p.InW
		for oh := 0; oh < p.OutH; oh++ {
			for ow := 0; ow < p.OutW; ow++ {
				want := ys[o]
				best := int64(-1)
				for kh := 0; kh < p.KH && best < 0; kh++ {
					h := oh*p.StrideH - p.PadH + kh
					if h < 0 || h >= p.InH {
						continue
					}
					for kw := 0; kw < p.KW; kw++ {
						w := ow*p.StrideW - p.PadW + kw
						if w < 0 || w >= p.InW {
							continue
						}
						v := xs[base+h*p.InW+w]
						if v == want || (math.IsNaN(v) && math.IsNaN(want)) {
							best = int64(base + h*p.InW + w)
							break
						}
					}
				}
				if best < 0 { // a window of padding only: nothing to send
					best = int64(base)
				}
				idx[o] = best
				o++
			}
		}
	}
	return x.Session().FromSlice(x.st.dev, idx, len(idx))
}
