package cpu

import (
	"fmt"
	"unsafe"
)

// The host passes of an int8 convolution (gluon/quantization's static
// Conv2D) around the int8 GEMM (qgemm.go): GemmU8S8F32 multiplies rows of
// unsigned activations by packed signed weights, so a convolution runs as
//
//  1. QuantizeNHWCU8: the float32 NCHW input quantized to bytes, laid out
//     NHWC (each pixel's channels adjacent);
//  2. Im2RowU8: one row per output pixel holding, tap by tap (kh, kw),
//     the channels of the pixel the tap reads (the zero point where it
//     reads padding), so that with weights packed in the same
//     [out][kh][kw][in] order GemmU8S8F32 gives the output pixel by pixel
//     (a 1×1 convolution at stride 1 without padding reads the NHWC input
//     as it is);
//  3. NHWCToNCHWF32: the [pixels, channels] float32 result back to NCHW,
//     with the ReLU of a fused activation.
//
// With NHWC bytes a tap's channels are one contiguous copy, and at
// dilation 1 in one group a whole row of taps (kw·C bytes) is.

// qConvBlock is the number of pixels of one transposing step: the
// quantized channel runs of a block stay in L1 while they are transposed.
const qConvBlock = 64

// QuantizeNHWCU8 quantizes n images of c planes of hw float32 values
// (NCHW, src) into dst in NHWC order, pixel p of image i at row i·hw+p,
// its c bytes from dst[(i·hw+p)·ld]:
//
//	dst[(i·hw+p)·ld+ch] = clamp(roundEven(src[(i·c+ch)·hw+p]·inv) + zero, 0, 255)
//
// as QuantizeU8 rounds. Bytes c..ld of each row are left alone. It runs
// on several cores for large inputs and panics on slices too short, ld
// below c or a zero point outside [0, 255].
func QuantizeNHWCU8(dst []uint8, ld int, src []float32, n, c, hw int, inv float32, zero int32) {
	if n < 0 || c < 1 || hw < 0 || ld < c || zero < 0 || zero > 255 || len(src) < n*c*hw || (n*hw > 0 && len(dst) < (n*hw-1)*ld+c) {
		panic(fmt.Sprintf("cpu.QuantizeNHWCU8: %d images of %d×%d values from %d into %d (row stride %d), zero point %d",
			n, c, hw, len(src), len(dst), ld, zero))
	}
	blocks := (hw + qConvBlock - 1) / qConvBlock
	grain := max(1, qHostBlock/max(c*qConvBlock, 1))
	parallelFor(n*blocks, grain, func(lo, hi int) {
		tmp := make([]uint8, c*qConvBlock)
		for u := lo; u < hi; u++ {
			i, b := u/blocks, u%blocks
			p0 := b * qConvBlock
			pb := min(qConvBlock, hw-p0)
			s := src[i*c*hw+p0:] // channel ch's pixels at s[ch·hw:]
			d := dst[(i*hw+p0)*ld:]
			cz, pz := 0, 0 // the channels and pixels of whole 16×16 tiles
			if useZMMKernel && c >= 16 && pb >= 16 {
				cz, pz = c&^15, pb&^15
				for p := 0; p < pz; p += 16 {
					for c0 := 0; c0 < cz; c0 += 16 {
						_ = d[(p+15)*ld+c0+15]
						_ = s[(c0+15)*hw+p+15]
						qQuantizeT16x512(&d[p*ld+c0], ld, &s[c0*hw+p], hw, inv, zero)
					}
				}
			}
			quantizeNHWCPart(d, ld, s, hw, cz, c, 0, pz, inv, zero, tmp)
			quantizeNHWCPart(d, ld, s, hw, 0, c, pz, pb, inv, zero, tmp)
		}
	})
}

// quantizeNHWCPart is QuantizeNHWCU8 for the channels [c0, c1) of the
// pixels [p0, p1) of one block (s and d at the block's first pixel):
// each channel's run quantized into tmp (AVX2 where allowed), then
// scattered to the pixels' rows.
func quantizeNHWCPart(d []uint8, ld int, s []float32, hw, c0, c1, p0, p1 int, inv float32, zero int32, tmp []uint8) {
	pb := p1 - p0
	if pb <= 0 || c0 >= c1 {
		return
	}
	for ch := c0; ch < c1; ch++ {
		r := s[ch*hw+p0:][:pb]
		t := tmp[(ch-c0)*qConvBlock:][:pb]
		k := 0
		if useAsmKernel && pb >= 32 {
			k = pb &^ 31
			qQuantizeAVX2(&t[0], &r[0], k, inv, zero)
		}
		quantizeU8Go(t[k:], r[k:], inv, zero)
	}
	for p := range pb {
		row := d[(p0+p)*ld+c0:][:c1-c0]
		for ch := range row {
			row[ch] = tmp[ch*qConvBlock+p]
		}
	}
}

// Im2RowGeom is the geometry of an int8 convolution's input and output:
// N images of H×W pixels of C channels (NHWC rows of a given stride), a
// KH×KW kernel at the given stride, padding and dilation, and the
// OutH×OutW output (which the caller computes as convolutions do).
type Im2RowGeom struct {
	N, H, W, C       int
	KH, KW           int
	StrideH, StrideW int
	PadH, PadW       int
	DilateH, DilateW int
	OutH, OutW       int
}

// check panics unless g is a valid geometry with an output that fits.
func (g Im2RowGeom) check(op string) {
	ok := g.N >= 0 && g.H > 0 && g.W > 0 && g.C > 0 && g.KH > 0 && g.KW > 0 &&
		g.StrideH > 0 && g.StrideW > 0 && g.PadH >= 0 && g.PadW >= 0 && g.DilateH > 0 && g.DilateW > 0 &&
		g.OutH == (g.H+2*g.PadH-g.DilateH*(g.KH-1)-1)/g.StrideH+1 &&
		g.OutW == (g.W+2*g.PadW-g.DilateW*(g.KW-1)-1)/g.StrideW+1 && g.OutH > 0 && g.OutW > 0
	if !ok {
		panic(fmt.Sprintf("%s: invalid geometry %+v", op, g))
	}
}

// Im2RowU8 unrolls the receptive fields of the channels c0..c0+cg of x
// (g.N NHWC images, each pixel's g.C bytes ldx apart) into dst, one row
// per output pixel (image i, output row oh, column ow at row
// (i·OutH+oh)·OutW+ow, lda bytes apart): for each tap (kh, kw) in order,
// the cg bytes of the input pixel (oh·StrideH−PadH+kh·DilateH,
// ow·StrideW−PadW+kw·DilateW), or zero repeated where that pixel is
// padding; bytes KH·KW·cg..lda of each row are set to 0. That is the
// activations' matrix of the convolution for weights ordered
// [out][kh][kw][in]. It runs on several cores for large outputs and
// panics on a bad geometry or slices too short.
func Im2RowU8(dst []uint8, lda int, x []uint8, ldx int, g Im2RowGeom, c0, cg int, zero uint8) {
	const op = "cpu.Im2RowU8"
	g.check(op)
	k := g.KH * g.KW * cg
	rows := g.N * g.OutH * g.OutW
	if c0 < 0 || cg < 1 || c0+cg > g.C || ldx < g.C || lda < k ||
		len(x) < (g.N*g.H*g.W-1)*ldx+g.C || (rows > 0 && len(dst) < (rows-1)*lda+k) {
		panic(fmt.Sprintf("%s: channels %d..%d of %d (ldx %d), rows of %d bytes (lda %d), %d input and %d output bytes for %+v",
			op, c0, c0+cg, g.C, ldx, k, lda, len(x), len(dst), g))
	}
	// Whole kernel rows are one copy when the channels are all of a
	// pixel's bytes and adjacent taps read adjacent pixels.
	wide := g.DilateW == 1 && cg == g.C && ldx == g.C
	taps := g.KW * cg
	grain := max(1, qHostBlock/max(g.OutW*k, 1))
	parallelFor(g.N*g.OutH, grain, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			i, oh := u/g.OutH, u%g.OutH
			img := x[i*g.H*g.W*ldx:]
			for ow := range g.OutW {
				row := dst[(u*g.OutW+ow)*lda:][:lda]
				iw0 := ow*g.StrideW - g.PadW
				// Taps [kwLo, kwHi) read inside the row.
				kwLo, kwHi := tapRange(iw0, g.DilateW, g.KW, g.W)
				for kh := range g.KH {
					seg := row[kh*taps:][:taps]
					ih := oh*g.StrideH - g.PadH + kh*g.DilateH
					if ih < 0 || ih >= g.H || kwLo >= kwHi {
						fillU8(seg, zero)
						continue
					}
					fillU8(seg[:kwLo*cg], zero)
					fillU8(seg[kwHi*cg:], zero)
					src := img[(ih*g.W)*ldx+c0:]
					if wide {
						iw := iw0 + kwLo
						copy(seg[kwLo*cg:kwHi*cg], src[iw*ldx:])
						continue
					}
					for kw := kwLo; kw < kwHi; kw++ {
						iw := iw0 + kw*g.DilateW
						copy(seg[kw*cg:(kw+1)*cg], src[iw*ldx:iw*ldx+cg])
					}
				}
				clear(row[k:])
			}
		}
	})
}

// tapRange returns the taps [lo, hi) of a kernel row of kw taps, dilation
// d, whose first tap reads input column i0, that fall inside [0, w).
func tapRange(i0, d, kw, w int) (lo, hi int) {
	lo = min(max(ceilDiv(-i0, d), 0), kw)
	hi = min(max(ceilDiv(w-i0, d), 0), kw)
	return lo, hi
}

// fillU8 sets every byte of s to v.
func fillU8(s []uint8, v uint8) {
	if v == 0 {
		clear(s)
		return
	}
	for i := range s {
		s[i] = v
	}
}

// NHWCToNCHWF32 transposes n images of hw pixels of c float32 channels
// (src, pixel p of image i at src[(i·hw+p)·ld:], ld ≥ c) to NCHW (dst,
// channel ch of image i at dst[(i·c+ch)·hw:]), replacing negative values
// (and −0) with 0 when relu is set. It runs on several cores for large
// outputs and panics on slices too short.
func NHWCToNCHWF32(dst, src []float32, ld, n, hw, c int, relu bool) {
	if n < 0 || hw < 0 || c < 1 || ld < c || len(dst) < n*c*hw || (n*hw > 0 && len(src) < (n*hw-1)*ld+c) {
		panic(fmt.Sprintf("cpu.NHWCToNCHWF32: %d images of %d×%d values from %d (stride %d) into %d", n, hw, c, len(src), ld, len(dst)))
	}
	const tb = 16 // a tile of 16 pixels × 16 channels
	pBlocks := (hw + tb - 1) / tb
	grain := max(1, qHostBlock/max(c*tb, 1))
	parallelFor(n*pBlocks, grain, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			i, b := u/pBlocks, u%pBlocks
			p0 := b * tb
			pb := min(tb, hw-p0)
			in := src[(i*hw+p0)*ld:]
			out := dst[i*c*hw+p0:]
			c0 := 0
			if useZMMKernel && pb == tb { // whole 16×16 tiles on AVX-512
				var rows [tb]*uint32
				for ; c0+tb <= c; c0 += tb {
					for p := range rows {
						rows[p] = (*uint32)(unsafe.Pointer(&in[p*ld+c0]))
					}
					_ = out[(c0+tb-1)*hw+tb-1]
					transpose16x16((*uint32)(unsafe.Pointer(&out[c0*hw])), hw, &rows, tb)
					if relu {
						for ch := c0; ch < c0+tb; ch++ {
							reluGo(out[ch*hw:][:tb])
						}
					}
				}
			}
			for ; c0 < c; c0 += tb {
				cb := min(tb, c-c0)
				for ch := c0; ch < c0+cb; ch++ {
					d := out[ch*hw:][:pb]
					for p := range d {
						d[p] = in[p*ld+ch]
					}
					if relu {
						reluGo(d)
					}
				}
			}
		}
	})
}

// reluGo replaces the negative values of d (and −0) with 0, NaN kept.
func reluGo(d []float32) {
	for i, v := range d {
		d[i] = max(v, 0)
	}
}
