package cpu

import "github.com/goluon/goluon/nd/backend"

// Max pooling without padding is what the tutorials' networks use; it gets
// these loops, which work in the element type, index rows directly instead
// of clipping every window, and unroll the 2×2 window. They give exactly
// the generic loops' results: the forward pass propagates NaN (Go's max),
// and the backward pass routes each gradient to the first maximum of its
// window, in row-major window order.

// fastMaxPool reports whether the no-padding loops apply: max pooling,
// no padding, and every window inside the input.
func fastMaxPool(p backend.PoolParams) bool {
	return p.Type == backend.PoolMax && p.PadH == 0 && p.PadW == 0 && p.KH > 0 && p.KW > 0 &&
		(p.OutH-1)*p.StrideH+p.KH <= p.InH && (p.OutW-1)*p.StrideW+p.KW <= p.InW
}

// maxPoolPlane pools one plane xp into yp.
func maxPoolPlane[T Float](p backend.PoolParams, yp, xp []T) {
	if p.KH == 2 && p.KW == 2 && p.StrideW == 2 {
		for oh := 0; oh < p.OutH; oh++ {
			r0 := xp[oh*p.StrideH*p.InW:][:2*p.OutW]
			r1 := xp[(oh*p.StrideH+1)*p.InW:][:2*p.OutW]
			yr := yp[oh*p.OutW:][:p.OutW]
			for ow := range yr {
				yr[ow] = max(r0[2*ow], r0[2*ow+1], r1[2*ow], r1[2*ow+1])
			}
		}
		return
	}
	for oh := 0; oh < p.OutH; oh++ {
		yr := yp[oh*p.OutW:][:p.OutW]
		for ow := range yr {
			base := oh*p.StrideH*p.InW + ow*p.StrideW
			m := xp[base]
			for kh := 0; kh < p.KH; kh++ {
				for _, v := range xp[base+kh*p.InW:][:p.KW] {
					m = max(m, v)
				}
			}
			yr[ow] = m
		}
	}
}

// maxPoolBackwardPlane adds each dyp value into dxp (cleared first) at the
// first maximum of its window in xp.
func maxPoolBackwardPlane[T Float](p backend.PoolParams, dxp, xp, dyp []T) {
	clear(dxp)
	if p.KH == 2 && p.KW == 2 && p.StrideW == 2 {
		for oh := 0; oh < p.OutH; oh++ {
			i0 := oh * p.StrideH * p.InW
			i1 := i0 + p.InW
			r0, r1 := xp[i0:][:2*p.OutW], xp[i1:][:2*p.OutW]
			gr := dyp[oh*p.OutW:][:p.OutW]
			for ow, g := range gr {
				j := 2 * ow
				at, best := i0+j, r0[j]
				if v := r0[j+1]; v > best {
					at, best = i0+j+1, v
				}
				if v := r1[j]; v > best {
					at, best = i1+j, v
				}
				if v := r1[j+1]; v > best {
					at = i1 + j + 1
				}
				dxp[at] += g
			}
		}
		return
	}
	for oh := 0; oh < p.OutH; oh++ {
		gr := dyp[oh*p.OutW:][:p.OutW]
		for ow, g := range gr {
			base := oh*p.StrideH*p.InW + ow*p.StrideW
			at, best := base, xp[base]
			for kh := 0; kh < p.KH; kh++ {
				row := base + kh*p.InW
				for kw, v := range xp[row:][:p.KW] {
					if v > best {
						at, best = row+kw, v
					}
				}
			}
			dxp[at] += g
		}
	}
}
