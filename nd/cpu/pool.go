package cpu

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// window returns the input rows or columns covered by output position o:
// [lo, hi) clipped to the input, and the divisor extent used by average
// pooling without ExcludePad (clipped to the padded input, as PyTorch does).
func window(o, stride, pad, k, in int) (lo, hi, padded int) {
	start := o*stride - pad
	end := min(start+k, in+pad)
	padded = end - start
	return max(start, 0), min(end, in), padded
}

// Pool2D pools each (n, c) plane independently, in parallel over planes.
func (*Backend) Pool2D(p backend.PoolParams, y, x backend.Arg) {
	if isF64(y) {
		pool2D(p, slice[float64](y), slice[float64](x))
	} else {
		pool2D(p, slice[float32](y), slice[float32](x))
	}
}

func pool2D[T Float](p backend.PoolParams, y, x []T) {
	inPlane, outPlane := p.InH*p.InW, p.OutH*p.OutW
	planes, grain := p.N*p.C, max(1, elemGrain/max(inPlane+outPlane, 1))
	if numChunks(planes, grain) <= 1 { // no closure to allocate
		poolPlanes(p, y, x, 0, planes)
		return
	}
	parallelFor(planes, grain, func(lo, hi int) { poolPlanes(p, y, x, lo, hi) })
}

// poolPlanes pools planes [lo, hi) of x into y. (A generic function
// taken as a value allocates its closure: the choice is made per call.)
func poolPlanes[T Float](p backend.PoolParams, y, x []T, lo, hi int) {
	inPlane, outPlane := p.InH*p.InW, p.OutH*p.OutW
	fast := fastMaxPool(p)
	if fast && stackedMaxPool2x2(p) && hi > lo {
		if y32, ok := asF32(y[lo*outPlane:]); ok {
			// Planes of even height stacked are one tall plane: one call.
			maxPool2x2RowsF32x512(&y32[0], &asF32s(x[lo*inPlane:])[0], (hi-lo)*p.OutH, p.OutW, p.InW)
			return
		}
	}
	for pl := lo; pl < hi; pl++ {
		yp, xp := y[pl*outPlane:][:outPlane], x[pl*inPlane:][:inPlane]
		if fast {
			maxPoolPlane(p, yp, xp)
		} else {
			poolPlane(p, yp, xp)
		}
	}
}

// poolPlane pools one plane xp into yp, for any window, stride and padding.
func poolPlane[T Float](p backend.PoolParams, yp, xp []T) {
	for oh := 0; oh < p.OutH; oh++ {
		h0, h1, ph := window(oh, p.StrideH, p.PadH, p.KH, p.InH)
		for ow := 0; ow < p.OutW; ow++ {
			w0, w1, pw := window(ow, p.StrideW, p.PadW, p.KW, p.InW)
			if p.Type == backend.PoolMax {
				m := math.Inf(-1)
				for ih := h0; ih < h1; ih++ {
					for iw := w0; iw < w1; iw++ {
						m = max(m, float64(xp[ih*p.InW+iw]))
					}
				}
				yp[oh*p.OutW+ow] = T(m)
				continue
			}
			var s float64
			for ih := h0; ih < h1; ih++ {
				for iw := w0; iw < w1; iw++ {
					s += float64(xp[ih*p.InW+iw])
				}
			}
			yp[oh*p.OutW+ow] = T(s / float64(avgDivisor(p, h1-h0, w1-w0, ph, pw)))
		}
	}
}

func avgDivisor(p backend.PoolParams, h, w, ph, pw int) int {
	if !p.ExcludePad {
		return ph * pw
	}
	return max(h*w, 1)
}

// Pool2DBackward routes dy back to the inputs: to the first maximum of each
// window for max pooling, spread evenly for average pooling.
func (*Backend) Pool2DBackward(p backend.PoolParams, dx, x, y, dy backend.Arg) {
	if isF64(dx) {
		pool2DBackward(p, slice[float64](dx), slice[float64](x), slice[float64](y), slice[float64](dy))
	} else {
		pool2DBackward(p, slice[float32](dx), slice[float32](x), slice[float32](y), slice[float32](dy))
	}
}

func pool2DBackward[T Float](p backend.PoolParams, dx, x, y, dy []T) {
	inPlane, outPlane := p.InH*p.InW, p.OutH*p.OutW
	if _, ok := asF32(dx); ok && narrowPool2x2(p) {
		// Narrow planes stacked: a core's range of planes in one pass.
		parallelFor(p.N*p.C, 1, func(lo, hi int) { narrowPlanes(p, dx, x, y, dy, lo, hi) })
		return
	}
	plane := poolBackwardPlaneFor[T](p)
	parallelFor(p.N*p.C, 1, func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			plane(p, dx[pl*inPlane:][:inPlane], x[pl*inPlane:][:inPlane], y[pl*outPlane:][:outPlane], dy[pl*outPlane:][:outPlane])
		}
	})
}

// poolBackwardPlaneFor returns the backward pass of one plane for p: it
// overwrites the plane's dxp from its xp, yp and dyp.
func poolBackwardPlaneFor[T Float](p backend.PoolParams) func(p backend.PoolParams, dxp, xp, yp, dyp []T) {
	switch {
	case narrowPool2x2(p):
		return narrowBackwardPlane[T]
	case pool2x2(p):
		return maxPool2x2BackwardPlane[T]
	case fastMaxPool(p):
		return maxPoolBackwardPlaneY[T]
	}
	return func(p backend.PoolParams, dxp, xp, _, dyp []T) { poolBackwardPlane(p, dxp, xp, dyp) }
}

// poolBackwardPlane is the backward pass of poolPlane for one plane.
func poolBackwardPlane[T Float](p backend.PoolParams, dxp, xp, dyp []T) {
	clear(dxp)
	for oh := 0; oh < p.OutH; oh++ {
		h0, h1, ph := window(oh, p.StrideH, p.PadH, p.KH, p.InH)
		for ow := 0; ow < p.OutW; ow++ {
			w0, w1, pw := window(ow, p.StrideW, p.PadW, p.KW, p.InW)
			g := dyp[oh*p.OutW+ow]
			if p.Type == backend.PoolMax {
				best, at := math.Inf(-1), -1
				for ih := h0; ih < h1; ih++ {
					for iw := w0; iw < w1; iw++ {
						if v := float64(xp[ih*p.InW+iw]); v > best || at < 0 {
							best, at = v, ih*p.InW+iw
						}
					}
				}
				if at >= 0 {
					dxp[at] += g
				}
				continue
			}
			g /= T(avgDivisor(p, h1-h0, w1-w0, ph, pw))
			for ih := h0; ih < h1; ih++ {
				for iw := w0; iw < w1; iw++ {
					dxp[ih*p.InW+iw] += g
				}
			}
		}
	}
}
