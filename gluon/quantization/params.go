package quantization

import (
	"fmt"
	"math"
)

// QParams is an affine quantization of real values: r = Scale·(q − Zero).
type QParams struct {
	Scale float32
	Zero  int32
}

// smallScale is FBGEMM's SMALL_SCALE_THRESHOLD: smaller scales are raised
// to it (quant_utils::ChooseQuantizationParams).
const smallScale float32 = 6.1e-5

// ChooseQParams returns the quantization of values in [lo, hi] to the
// integers [qmin, qmax] that PyTorch's quant_utils::ChooseQuantizationParams
// chooses, which dynamic quantization uses for each batch of activations
// (FBGEMM's and oneDNN's linear_dynamic; torch._choose_qparams_per_tensor):
// the range is widened to hold 0, the scale is (hi − lo)/(qmax − qmin) in
// float64 then float32 (0.1 where that is 0 or its reciprocal overflows,
// at least 6.1e-5), and the zero point is the nearest integer to the one
// that maps lo or hi exactly (whichever is computed with less error),
// clamped to [qmin, qmax]. reduceRange halves qmin and qmax first: 0..127
// for unsigned bytes, as PyTorch's x86 engines (FBGEMM, oneDNN) do for
// activations so that the AVX2 kernels' int16 pair sums cannot saturate.
// lo > hi or a bound that is not finite is an error.
func ChooseQParams(lo, hi float32, qmin, qmax int32, reduceRange bool) (QParams, error) {
	if !(lo <= hi) || math.IsInf(float64(lo), 0) || math.IsInf(float64(hi), 0) {
		return QParams{}, fmt.Errorf("quantization: cannot quantize the range [%v, %v]", lo, hi)
	}
	if qmin >= qmax {
		return QParams{}, fmt.Errorf("quantization: empty integer range [%d, %d]", qmin, qmax)
	}
	if reduceRange {
		qmin, qmax = qmin/2, qmax/2
	}
	lo, hi = min(lo, 0), max(hi, 0)
	scale := (float64(hi) - float64(lo)) / float64(qmax-qmin)
	if s := float32(scale); s == 0 || math.IsInf(float64(1/s), 0) {
		scale = 0.1
	}
	if scale < float64(smallScale) {
		org := float32(scale)
		scale = float64(smallScale)
		switch {
		case lo == 0:
			hi = smallScale * float32(qmax-qmin)
		case hi == 0:
			lo = -smallScale * float32(qmax-qmin)
		default:
			amp := smallScale / org
			lo, hi = lo*amp, hi*amp
		}
	}
	// The zero point is computed from the float64 scale, the result
	// holds it rounded to float32 (PyTorch's double and float).
	fromMin := float64(qmin) - float64(lo)/scale
	fromMax := float64(qmax) - float64(hi)/scale
	errMin := math.Abs(float64(qmin)) - math.Abs(float64(lo)/scale)
	errMax := math.Abs(float64(qmax)) - math.Abs(float64(hi)/scale)
	z0 := fromMax
	if errMin < errMax {
		z0 = fromMin
	}
	var z int32
	switch {
	case z0 < float64(qmin):
		z = qmin
	case z0 > float64(qmax):
		z = qmax
	default:
		z = int32(math.RoundToEven(z0))
	}
	return QParams{Scale: float32(scale), Zero: z}, nil
}

// eps is torch.finfo(torch.float32).eps, the least weight scale PyTorch's
// observers give.
const eps float32 = 0x1p-23

// SymmetricScale returns the scale PyTorch's MinMaxObserver gives signed
// 8-bit weights with qscheme per_tensor_symmetric (per channel: each
// output row's values alone): max(|min|, |max|, 0)/127.5 in float32, at
// least 2⁻²³. NaN values are an error; so is an infinite one, which would
// quantize every other weight to 0.
func SymmetricScale(w []float32) (float32, error) {
	var m float32
	for _, v := range w {
		if v != v || math.IsInf(float64(v), 0) {
			return 0, fmt.Errorf("quantization: weight %v cannot be quantized", v)
		}
		m = max(m, v, -v)
	}
	return max(m/127.5, eps), nil
}

// QuantizeInt8 writes round(w[i]/scale) clamped to [−128, 127] to q, as
// torch.quantize_per_tensor does with zero point 0: the reciprocal of the
// scale and the product in float32, rounded half to even.
func QuantizeInt8(q []int8, w []float32, scale float32) {
	inv := 1 / scale
	for i, v := range w {
		r := math.RoundToEven(float64(float32(v * inv)))
		q[i] = int8(min(max(r, -128), 127))
	}
}
