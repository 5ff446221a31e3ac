package nd

import (
	"math"
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// The dtype rule. Every op takes inputs of one dtype: mixing dtypes (a
// float32 array and an int64 one, or float32 and float64) is an ErrDType
// error naming both, and AsType converts first. NumPy-style promotion was
// rejected because it hides copies and makes the dtype of a result depend
// on the values' history; MXNet's ops likewise require one dtype. Results
// have the inputs' dtype, except:
//
//   - comparisons and logical ops return Bool;
//   - Sum of an integer or Bool array returns Int64 (as PyTorch's sum);
//   - ArgMax, ArgMin, ArgSort and TopK's indices are Int64;
//   - ops that index (Pick, Take, OneHot, ...) take integer index arrays
//     (or, for old callers, floats holding whole numbers).
//
// Integer arrays support arithmetic (Add, Sub, Mul, Div truncating toward
// zero with x/0 = 0, Maximum, Minimum), the scalar ops with whole-number
// scalars, Neg, Abs, Sign, Square, Relu, Clip, reductions, comparisons,
// and every shape and indexing op. Functions of real numbers (Exp, Log,
// Sqrt, Softmax, MatMul, convolutions, ...) need a floating dtype. Bool
// arrays support comparisons, logical ops, reductions and shape and
// indexing ops. Gradients flow only through floating-point arrays (Float32,
// Float64, Float16, BFloat16).

// The element types.
const (
	Float32 = backend.Float32
	Float64 = backend.Float64
	Int32   = backend.Int32
	Int64   = backend.Int64
	Uint8   = backend.Uint8
	Bool    = backend.Bool
	// Float16 and BFloat16 are half precision. Arrays of them are made
	// (FromSlice of []F16 or []BF16, Zeros, Full), cast with AsType
	// (rounding to nearest even, keeping NaN, ±Inf and subnormals),
	// copied, saved, and computed on: every op converts them to float32,
	// computes (accumulating in float32) and rounds its result back
	// (half.go), so an elementwise result is the float32 result of the
	// rounded inputs, rounded once. Under autocast (autocast.go) ops
	// choose their dtype by class. From Float64 (and Fill's value) they
	// round through float32, twice: a float64 within 2⁻²⁹ relative of a
	// tie between two half values can round the other way than NumPy,
	// which rounds once.
	Float16  = backend.Float16
	BFloat16 = backend.BFloat16
)

// F16 and BF16 are the host element types of Float16 and BFloat16 data,
// with F16From, BF16From and their Float32 methods to convert.
type (
	F16  = backend.F16
	BF16 = backend.BF16
)

// F16From rounds f to the nearest binary16 value, ties to even.
func F16From(f float32) F16 { return backend.F16From(f) }

// BF16From rounds f to the nearest bfloat16 value, ties to even.
func BF16From(f float32) BF16 { return backend.BF16From(f) }

// checkFloat fails unless every array has a floating dtype.
func checkFloat(op string, arrs ...*NDArray) {
	for _, a := range arrs {
		if a != nil && !a.dtype.IsFloat() {
			fail(op, ErrDType, "needs a floating-point array, got %v (shape %v); convert with AsType(Float32) first", a.dtype, a.shape)
		}
	}
}

// checkFloatDType fails unless dt is a floating dtype.
func checkFloatDType(op string, dt DType) {
	if !dt.IsFloat() {
		fail(op, ErrDType, "needs a floating-point dtype, got %v", dt)
	}
}

// scalarUnary lists the unary ops that take the scalar p1 (and Clip p2).
var scalarUnary = []backend.UnaryOp{backend.AddScalar, backend.MulScalar, backend.RSubScalar,
	backend.Clip, backend.MaxScalar, backend.MinScalar}

// checkUnaryDType fails when code is not defined on dt, or when an integer
// array gets a scalar that is not a whole number.
func checkUnaryDType(op string, code backend.UnaryOp, dt DType, p1, p2 float64) {
	switch {
	case dt.IsFloat():
		return
	case dt == Bool:
		if code != backend.LogicalNot {
			fail(op, ErrDType, "is not defined on bool arrays; convert with AsType first")
		}
		return
	case !slices.Contains(backend.IntUnaryOps, code):
		fail(op, ErrDType, "needs a floating-point array, got %v; convert with AsType(Float32) first", dt)
	}
	if slices.Contains(scalarUnary, code) {
		for _, p := range []float64{p1, p2} {
			if p != math.Trunc(p) {
				fail(op, ErrDType, "scalar %g is not a whole number, which an %v array needs; convert with AsType(Float32) first", p, dt)
			}
			if math.Abs(p) >= 1<<63 { // the kernels' int64 would saturate it
				fail(op, ErrArgument, "scalar %g is beyond the int64 range that %v arithmetic uses; convert with AsType(Float64) first", p, dt)
			}
		}
	}
}

// checkIntScalar fails unless s is a whole number that integer dtype dt
// holds.
func checkIntScalar(op string, dt DType, s float64) {
	if s != math.Trunc(s) { // NaN too
		fail(op, ErrDType, "scalar %g is not a whole number, which an %v array needs; convert with AsType(Float32) first", s, dt)
	}
	lo, hi := -float64(1<<63), float64(1<<63) // dt holds [lo, hi)
	switch dt {
	case Int32:
		lo, hi = math.MinInt32, math.MaxInt32+1
	case Uint8:
		lo, hi = 0, math.MaxUint8+1
	}
	if s < lo || s >= hi {
		fail(op, ErrArgument, "scalar %g is out of range for %v", s, dt)
	}
}

// checkBinaryDType fails when code is not defined on inputs of dtype dt.
func checkBinaryDType(op string, code backend.BinaryOp, dt DType) {
	switch {
	case dt.IsFloat():
	case dt == Bool:
		if !code.IsComparison() && !code.IsLogical() {
			fail(op, ErrDType, "is not defined on bool arrays; use the logical ops, or convert with AsType first")
		}
	case !slices.Contains(backend.IntBinaryOps, code):
		fail(op, ErrDType, "needs floating-point arrays, got %v; convert with AsType(Float32) first", dt)
	}
}
