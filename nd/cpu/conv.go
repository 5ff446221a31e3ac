package cpu

import "github.com/goluon/goluon/nd/backend"

// convShape holds the per-group sizes of a convolution.
type convShape struct {
	backend.ConvParams
	cg, ocg, kk, ohw int // in channels per group, out channels per group, Cg*KH*KW, OH*OW
}

func newConvShape(p backend.ConvParams) convShape {
	cg := p.InC / p.Groups
	return convShape{ConvParams: p, cg: cg, ocg: p.OutC / p.Groups, kk: cg * p.KH * p.KW, ohw: p.OutH * p.OutW}
}

// direct reports whether the im2col matrix equals the input (1x1, stride 1,
// no padding), so the copy can be skipped.
func (s convShape) direct() bool {
	return s.KH == 1 && s.KW == 1 && s.StrideH == 1 && s.StrideW == 1 && s.PadH == 0 && s.PadW == 0
}

// validRange returns the output positions [lo, hi) whose input index
// o*stride - pad + k*dilate falls inside [0, in).
func validRange(out, stride, pad, kOff, in int) (lo, hi int) {
	// o*stride >= pad - kOff  and  o*stride < in + pad - kOff
	lo = ceilDiv(pad-kOff, stride)
	hi = ceilDiv(in+pad-kOff, stride)
	return min(max(lo, 0), out), min(max(hi, 0), out)
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return -((-a) / b)
	}
	return (a + b - 1) / b
}

// im2col unrolls the receptive fields of x [Cg, H, W] into col [Cg*KH*KW, OH*OW].
// Each output row is split into a zero border and an interior that is a
// contiguous copy when the stride is 1.
func im2col[T Float](s convShape, x, col []T) {
	if s.StrideW == 1 {
		im2colUnitStride(s, x, col)
		return
	}
	im2colStrided(s, x, col)
}

// im2colStrided is im2col for any stride, padding and dilation.
func im2colStrided[T Float](s convShape, x, col []T) {
	for c := 0; c < s.cg; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				row := col[((c*s.KH+kh)*s.KW+kw)*s.ohw:][:s.ohw]
				kwOff := kw * s.DilateW
				owLo, owHi := validRange(s.OutW, s.StrideW, s.PadW, kwOff, s.InW)
				for oh := 0; oh < s.OutH; oh++ {
					ih := oh*s.StrideH - s.PadH + kh*s.DilateH
					r := row[oh*s.OutW : (oh+1)*s.OutW]
					if ih < 0 || ih >= s.InH || owLo >= owHi {
						clear(r)
						continue
					}
					xr := x[(c*s.InH+ih)*s.InW:][:s.InW]
					clear(r[:owLo])
					clear(r[owHi:])
					iw0 := owLo*s.StrideW - s.PadW + kwOff
					if s.StrideW == 1 {
						copy(r[owLo:owHi], xr[iw0:iw0+owHi-owLo])
						continue
					}
					for ow, iw := owLo, iw0; ow < owHi; ow, iw = ow+1, iw+s.StrideW {
						r[ow] = xr[iw]
					}
				}
			}
		}
	}
}

// im2colUnitStride is im2col for a unit column stride: for each row of
// the column matrix, the output rows whose input row exists hold one
// contiguous run of the input each (copied by copyRows in one call), and
// everything else is zero padding.
func im2colUnitStride[T Float](s convShape, x, col []T) {
	ow := s.OutW
	for c := 0; c < s.cg; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				row := col[((c*s.KH+kh)*s.KW+kw)*s.ohw:][:s.ohw]
				owLo, owHi := validRange(ow, 1, s.PadW, kw*s.DilateW, s.InW)
				ohLo, ohHi := validRange(s.OutH, s.StrideH, s.PadH, kh*s.DilateH, s.InH)
				if owLo >= owHi || ohLo >= ohHi {
					clear(row)
					continue
				}
				clear(row[:ohLo*ow])
				clear(row[ohHi*ow:])
				if owLo > 0 || owHi < ow {
					for oh := ohLo; oh < ohHi; oh++ {
						r := row[oh*ow:][:ow]
						zero(r[:owLo])
						zero(r[owHi:])
					}
				}
				ih := ohLo*s.StrideH - s.PadH + kh*s.DilateH
				iw := owLo - s.PadW + kw*s.DilateW
				copyRows(row[ohLo*ow+owLo:], x[(c*s.InH+ih)*s.InW+iw:], ohHi-ohLo, owHi-owLo, ow, s.StrideH*s.InW)
			}
		}
	}
}

// zero sets the few values of a padding border to zero.
func zero[T Float](d []T) {
	for i := range d {
		d[i] = 0
	}
}

// col2im adds col [Cg*KH*KW, OH*OW] back into dx [Cg, H, W].
func col2im[T Float](s convShape, col, dx []T) {
	if s.StrideW == 1 {
		col2imUnitStride(s, col, dx)
		return
	}
	col2imStrided(s, col, dx)
}

// col2imUnitStride is col2im for a unit column stride: the mirror of
// im2colUnitStride, one addRows call per row of the column matrix.
func col2imUnitStride[T Float](s convShape, col, dx []T) {
	ow := s.OutW
	for c := 0; c < s.cg; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				row := col[((c*s.KH+kh)*s.KW+kw)*s.ohw:][:s.ohw]
				owLo, owHi := validRange(ow, 1, s.PadW, kw*s.DilateW, s.InW)
				ohLo, ohHi := validRange(s.OutH, s.StrideH, s.PadH, kh*s.DilateH, s.InH)
				if owLo >= owHi || ohLo >= ohHi {
					continue
				}
				ih := ohLo*s.StrideH - s.PadH + kh*s.DilateH
				iw := owLo - s.PadW + kw*s.DilateW
				addRows(dx[(c*s.InH+ih)*s.InW+iw:], row[ohLo*ow+owLo:], ohHi-ohLo, owHi-owLo, s.StrideH*s.InW, ow)
			}
		}
	}
}

// col2imStrided is col2im for any stride, padding and dilation.
func col2imStrided[T Float](s convShape, col, dx []T) {
	for c := 0; c < s.cg; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				row := col[((c*s.KH+kh)*s.KW+kw)*s.ohw:][:s.ohw]
				kwOff := kw * s.DilateW
				owLo, owHi := validRange(s.OutW, s.StrideW, s.PadW, kwOff, s.InW)
				if owLo >= owHi {
					continue
				}
				for oh := 0; oh < s.OutH; oh++ {
					ih := oh*s.StrideH - s.PadH + kh*s.DilateH
					if ih < 0 || ih >= s.InH {
						continue
					}
					xr := dx[(c*s.InH+ih)*s.InW:][:s.InW]
					r := row[oh*s.OutW+owLo : oh*s.OutW+owHi]
					iw := owLo*s.StrideW - s.PadW + kwOff
					if s.StrideW == 1 {
						dst := xr[iw : iw+len(r)]
						for j, v := range r {
							dst[j] += v
						}
						continue
					}
					for _, v := range r {
						xr[iw] += v
						iw += s.StrideW
					}
				}
			}
		}
	}
}

// Conv2D computes y = conv(x, w) image by image, in parallel over images.
func (*Backend) Conv2D(p backend.ConvParams, y, x, w backend.Arg) {
	s := newConvShape(p)
	if isF64(y) {
		convForward(s, slice[float64](y), slice[float64](x), slice[float64](w))
	} else {
		convForward(s, slice[float32](y), slice[float32](x), slice[float32](w))
	}
}

func convForward[T Float](s convShape, y, x, w []T) {
	inImg, outImg := s.InC*s.InH*s.InW, s.OutC*s.ohw
	par := innerParallel(s.N)
	parallelFor(s.N, 1, func(lo, hi int) {
		var col []T
		if !s.direct() {
			col = make([]T, s.kk*s.ohw)
		}
		for n := lo; n < hi; n++ {
			for g := 0; g < s.Groups; g++ {
				xg := x[n*inImg+g*s.cg*s.InH*s.InW:]
				if s.direct() {
					col = xg
				} else {
					im2col(s, xg, col)
				}
				gemmSlices(false, false, s.ocg, s.ohw, s.kk, 1, w[g*s.ocg*s.kk:], s.kk,
					col, s.ohw, 0, y[n*outImg+g*s.ocg*s.ohw:], s.ohw, par)
			}
		}
	})
}

// Conv2DBackwardData computes dx = convᵀ(dy, w).
func (*Backend) Conv2DBackwardData(p backend.ConvParams, dx, dy, w backend.Arg) {
	s := newConvShape(p)
	if isF64(dx) {
		convBackwardData(s, slice[float64](dx), slice[float64](dy), slice[float64](w))
	} else {
		convBackwardData(s, slice[float32](dx), slice[float32](dy), slice[float32](w))
	}
}

func convBackwardData[T Float](s convShape, dx, dy, w []T) {
	inImg, outImg, gIn := s.InC*s.InH*s.InW, s.OutC*s.ohw, s.cg*s.InH*s.InW
	par := innerParallel(s.N)
	parallelFor(s.N, 1, func(lo, hi int) {
		col := make([]T, s.kk*s.ohw)
		for n := lo; n < hi; n++ {
			for g := 0; g < s.Groups; g++ {
				dxg := dx[n*inImg+g*gIn:][:gIn]
				dyg := dy[n*outImg+g*s.ocg*s.ohw:]
				wg := w[g*s.ocg*s.kk:]
				if s.direct() {
					gemmSlices(true, false, s.kk, s.ohw, s.ocg, 1, wg, s.kk, dyg, s.ohw, 0, dxg, s.ohw, par)
					continue
				}
				gemmSlices(true, false, s.kk, s.ohw, s.ocg, 1, wg, s.kk, dyg, s.ohw, 0, col, s.ohw, par)
				clear(dxg)
				col2im(s, col, dxg)
			}
		}
	})
}

// Conv2DBackwardFilter computes dw = Σₙ dy[n]·col(x[n])ᵀ. Each chunk of
// images accumulates its own partial sum; the partials are added in chunk
// order so the result is reproducible.
func (*Backend) Conv2DBackwardFilter(p backend.ConvParams, dw, x, dy backend.Arg) {
	s := newConvShape(p)
	if isF64(dw) {
		convBackwardFilter(s, slice[float64](dw), slice[float64](x), slice[float64](dy))
	} else {
		convBackwardFilter(s, slice[float32](dw), slice[float32](x), slice[float32](dy))
	}
}

func convBackwardFilter[T Float](s convShape, dw, x, dy []T) {
	inImg, outImg := s.InC*s.InH*s.InW, s.OutC*s.ohw
	wlen := s.OutC * s.kk
	partials := make([][]T, workers())
	par := innerParallel(s.N)
	chunks := parallelChunks(s.N, 1, func(chunk, lo, hi int) {
		acc := dw[:wlen]
		if chunk > 0 {
			acc = make([]T, wlen)
			partials[chunk] = acc
		}
		var col []T
		if !s.direct() {
			col = make([]T, s.kk*s.ohw)
		}
		for n := lo; n < hi; n++ {
			beta := T(1)
			if n == lo {
				beta = 0
			}
			for g := 0; g < s.Groups; g++ {
				xg := x[n*inImg+g*s.cg*s.InH*s.InW:]
				if s.direct() {
					col = xg
				} else {
					im2col(s, xg, col)
				}
				gemmSlices(false, true, s.ocg, s.kk, s.ohw, 1, dy[n*outImg+g*s.ocg*s.ohw:], s.ohw,
					col, s.ohw, beta, acc[g*s.ocg*s.kk:], s.kk, par)
			}
		}
	})
	if s.N == 0 {
		clear(dw[:wlen])
	}
	for c := 1; c < chunks; c++ {
		for i, v := range partials[c] {
			dw[i] += v
		}
	}
}
