package cpu

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// Max pooling gets these loops, which work in the element type, clip each
// window to the input once per row and column instead of testing every
// element (padding only ever loses a maximum to a real value), and unroll
// the 2×2 window of the tutorials' networks. They give exactly the generic
// loops' results: the forward pass propagates NaN (Go's max), and the
// backward pass routes each gradient to the first maximum of its window,
// in row-major window order.

// fastMaxPool reports whether the loops apply: max pooling of a non-empty
// input, with padding smaller than the window, so that every window holds
// an input value.
func fastMaxPool(p backend.PoolParams) bool {
	return p.Type == backend.PoolMax && p.InH > 0 && p.InW > 0 && p.KH > 0 && p.KW > 0 && p.PadH >= 0 && p.PadW >= 0 &&
		p.StrideH > 0 && p.StrideW > 0 &&
		p.PadH < p.KH && p.PadW < p.KW && p.OutH > 0 && p.OutW > 0 &&
		(p.OutH-1)*p.StrideH-p.PadH < p.InH && (p.OutW-1)*p.StrideW-p.PadW < p.InW
}

// unpadded reports whether every window lies inside the input.
func unpadded(p backend.PoolParams) bool {
	return p.PadH == 0 && p.PadW == 0 &&
		(p.OutH-1)*p.StrideH+p.KH <= p.InH && (p.OutW-1)*p.StrideW+p.KW <= p.InW
}

// stackedMaxPool2x2 reports whether the ZMM kernel pools a run of p's
// planes in one call, as one plane of their rows stacked: 2×2 windows at
// stride 2 inside the input, whose height is twice the output's (no row
// left over between planes).
func stackedMaxPool2x2(p backend.PoolParams) bool {
	return useAsmKernel && useZMMKernel && p.KH == 2 && p.KW == 2 && p.StrideH == 2 && p.StrideW == 2 &&
		unpadded(p) && p.InH == 2*p.OutH
}

// maxPool2x2Tail pools the last 1–7 windows of a row (y: their outputs,
// r0 and r1: their two input rows) with one group of the vector kernel,
// through zero-padded copies: the same values as the scalar max.
func maxPool2x2Tail[T Float](y, r0, r1 []T) {
	var a, b [16]float32
	var o [8]float32
	copy(a[:], asF32s(r0)[:2*len(y)])
	copy(b[:], asF32s(r1)[:2*len(y)])
	if useZMMKernel { // direct calls: through the variable the arrays would escape
		maxPool2x2RowF32x512(&o[0], &a[0], &b[0], 1)
	} else {
		maxPool2x2RowF32(&o[0], &a[0], &b[0], 1)
	}
	copy(asF32s(y), o[:len(y)])
}

// maxPoolPlane pools one plane xp into yp.
func maxPoolPlane[T Float](p backend.PoolParams, yp, xp []T) {
	if p.KH == 2 && p.KW == 2 && p.StrideW == 2 && unpadded(p) {
		_, vec := asF32(yp)
		vec = vec && useAsmKernel
		if vec && useZMMKernel && p.StrideH == 2 {
			maxPool2x2RowsF32x512(&asF32s(yp)[0], &asF32s(xp)[0], p.OutH, p.OutW, p.InW)
			return
		}
		for oh := 0; oh < p.OutH; oh++ {
			r0 := xp[oh*p.StrideH*p.InW:][:2*p.OutW]
			r1 := xp[(oh*p.StrideH+1)*p.InW:][:2*p.OutW]
			yr := yp[oh*p.OutW:][:p.OutW]
			ow := 0
			if groups := p.OutW / 8; vec && groups > 0 {
				y32, _ := asF32(yr)
				a, _ := asF32(r0)
				b, _ := asF32(r1)
				maxPool2x2RowF32k(&y32[0], &a[0], &b[0], groups)
				ow = 8 * groups
			}
			if vec && ow < len(yr) {
				maxPool2x2Tail(yr[ow:], r0[2*ow:], r1[2*ow:])
				continue
			}
			for ; ow < len(yr); ow++ {
				yr[ow] = max(r0[2*ow], r0[2*ow+1], r1[2*ow], r1[2*ow+1])
			}
		}
		return
	}
	// Windows three wide that the padding does not clip (owLo ≤ ow < owHi)
	// take maxPool3Wide, two at a time, or at stride 2 and up to three rows
	// high the AVX-512 kernel, 16 at a time.
	owLo, owHi := p.OutW, p.OutW
	if p.KW == 3 {
		if lo, hi := validRange(p.OutW, p.StrideW, p.PadW, 0, p.InW-2); lo < hi {
			owLo, owHi = lo, hi
		}
	}
	_, vec := asF32(yp)
	vec = vec && useAsmKernel && useZMMKernel && p.KW == 3 && p.StrideW == 2 && p.KH <= 3
	for oh := 0; oh < p.OutH; oh++ {
		h0, h1, _ := window(oh, p.StrideH, p.PadH, p.KH, p.InH)
		yr := yp[oh*p.OutW:][:p.OutW]
		for ow := 0; ow < len(yr); ow++ {
			if ow == owLo && vec {
				maxPool3s2Row(asF32s(yr[owLo:owHi]), asF32s(xp), p.InW, h0, h1, 2*owLo-p.PadW)
				ow = owHi - 1
				continue
			}
			if ow == owLo {
				maxPool3Wide(p, yr, xp, h0, h1, owLo, owHi)
				ow = owHi - 1
				continue
			}
			w0, w1, _ := window(ow, p.StrideW, p.PadW, p.KW, p.InW)
			yr[ow] = windowMax(xp, h0, h1, w0, w1, p.InW)
		}
	}
}

// maxPool3Wide computes outputs [lo, hi) of one row of a max pooling
// whose windows are three columns wide and inside the input, rows [h0,
// h1), with maxPoolPlane's operations in its order, two windows at a time:
// the max of one window is a chain of dependent operations, and two
// chains side by side keep the core busy.
func maxPool3Wide[T Float](p backend.PoolParams, yr, xp []T, h0, h1, lo, hi int) {
	ow := lo
	for ; ow+1 < hi; ow += 2 {
		c0 := ow*p.StrideW - p.PadW
		c1 := c0 + p.StrideW
		a, b := xp[h0*p.InW+c0:][:3], xp[h0*p.InW+c1:][:3]
		m0, m1 := a[0], b[0]
		m0, m1 = max(m0, a[1]), max(m1, b[1])
		m0, m1 = max(m0, a[2]), max(m1, b[2])
		for ih := h0 + 1; ih < h1; ih++ {
			a, b := xp[ih*p.InW+c0:][:3], xp[ih*p.InW+c1:][:3]
			m0, m1 = max(m0, a[0]), max(m1, b[0])
			m0, m1 = max(m0, a[1]), max(m1, b[1])
			m0, m1 = max(m0, a[2]), max(m1, b[2])
		}
		yr[ow], yr[ow+1] = m0, m1
	}
	if ow < hi {
		c := ow*p.StrideW - p.PadW
		yr[ow] = windowMax(xp, h0, h1, c, c+3, p.InW)
	}
}

// maxPool3s2Row computes the outputs yr of 3-wide windows at stride 2
// whose first starts at column c0 of rows [h0, h1) of the plane xp (inW
// wide, 1 to 3 rows; a missing row repeats the one above, which leaves
// every max as it is) with the AVX-512 kernel.
func maxPool3s2Row(yr, xp []float32, inW, h0, h1, c0 int) {
	if len(yr) == 0 {
		return
	}
	last := c0 + 2*len(yr) // the last column read
	r0 := xp[h0*inW:][:inW]
	r1, r2 := r0, r0
	if h1-h0 > 1 {
		r1 = xp[(h0+1)*inW:][:inW]
		r2 = r1
	}
	if h1-h0 > 2 {
		r2 = xp[(h0+2)*inW:][:inW]
	}
	_, _, _ = r0[last], r1[last], r2[last]
	maxPool3s2RowF32x512(&yr[0], &r0[c0], &r1[c0], &r2[c0], len(yr))
}

// maxPool3s2BackRow is maxPoolBackwardPlaneY for the windows of one
// output row with outputs yr and gradients gr, 3 wide at stride 2, the
// first starting at column c0 of rows [h0, h1) of xp and dxp (inW wide,
// 1 to 3 rows), with the AVX-512 kernel; it returns the number of windows
// done (all but the blocks from the first NaN maximum on).
func maxPool3s2BackRow(dxp, xp, yr, gr []float32, inW, h0, h1, c0 int) int {
	if len(yr) == 0 {
		return 0
	}
	last := c0 + 2*len(yr) // the last column read and written
	rows := func(a []float32) (r0, r1, r2 []float32) {
		r0 = a[h0*inW:][:inW]
		r1, r2 = r0, r0
		if h1-h0 > 1 {
			r1 = a[(h0+1)*inW:][:inW]
			r2 = r1
		}
		if h1-h0 > 2 {
			r2 = a[(h0+2)*inW:][:inW]
		}
		_, _, _ = r0[last], r1[last], r2[last]
		return r0, r1, r2
	}
	x0, x1, x2 := rows(xp)
	d0, d1, d2 := rows(dxp)
	_ = gr[len(yr)-1]
	return maxPool3s2BackRowF32x512(&d0[c0], &d1[c0], &d2[c0], &x0[c0], &x1[c0], &x2[c0], &yr[0], &gr[0], len(yr))
}

// windowMax is the max of the window [h0, h1) × [w0, w1), taken in
// row-major order from its first input (Go's max: NaN propagates).
func windowMax[T Float](xp []T, h0, h1, w0, w1, inW int) T {
	m := xp[h0*inW+w0]
	for ih := h0; ih < h1; ih++ {
		for _, v := range xp[ih*inW+w0 : ih*inW+w1] {
			m = max(m, v)
		}
	}
	return m
}

// maxPoolBackwardPlane adds each dyp value into dxp (cleared first) at the
// first maximum of its window in xp.
func maxPoolBackwardPlane[T Float](p backend.PoolParams, dxp, xp, dyp []T) {
	clear(dxp)
	if p.KH == 2 && p.KW == 2 && p.StrideW == 2 && unpadded(p) {
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
		h0, h1, _ := window(oh, p.StrideH, p.PadH, p.KH, p.InH)
		gr := dyp[oh*p.OutW:][:p.OutW]
		for ow, g := range gr {
			w0, w1, _ := window(ow, p.StrideW, p.PadW, p.KW, p.InW)
			dxp[firstMax(xp, h0, h1, w0, w1, p.InW)] += g
		}
	}
}

// maxPoolBackwardPlaneY is maxPoolBackwardPlane given yp, which must be
// the forward output for xp (as Pool2DBackward's y is): each window's
// gradient goes to its first input equal to the window's maximum, the
// first maximum maxPoolBackwardPlane would find, so the scan stops there
// instead of comparing every input with the best so far (one mispredicted
// branch per window instead of several). A window whose maximum is NaN,
// or where no input equals yp's value, takes maxPoolBackwardPlane's
// search.
func maxPoolBackwardPlaneY[T Float](p backend.PoolParams, dxp, xp, yp, dyp []T) {
	clear(dxp)
	// 3-wide windows at stride 2 that the padding does not clip take the
	// AVX-512 kernel, in order, between the scalar ones at the edges.
	owLo, owHi := p.OutW, p.OutW
	_, vec := asF32(dxp)
	if vec = vec && useAsmKernel && useZMMKernel && p.KW == 3 && p.StrideW == 2 && p.KH <= 3; vec {
		owLo, owHi = validRange(p.OutW, p.StrideW, p.PadW, 0, p.InW-2)
	}
	for oh := 0; oh < p.OutH; oh++ {
		h0, h1, _ := window(oh, p.StrideH, p.PadH, p.KH, p.InH)
		yr, gr := yp[oh*p.OutW:][:p.OutW], dyp[oh*p.OutW:][:p.OutW]
		for ow := 0; ow < len(gr); ow++ {
			if ow == owLo && vec && owLo < owHi {
				// The kernel stops before a block with a NaN maximum;
				// the scalar search takes the rest of the row.
				ow += maxPool3s2BackRow(asF32s(dxp), asF32s(xp), asF32s(yr[owLo:owHi]), asF32s(gr[owLo:owHi]), p.InW, h0, h1, 2*owLo-p.PadW)
				if ow == len(gr) {
					break
				}
			}
			w0, w1, _ := window(ow, p.StrideW, p.PadW, p.KW, p.InW)
			at := firstEqual(xp, yr[ow], h0, h1, w0, w1, p.InW)
			if at < 0 {
				at = firstMax(xp, h0, h1, w0, w1, p.InW)
			}
			dxp[at] += gr[ow]
		}
	}
}

// firstMax returns the offset of the first maximum of the window [h0, h1)
// × [w0, w1) in row-major order (the first input when it is NaN: nothing
// is greater than NaN).
func firstMax[T Float](xp []T, h0, h1, w0, w1, inW int) int {
	at := h0*inW + w0
	best := xp[at]
	for ih := h0; ih < h1; ih++ {
		row := ih * inW
		for iw, v := range xp[row+w0 : row+w1] {
			if v > best {
				at, best = row+w0+iw, v
			}
		}
	}
	return at
}

// firstEqual returns the offset of the first input of the window [h0, h1)
// × [w0, w1) equal to y, in row-major order, or −1 (none, or y is NaN).
func firstEqual[T Float](xp []T, y T, h0, h1, w0, w1, inW int) int {
	for ih := h0; ih < h1; ih++ {
		row := ih * inW
		for iw, v := range xp[row+w0 : row+w1] {
			if v == y {
				return row + w0 + iw
			}
		}
	}
	return -1
}

// pool2x2 reports whether maxPool2x2BackwardPlane applies: 2×2 max
// pooling with stride 2 and no padding, the pooling of LeNet and the CIFAR
// networks, whose windows do not overlap.
func pool2x2(p backend.PoolParams) bool {
	return fastMaxPool(p) && unpadded(p) && p.KH == 2 && p.KW == 2 && p.StrideH == 2 && p.StrideW == 2
}

// maxPool2x2BackwardPlane is the backward pass of one plane of 2×2,
// stride-2 max pooling. It uses the forward output yp: each window's
// gradient goes to the first of its four inputs equal to the window's
// maximum, which is the first maximum that maxPoolBackwardPlane finds. For
// float32 the choice is made with bit masks instead of branches, which
// mispredict on every other window; a window whose maximum is NaN takes
// the scalar route so that NaN handling stays exactly that of the generic
// loops. Every input of a window is written (the winner gets the
// gradient, the others 0), so only inputs outside every window (an odd
// last row or column) need clearing.
func maxPool2x2BackwardPlane[T Float](p backend.PoolParams, dxp, xp, yp, dyp []T) {
	d32, ok := asF32(dxp)
	if !ok {
		maxPoolBackwardPlane(p, dxp, xp, dyp)
		return
	}
	x32, _ := asF32(xp)
	y32, _ := asF32(yp)
	g32, _ := asF32(dyp)
	if p.InH != 2*p.OutH || p.InW != 2*p.OutW {
		clear(d32)
	}
	if useAsmKernel && useZMMKernel {
		// Whole rows with masked tails; a row with a NaN maximum goes
		// through the row path.
		for oh := 0; oh < p.OutH; oh++ {
			i0 := 2 * oh * p.InW
			oh += maxPool2x2BackRowsF32x512(&d32[i0], &x32[i0], &y32[oh*p.OutW], &g32[oh*p.OutW], p.OutH-oh, p.OutW, p.InW)
			if oh < p.OutH {
				maxPool2x2BackRow(p, d32, x32, y32, g32, oh)
			}
		}
		return
	}
	for oh := 0; oh < p.OutH; oh++ {
		maxPool2x2BackRow(p, d32, x32, y32, g32, oh)
	}
}

// maxPool2x2BackRow is maxPool2x2BackwardPlane for output row oh.
func maxPool2x2BackRow(p backend.PoolParams, d32, x32, y32, g32 []float32, oh int) {
	w := 2 * p.OutW
	i0 := 2 * oh * p.InW
	r0, r1 := x32[i0:][:w], x32[i0+p.InW:][:w]
	d0, d1 := d32[i0:][:w], d32[i0+p.InW:][:w]
	yr, gr := y32[oh*p.OutW:][:p.OutW], g32[oh*p.OutW:][:p.OutW]
	ow := 0
	for useAsmKernel && ow+8 <= p.OutW {
		// The kernel stops at a group of 8 windows with a NaN
		// maximum, which the loop below takes window by window.
		groups := (p.OutW - ow) / 8
		ow += maxPool2x2BackRowF32k(&d0[2*ow], &d1[2*ow], &r0[2*ow], &r1[2*ow], &yr[ow], &gr[ow], groups)
		if ow+8 <= p.OutW {
			maxPool2x2Windows(d0, d1, r0, r1, yr, gr, ow, ow+8)
			ow += 8
		}
	}
	maxPool2x2Windows(d0, d1, r0, r1, yr, gr, ow, p.OutW)
}

// maxPool2x2Windows is maxPool2x2BackwardPlane for windows [lo, hi) of one
// row: the inputs r0, r1 and gradients d0, d1 of two input rows, the
// outputs yr and their gradients gr.
func maxPool2x2Windows(d0, d1, r0, r1, yr, gr []float32, lo, hi int) {
	for ow := lo; ow < hi; ow++ {
		yv := yr[ow]
		j := 2 * ow
		a, b, c, d := r0[j], r0[j+1], r1[j], r1[j+1]
		g := math.Float32bits(gr[ow])
		if yv != yv {
			d0[j], d0[j+1], d1[j], d1[j+1] = 0, 0, 0, 0
			at, best := &d0[j], a
			if b > best {
				at, best = &d0[j+1], b
			}
			if c > best {
				at, best = &d1[j], c
			}
			if d > best {
				at = &d1[j+1]
			}
			*at = gr[ow]
			continue
		}
		m0 := eqMask(a, yv)
		m1 := eqMask(b, yv) &^ m0
		seen := m0 | m1
		m2 := eqMask(c, yv) &^ seen
		m3 := ^(seen | m2)
		d0[j] = math.Float32frombits(g & m0)
		d0[j+1] = math.Float32frombits(g & m1)
		d1[j] = math.Float32frombits(g & m2)
		d1[j+1] = math.Float32frombits(g & m3)
	}
}

// eqMask is all ones when a == b, else zero.
func eqMask(a, b float32) uint32 {
	var m uint32
	if a == b {
		m = ^uint32(0)
	}
	return m
}
