package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
)

// dtypeInfo describes one element type of the format.
type dtypeInfo struct {
	size int // bytes per element
	rank int // position in the reference implementation's Dtype enum
}

// dtypes lists the element types this package reads and writes. The ranks
// follow the order of the reference implementation's Dtype enum (increasing
// alignment), which Encode uses to lay tensors out exactly as it does.
var dtypes = map[string]dtypeInfo{
	"BOOL":    {1, 0},
	"U8":      {1, 4},
	"I8":      {1, 5},
	"F8_E5M2": {1, 6},
	"F8_E4M3": {1, 7},
	"F8_E8M0": {1, 8},
	"I16":     {2, 9},
	"U16":     {2, 10},
	"F16":     {2, 11},
	"BF16":    {2, 12},
	"I32":     {4, 13},
	"U32":     {4, 14},
	"F32":     {4, 15},
	"C64":     {8, 16},
	"F64":     {8, 17},
	"I64":     {8, 18},
	"U64":     {8, 19},
}

// subByte lists dtypes of the format whose elements are smaller than a byte.
// They are recognised only to give a clearer error than "unknown".
var subByte = map[string]bool{"F4": true, "F6_E2M3": true, "F6_E3M2": true}

// lookupDType returns the description of dtype or an error naming it.
func lookupDType(dtype string) (dtypeInfo, error) {
	if info, ok := dtypes[dtype]; ok {
		return info, nil
	}
	if subByte[dtype] {
		return dtypeInfo{}, fmt.Errorf("unsupported sub-byte dtype %q", dtype)
	}
	return dtypeInfo{}, fmt.Errorf("unknown dtype %q", dtype)
}

// DTypeSize returns the size in bytes of one element of dtype ("F32" → 4),
// and false if this package does not know dtype.
func DTypeSize(dtype string) (int, bool) {
	info, ok := dtypes[dtype]
	return info.size, ok
}

// float16ToFloat64 converts IEEE 754 binary16 bits to a float64 (exactly).
func float16ToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0: // zero or subnormal
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1024+frac, exp-25)
}

// bfloat16ToFloat64 converts bfloat16 bits (the top half of a float32).
func bfloat16ToFloat64(b uint16) float64 {
	return float64(math.Float32frombits(uint32(b) << 16))
}

// convert converts t's raw little-endian data to a slice of T. Every
// supported integer, float and bool dtype converts, with one rounding step
// (integers beyond 2^24 or 2^53 round to the nearest representable value);
// F8_*, C64 and unknown dtypes give an error, and so does data whose length
// does not match the shape or a BOOL byte other than 0 or 1.
func convert[T float32 | float64](t Tensor) ([]T, error) {
	info, err := t.checkedInfo()
	if err != nil {
		return nil, err
	}
	d := t.Data
	le := binary.LittleEndian
	out := make([]T, len(d)/info.size)
	switch t.DType {
	case "F32":
		for i := range out {
			out[i] = T(math.Float32frombits(le.Uint32(d[4*i:])))
		}
	case "F64":
		for i := range out {
			out[i] = T(math.Float64frombits(le.Uint64(d[8*i:])))
		}
	case "F16":
		for i := range out {
			out[i] = T(float16ToFloat64(le.Uint16(d[2*i:])))
		}
	case "BF16":
		for i := range out {
			out[i] = T(bfloat16ToFloat64(le.Uint16(d[2*i:])))
		}
	case "I8":
		for i := range out {
			out[i] = T(int8(d[i]))
		}
	case "U8":
		for i := range out {
			out[i] = T(d[i])
		}
	case "BOOL":
		for i := range out {
			if d[i] > 1 {
				return nil, fmt.Errorf("BOOL element %d has byte value %d, want 0 or 1", i, d[i])
			}
			out[i] = T(d[i])
		}
	case "I16":
		for i := range out {
			out[i] = T(int16(le.Uint16(d[2*i:])))
		}
	case "U16":
		for i := range out {
			out[i] = T(le.Uint16(d[2*i:]))
		}
	case "I32":
		for i := range out {
			out[i] = T(int32(le.Uint32(d[4*i:])))
		}
	case "U32":
		for i := range out {
			out[i] = T(le.Uint32(d[4*i:]))
		}
	case "I64":
		for i := range out {
			out[i] = T(int64(le.Uint64(d[8*i:])))
		}
	case "U64":
		for i := range out {
			out[i] = T(le.Uint64(d[8*i:]))
		}
	default:
		return nil, fmt.Errorf("no conversion to floating point for dtype %s", t.DType)
	}
	return out, nil
}
