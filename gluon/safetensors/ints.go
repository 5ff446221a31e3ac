package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
)

// checkedInfo returns the description of t's dtype after checking that
// the data's length matches the shape.
func (t Tensor) checkedInfo() (dtypeInfo, error) {
	info, err := lookupDType(t.DType)
	if err != nil {
		return info, err
	}
	n, err := t.byteLen(info)
	if err != nil {
		return info, err
	}
	if n != len(t.Data) {
		return info, fmt.Errorf("%s tensor of shape %v needs %d bytes, has %d", t.DType, t.Shape, n, len(t.Data))
	}
	return info, nil
}

// intValues decodes the elements of an integer or BOOL tensor as int64,
// checking the data's length against the shape.
func intValues(t Tensor) ([]int64, error) {
	info, err := t.checkedInfo()
	if err != nil {
		return nil, err
	}
	d, le := t.Data, binary.LittleEndian
	out := make([]int64, len(d)/info.size)
	for i := range out {
		switch t.DType {
		case "BOOL":
			if d[i] > 1 {
				return nil, fmt.Errorf("BOOL element %d has byte value %d, want 0 or 1", i, d[i])
			}
			out[i] = int64(d[i])
		case "U8":
			out[i] = int64(d[i])
		case "I8":
			out[i] = int64(int8(d[i]))
		case "I16":
			out[i] = int64(int16(le.Uint16(d[2*i:])))
		case "U16":
			out[i] = int64(le.Uint16(d[2*i:]))
		case "I32":
			out[i] = int64(int32(le.Uint32(d[4*i:])))
		case "U32":
			out[i] = int64(le.Uint32(d[4*i:]))
		case "I64":
			out[i] = int64(le.Uint64(d[8*i:]))
		case "U64":
			v := le.Uint64(d[8*i:])
			if v > math.MaxInt64 {
				return nil, fmt.Errorf("U64 element %d (%d) does not fit in an int64", i, v)
			}
			out[i] = int64(v)
		default:
			return nil, fmt.Errorf("%s is not an integer dtype", t.DType)
		}
	}
	return out, nil
}

// intsIn returns t's integer elements, checking that each lies in
// [lo, hi] (the range of the requested type).
func intsIn(op string, t Tensor, lo, hi int64) ([]int64, error) {
	v, err := intValues(t)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: %w", op, err)
	}
	for i, x := range v {
		if x < lo || x > hi {
			return nil, fmt.Errorf("safetensors: %s: %s element %d (%d) is outside [%d, %d]", op, t.DType, i, x, lo, hi)
		}
	}
	return v, nil
}

// Int64s returns the elements of an integer or BOOL tensor as int64,
// exactly. Floating dtypes, U64 values above the int64 range and data
// whose length does not match the shape give an error.
func (t Tensor) Int64s() ([]int64, error) {
	return intsIn("Int64s", t, math.MinInt64, math.MaxInt64)
}

// Int32s returns the elements of an integer or BOOL tensor as int32; a
// value outside the int32 range is an error.
func (t Tensor) Int32s() ([]int32, error) {
	v, err := intsIn("Int32s", t, math.MinInt32, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out, nil
}

// Uint8s returns the elements of an integer or BOOL tensor as uint8; a
// value outside [0, 255] is an error.
func (t Tensor) Uint8s() ([]uint8, error) {
	v, err := intsIn("Uint8s", t, 0, math.MaxUint8)
	if err != nil {
		return nil, err
	}
	out := make([]uint8, len(v))
	for i, x := range v {
		out[i] = uint8(x)
	}
	return out, nil
}

// Bools returns the elements of a BOOL tensor (or an integer tensor holding
// only 0 and 1) as bools.
func (t Tensor) Bools() ([]bool, error) {
	v, err := intsIn("Bools", t, 0, 1)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(v))
	for i, x := range v {
		out[i] = x == 1
	}
	return out, nil
}

// FromInt32 returns an I32 tensor of the given shape holding a copy of v.
// It panics if a dimension is negative or the shape's element count is not
// len(v).
func FromInt32(shape []int, v []int32) Tensor {
	numel("FromInt32", shape, len(v))
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(x))
	}
	return Tensor{DType: "I32", Shape: append([]int{}, shape...), Data: data}
}

// FromInt64 returns an I64 tensor of the given shape holding a copy of v,
// panicking as FromInt32 does.
func FromInt64(shape []int, v []int64) Tensor {
	numel("FromInt64", shape, len(v))
	data := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(data[8*i:], uint64(x))
	}
	return Tensor{DType: "I64", Shape: append([]int{}, shape...), Data: data}
}

// FromUint8 returns a U8 tensor of the given shape holding a copy of v,
// panicking as FromInt32 does.
func FromUint8(shape []int, v []uint8) Tensor {
	numel("FromUint8", shape, len(v))
	return Tensor{DType: "U8", Shape: append([]int{}, shape...), Data: append([]byte{}, v...)}
}

// FromBool returns a BOOL tensor of the given shape holding a copy of v,
// panicking as FromInt32 does.
func FromBool(shape []int, v []bool) Tensor {
	numel("FromBool", shape, len(v))
	data := make([]byte, len(v))
	for i, x := range v {
		if x {
			data[i] = 1
		}
	}
	return Tensor{DType: "BOOL", Shape: append([]int{}, shape...), Data: data}
}
