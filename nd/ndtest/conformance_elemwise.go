package ndtest

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// confUnaryCase is one row of the unary table: the op, its host reference,
// the input domain [lo, hi), extra inputs that must be covered (zeros,
// extremes) and the tolerance.
type confUnaryCase struct {
	name   string
	op     func(*nd.NDArray) *nd.NDArray
	ref    func(float64) float64
	lo, hi float64
	extra  []float64
	tol    confTols
}

// refSoftrelu is ln(1+e^x) written so that it neither overflows for large x
// nor loses the tiny values for very negative x.
func refSoftrelu(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

func refSign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// confUnaryCases is the unary table. The elementary functions (exp, log,
// tanh, pow, ...) keep the default tolerance: their arguments are kept
// small enough (|x| <= 5, results below ~150) that the relative error of a
// correctly rounded or 1-2 ulp device implementation stays far inside rtol.
var confUnaryCases = []confUnaryCase{
	{"Neg", nd.Neg, func(x float64) float64 { return -x }, -3, 3, []float64{0}, confTolExact},
	{"Exp", nd.Exp, math.Exp, -5, 5, []float64{0, -30}, confTolDefault},
	{"Log", nd.Log, math.Log, 0.01, 10, []float64{1, 1e-3, 1e3}, confTolDefault},
	{"Sqrt", nd.Sqrt, math.Sqrt, 0, 10, []float64{0, 1, 1e4}, confTolDefault},
	{"Tanh", nd.Tanh, math.Tanh, -4, 4, []float64{0, -30, 30, 1e-4}, confTolDefault},
	{"Sigmoid", nd.Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, -8, 8, []float64{0, -50, 50}, confTolDefault},
	{"Relu", nd.Relu, func(x float64) float64 { return math.Max(x, 0) }, -3, 3, []float64{0}, confTolExact},
	{"Abs", nd.Abs, math.Abs, -3, 3, []float64{0}, confTolExact},
	{"Sign", nd.Sign, refSign, -3, 3, []float64{0}, confTolExact},
	{"Square", nd.Square, func(x float64) float64 { return x * x }, -3, 3, []float64{0}, confTolDefault},
	// Large |x| must neither overflow (ln(1+e^1000)) nor underflow to a
	// wrong value: softrelu(1000) = 1000, softrelu(-1000) = 0.
	{"Softrelu", nd.Softrelu, refSoftrelu, -5, 5, []float64{0, 20, -20, 50, -50, 100, -100, 1000, -1000}, confTolDefault},
	{"AddScalar", func(x *nd.NDArray) *nd.NDArray { return nd.AddScalar(x, 0.75) }, func(x float64) float64 { return x + 0.75 }, -3, 3, nil, confTolDefault},
	{"SubScalar", func(x *nd.NDArray) *nd.NDArray { return nd.SubScalar(x, 1.25) }, func(x float64) float64 { return x - 1.25 }, -3, 3, nil, confTolDefault},
	{"MulScalar", func(x *nd.NDArray) *nd.NDArray { return nd.MulScalar(x, -2.5) }, func(x float64) float64 { return x * -2.5 }, -3, 3, []float64{0}, confTolDefault},
	{"DivScalar", func(x *nd.NDArray) *nd.NDArray { return nd.DivScalar(x, 3) }, func(x float64) float64 { return x / 3 }, -3, 3, []float64{0}, confTolDefault},
	{"RSubScalar", func(x *nd.NDArray) *nd.NDArray { return nd.RSubScalar(2, x) }, func(x float64) float64 { return 2 - x }, -3, 3, nil, confTolDefault},
	{"RDivScalar", func(x *nd.NDArray) *nd.NDArray { return nd.RDivScalar(2, x) }, func(x float64) float64 { return 2 / x }, 0.25, 3, []float64{-0.5, -2, -3}, confTolDefault},
	{"PowScalar", func(x *nd.NDArray) *nd.NDArray { return nd.PowScalar(x, 2.5) }, func(x float64) float64 { return math.Pow(x, 2.5) }, 0, 3, []float64{0, 1}, confTolDefault},
	// Integer exponents must work for negative bases, as in every framework.
	{"PowScalarIntNegBase", func(x *nd.NDArray) *nd.NDArray { return nd.PowScalar(x, 3) }, func(x float64) float64 { return math.Pow(x, 3) }, -3, 3, []float64{0, -1, -2}, confTolDefault},
	{"PowScalarNegExp", func(x *nd.NDArray) *nd.NDArray { return nd.PowScalar(x, -1.5) }, func(x float64) float64 { return math.Pow(x, -1.5) }, 0.25, 3, []float64{1}, confTolDefault},
	{"RPowScalar", func(x *nd.NDArray) *nd.NDArray { return nd.RPowScalar(2, x) }, func(x float64) float64 { return math.Pow(2, x) }, -4, 4, []float64{0, 1, -1}, confTolDefault},
	{"Clip", func(x *nd.NDArray) *nd.NDArray { return nd.Clip(x, -0.5, 0.75) }, func(x float64) float64 { return math.Min(math.Max(x, -0.5), 0.75) }, -2, 2, []float64{-0.5, 0.75}, confTolExact},
	{"MaximumScalar", func(x *nd.NDArray) *nd.NDArray { return nd.MaximumScalar(x, 0.25) }, func(x float64) float64 { return math.Max(x, 0.25) }, -2, 2, []float64{0.25}, confTolExact},
	{"MinimumScalar", func(x *nd.NDArray) *nd.NDArray { return nd.MinimumScalar(x, -0.25) }, func(x float64) float64 { return math.Min(x, -0.25) }, -2, 2, []float64{-0.25}, confTolExact},
}

// confUnary runs the unary table on a 3-D input (whose size is not a
// multiple of common vector widths) with the extra values appended.
func confUnary(e confEnv) {
	for i, c := range confUnaryCases {
		e.run(c.name, func(e confEnv) {
			v := append(confUniform(uint64(100+i), 3*5*7, c.lo, c.hi), c.extra...)
			v = e.round(v)
			shape := []int{len(v)}
			if len(c.extra) == 0 {
				shape = []int{3, 5, 7}
			}
			want := make([]float64, len(v))
			for j, x := range v {
				want[j] = c.ref(x)
			}
			e.check(c.op(e.arr(v, shape...)), shape, want, c.tol)
		})
	}
}

// confBinaryCase is one row of the binary table: the op, its reference,
// the domains of a and b (ints makes small integers so that comparisons
// and max/min see ties) and the tolerance.
type confBinaryCase struct {
	name string
	op   func(a, b *nd.NDArray) *nd.NDArray
	ref  func(a, b float64) float64
	aLo  float64
	aHi  float64
	bLo  float64
	bHi  float64
	ints bool
	tol  confTols
	// boolOut says the op returns a Bool array (the comparisons).
	boolOut bool
}

func refBool(c bool) float64 {
	if c {
		return 1
	}
	return 0
}

// confBinaryCases is the binary table. Pow keeps the default tolerance:
// bases in [0.5, 2] and exponents in [-2, 2] keep results small.
var confBinaryCases = []confBinaryCase{
	{name: "Add", op: nd.Add, ref: func(a, b float64) float64 { return a + b }, aLo: -3, aHi: 3, bLo: -3, bHi: 3, tol: confTolDefault},
	{name: "Sub", op: nd.Sub, ref: func(a, b float64) float64 { return a - b }, aLo: -3, aHi: 3, bLo: -3, bHi: 3, tol: confTolDefault},
	{name: "Mul", op: nd.Mul, ref: func(a, b float64) float64 { return a * b }, aLo: -3, aHi: 3, bLo: -3, bHi: 3, tol: confTolDefault},
	{name: "Div", op: nd.Div, ref: func(a, b float64) float64 { return a / b }, aLo: -3, aHi: 3, bLo: 0.5, bHi: 3, tol: confTolDefault},
	{name: "Pow", op: nd.Pow, ref: math.Pow, aLo: 0.5, aHi: 2, bLo: -2, bHi: 2, tol: confTolDefault},
	{name: "Maximum", op: nd.Maximum, ref: math.Max, ints: true, aLo: -2, aHi: 2, bLo: -2, bHi: 2, tol: confTolExact},
	{name: "Minimum", op: nd.Minimum, ref: math.Min, ints: true, aLo: -2, aHi: 2, bLo: -2, bHi: 2, tol: confTolExact},
	{name: "Equal", op: nd.Equal, ref: func(a, b float64) float64 { return refBool(a == b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
	{name: "NotEqual", op: nd.NotEqual, ref: func(a, b float64) float64 { return refBool(a != b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
	{name: "Greater", op: nd.Greater, ref: func(a, b float64) float64 { return refBool(a > b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
	{name: "GreaterEqual", op: nd.GreaterEqual, ref: func(a, b float64) float64 { return refBool(a >= b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
	{name: "Lesser", op: nd.Lesser, ref: func(a, b float64) float64 { return refBool(a < b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
	{name: "LesserEqual", op: nd.LesserEqual, ref: func(a, b float64) float64 { return refBool(a <= b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
}

// confBroadcastShapes are the operand shape pairs every binary op runs on.
var confBroadcastShapes = [][2][]int{
	{{3, 4}, {3, 4}},             // same shape
	{{3, 4}, {1}},                // scalar-shaped right operand
	{{1}, {3, 4}},                // scalar-shaped left operand
	{{3, 4}, {4}},                // row vector [C] vs [N, C]
	{{4}, {3, 4}},                // row vector on the left
	{{3, 4}, {3, 1}},             // column [N, 1]
	{{2, 1, 5}, {1, 3, 1}},       // both operands broadcast
	{{3, 4, 5}, {5}},             // rank mismatch [C, H, W] vs [W]
	{{2, 3, 4, 5}, {1, 3, 1, 1}}, // per-channel NCHW
	{{0, 3}, {3}},                // empty dimension
	{{1, 1}, {1, 1}},             // single element
}

// refBroadcast applies f elementwise to a (shape as) and b (shape bs) with
// NumPy broadcasting and returns the result and its shape.
func refBroadcast(f func(a, b float64) float64, a []float64, as []int, b []float64, bs []int) ([]float64, []int) {
	rank := max(len(as), len(bs))
	pad := func(s []int) []int {
		p := make([]int, rank)
		for i := range p {
			p[i] = 1
		}
		copy(p[rank-len(s):], s)
		return p
	}
	pa, pb := pad(as), pad(bs)
	out := make([]int, rank)
	for d := range out {
		out[d] = max(pa[d], pb[d])
		if pa[d] == 0 || pb[d] == 0 {
			out[d] = 0
		}
	}
	sa, sb := refStrides(pa), refStrides(pb)
	res := make([]float64, refNumel(out))
	idx := make([]int, rank)
	for i := range res {
		refUnravel(i, out, idx)
		ia, ib := 0, 0
		for d := range idx {
			if pa[d] != 1 {
				ia += idx[d] * sa[d]
			}
			if pb[d] != 1 {
				ib += idx[d] * sb[d]
			}
		}
		res[i] = f(a[ia], b[ib])
	}
	return res, out
}

// confBinary runs every binary op on every broadcasting shape pair.
func confBinary(e confEnv) {
	for i, c := range confBinaryCases {
		e.run(c.name, func(e confEnv) {
			for j, sh := range confBroadcastShapes {
				e.run(confShapeName(sh[0], sh[1]), func(e confEnv) {
					seed := uint64(1000 + 100*i + 2*j)
					var av, bv []float64
					if c.ints {
						av = confInts(seed, refNumel(sh[0]), int(c.aLo), int(c.aHi))
						bv = confInts(seed+1, refNumel(sh[1]), int(c.bLo), int(c.bHi))
					} else {
						av = e.round(confUniform(seed, refNumel(sh[0]), c.aLo, c.aHi))
						bv = e.round(confUniform(seed+1, refNumel(sh[1]), c.bLo, c.bHi))
					}
					want, shape := refBroadcast(c.ref, av, sh[0], bv, sh[1])
					if c.boolOut && !e.dtypeSupported() {
						e.Skipf("SKIPPED: %v cannot hold the Bool result", e.dev)
					}
					got := c.op(e.arr(av, sh[0]...), e.arr(bv, sh[1]...))
					if c.boolOut {
						e.checkAs(got, nd.Bool, shape, want, c.tol)
					} else {
						e.check(got, shape, want, c.tol)
					}
				})
			}
		})
	}
	// Mixed signs through Div and Sub with b broadcast along the middle
	// axis catch kernels that mix up which operand is broadcast.
	e.run("SubOrder", func(e confEnv) {
		a, av := e.rand(7, -1, 1, 2, 3, 4)
		b, bv := e.rand(8, -1, 1, 2, 1, 4)
		want, shape := refBroadcast(func(x, y float64) float64 { return x - y }, bv, []int{2, 1, 4}, av, []int{2, 3, 4})
		e.check(nd.Sub(b, a), shape, want, confTolDefault)
	})
}
