package cpu

// Convolutions with small output planes (a ResNet's last stages at CIFAR
// size: 4×4, 2×2, 1×1) make the per-image GEMMs of conv.go a few columns
// wide: each image streams the whole weight matrix for a matrix-vector
// product. The batched kernels below put the column matrices of several
// images side by side, [Cg·KH·KW, B·OH·OW], so that one GEMM serves B
// images and the weights are read once per B. Each worker takes its share
// of the images, B at a time.

// batchedMaxOHW is the largest output plane (OH·OW) for which the batched
// kernels replace the per-image ones, and batchedCols the GEMM width they
// aim for.
const (
	batchedMaxOHW = 64
	batchedCols   = 512
)

// useBatched reports whether s runs on the batched kernels: one group,
// several images, small output planes.
func useBatched(s convShape) bool {
	return s.Groups == 1 && s.N > 1 && s.ohw < batchedMaxOHW
}

// batchPlan is how the batched kernels run a convolution: b images per
// GEMM, their column matrices side by side in bs (bs.ld = b·OH·OW), the
// GEMMs parallel inside when the images do not keep every worker busy,
// and the taps kept (nil: all) with k = Cg·len(taps) rows.
type batchPlan struct {
	bs          convShape
	b, k        int
	par         bool
	taps        []int
	inImg, outI int // elements per input and output image
}

func planBatched(s convShape) batchPlan {
	b := max(1, batchedCols/max(s.ohw, 1))
	p := batchPlan{bs: s, b: b, par: innerParallel(ceilDiv(s.N, b)), taps: prunedTaps(s),
		inImg: s.InC * s.InH * s.InW, outI: s.OutC * s.ohw}
	p.bs.ld = b * s.ohw
	p.k = s.cg * tapCount(s, p.taps)
	return p
}

// weights returns w, or (in scratch memory, to release) the kept taps'
// weights.
func weights[T Float](p batchPlan, s convShape, w []T) []T {
	if p.taps == nil {
		return w
	}
	return gatherTaps(s, w, p.taps)
}

// scratchPair returns the column matrix and the [OutC, B·OH·OW] staging
// matrix of one worker, and the function that releases them.
func scratchPair[T Float](p batchPlan, s convShape) (col, g []T, done func()) {
	col, g = scratch[T](s.kk*p.bs.ld), scratch[T](s.OutC*p.bs.ld)
	return col, g, func() { release(col); release(g) }
}

// convForwardBatched computes y = conv(x, w) B images per GEMM.
func convForwardBatched[T Float](s convShape, y, x, w []T) {
	convForwardBatchedEpi(s, y, x, w, epilogue[T]{})
}

// convForwardBatchedEpi is convForwardBatched with e applied to each image
// as it is copied out.
func convForwardBatchedEpi[T Float](s convShape, y, x, w []T, e epilogue[T]) {
	p := planBatched(s)
	if p.taps != nil {
		w = weights(p, s, w)
		defer release(w)
	}
	tab := batchGather[T](p)
	packed := tab != nil && !p.par && usePackedGather
	parallelFor(s.N, 1, func(lo, hi int) {
		out := scratch[T](s.OutC * p.bs.ld)
		defer release(out)
		var col []T
		if !packed {
			col = scratch[T](s.kk * p.bs.ld)
			defer release(col)
		}
		for n0 := lo; n0 < hi; n0 += p.b {
			m := min(p.b, hi-n0)
			if packed { // the gathers fill the GEMM's packed panels: no column matrix
				pack := packGather(p.bs, asF32s(x[n0*p.inImg:]), p.inImg, m, tapCount(s, p.taps), tab)
				sgemmPacked(s.OutC, m*s.ohw, p.k, asF32s(w), p.k, pack, asF32s(out), p.bs.ld)
			} else {
				unroll(p.bs, x[n0*p.inImg:], p.inImg, m, col, p.taps, tab)
				gemmSlices(false, false, s.OutC, m*s.ohw, p.k, 1, w, p.k, col, p.bs.ld, 0, out, p.bs.ld, p.par)
			}
			for i := range m {
				copyRows(y[(n0+i)*p.outI:], out[i*s.ohw:], s.OutC, s.ohw, s.ohw, p.bs.ld)
				e.image(y[(n0+i)*p.outI:][:s.OutC*s.ohw], s.OutC, s.ohw)
			}
		}
	})
}

// convBackwardDataBatched computes dx = convᵀ(dy, w) B images per GEMM.
func convBackwardDataBatched[T Float](s convShape, dx, dy, w []T) {
	p := planBatched(s)
	if p.taps != nil {
		w = weights(p, s, w)
		defer release(w)
	}
	tab := scatterTable(batchGather[T](p))
	parallelFor(s.N, 1, func(lo, hi int) {
		col, g, done := scratchPair[T](p, s)
		defer done()
		for n0 := lo; n0 < hi; n0 += p.b {
			m := min(p.b, hi-n0)
			stageDY(p, s, g, dy, n0, m)
			gemmSlices(true, false, p.k, m*s.ohw, s.OutC, 1, w, p.k, g, p.bs.ld, 0, col, p.bs.ld, p.par)
			clear(dx[n0*p.inImg:][:m*p.inImg])
			if tab != nil {
				col2imGather(p.bs, asF32s(col), asF32s(dx[n0*p.inImg:]), p.inImg, m, tapCount(s, p.taps), tab)
			} else if p.taps != nil {
				col2imTiny(p.bs, col, dx[n0*p.inImg:], p.inImg, m, p.taps)
			} else {
				col2imImages(p.bs, col, dx[n0*p.inImg:], p.inImg, m)
			}
		}
	})
}

// stageDY puts dy of images n0 .. n0+m−1 side by side: [OutC, m·OH·OW].
func stageDY[T Float](p batchPlan, s convShape, g, dy []T, n0, m int) {
	for i := range m {
		copyRows(g[i*s.ohw:], dy[(n0+i)*p.outI:], s.OutC, s.ohw, p.bs.ld, s.ohw)
	}
}

// convBackwardFilterBatched computes dw = Σₙ dy[n]·col(x[n])ᵀ, B images per
// GEMM (the GEMM's inner dimension runs over them). Each worker's share
// accumulates its own partial sum; the partials are added in worker order.
func convBackwardFilterBatched[T Float](s convShape, dw, x, dy []T) {
	p := planBatched(s)
	taps, k := p.taps, p.k
	wlen := s.OutC * k
	partials := make([][]T, workers())
	tab := batchGather[T](p)
	chunks := parallelChunks(s.N, 1, func(chunk, lo, hi int) {
		acc := scratch[T](wlen)
		partials[chunk] = acc
		col, g, done := scratchPair[T](p, s)
		defer done()
		for n0 := lo; n0 < hi; n0 += p.b {
			m := min(p.b, hi-n0)
			unroll(p.bs, x[n0*p.inImg:], p.inImg, m, col, taps, tab)
			stageDY(p, s, g, dy, n0, m)
			beta := T(1)
			if n0 == lo {
				beta = 0
			}
			gemmSlices(false, true, s.OutC, k, m*s.ohw, 1, g, p.bs.ld, col, p.bs.ld, beta, acc, k, p.par)
		}
	})
	sum := partials[0]
	for c := 1; c < chunks; c++ {
		for i, v := range partials[c] {
			sum[i] += v
		}
		release(partials[c])
	}
	if taps == nil {
		copy(dw[:wlen], sum)
	} else { // the pruned taps' gradients are zero: their inputs are all padding
		nt, kk := len(taps), s.KH*s.KW
		parallelFor(s.OutC, max(1, elemGrain/max(s.kk, 1)), func(lo, hi int) {
			clear(dw[lo*s.kk : hi*s.kk])
			for oc := lo; oc < hi; oc++ {
				for c := 0; c < s.cg; c++ {
					for t, tap := range taps {
						dw[(oc*s.cg+c)*kk+tap] = sum[oc*k+c*nt+t]
					}
				}
			}
		})
	}
	release(sum)
}

// prunedTaps returns, for a plane small enough for im2colTiny, the kernel
// taps (kh·KW+kw) through which some output pixel reads an input pixel,
// when there are fewer than KH·KW: the other rows of the column matrix are
// all padding and would only multiply zeros (a 3×3 convolution with
// padding 1 on a 1×1 plane reads its centre tap alone). nil means every
// tap counts.
func prunedTaps(s convShape) []int {
	if s.ohw > tinyPlane {
		return nil
	}
	var taps []int
	for kh := range s.KH {
		ohLo, ohHi := validRange(s.OutH, s.StrideH, s.PadH, kh*s.DilateH, s.InH)
		for kw := range s.KW {
			owLo, owHi := validRange(s.OutW, s.StrideW, s.PadW, kw*s.DilateW, s.InW)
			if ohLo < ohHi && owLo < owHi {
				taps = append(taps, kh*s.KW+kw)
			}
		}
	}
	if len(taps) == s.KH*s.KW {
		return nil
	}
	return taps
}

// tapCount is the number of taps the column matrix has rows for.
func tapCount(s convShape, taps []int) int {
	if taps == nil {
		return s.KH * s.KW
	}
	return len(taps)
}

// gatherTaps returns (in scratch memory) the weights [OutC, Cg, KH·KW]
// of the given taps only: [OutC, Cg·len(taps)].
func gatherTaps[T Float](s convShape, w []T, taps []int) []T {
	nt, kk := len(taps), s.KH*s.KW
	out := scratch[T](s.OutC * s.cg * nt)
	parallelFor(s.OutC, max(1, elemGrain/max(s.cg*kk, 1)), func(lo, hi int) {
		for oc := lo; oc < hi; oc++ {
			for c := 0; c < s.cg; c++ {
				for t, tap := range taps {
					out[(oc*s.cg+c)*nt+t] = w[(oc*s.cg+c)*kk+tap]
				}
			}
		}
	})
	return out
}

// unroll is im2colImages, or with taps the pruned column matrix; with a
// gather table (batchGather), through the gather kernel.
func unroll[T Float](s convShape, x []T, inImg, m int, col []T, taps []int, tab []int32) {
	if tab != nil {
		im2colGather(s, asF32s(x), inImg, m, asF32s(col), tapCount(s, taps), tab)
		return
	}
	if taps != nil {
		im2colTiny(s, x, inImg, m, col, taps)
		return
	}
	im2colImages(s, x, inImg, m, col)
}

// tinyPlane is the largest output plane (OH·OW) that im2colImages and
// col2imImages unroll through a list of the plane's valid positions: for a
// few pixels per image, working out the borders and runs of every row
// and image costs more than moving the values.
const tinyPlane = 16

// tinyPositions lists, for row (c, kh, kw) of the column matrix, the
// output positions whose input pixel exists (dst) and that pixel's offset
// in the image (src); it returns their number.
func tinyPositions(s convShape, c, kh, kw int, dst, src *[tinyPlane]int) int {
	n := 0
	for oh := 0; oh < s.OutH; oh++ {
		ih := oh*s.StrideH - s.PadH + kh*s.DilateH
		if ih < 0 || ih >= s.InH {
			continue
		}
		for ow := 0; ow < s.OutW; ow++ {
			iw := ow*s.StrideW - s.PadW + kw*s.DilateW
			if iw < 0 || iw >= s.InW {
				continue
			}
			dst[n], src[n] = oh*s.OutW+ow, (c*s.InH+ih)*s.InW+iw
			n++
		}
	}
	return n
}

// tinyRows calls fn for every row of a tiny plane's column matrix (all
// taps, or those of taps, compacted: row c·len(taps)+t) with the row's
// offset in the column matrix and its valid positions (dst in the plane,
// src in the image).
func tinyRows(s convShape, taps []int, fn func(off int, dst, src []int)) {
	var dst, src [tinyPlane]int
	nt := s.KH * s.KW
	if taps != nil {
		nt = len(taps)
	}
	for c := 0; c < s.cg; c++ {
		for t := range nt {
			tap := t
			if taps != nil {
				tap = taps[t]
			}
			n := tinyPositions(s, c, tap/s.KW, tap%s.KW, &dst, &src)
			fn((c*nt+t)*s.ld, dst[:n], src[:n])
		}
	}
}

// im2colTiny is im2colImages for planes of at most tinyPlane pixels. With
// taps (kernel positions kh·KW+kw), only those rows are made, compacted
// (see tinyRows and prunedTaps).
func im2colTiny[T Float](s convShape, x []T, inImg, m int, col []T, taps []int) {
	tinyRows(s, taps, func(off int, dst, src []int) {
		base := col[off:]
		for i := range m {
			row := base[i*s.ohw:][:s.ohw]
			if len(dst) < s.ohw {
				for j := range row {
					row[j] = 0
				}
			}
			xi := x[i*inImg:]
			for k, d := range dst {
				row[d] = xi[src[k]]
			}
		}
	})
}

// col2imTiny is col2imImages for planes of at most tinyPlane pixels, with
// im2colTiny's rows (all, or those of taps).
func col2imTiny[T Float](s convShape, col, dx []T, inImg, m int, taps []int) {
	tinyRows(s, taps, func(off int, dst, src []int) {
		base := col[off:]
		for i := range m {
			row := base[i*s.ohw:][:s.ohw]
			di := dx[i*inImg:]
			for k, d := range dst {
				di[src[k]] += row[d]
			}
		}
	})
}
