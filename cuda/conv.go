//go:build cuda || cudaemu

package cuda

import (
	"fmt"

	"github.com/goluon/goluon/nd/backend"
)

// colBudget bounds the bytes of the temporary column matrix of one chunk
// of images (at least one image is always processed at a time). Tests
// lower it to exercise the chunked paths.
var colBudget = 256 << 20

// convGeom holds the per-group sizes of a convolution.
type convGeom struct {
	backend.ConvParams
	cg, ocg, kk, ohw int // in/out channels per group, Cg*KH*KW, OH*OW
	imgIn, imgOut    int // elements per image of x and y
}

func newConvGeom(p backend.ConvParams) convGeom {
	cg := p.InC / p.Groups
	s := convGeom{ConvParams: p, cg: cg, ocg: p.OutC / p.Groups, kk: cg * p.KH * p.KW, ohw: p.OutH * p.OutW}
	s.imgIn, s.imgOut = p.InC*p.InH*p.InW, p.OutC*s.ohw
	return s
}

// direct reports whether the column matrix equals the input (1x1 kernel,
// stride 1, no padding, planes of one size: a transposed convolution with
// output padding at stride 1 passes a larger input), so that the products
// read x itself.
func (s convGeom) direct() bool {
	return s.KH == 1 && s.KW == 1 && s.StrideH == 1 && s.StrideW == 1 && s.PadH == 0 && s.PadW == 0 &&
		s.InH == s.OutH && s.InW == s.OutW
}

// smallDirect reports whether the forward convolution is small enough for
// conv_direct, one thread per output value (GOLUON_CUDA_DIRECT_CONV=0
// turns it off): at most directConvOutputs outputs of at most
// directConvTerms terms each, as a small network at batch 1 has (LeNet's
// two convolutions: 3,456 outputs of 25 terms, 1,024 of 150).
func (s convGeom) smallDirect() bool {
	return directConvOn && (s.DType == backend.Float32 || s.DType == backend.Float64) &&
		s.N*s.imgOut <= directConvOutputs && s.kk <= directConvTerms
}

// The limits of smallDirect, and its switch.
const (
	directConvOutputs = 1 << 14
	directConvTerms   = 1 << 10
)

var directConvOn = envInt("GOLUON_CUDA_DIRECT_CONV", 1) != 0

// chunk returns how many images share one column matrix of perImage
// elements of dt.
func (s convGeom) chunk(perImage int, dt backend.DType) int {
	return max(1, min(s.N, colBudget/max(perImage*dt.Size(), 1)))
}

// param returns the kernels' ConvDims for nc images and a column layout.
func (s convGeom) param(nc, colN, colG, colR int) convParam {
	return convParam{inC: s.InC, inH: s.InH, inW: s.InW, outC: s.OutC, outH: s.OutH, outW: s.OutW,
		kh: s.KH, kw: s.KW, sh: s.StrideH, sw: s.StrideW, ph: s.PadH, pw: s.PadW, dh: s.DilateH, dw: s.DilateW,
		groups: s.Groups, nc: nc, colN: colN, colG: colG, colR: colR}
}

// at returns a shifted by off elements.
func at(a backend.Arg, off int) backend.Arg {
	a.Off += off
	a.Strides = nil
	return a
}

// temp allocates a temporary of n elements on d; free it with b.Free once
// the work using it is queued (the stream orders any later reuse).
func (b *Backend) temp(op string, d *device, dt backend.DType, n int) *Buffer {
	t, err := b.Alloc(d.dev, dt, n)
	if err != nil {
		deviceFail(op, d.dev, err)
	}
	return t.(*Buffer)
}

// im2col queues the column transform of nc images starting at x.
func (d *device) im2col(s convGeom, col, x backend.Arg, c convParam) {
	var a args
	c.add(&a)
	a.ptr(col)
	a.ptr(x)
	d.launch("Conv2D", "im2col"+suffix(buf(col).dt), c.nc*s.Groups*s.kk*s.ohw, 0, 0, 0, &a)
}

// rowGemm queues a row-major product described like backend.GemmParams.
func (d *device) rowGemm(p backend.GemmParams) {
	d.gemm(rowMajor(p, buf(p.C).dt, max(p.Batch, 1)))
}

// halfConvFail fails a Float16 or BFloat16 convolution that cuDNN did not
// take: the im2col kernels compute in float32 and float64 only (package nd
// asks ConvHalf first and widens where it reports false).
func halfConvFail(op string, d *device, p backend.ConvParams) {
	if p.DType.IsHalf() {
		deviceFail(op, d.dev, fmt.Errorf("no cuDNN algorithm for this %v convolution %+v", p.DType, p))
	}
}

// Conv2D computes y = conv(x, w): per chunk of images, im2col and one
// batched product per group, y[n,g] = W[g]·col[n,g].
func (b *Backend) Conv2D(p backend.ConvParams, y, x, w backend.Arg) {
	s := newConvGeom(p)
	d, dt := devOf(y), buf(y).dt
	if s.N == 0 || s.OutC == 0 || s.ohw == 0 {
		return
	}
	if s.kk == 0 {
		b.Fill(y, s.N*s.imgOut, 0)
		return
	}
	if s.smallDirect() && !dt.IsHalf() {
		var a args
		c := s.param(s.N, 0, 0, 0)
		c.add(&a)
		a.ptr(y)
		a.ptr(x)
		a.ptr(w)
		d.launch("Conv2D", "conv_direct"+suffix(dt), s.N*s.imgOut, 0, 0, 0, &a)
		return
	}
	if dnnUsable(p) && b.dnnConv(0, p, y, x, w) {
		return
	}
	halfConvFail("Conv2D", d, p)
	gemm := func(g, n0, nc int, col backend.Arg, colStride int) {
		d.rowGemm(backend.GemmParams{M: s.ocg, N: s.ohw, K: s.kk, Alpha: 1,
			A: at(w, g*s.ocg*s.kk), LDA: s.kk,
			B: col, LDB: s.ohw, StrideB: colStride,
			C: at(y, n0*s.imgOut+g*s.ocg*s.ohw), LDC: s.ohw, StrideC: s.imgOut,
			Batch: nc})
	}
	if s.direct() {
		for g := 0; g < s.Groups; g++ {
			gemm(g, 0, s.N, at(x, g*s.cg*s.ohw), s.imgIn)
		}
		return
	}
	per := s.Groups * s.kk * s.ohw
	chunk := s.chunk(per, dt)
	col := b.temp("Conv2D", d, dt, chunk*per)
	defer b.Free(d.dev, col)
	colArg := backend.Arg{Buf: col}
	for n0 := 0; n0 < s.N; n0 += chunk {
		nc := min(chunk, s.N-n0)
		d.im2col(s, colArg, at(x, n0*s.imgIn), s.param(nc, per, s.kk*s.ohw, s.ohw))
		for g := 0; g < s.Groups; g++ {
			gemm(g, n0, nc, at(colArg, g*s.kk*s.ohw), per)
		}
	}
}

// Conv2DBackwardData computes dx from dy and w: dcol[n,g] = W[g]ᵀ·dy[n,g],
// then col2im sums the columns back into dx (overwriting it).
func (b *Backend) Conv2DBackwardData(p backend.ConvParams, dx, dy, w backend.Arg) {
	s := newConvGeom(p)
	d, dt := devOf(dx), buf(dx).dt
	if s.N == 0 || s.imgIn == 0 {
		return
	}
	if s.ohw == 0 || s.ocg == 0 {
		b.Fill(dx, s.N*s.imgIn, 0)
		return
	}
	if s.kk > 0 && dnnUsable(p) && b.dnnConv(1, p, dx, w, dy) {
		return
	}
	halfConvFail("Conv2DBackwardData", d, p)
	gemm := func(g, n0, nc int, c backend.Arg, ldc, strideC int) {
		d.rowGemm(backend.GemmParams{TransA: true, M: s.kk, N: s.ohw, K: s.ocg, Alpha: 1,
			A: at(w, g*s.ocg*s.kk), LDA: s.kk,
			B: at(dy, n0*s.imgOut+g*s.ocg*s.ohw), LDB: s.ohw, StrideB: s.imgOut,
			C: c, LDC: ldc, StrideC: strideC,
			Batch: nc})
	}
	if s.direct() {
		for g := 0; g < s.Groups; g++ {
			gemm(g, 0, s.N, at(dx, g*s.cg*s.ohw), s.ohw, s.imgIn)
		}
		return
	}
	per := s.Groups * s.kk * s.ohw
	chunk := s.chunk(per, dt)
	col := b.temp("Conv2DBackwardData", d, dt, chunk*per)
	defer b.Free(d.dev, col)
	colArg := backend.Arg{Buf: col}
	for n0 := 0; n0 < s.N; n0 += chunk {
		nc := min(chunk, s.N-n0)
		for g := 0; g < s.Groups; g++ {
			gemm(g, n0, nc, at(colArg, g*s.kk*s.ohw), s.ohw, per)
		}
		c := s.param(nc, per, s.kk*s.ohw, s.ohw)
		var a args
		c.add(&a)
		a.ptr(at(dx, n0*s.imgIn))
		a.ptr(colArg)
		d.launch("Conv2DBackwardData", "col2im"+suffix(dt), nc*s.imgIn, 0, 0, 0, &a)
	}
}

// Conv2DBackwardFilter computes dw = Σₙ dy[n]·col(x[n])ᵀ. Per chunk of nc
// images the columns are laid out [g][kk][nc][ohw] and dy is rearranged to
// [g][ocg][nc][ohw], so that one product per group (batched over groups)
// sums over the chunk's images; chunks after the first accumulate.
func (b *Backend) Conv2DBackwardFilter(p backend.ConvParams, dw, x, dy backend.Arg) {
	s := newConvGeom(p)
	d, dt := devOf(dw), buf(dw).dt
	wlen := s.OutC * s.kk
	if wlen == 0 {
		return
	}
	if s.N == 0 || s.ohw == 0 {
		b.Fill(dw, wlen, 0)
		return
	}
	if dnnUsable(p) && b.dnnConv(2, p, dw, x, dy) {
		return
	}
	halfConvFail("Conv2DBackwardFilter", d, p)
	per := s.Groups * s.kk * s.ohw
	chunk := s.chunk(per+s.imgOut, dt)
	col := b.temp("Conv2DBackwardFilter", d, dt, chunk*per)
	defer b.Free(d.dev, col)
	colArg := backend.Arg{Buf: col}
	var dyT *Buffer
	if chunk > 1 {
		dyT = b.temp("Conv2DBackwardFilter", d, dt, chunk*s.imgOut)
		defer b.Free(d.dev, dyT)
	}
	for n0 := 0; n0 < s.N; n0 += chunk {
		nc := min(chunk, s.N-n0)
		k := nc * s.ohw
		d.im2col(s, colArg, at(x, n0*s.imgIn), s.param(nc, s.ohw, s.kk*k, k))
		dyg := at(dy, n0*s.imgOut)
		if nc > 1 {
			src := dyg
			src.Strides = []int{s.ocg * s.ohw, s.ohw, s.imgOut, 1}
			dyg = backend.Arg{Buf: dyT}
			d.copyLocal([]int{s.Groups, s.ocg, nc, s.ohw}, dyg, src,
				backend.ContiguousStrides([]int{s.Groups, s.ocg, nc, s.ohw}), src.Strides)
		}
		beta := 1.0
		if n0 == 0 {
			beta = 0
		}
		d.rowGemm(backend.GemmParams{TransB: true, M: s.ocg, N: s.kk, K: k, Alpha: 1, Beta: beta,
			A: dyg, LDA: k, StrideA: s.ocg * k,
			B: colArg, LDB: k, StrideB: s.kk * k,
			C: dw, LDC: s.kk, StrideC: s.ocg * s.kk,
			Batch: s.Groups})
	}
}
