package ndtest

// The cases for the ops of nd/binary.go: the broadcasting arithmetic
// (Add, Sub, Mul, Div, Pow, Maximum, Minimum) and the comparisons. The
// logical ops and integer operands are in the dtypes family (dtype.go).

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

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

// refMod is a − b·⌊a/b⌋ with the divisor's sign (Python's %).
func refMod(a, b float64) float64 {
	r := math.Mod(a, b)
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
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
	// Python's //, % and C's fmod, with positive and negative divisors.
	{name: "FloorDiv", op: nd.FloorDiv, ref: func(a, b float64) float64 { return math.Floor(a / b) }, aLo: -5, aHi: 5, bLo: 0.5, bHi: 3, tol: confTolExact},
	{name: "FloorDivNeg", op: nd.FloorDiv, ref: func(a, b float64) float64 { return math.Floor(a / b) }, aLo: -5, aHi: 5, bLo: -3, bHi: -0.5, tol: confTolExact},
	{name: "Mod", op: nd.Mod, ref: refMod, aLo: -5, aHi: 5, bLo: 0.5, bHi: 3, tol: confTolDefault},
	{name: "ModNeg", op: nd.Mod, ref: refMod, aLo: -5, aHi: 5, bLo: -3, bHi: -0.5, tol: confTolDefault},
	{name: "Fmod", op: nd.Fmod, ref: math.Mod, aLo: -5, aHi: 5, bLo: -3, bHi: 3, tol: confTolDefault},
	{name: "Atan2", op: nd.Atan2, ref: math.Atan2, aLo: -3, aHi: 3, bLo: -3, bHi: 3, tol: confTolDefault},
	{name: "Hypot", op: nd.Hypot, ref: math.Hypot, aLo: -3, aHi: 3, bLo: -3, bHi: 3, tol: confTolDefault},
	{name: "Maximum", op: nd.Maximum, ref: math.Max, ints: true, aLo: -2, aHi: 2, bLo: -2, bHi: 2, tol: confTolExact},
	{name: "Minimum", op: nd.Minimum, ref: math.Min, ints: true, aLo: -2, aHi: 2, bLo: -2, bHi: 2, tol: confTolExact},
	{name: "Equal", op: nd.Equal, ref: func(a, b float64) float64 { return refBool(a == b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
	{name: "NotEqual", op: nd.NotEqual, ref: func(a, b float64) float64 { return refBool(a != b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
	{name: "Greater", op: nd.Greater, ref: func(a, b float64) float64 { return refBool(a > b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
	{name: "GreaterEqual", op: nd.GreaterEqual, ref: func(a, b float64) float64 { return refBool(a >= b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
	{name: "Less", op: nd.Less, ref: func(a, b float64) float64 { return refBool(a < b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
	{name: "LessEqual", op: nd.LessEqual, ref: func(a, b float64) float64 { return refBool(a <= b) }, ints: true, aLo: -1, aHi: 1, bLo: -1, bHi: 1, tol: confTolExact, boolOut: true},
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

// gradBinaryShapes are the broadcasting cases every binary op is checked on.
var gradBinaryShapes = []struct {
	name string
	a, b []int
}{
	{"same-shape", []int{3, 4}, []int{3, 4}},
	{"row-broadcast", []int{3, 4}, []int{4}},
	{"row-broadcast-first", []int{4}, []int{3, 4}},
	{"col-broadcast", []int{3, 4}, []int{3, 1}},
	{"outer-broadcast", []int{2, 1, 4}, []int{1, 3, 1}},
	{"scalar", []int{3, 4}, []int{1}},
	{"scalar-first", []int{1}, []int{3, 4}},
	{"rank-mismatch", []int{2, 3, 4}, []int{4}},
}

// gradBinaryCases checks Add, Sub, Mul, Div, Pow, Maximum and Minimum on
// every broadcasting case with both inputs differentiated, with only one
// of them differentiated, and with one array used as both inputs.
func gradBinaryCases(dev ctx.Context) []gradCase {
	type domain func(seed uint64, shape ...int) *nd.NDArray
	sgn := func(seed uint64, shape ...int) *nd.NDArray { return gradSigned(dev, seed, shape...) }
	pos := func(seed uint64, shape ...int) *nd.NDArray { return gradPositive(dev, seed, shape...) }
	nz := func(seed uint64, shape ...int) *nd.NDArray { return gradNonzero(dev, seed, shape...) }
	expo := func(seed uint64, shape ...int) *nd.NDArray { return Rand(dev, seed, -1.5, 1.5, shape...) }
	ops := []struct {
		name string
		f    func(a, b *nd.NDArray) *nd.NDArray
		a, b domain
		self domain // the domain of x in f(x, x)
	}{
		{"Add", nd.Add, sgn, sgn, sgn},
		{"Sub", nd.Sub, sgn, sgn, sgn},
		{"Mul", nd.Mul, sgn, sgn, sgn},
		{"Div", nd.Div, sgn, nz, nz},
		{"Pow", nd.Pow, pos, expo, pos},
		// Continuous random inputs: a and b tie (within the difference
		// step) with negligible probability.
		{"Maximum", nd.Maximum, sgn, sgn, sgn},
		{"Minimum", nd.Minimum, sgn, sgn, sgn},
		// The remainders jump where a/b crosses an integer; random inputs
		// land there (within the difference step) with negligible
		// probability.
		{"Mod", nd.Mod, sgn, nz, nz},
		{"Fmod", nd.Fmod, sgn, nz, nz},
		// Away from the origin, where both gradients are 0/0.
		{"Atan2", nd.Atan2, sgn, nz, nz},
		{"Hypot", nd.Hypot, sgn, nz, nz},
	}
	var cases []gradCase
	for _, op := range ops {
		f := func(in []*nd.NDArray) *nd.NDArray { return op.f(in[0], in[1]) }
		for _, s := range gradBinaryShapes {
			cases = append(cases, gradCase{
				op: op.name, name: s.name, f: f,
				in: func() []*nd.NDArray { return gradIn(op.a(1, s.a...), op.b(2, s.b...)) },
			})
		}
		for i, which := range []string{"a", "b"} {
			cases = append(cases, gradCase{
				op: op.name, name: "row-broadcast/only-" + which, f: f,
				in:     func() []*nd.NDArray { return gradIn(op.a(3, 3, 4), op.b(4, 4)) },
				noGrad: []int{1 - i},
			})
		}
		cases = append(cases, gradCase{
			op: op.name, name: "same-array",
			f:  func(in []*nd.NDArray) *nd.NDArray { return op.f(in[0], in[0]) },
			in: func() []*nd.NDArray { return gradIn(op.self(5, 3, 4)) },
		})
	}
	return cases
}
