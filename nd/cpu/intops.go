package cpu

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// This file holds the elementwise kernels of the integer and Bool dtypes,
// computed in int64 and converted back to the element type (so results
// wrap around as Go's integer arithmetic does), and binary ops whose
// result dtype differs from the inputs' (comparisons into Bool).

// unaryInt computes d = op(x) for an integer or Bool dtype; the scalars
// p1 and p2 are converted to int64 as Cast converts.
func unaryInt[T Int](op backend.UnaryOp, d, x []T, p1, p2 float64) {
	f := intUnaryFunc(op, scalarAs[int64](p1), scalarAs[int64](p2))
	parallelFor(len(d), elemGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = T(f(int64(x[i])))
		}
	})
}

func intUnaryFunc(op backend.UnaryOp, p1, p2 int64) func(int64) int64 {
	switch op {
	case backend.Neg:
		return func(x int64) int64 { return -x }
	case backend.Relu:
		return func(x int64) int64 { return max(x, 0) }
	case backend.Abs:
		return func(x int64) int64 {
			if x < 0 {
				return -x
			}
			return x
		}
	case backend.Sign:
		return func(x int64) int64 { return int64(sign(float64(x))) }
	case backend.Square:
		return func(x int64) int64 { return x * x }
	case backend.AddScalar:
		return func(x int64) int64 { return x + p1 }
	case backend.MulScalar:
		return func(x int64) int64 { return x * p1 }
	case backend.RSubScalar:
		return func(x int64) int64 { return p1 - x }
	case backend.Clip:
		return func(x int64) int64 { return min(max(x, p1), p2) }
	case backend.MaxScalar:
		return func(x int64) int64 { return max(x, p1) }
	case backend.MinScalar:
		return func(x int64) int64 { return min(x, p1) }
	case backend.Step:
		return func(x int64) int64 { return int64(b2u(x > 0)) }
	case backend.Floor, backend.Ceil, backend.Round, backend.Trunc:
		return func(x int64) int64 { return x } // integers are whole
	case backend.LogicalNot:
		return func(x int64) int64 { return int64(b2u(x == 0)) }
	}
	panic("cpu: unary op not defined on integers")
}

func intBinaryFunc(op backend.BinaryOp) func(a, b int64) int64 {
	switch op {
	case backend.Add:
		return func(a, b int64) int64 { return a + b }
	case backend.Sub:
		return func(a, b int64) int64 { return a - b }
	case backend.Mul:
		return func(a, b int64) int64 { return a * b }
	case backend.Div:
		return func(a, b int64) int64 {
			switch {
			case b == 0:
				return 0
			case b == -1 && a == math.MinInt64:
				return a
			}
			return a / b
		}
	case backend.Maximum:
		return func(a, b int64) int64 { return max(a, b) }
	case backend.Minimum:
		return func(a, b int64) int64 { return min(a, b) }
	case backend.Equal:
		return func(a, b int64) int64 { return int64(b2u(a == b)) }
	case backend.NotEqual:
		return func(a, b int64) int64 { return int64(b2u(a != b)) }
	case backend.Greater:
		return func(a, b int64) int64 { return int64(b2u(a > b)) }
	case backend.GreaterEqual:
		return func(a, b int64) int64 { return int64(b2u(a >= b)) }
	case backend.Less:
		return func(a, b int64) int64 { return int64(b2u(a < b)) }
	case backend.LessEqual:
		return func(a, b int64) int64 { return int64(b2u(a <= b)) }
	case backend.LogicalAnd:
		return func(a, b int64) int64 { return int64(b2u(a != 0 && b != 0)) }
	case backend.LogicalOr:
		return func(a, b int64) int64 { return int64(b2u(a != 0 || b != 0)) }
	case backend.LogicalXor:
		return func(a, b int64) int64 { return int64(b2u((a != 0) != (b != 0))) }
	case backend.FloorDiv:
		return func(a, b int64) int64 { q, _ := intDivmod(a, b); return q }
	case backend.Mod:
		return func(a, b int64) int64 { _, r := intDivmod(a, b); return r }
	case backend.Fmod:
		return func(a, b int64) int64 {
			if b == 0 || b == -1 {
				return 0
			}
			return a % b
		}
	}
	panic("cpu: binary op not defined on integers")
}

// binaryOther computes the binary ops the float fast path does not: inputs
// of an integer or Bool dtype, and results of another dtype than the
// inputs' (comparisons and logical ops into Bool).
func binaryOther(op backend.BinaryOp, shape []int, st [][]int, dst, a, b backend.Arg) {
	switch a.Buf.DType() {
	case backend.Float32:
		binaryFloatTo[float32](op, shape, st, dst, a, b)
	case backend.Float64:
		binaryFloatTo[float64](op, shape, st, dst, a, b)
	case backend.Int32:
		binaryIntTo[int32](op, shape, st, dst, a, b)
	case backend.Int64:
		binaryIntTo[int64](op, shape, st, dst, a, b)
	default:
		binaryIntTo[uint8](op, shape, st, dst, a, b)
	}
}

func binaryFloatTo[T Float](op backend.BinaryOp, shape []int, st [][]int, dst, a, b backend.Arg) {
	if cmp := compareOf[T](op); cmp != nil { // one loop per comparison, no call per element
		d, x, y := slice[uint8](dst), slice[T](a), slice[T](b)
		forRows(shape, st, func(o []int, n int, in []int) {
			cmp(d[o[0]:o[0]+n], x[o[1]:], y[o[2]:], in[1], in[2])
		})
		return
	}
	f := binaryFunc(op)
	binaryInto(shape, st, slice[uint8](dst), slice[T](a), slice[T](b), func(x, y T) uint8 {
		return b2u(f(float64(x), float64(y)) != 0)
	})
}

// compareOf returns the row loop of the comparison op into Bool (nil for
// another op): d[j] = a[j·sa] op b[j·sb].
func compareOf[T Float](op backend.BinaryOp) func(d []uint8, a, b []T, sa, sb int) {
	switch op {
	case backend.Equal:
		return func(d []uint8, a, b []T, sa, sb int) {
			for j := range d {
				d[j] = b2u(a[j*sa] == b[j*sb])
			}
		}
	case backend.NotEqual:
		return func(d []uint8, a, b []T, sa, sb int) {
			for j := range d {
				d[j] = b2u(a[j*sa] != b[j*sb])
			}
		}
	case backend.Greater:
		return func(d []uint8, a, b []T, sa, sb int) {
			for j := range d {
				d[j] = b2u(a[j*sa] > b[j*sb])
			}
		}
	case backend.GreaterEqual:
		return func(d []uint8, a, b []T, sa, sb int) {
			for j := range d {
				d[j] = b2u(a[j*sa] >= b[j*sb])
			}
		}
	case backend.Less:
		return func(d []uint8, a, b []T, sa, sb int) {
			for j := range d {
				d[j] = b2u(a[j*sa] < b[j*sb])
			}
		}
	case backend.LessEqual:
		return func(d []uint8, a, b []T, sa, sb int) {
			for j := range d {
				d[j] = b2u(a[j*sa] <= b[j*sb])
			}
		}
	}
	return nil
}

func binaryIntTo[T Int](op backend.BinaryOp, shape []int, st [][]int, dst, a, b backend.Arg) {
	f := intBinaryFunc(op)
	if dst.Buf.DType() == a.Buf.DType() {
		binaryInto(shape, st, slice[T](dst), slice[T](a), slice[T](b), func(x, y T) T {
			return T(f(int64(x), int64(y)))
		})
		return
	}
	binaryInto(shape, st, slice[uint8](dst), slice[T](a), slice[T](b), func(x, y T) uint8 {
		return uint8(f(int64(x), int64(y)))
	})
}

// binaryInto computes d = f(a, b) over a coalesced strided space.
func binaryInto[D, T Elem](shape []int, st [][]int, d []D, a, b []T, f func(x, y T) D) {
	forRows(shape, st, func(o []int, n int, in []int) {
		dd := d[o[0] : o[0]+n]
		ia, sa, ib, sb := o[1], in[1], o[2], in[2]
		for j := range dd {
			dd[j] = f(a[ia+j*sa], b[ib+j*sb])
		}
	})
}

// intDivmod returns Python's a // b and a % b for integers (the remainder
// has the divisor's sign); a zero divisor gives 0 and 0, and
// MinInt64 // -1 wraps to MinInt64, as Div does.
func intDivmod(a, b int64) (q, r int64) {
	switch {
	case b == 0:
		return 0, 0
	case b == -1:
		return -a, 0 // wraps for MinInt64
	}
	q, r = a/b, a%b
	if r != 0 && (r < 0) != (b < 0) {
		q--
		r += b
	}
	return q, r
}
