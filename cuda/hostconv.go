//go:build cuda || cudaemu

package cuda

import (
	"unsafe"

	"github.com/goluon/goluon/nd/backend"
)

// Write and Read convert host slices between element types with
// backend.ConvertHost, as backend.Kernels.Cast (and nd/cpu) convert:
// floats become integers by truncation toward zero, saturating, with NaN
// becoming 0; anything becomes Bool as "is not zero" (NaN is true); Bool
// becomes 0 or 1; integers narrow with wrap-around. This file holds the
// helpers around it.

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
	case backend.Float16:
		return make([]backend.F16, n)
	case backend.BFloat16:
		return make([]backend.BF16, n)
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
	case []backend.F16:
		return unsafe.Pointer(&v[0])
	case []backend.BF16:
		return unsafe.Pointer(&v[0])
	}
	panic("cuda: internal error: unsupported host slice")
}
