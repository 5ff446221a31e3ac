//go:build cuda || cudaemu

package cuda

import (
	"math"
	"unsafe"

	"github.com/goluon/goluon/nd/backend"
)

// This file converts host slices between element types for Write and
// Read, as backend.Kernels.Cast (and nd/cpu) convert: floats become
// integers by truncation toward zero, saturating, with NaN becoming 0;
// anything becomes Bool as "is not zero" (NaN is true); Bool becomes 0 or
// 1; integers narrow with wrap-around.

// hostElem is the set of Go element types that device buffers store (Bool
// as uint8 0 or 1).
type hostElem interface {
	float32 | float64 | int32 | int64 | uint8
}

// rawCompatible reports whether n elements of dtype from become elements
// of dtype to by copying their bytes: the same dtype, or Bool (0 or 1)
// into Uint8.
func rawCompatible(from, to backend.DType) bool {
	return from == to || (from == backend.Bool && to == backend.Uint8)
}

// storageSlice returns a new slice of n elements of dt's storage type.
func storageSlice(dt backend.DType, n int) any {
	switch dt {
	case backend.Float32:
		return make([]float32, n)
	case backend.Float64:
		return make([]float64, n)
	case backend.Int32:
		return make([]int32, n)
	case backend.Int64:
		return make([]int64, n)
	}
	return make([]uint8, n)
}

// hostPtr returns the address of the first element of a non-empty host
// slice of any type Write and Read accept.
func hostPtr(s any) unsafe.Pointer {
	switch v := s.(type) {
	case []float32:
		return unsafe.Pointer(&v[0])
	case []float64:
		return unsafe.Pointer(&v[0])
	case []int32:
		return unsafe.Pointer(&v[0])
	case []int64:
		return unsafe.Pointer(&v[0])
	case []uint8:
		return unsafe.Pointer(&v[0])
	case []bool:
		return unsafe.Pointer(&v[0]) // a Go bool is one byte, 0 or 1
	}
	panic("cuda: internal error: unsupported host slice")
}

// hostConvert converts the host slice src into dst of the same length.
// Both are []float32, []float64, []int32, []int64, []uint8 or []bool;
// toBool makes a []uint8 dst (a Bool buffer's storage) receive truth
// values. A Bool buffer's storage as src is a []uint8 of 0 and 1, which
// converts as Bool does.
func hostConvert(dst any, toBool bool, src any) {
	if b, ok := src.([]bool); ok {
		u := make([]uint8, len(b))
		for i, v := range b {
			if v {
				u[i] = 1
			}
		}
		src = u
	}
	if b, ok := dst.([]bool); ok {
		u := make([]uint8, len(b))
		hostConvert(u, true, src)
		for i, v := range u {
			b[i] = v != 0
		}
		return
	}
	switch s := src.(type) {
	case []float32:
		convertFrom(dst, toBool, s)
	case []float64:
		convertFrom(dst, toBool, s)
	case []int32:
		convertFrom(dst, toBool, s)
	case []int64:
		convertFrom(dst, toBool, s)
	case []uint8:
		convertFrom(dst, toBool, s)
	}
}

func convertFrom[S hostElem](dst any, toBool bool, s []S) {
	switch d := dst.(type) {
	case []float32:
		convertSlice(d, s)
	case []float64:
		convertSlice(d, s)
	case []int32:
		convertSlice(d, s)
	case []int64:
		convertSlice(d, s)
	case []uint8:
		if toBool {
			for i, v := range s {
				d[i] = 0
				if v != 0 {
					d[i] = 1
				}
			}
		} else {
			convertSlice(d, s)
		}
	}
}

// convertSlice writes d[i] = s[i] converted to D.
func convertSlice[D, S hostElem](d []D, s []S) {
	d = d[:len(s)]
	if !isFloatElem[S]() || isFloatElem[D]() {
		for i, v := range s {
			d[i] = D(v)
		}
		return
	}
	lo, hi, top := intRange[D]()
	for i, v := range s {
		f := math.Trunc(float64(v))
		switch {
		case f != f:
			d[i] = 0
		case f >= hi:
			d[i] = top
		case f <= lo:
			d[i] = D(lo)
		default:
			d[i] = D(f)
		}
	}
}

func isFloatElem[T hostElem]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

// intRange returns the smallest and largest values of the integer type T
// as float64 (the largest int64 rounds up to 2^63) and the largest value.
func intRange[T hostElem]() (lo, hi float64, top T) {
	var z T
	switch p := any(&z).(type) {
	case *int32:
		*p = math.MaxInt32
		return math.MinInt32, math.MaxInt32, z
	case *int64:
		*p = math.MaxInt64
		return math.MinInt64, math.MaxInt64, z
	case *uint8:
		*p = math.MaxUint8
	}
	return 0, math.MaxUint8, z
}
