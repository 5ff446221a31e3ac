package backend

import "fmt"

// DType is an element type.
type DType uint8

// The element types. Float32 is the default; Float64 exists for gradient
// checks and numerically delicate work. The integer types hold indices,
// labels and counts; Bool holds the results of comparisons and masks (one
// byte per element, 0 or 1). Gradients flow only through the floating
// types. Float16 (IEEE binary16) and BFloat16 are storage types for now:
// arrays of them are made, cast (rounding to nearest even), copied, read,
// written and saved, and converted to Float32 to compute.
const (
	Float32 DType = iota
	Float64
	Int32
	Int64
	Uint8
	Bool
	Float16
	BFloat16
	numDTypes
)

// DTypes lists the element types ops compute in, in the order of their
// constants; HalfDTypes lists the half-precision storage types.
var (
	DTypes     = []DType{Float32, Float64, Int32, Int64, Uint8, Bool}
	HalfDTypes = []DType{Float16, BFloat16}
)

// Size returns the size of one element in bytes.
func (d DType) Size() int {
	switch d {
	case Float64, Int64:
		return 8
	case Uint8, Bool:
		return 1
	case Float16, BFloat16:
		return 2
	}
	return 4
}

// IsHalf reports whether d is a half-precision storage type (Float16 or
// BFloat16).
func (d DType) IsHalf() bool { return d == Float16 || d == BFloat16 }

// IsFloat reports whether d is a floating-point type: Float32, Float64,
// Float16 or BFloat16.
func (d DType) IsFloat() bool { return d == Float32 || d == Float64 || d.IsHalf() }

// IsInt reports whether d is an integer type (Int32, Int64 or Uint8).
func (d DType) IsInt() bool { return d == Int32 || d == Int64 || d == Uint8 }

// Valid reports whether d is one of the defined element types.
func (d DType) Valid() bool { return d < numDTypes }

// String returns the type's name as NumPy and PyTorch spell it: "float32",
// "float64", "int32", "int64", "uint8", "bool", "float16" or "bfloat16".
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	case Int32:
		return "int32"
	case Int64:
		return "int64"
	case Uint8:
		return "uint8"
	case Bool:
		return "bool"
	case Float16:
		return "float16"
	case BFloat16:
		return "bfloat16"
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// HostDType returns the element type of a Go slice that Write and Read
// accept ([]float32, []float64, []int32, []int64, []uint8, []bool, []F16 or
// []BF16) and its length; ok is false for any other value.
func HostDType(s any) (dt DType, n int, ok bool) {
	switch v := s.(type) {
	case []float32:
		return Float32, len(v), true
	case []float64:
		return Float64, len(v), true
	case []int32:
		return Int32, len(v), true
	case []int64:
		return Int64, len(v), true
	case []uint8:
		return Uint8, len(v), true
	case []bool:
		return Bool, len(v), true
	case []F16:
		return Float16, len(v), true
	case []BF16:
		return BFloat16, len(v), true
	}
	return 0, 0, false
}
