package backend

import (
	"math"

	"github.com/goluon/goluon/ctx"
)

// F16 is an IEEE 754 binary16 value (1 sign, 5 exponent, 10 fraction
// bits), the storage of Float16 arrays.
type F16 uint16

// BF16 is a bfloat16 value (the top 16 bits of a float32: 8 exponent, 7
// fraction bits), the storage of BFloat16 arrays.
type BF16 uint16

// F16From rounds f to the nearest binary16 value, ties to even. Values
// beyond the largest finite one (65504) become ±Inf, NaN stays NaN (quiet,
// keeping the sign and the top fraction bits), and values below the
// smallest normal one (2⁻¹⁴) become subnormals or ±0.
func F16From(f float32) F16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	frac := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if frac == 0 {
			return F16(sign | 0x7c00)
		}
		return F16(sign | 0x7e00 | uint16(frac>>13))
	case exp > 127+15: // overflows binary16's exponent
		return F16(sign | 0x7c00)
	case exp >= 127-14: // a normal binary16: round 23 fraction bits to 10
		e := uint32(exp-127+15) << 10
		m := frac >> 13
		rest := frac & 0x1fff
		v := e | m
		if rest > 0x1000 || (rest == 0x1000 && v&1 == 1) {
			v++ // may carry into the exponent, up to Inf: still correct
		}
		return F16(uint32(sign) | v)
	case exp >= 127-25: // a subnormal binary16 (or the rounding up to the smallest normal)
		m := frac | 0x800000 // the implicit bit
		shift := uint(126 - 14 - exp + 13 + 1)
		v := m >> shift
		rest := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && v&1 == 1) {
			v++
		}
		return F16(uint32(sign) | v)
	}
	return F16(sign) // underflows to ±0
}

// Float32 returns h exactly as a float32.
func (h F16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	case frac == 0:
		return math.Float32frombits(sign)
	}
	// A subnormal: frac·2⁻²⁴, exact in float32.
	v := float32(frac) * (1.0 / (1 << 24))
	if sign != 0 {
		v = -v
	}
	return v
}

// BF16From rounds f to the nearest bfloat16 value, ties to even; NaN stays
// NaN (quiet), ±Inf and subnormals are kept (bfloat16 has float32's
// exponent range).
func BF16From(f float32) BF16 {
	b := math.Float32bits(f)
	if b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 {
		return BF16(b>>16 | 0x40) // NaN: quiet, keep the sign and top bits
	}
	b += 0x7fff + (b>>16)&1 // round to nearest even (overflow gives ±Inf)
	return BF16(b >> 16)
}

// Float32 returns h exactly as a float32.
func (h BF16) Float32() float32 { return math.Float32frombits(uint32(h) << 16) }

// HalfGemmer is a backend whose Gemm also multiplies Float16 and BFloat16
// matrices itself (a GPU's tensor cores), where package nd otherwise
// widens the operands to float32 copies, multiplies those and rounds the
// product. A backend may implement it.
type HalfGemmer interface {
	// GemmHalf reports whether Gemm takes A, B and C all of dtype dt
	// (Float16 or BFloat16) with K > 0. Such a product accumulates in
	// float32 and rounds each element of C to nearest even from
	// Alpha·op(A)·op(B) + Beta·C; the order of the sums may differ from
	// the widened product's, a backend may round partial sums of a
	// split reduction to dt (cuBLAS's default, which PyTorch keeps), and
	// it may count denormal inputs and sums (below 2⁻¹²⁶) as zero
	// (AVX512_BF16's dot products do, as PyTorch's CPU bfloat16 GEMM).
	GemmHalf(dt DType) bool
}

// HalfConvolver is a backend whose Conv2D, Conv2DBackwardData and
// Conv2DBackwardFilter also take Float16 and BFloat16 operands (a GPU's
// cuDNN on tensor cores), accumulating in float32 and rounding each result
// once. A backend may implement it.
type HalfConvolver interface {
	// ConvHalf reports whether the three passes of the convolution p, whose
	// DType is Float16 or BFloat16, run on dev with operands of that dtype.
	ConvHalf(dev ctx.Context, p ConvParams) bool
}

// HalfElementwise is a backend whose Unary and Binary also take Float16 and
// BFloat16 operands (all of one dtype; Binary's dst may be Bool), each
// value decoded to float32, computed as the float32 kernels compute it and
// rounded once: the bits of widening to float32, the float32 kernel and
// rounding, without the copies. A backend may implement it.
type HalfElementwise interface {
	// ElementwiseHalf reports whether Unary and Binary take dt operands.
	ElementwiseHalf(dt DType) bool
}

// HalfPooler is a backend whose Pool2D and Pool2DBackward also take
// Float16 and BFloat16 operands, computing as the float32 kernels do and
// rounding each result once: the widened path's bits. A backend may
// implement it.
type HalfPooler interface {
	// PoolHalf reports whether Pool2D and Pool2DBackward take dt operands.
	PoolHalf(dt DType) bool
}

// HalfReducer is a backend whose Reduce also takes Float16 and BFloat16
// operands for Sum, Max and Min (dst of the same dtype), computing as the
// float32 kernels do and rounding each result to float32 and then to the
// half dtype: the widened path's bits. A backend may implement it.
type HalfReducer interface {
	// ReduceHalf reports whether Reduce takes dt operands.
	ReduceHalf(dt DType) bool
}

// HalfBatchNormer is a backend whose BatchNormKernels and
// BatchNormReluKernels also take x, y, the output gradient and dx of
// dtype Float16 or BFloat16 (ChannelParams.DType) beside float32
// per-channel arrays (mean, variance, invstd, gamma, beta and the
// gradients of gamma and beta), as mixed precision keeps BatchNorm's
// parameters: each value decoded to float32, computed as the float32
// kernels compute it and rounded once, the bits of widening x to float32.
// Such a backend's Binary also takes that dtype (the ReLU's gradient). A
// backend may implement it.
type HalfBatchNormer interface {
	// BatchNormHalf reports whether the kernels take dt elements.
	BatchNormHalf(dt DType) bool
}
