package cpu

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// elemGrain is the least number of elements an elementwise or reduction
// kernel gives each goroutine. With 1<<14 rather than 1<<16 the MLP's
// 128×256 activations (32,768 values) and its 256×256 weight update are
// split over both cores, which made bench's BenchmarkTrainStepMLP faster
// and left LeNet's and the CIFAR CNN's steps as they were.
const elemGrain = 1 << 14

// Unary computes dst[i] = op(x[i]) for n elements.
func (*Backend) Unary(op backend.UnaryOp, dst, x backend.Arg, n int, p1, p2 float64) {
	switch dst.Buf.DType() {
	case backend.Float64:
		unary(op, slice[float64](dst)[:n], slice[float64](x)[:n], p1, p2)
	case backend.Float32:
		unary(op, slice[float32](dst)[:n], slice[float32](x)[:n], p1, p2)
	case backend.Int32:
		unaryInt(op, slice[int32](dst)[:n], slice[int32](x)[:n], p1, p2)
	case backend.Int64:
		unaryInt(op, slice[int64](dst)[:n], slice[int64](x)[:n], p1, p2)
	case backend.Uint8, backend.Bool:
		unaryInt(op, slice[uint8](dst)[:n], slice[uint8](x)[:n], p1, p2)
	}
}

func unary[T Float](op backend.UnaryOp, d, x []T, p1, p2 float64) {
	if numChunks(len(d), elemGrain) <= 1 { // small: no closures to allocate
		unaryRange(op, nil, d, x, p1, p2)
		return
	}
	f := unaryFunc(op, p1, p2)
	parallelFor(len(d), elemGrain, func(lo, hi int) {
		unaryRange(op, f, d[lo:hi], x[lo:hi], p1, p2)
	})
}

// unaryRange is one chunk of unary: d = op(x) elementwise, where f is
// unaryFunc(op, p1, p2), or nil to make it here when needed, and d may be
// x.
func unaryRange[T Float](op backend.UnaryOp, f func(float64) float64, d, x []T, p1, p2 float64) {
	if vecUnary(op, d, x, p1) {
		return
	}
	x = x[:len(d)]
	if op == backend.Exp {
		if xf, ok := asF32(x); ok {
			expF32(asF32s(d), xf)
			return
		}
	}
	switch op {
	case backend.Relu:
		// Like the AVX2 kernel: -0 and NaN pass through unchanged.
		for i, v := range x {
			if v < 0 {
				v = 0
			}
			d[i] = v
		}
	case backend.MulScalar:
		a := T(p1)
		for i, v := range x {
			d[i] = v * a
		}
	case backend.AddScalar:
		a := T(p1)
		for i, v := range x {
			d[i] = v + a
		}
	case backend.Neg:
		for i, v := range x {
			d[i] = -v
		}
	case backend.Square:
		for i, v := range x {
			d[i] = v * v
		}
	default:
		if f == nil {
			f = unaryFunc(op, p1, p2)
		}
		for i, v := range x {
			d[i] = T(f(float64(v)))
		}
	}
}

func unaryFunc(op backend.UnaryOp, p1, p2 float64) func(float64) float64 {
	switch op {
	case backend.Neg:
		return func(x float64) float64 { return -x }
	case backend.Exp:
		return math.Exp
	case backend.Log:
		return logAccurate
	case backend.Sqrt:
		return math.Sqrt
	case backend.Tanh:
		return math.Tanh
	case backend.Sigmoid:
		return sigmoid
	case backend.Relu:
		return relu
	case backend.Abs:
		return math.Abs
	case backend.Sign:
		return sign
	case backend.Square:
		return func(x float64) float64 { return x * x }
	case backend.Softrelu:
		return softrelu
	case backend.AddScalar:
		return func(x float64) float64 { return x + p1 }
	case backend.MulScalar:
		return func(x float64) float64 { return x * p1 }
	case backend.RSubScalar:
		return func(x float64) float64 { return p1 - x }
	case backend.RDivScalar:
		return func(x float64) float64 { return p1 / x }
	case backend.PowScalar:
		return func(x float64) float64 { return math.Pow(x, p1) }
	case backend.RPowScalar:
		return func(x float64) float64 { return math.Pow(p1, x) }
	case backend.Clip:
		return func(x float64) float64 { return min(max(x, p1), p2) }
	case backend.MaxScalar:
		return func(x float64) float64 { return max(x, p1) }
	case backend.MinScalar:
		return func(x float64) float64 { return min(x, p1) }
	case backend.RSqrt:
		return func(x float64) float64 { return 1 / math.Sqrt(x) }
	case backend.Erf:
		return math.Erf
	case backend.Log1p:
		return math.Log1p
	case backend.Expm1:
		return math.Expm1
	case backend.Sin:
		return math.Sin
	case backend.Cos:
		return math.Cos
	case backend.Reciprocal:
		return func(x float64) float64 { return 1 / x }
	case backend.LogicalNot:
		return func(x float64) float64 { return b2f(x == 0) }
	case backend.Step:
		return func(x float64) float64 { return b2f(x > 0) }
	case backend.Floor:
		return math.Floor
	case backend.Ceil:
		return math.Ceil
	case backend.Round:
		return math.RoundToEven
	case backend.Trunc:
		return math.Trunc
	case backend.Tan:
		return math.Tan
	case backend.Asin:
		return math.Asin
	case backend.Acos:
		return acos
	case backend.Atan:
		return math.Atan
	case backend.Sinh:
		return math.Sinh
	case backend.Cosh:
		return math.Cosh
	case backend.Asinh:
		return math.Asinh
	case backend.Acosh:
		return math.Acosh
	case backend.Atanh:
		return math.Atanh
	case backend.Log2:
		return log2
	case backend.Log10:
		return func(x float64) float64 { return logAccurate(x) * (1 / math.Ln10) }
	case backend.Exp2:
		return math.Exp2
	case backend.Erfinv:
		return math.Erfinv
	case backend.Lgamma:
		return func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	case backend.Digamma:
		return digamma
	case backend.Trigamma:
		return trigamma
	}
	panic("cpu: unknown unary op")
}

// logAccurate is math.Log, correct on subnormal inputs too (Go's amd64
// Log is hundreds of ulps off there: ln 1e-310 came out as −709.1):
// they are scaled into the normal range first.
func logAccurate(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p52) - 52*math.Ln2
	}
	return math.Log(x)
}

// log2 is math.Log2 without its cancellation just above 1 (its
// fraction-and-exponent form gave log₂(1+1e-12) 1.6e-5 relatively off):
// there ln x/ln 2 is accurate.
func log2(x float64) float64 {
	if x > 0.5 && x < 2 {
		return math.Log(x) * (1 / math.Ln2)
	}
	if x > 0 && x < 0x1p-1022 {
		return math.Log2(x*0x1p52) - 52
	}
	return math.Log2(x)
}

// acos is math.Acos without its cancellation near ±1 (π/2 − asin x lost
// 1e-11 relatively at 0.9999999): there 2·asin √((1 ∓ x)/2) is accurate.
func acos(x float64) float64 {
	switch {
	case x > 0.5:
		return 2 * math.Asin(math.Sqrt((1-x)/2))
	case x < -0.5:
		return math.Pi - 2*math.Asin(math.Sqrt((1+x)/2))
	}
	return math.Acos(x)
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// softrelu is ln(1+e^x) without overflow for large x.
func softrelu(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Binary computes dst = op(a, b) over shape with broadcasting strides.
func (*Backend) Binary(op backend.BinaryOp, shape []int, dst, a, b backend.Arg) {
	if binaryFlat(op, shape, dst, a, b) {
		return
	}
	as, bs := a.Strides, b.Strides
	if as == nil {
		as = backend.ContiguousStrides(shape)
	}
	if bs == nil {
		bs = backend.ContiguousStrides(shape)
	}
	sh, st := backend.Coalesce(shape, backend.ContiguousStrides(shape), as, bs)
	dt, in := dst.Buf.DType(), a.Buf.DType()
	switch {
	case dt == in && in == backend.Float64:
		binary(op, sh, st, slice[float64](dst), slice[float64](a), slice[float64](b))
	case dt == in && in == backend.Float32:
		binary(op, sh, st, slice[float32](dst), slice[float32](a), slice[float32](b))
	default:
		binaryOther(op, sh, st, dst, a, b)
	}
}

// Operands that read their elements in order (flatSeq) or one element
// for all (flatOne), once dimensions of size 1 are dropped: what
// Coalesce reduces to one row, recognised without its allocations.
const (
	flatNo = iota
	flatSeq
	flatOne
)

// flatKind classifies an operand of shape with strides (nil:
// contiguous).
func flatKind(shape, strides []int) int {
	if strides == nil {
		return flatSeq
	}
	seq, one, want := true, true, 1
	for d := len(shape) - 1; d >= 0; d-- {
		n := shape[d]
		if n == 1 {
			continue
		}
		seq = seq && strides[d] == want
		one = one && strides[d] == 0
		want *= n
	}
	switch {
	case seq:
		return flatSeq
	case one:
		return flatOne
	}
	return flatNo
}

// binaryFlat runs Binary on float operands of dst's dtype that coalesce
// to one row of two or more values (a contiguous pair, or one side
// broadcast from a single element) as the general path would, with the
// same kernels, and reports whether it did.
func binaryFlat(op backend.BinaryOp, shape []int, dst, a, b backend.Arg) bool {
	dt := dst.Buf.DType()
	if a.Buf.DType() != dt || b.Buf.DType() != dt || (dt != backend.Float32 && dt != backend.Float64) {
		return false
	}
	ka, kb := flatKind(shape, a.Strides), flatKind(shape, b.Strides)
	if ka == flatNo || kb == flatNo || (ka == flatOne && kb == flatOne) {
		return false
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	switch n {
	case 0:
		return true
	case 1: // Coalesce leaves zero strides: the general path's scalar loop (ReluGrad's −0 and NaN differ from the kernels')
		return false
	}
	if dt == backend.Float32 {
		binaryRow(op, ka, kb, slice[float32](dst)[:n], slice[float32](a), slice[float32](b))
	} else {
		binaryRow(op, ka, kb, slice[float64](dst)[:n], slice[float64](a), slice[float64](b))
	}
	return true
}

// binaryRow is binaryFlat's row: d = a op b with a and b of kinds ka and
// kb, not both flatOne.
func binaryRow[T Float](op backend.BinaryOp, ka, kb int, d, a, b []T) {
	f := binaryFunc(op)
	switch {
	case kb == flatOne:
		binaryRight(op, f, d, a[:len(d)], b[0])
	case ka == flatOne:
		binaryLeft(op, f, d, a[0], b[:len(d)])
	default:
		binaryContig(op, f, d, a[:len(d)], b[:len(d)])
	}
}

func binary[T Float](op backend.BinaryOp, shape []int, st [][]int, d, a, b []T) {
	f := binaryFunc(op)
	forRows(shape, st, func(o []int, n int, in []int) {
		if n == 0 {
			return
		}
		dd := d[o[0] : o[0]+n]
		ia, sa, ib, sb := o[1], in[1], o[2], in[2]
		switch {
		case sa == 1 && sb == 1:
			binaryContig(op, f, dd, a[ia:ia+n], b[ib:ib+n])
		case sa == 1 && sb == 0:
			binaryRight(op, f, dd, a[ia:ia+n], b[ib])
		case sa == 0 && sb == 1:
			binaryLeft(op, f, dd, a[ia], b[ib:ib+n])
		default:
			for j := range dd {
				dd[j] = T(f(float64(a[ia+j*sa]), float64(b[ib+j*sb])))
			}
		}
	})
}

func binaryFunc(op backend.BinaryOp) func(a, b float64) float64 {
	switch op {
	case backend.Add:
		return func(a, b float64) float64 { return a + b }
	case backend.Sub:
		return func(a, b float64) float64 { return a - b }
	case backend.Mul:
		return func(a, b float64) float64 { return a * b }
	case backend.Div:
		return func(a, b float64) float64 { return a / b }
	case backend.Pow:
		return math.Pow
	case backend.FloorDiv:
		return func(a, b float64) float64 { q, _ := divmod(a, b); return q }
	case backend.Mod:
		return func(a, b float64) float64 { _, r := divmod(a, b); return r }
	case backend.Fmod:
		return math.Mod // the dividend's sign, as C's fmod
	case backend.Atan2:
		return math.Atan2
	case backend.Hypot:
		return math.Hypot
	case backend.Maximum:
		return func(a, b float64) float64 { return max(a, b) }
	case backend.Minimum:
		return func(a, b float64) float64 { return min(a, b) }
	case backend.Equal:
		return func(a, b float64) float64 { return b2f(a == b) }
	case backend.NotEqual:
		return func(a, b float64) float64 { return b2f(a != b) }
	case backend.Greater:
		return func(a, b float64) float64 { return b2f(a > b) }
	case backend.GreaterEqual:
		return func(a, b float64) float64 { return b2f(a >= b) }
	case backend.Less:
		return func(a, b float64) float64 { return b2f(a < b) }
	case backend.LessEqual:
		return func(a, b float64) float64 { return b2f(a <= b) }
	case backend.ReluGrad:
		return func(a, b float64) float64 { return b * b2f(a > 0) }
	case backend.SigmoidGrad:
		return func(a, b float64) float64 { return b * a * (1 - a) }
	case backend.TanhGrad:
		return func(a, b float64) float64 { return b * (1 - a*a) }
	case backend.SoftreluGrad:
		return func(a, b float64) float64 { return b * sigmoid(a) }
	case backend.LogicalAnd:
		return func(a, b float64) float64 { return b2f(a != 0 && b != 0) }
	case backend.LogicalOr:
		return func(a, b float64) float64 { return b2f(a != 0 || b != 0) }
	case backend.LogicalXor:
		return func(a, b float64) float64 { return b2f((a != 0) != (b != 0)) }
	}
	panic("cpu: unknown binary op")
}

// relu is max(x, 0) except that -0 and NaN pass through, as in the AVX2
// kernel, so that every path gives the same bits.
func relu(x float64) float64 {
	if x < 0 {
		return 0
	}
	return x
}

// divmod returns Python's a // b and a % b for floats: the remainder has
// the divisor's sign, and the quotient is computed from the exact
// remainder (a − r)/b, rounded to the nearest integer, so that it is not
// off by one when a/b rounds to an integer.
func divmod(a, b float64) (q, r float64) {
	if b == 0 {
		return a / b, math.NaN()
	}
	r = math.Mod(a, b)
	d := (a - r) / b
	if r != 0 {
		if (b < 0) != (r < 0) {
			r += b
			d--
		}
	} else {
		r = math.Copysign(0, b)
	}
	if d == 0 {
		return math.Copysign(0, a/b), r
	}
	q = math.Floor(d)
	if d-q > 0.5 {
		q++
	}
	return q, r
}

// expF32 sets d = e^x for float32 values through expBlock (float32
// accuracy, as the softmax and GELU kernels use it), a block at a time.
func expF32(d, x []float32) {
	var buf [256]float64
	for b := 0; b < len(x); b += len(buf) {
		u := buf[:min(len(buf), len(x)-b)]
		for i := range u {
			u[i] = float64(x[b+i])
		}
		expBlock(u)
		for i, v := range u {
			d[b+i] = float32(v)
		}
	}
}
