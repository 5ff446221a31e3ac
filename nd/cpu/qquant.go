package cpu

import (
	"fmt"
	"math"
)

// MinMaxF32 returns the least and the greatest value of x, as the dynamic
// quantization of activations needs them, and ok = false when x is empty
// or holds a NaN (lo and hi are then meaningless). Infinities are values
// like any other. It runs on AVX2 where the active level allows, and on
// several cores for long inputs.
func MinMaxF32(x []float32) (lo, hi float32, ok bool) {
	if len(x) == 0 {
		return 0, 0, false
	}
	type part struct {
		lo, hi float32
		nan    bool
	}
	parts := make([]part, workers())
	blocks := (len(x) + qHostBlock - 1) / qHostBlock
	chunks := parallelChunks(blocks, 1, func(c, lo, hi int) {
		s := x[lo*qHostBlock : min(hi*qHostBlock, len(x))]
		p := part{s[0], s[0], false}
		n := 0
		if useAsmKernel && len(s) >= 8 {
			n = len(s) &^ 7
			p.lo, p.hi, p.nan = qMinMaxAVX2(&s[0], n)
		}
		var nn bool
		p.lo, p.hi, nn = minMaxGo(s[n:], p.lo, p.hi)
		p.nan = p.nan || nn
		parts[c] = p
	})
	lo, hi, ok = parts[0].lo, parts[0].hi, !parts[0].nan
	for _, p := range parts[1:max(chunks, 1)] {
		lo, hi, ok = min(lo, p.lo), max(hi, p.hi), ok && !p.nan
	}
	return lo, hi, ok
}

// qHostBlock is the number of activations below which their range and
// quantization run on one core.
const qHostBlock = 1 << 15

// minMaxGo folds x into lo and hi and reports whether x holds a NaN.
func minMaxGo(x []float32, lo, hi float32) (float32, float32, bool) {
	nan := false
	for _, v := range x {
		if v != v {
			nan = true
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, nan
}

// QuantizeU8 quantizes src into dst (len(dst) ≥ len(src)) with the
// reciprocal inv of the scale and the zero point zero:
//
//	dst[i] = clamp(roundEven(src[i]·inv) + zero, 0, 255)
//
// with the product rounded to float32 first (ATen's quantize_val and
// FBGEMM's non-legacy Quantize; products beyond ±256…512 are clamped
// before rounding, a NaN counts as −256). zero must be in [0, 255]. It
// runs on AVX2 where the active level allows, and on several cores for
// long inputs; the results are the same.
func QuantizeU8(dst []uint8, src []float32, inv float32, zero int32) {
	if len(dst) < len(src) || zero < 0 || zero > 255 {
		panic(fmt.Sprintf("cpu.QuantizeU8: %d values into %d, zero point %d (want 0..255)", len(src), len(dst), zero))
	}
	blocks := (len(src) + qHostBlock - 1) / qHostBlock
	parallelFor(blocks, 1, func(lo, hi int) {
		s, d := src[lo*qHostBlock:min(hi*qHostBlock, len(src))], dst[lo*qHostBlock:]
		n := 0
		if useAsmKernel && len(s) >= 32 {
			n = len(s) &^ 31
			qQuantizeAVX2(&d[0], &s[0], n, inv, zero)
		}
		quantizeU8Go(d[n:len(s)], s[n:], inv, zero)
	})
}

// quantizeU8Go is QuantizeU8 in Go.
func quantizeU8Go(dst []uint8, src []float32, inv float32, zero int32) {
	for i, x := range src {
		v := float32(x * inv)
		if !(v >= -256) {
			v = -256
		}
		v = min(v, 512)
		q := int32(math.RoundToEven(float64(v))) + zero
		dst[i] = uint8(min(max(q, 0), 255))
	}
}
