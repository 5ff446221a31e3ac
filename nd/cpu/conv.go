package cpu

import "github.com/goluon/goluon/nd/backend"

// convShape holds the per-group sizes of a convolution.
type convShape struct {
	backend.ConvParams
	cg, ocg, kk, ohw int // in channels per group, out channels per group, Cg*KH*KW, OH*OW
	// ld is the row stride of the column matrix and of the GEMM outputs
	// the kernels stage: OH*OW rounded up to a whole number of the GEMM's
	// 16-column panels. A ragged last panel and rows that straddle cache
	// lines cost the GEMM far more than the padding: LeNet's second layer
	// (100 → 112 columns) and the CIFAR CNN's 13×13 layer (169 → 176) run
	// 20–35% faster padded, although the padded products are larger.
	ld int
}

func newConvShape(p backend.ConvParams) convShape {
	cg := p.InC / p.Groups
	s := convShape{ConvParams: p, cg: cg, ocg: p.OutC / p.Groups, kk: cg * p.KH * p.KW, ohw: p.OutH * p.OutW}
	s.ld = s.ohw
	if !s.direct() && s.ohw > sgemmNR {
		s.ld = ceilDiv(s.ohw, sgemmNR) * sgemmNR
	}
	return s
}

// padded reports whether the kernels stage GEMM outputs in ld-wide rows.
func (s convShape) padded() bool { return s.ld != s.ohw }

// direct reports whether the im2col matrix equals the input (1x1, stride 1,
// no padding), so the copy can be skipped. The planes must also be the same
// size: a transposed convolution with output padding at stride 1 (nd's
// Conv2DTranspose) passes an input larger than the output.
func (s convShape) direct() bool {
	return s.KH == 1 && s.KW == 1 && s.StrideH == 1 && s.StrideW == 1 && s.PadH == 0 && s.PadW == 0 &&
		s.InH == s.OutH && s.InW == s.OutW
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

// Conv2D computes y = conv(x, w) image by image, in parallel over images:
// directly where useDirectConv says so (few input channels,
// convdirect.go), as Winograd F(2×2, 3×3) where useWinograd does
// (winograd.go), else as im2col and one GEMM per image and group.
func (*Backend) Conv2D(p backend.ConvParams, y, x, w backend.Arg) {
	conv2DEpi(p, y, x, w, backend.Arg{}, false)
}

var (
	_ backend.ConvBiasKernels     = (*Backend)(nil)
	_ backend.ConvBiasReluKernels = (*Backend)(nil)
)

// Conv2DBias implements backend.ConvBiasKernels: the direct kernel adds
// the bias to its sums before storing them; the other algorithms add it
// to each image's output planes after computing them, while they are
// still in cache (epilogue).
func (*Backend) Conv2DBias(p backend.ConvParams, y, x, w, bias backend.Arg) {
	conv2DEpi(p, y, x, w, bias, false)
}

// Conv2DBiasRelu implements backend.ConvBiasReluKernels as Conv2DBias
// with a ReLU after the bias on each image's planes (epilogue).
func (*Backend) Conv2DBiasRelu(p backend.ConvParams, y, x, w, bias backend.Arg) {
	conv2DEpi(p, y, x, w, bias, true)
}

// conv2DEpi is the forward convolution with an optional bias (nil Buf:
// none) and ReLU applied per image (epilogue).
func conv2DEpi(p backend.ConvParams, y, x, w, bias backend.Arg, relu bool) {
	s := newConvShape(p)
	if isF64(y) {
		conv2D(s, slice[float64](y), slice[float64](x), slice[float64](w), newEpilogue(optSlice[float64](bias), p.OutC, relu))
		return
	}
	if useDirectConv(p) {
		var b []float32
		if bias.Buf != nil {
			b = slice[float32](bias)[:p.OutC]
		}
		if useFlatConv(s) {
			flatConv(s, slice[float32](y), slice[float32](x), slice[float32](w), newEpilogue(b, p.OutC, relu))
			return
		}
		if !relu { // its tiles add the bias themselves
			directConv2D(s, slice[float32](y), slice[float32](x), slice[float32](w), b)
			return
		}
		directConv2DEpi(s, slice[float32](y), slice[float32](x), slice[float32](w), nil, newEpilogue(b, p.OutC, true))
		return
	}
	conv2D(s, slice[float32](y), slice[float32](x), slice[float32](w), newEpilogue(optSlice[float32](bias), p.OutC, relu))
}

// conv2D runs the Winograd, batched or per-image forward convolution
// (the direct one is the caller's), then e on each image.
func conv2D[T Float](s convShape, y, x, w []T, e epilogue[T]) {
	switch {
	case useWinograd(s.ConvParams):
		winoConv2DEpi(s, y, x, w, e)
	case useBatched(s):
		convForwardBatchedEpi(s, y, x, w, e)
	default:
		convForwardEpi(s, y, x, w, e)
	}
}

// epilogue is what a convolution applies to each image's output planes
// once they are complete, while they are in cache: bias[oc] added, then a
// ReLU when relu is set. These are the operations of a separate Add (or
// AddScalar) and Relu, or of BiasRelu, so the results are the same bits.
// The zero epilogue does nothing. (A value, not a pointer: the kernels'
// closures capture it without a heap allocation per call.)
type epilogue[T Float] struct {
	bias []T
	relu bool
}

// newEpilogue returns the epilogue for bias (nil: none) and relu.
func newEpilogue[T Float](bias []T, outC int, relu bool) epilogue[T] {
	if bias != nil {
		bias = bias[:outC]
	}
	return epilogue[T]{bias: bias, relu: relu}
}

// image applies e to one image's output y [outC][ohw]. With a ReLU it
// takes the kernel BiasRelu takes for runs of ohw values (biasrelu.go), so
// that even the sign of a NaN sum matches it.
func (e epilogue[T]) image(y []T, outC, ohw int) {
	if (e.bias == nil && !e.relu) || outC == 0 || ohw == 0 {
		return
	}
	if e.relu && e.bias != nil && ohw < minRun {
		if yf, ok := asF32(y); ok && useAsmKernel && ohw == 1 {
			bf, _ := asF32(e.bias)
			addReluF32k(&yf[0], &yf[0], &bf[:outC][0], outC)
			return
		}
		for i, v := range y[:outC*ohw] {
			y[i] = reluT(v + e.bias[i/ohw])
		}
		return
	}
	for oc := range outC {
		e.plane(y[oc*ohw:][:ohw], oc)
	}
}

// plane applies e to output channel oc's plane p (at least minRun values
// when e has a bias and a ReLU: image takes shorter ones).
func (e epilogue[T]) plane(p []T, oc int) {
	switch {
	case e.relu && e.bias != nil:
		if pf, ok := asF32(p); ok && useAsmKernel {
			addReluScalarF32k(&pf[0], &pf[0], float32(e.bias[oc]), len(pf))
			return
		}
		b := e.bias[oc]
		for i, v := range p {
			p[i] = reluT(v + b)
		}
	case e.relu:
		unaryRange(backend.Relu, nil, p, p, 0, 0)
	default:
		unaryRange(backend.AddScalar, nil, p, p, float64(e.bias[oc]), 0)
	}
}

// convForward is convForwardEpi without an epilogue.
func convForward[T Float](s convShape, y, x, w []T) { convForwardEpi(s, y, x, w, epilogue[T]{}) }

// convForwardEpi computes y = conv(x, w) a GEMM per image and group, then
// e on the image.
func convForwardEpi[T Float](s convShape, y, x, w []T, e epilogue[T]) {
	inImg, outImg := s.InC*s.InH*s.InW, s.OutC*s.ohw
	par := innerParallel(s.N)
	tab := imageGather[T](s)
	parallelFor(s.N, 1, func(lo, hi int) {
		var col, out []T
		if !s.direct() {
			col = scratch[T](s.kk * s.ld)
			defer release(col)
		}
		if s.padded() {
			out = scratch[T](s.ocg * s.ld)
			defer release(out)
		}
		for n := lo; n < hi; n++ {
			for g := 0; g < s.Groups; g++ {
				xg := x[n*inImg+g*s.cg*s.InH*s.InW:]
				yg := y[n*outImg+g*s.ocg*s.ohw:]
				switch {
				case s.direct():
					col = xg
				case tab != nil:
					im2colGather(s, asF32s(xg), 0, 1, asF32s(col), s.KH*s.KW, tab)
				default:
					im2col(s, xg, col)
				}
				if !s.padded() {
					gemmSlices(false, false, s.ocg, s.ohw, s.kk, 1, w[g*s.ocg*s.kk:], s.kk, col, s.ohw, 0, yg, s.ohw, par)
					continue
				}
				gemmSlices(false, false, s.ocg, s.ld, s.kk, 1, w[g*s.ocg*s.kk:], s.kk, col, s.ld, 0, out, s.ld, par)
				copyRows(yg, out, s.ocg, s.ohw, s.ohw, s.ld)
			}
			e.image(y[n*outImg:][:outImg], s.OutC, s.ohw)
		}
	})
}

// Conv2DBackwardData computes dx = convᵀ(dy, w): as the direct forward
// pass of the transposed convolution where useDirectBackwardData says so
// (convdirect.go), as Winograd where useWinograd does, else as a GEMM per
// image and col2im.
func (*Backend) Conv2DBackwardData(p backend.ConvParams, dx, dy, w backend.Arg) {
	s := newConvShape(p)
	if useDirectBackwardData(p) {
		directBackwardData(p, slice[float32](dx), slice[float32](dy), slice[float32](w))
		return
	}
	if useWinograd(p) {
		winoBackwardData(s, slice[float32](dx), slice[float32](dy), slice[float32](w))
		return
	}
	if useBatched(s) {
		if isF64(dx) {
			convBackwardDataBatched(s, slice[float64](dx), slice[float64](dy), slice[float64](w))
		} else {
			convBackwardDataBatched(s, slice[float32](dx), slice[float32](dy), slice[float32](w))
		}
		return
	}
	if isF64(dx) {
		convBackwardData(s, slice[float64](dx), slice[float64](dy), slice[float64](w))
	} else {
		convBackwardData(s, slice[float32](dx), slice[float32](dy), slice[float32](w))
	}
}

func convBackwardData[T Float](s convShape, dx, dy, w []T) {
	inImg, outImg, gIn := s.InC*s.InH*s.InW, s.OutC*s.ohw, s.cg*s.InH*s.InW
	par := innerParallel(s.N)
	tab := scatterTable(imageGather[T](s))
	parallelFor(s.N, 1, func(lo, hi int) {
		var col []T
		if !s.direct() {
			col = scratch[T](s.kk * s.ld)
			defer release(col)
		}
		for n := lo; n < hi; n++ {
			for g := 0; g < s.Groups; g++ {
				dxg := dx[n*inImg+g*gIn:][:gIn]
				dyg := dy[n*outImg+g*s.ocg*s.ohw:]
				wg := w[g*s.ocg*s.kk:]
				if s.direct() {
					gemmSlices(true, false, s.kk, s.ohw, s.ocg, 1, wg, s.kk, dyg, s.ohw, 0, dxg, s.ohw, par)
					continue
				}
				gemmSlices(true, false, s.kk, s.ohw, s.ocg, 1, wg, s.kk, dyg, s.ohw, 0, col, s.ld, par)
				clear(dxg)
				if tab != nil {
					col2imGather(s, asF32s(col), asF32s(dxg), 0, 1, s.KH*s.KW, tab)
				} else {
					col2im(s, col, dxg)
				}
			}
		}
	})
}

// Conv2DBackwardFilter computes dw = Σₙ dy[n]·col(x[n])ᵀ. Each chunk of
// images accumulates its own partial sum; the partials are added in chunk
// order so the result is reproducible.
func (*Backend) Conv2DBackwardFilter(p backend.ConvParams, dw, x, dy backend.Arg) {
	s := newConvShape(p)
	if useDirectFilter(p) {
		_, form := directFilterForm(s)
		form(s, slice[float32](dw), slice[float32](x), slice[float32](dy))
		return
	}
	if useWinograd(p) {
		winoBackwardFilter(s, slice[float32](dw), slice[float32](x), slice[float32](dy))
		return
	}
	if useBatched(s) {
		if isF64(dw) {
			convBackwardFilterBatched(s, slice[float64](dw), slice[float64](x), slice[float64](dy))
		} else {
			convBackwardFilterBatched(s, slice[float32](dw), slice[float32](x), slice[float32](dy))
		}
		return
	}
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
	tab := imageGather[T](s)
	chunks := parallelChunks(s.N, 1, func(chunk, lo, hi int) {
		acc := dw[:wlen]
		if chunk > 0 {
			acc = scratch[T](wlen)
			partials[chunk] = acc
		}
		var col []T
		if !s.direct() {
			col = scratch[T](s.kk * s.ld)
			defer release(col)
		}
		for n := lo; n < hi; n++ {
			beta := T(1)
			if n == lo {
				beta = 0
			}
			for g := 0; g < s.Groups; g++ {
				xg := x[n*inImg+g*s.cg*s.InH*s.InW:]
				switch {
				case s.direct():
					col = xg
				case tab != nil:
					im2colGather(s, asF32s(xg), 0, 1, asF32s(col), s.KH*s.KW, tab)
				default:
					im2col(s, xg, col)
				}
				gemmSlices(false, true, s.ocg, s.kk, s.ohw, 1, dy[n*outImg+g*s.ocg*s.ohw:], s.ohw,
					col, s.ld, beta, acc[g*s.ocg*s.kk:], s.kk, par)
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
		release(partials[c])
	}
}
