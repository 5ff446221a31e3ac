//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// unaryScalars are (p1, p2) pairs for the unary ops on integers: whole
// numbers, and the truncation, saturation and NaN rules of the scalars'
// conversion.
var unaryScalars = [][2]float64{{3, 7}, {-2, 5}, {0, 0}, {2.9, -2.9}, {300, -300},
	{1 << 62, -(1 << 62)}, {1e30, -1e30}, {math.NaN(), 1}}

// TestDTypeUnary runs every integer unary op on Int32, Int64, Uint8 (and
// LogicalNot on Bool), in place and out of place, and the float ops added
// with the integer dtypes on Float32 and Float64.
func TestDTypeUnary(t *testing.T) {
	r := newRig(t)
	for _, dt := range []backend.DType{backend.Int32, backend.Int64, backend.Uint8, backend.Bool} {
		x := r.from(dt, randomValues(dt, 200, 3))
		ops := backend.IntUnaryOps
		if dt == backend.Bool {
			ops = []backend.UnaryOp{backend.LogicalNot}
		}
		for _, op := range ops {
			for _, p := range unaryScalars {
				dst := r.alloc(dt, x.n)
				dc, dg := dst.args(0, nil)
				xc, xg := x.args(0, nil)
				r.cpu.Unary(op, dc, xc, x.n, p[0], p[1])
				r.gpu.Unary(op, dg, xg, x.n, p[0], p[1])
				r.same(fmt.Sprintf("Unary %d on %v with %v", op, dt, p), dst)
			}
		}
		// In place, at an offset.
		y := r.from(dt, randomValues(dt, 50, 4))
		yc, yg := y.args(5, nil)
		r.cpu.Unary(backend.LogicalNot, yc, yc, 40, 0, 0)
		r.gpu.Unary(backend.LogicalNot, yg, yg, 40, 0, 0)
		r.same(fmt.Sprintf("LogicalNot in place on %v", dt), y)
	}
	floatOps := []struct {
		op  backend.UnaryOp
		tol float64 // 0: exact
	}{
		{backend.LogicalNot, 0}, {backend.Reciprocal, 0}, {backend.Step, 0}, {backend.Neg, 0},
		{backend.Abs, 0}, {backend.Sign, 0}, {backend.Square, 0}, {backend.AddScalar, 0},
		{backend.Clip, 0}, {backend.Erf, 1e-14}, {backend.Log1p, 1e-14}, {backend.Expm1, 1e-14},
		{backend.Sin, 1e-14}, {backend.Cos, 1e-14},
	}
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		vals := randomValues(dt, 300, 5)
		if v, ok := vals.([]float64); ok { // keep sin and cos in the range where libraries agree
			for i := range v {
				if math.Abs(v[i]) > 1e6 {
					v[i] = math.Mod(v[i], 1000)
				}
			}
		}
		x := r.from(dt, vals)
		for _, c := range floatOps {
			dst := r.alloc(dt, x.n)
			dc, dg := dst.args(0, nil)
			xc, xg := x.args(0, nil)
			r.cpu.Unary(c.op, dc, xc, x.n, -1.5, 2.5)
			r.gpu.Unary(c.op, dg, xg, x.n, -1.5, 2.5)
			tol := c.tol
			if tol > 0 && dt == backend.Float32 {
				tol = 1.2e-7 // one float32 rounding apart
			}
			r.close(fmt.Sprintf("Unary %d on %v", c.op, dt), dst, tol)
		}
	}
}

// binaryLayout is an iteration space and the strides of the two inputs.
type binaryLayout struct {
	name   string
	shape  []int
	as, bs []int // nil: contiguous
	alen   int
	blen   int
}

var binaryLayouts = []binaryLayout{
	{"flat", []int{257}, nil, nil, 257, 257},
	{"broadcast", []int{3, 4, 5}, []int{5, 0, 1}, []int{0, 5, 1}, 15, 20},
	{"scalar", []int{6, 7}, nil, []int{0, 0}, 42, 1},
	{"transposed", []int{8, 9}, []int{1, 8}, nil, 72, 72},
	{"nine-dims", []int{2, 2, 2, 2, 2, 2, 2, 2, 3}, []int{1, 2, 4, 8, 16, 32, 64, 128, 256}, nil, 768, 768},
}

// TestDTypeBinary runs the binary ops of every dtype over contiguous,
// broadcast, transposed and many-dimensional layouts: arithmetic on the
// integer types (wrap-around, Div truncating and x/0 = 0, MinInt64/-1),
// comparisons into the inputs' dtype and into Bool for every input dtype,
// and the logical ops.
func TestDTypeBinary(t *testing.T) {
	r := newRig(t)
	comparisons := []backend.BinaryOp{backend.Equal, backend.NotEqual, backend.Greater,
		backend.GreaterEqual, backend.Less, backend.LessEqual}
	logical := []backend.BinaryOp{backend.LogicalAnd, backend.LogicalOr, backend.LogicalXor}
	for _, dt := range backend.DTypes {
		var ops []backend.BinaryOp
		switch {
		case dt == backend.Bool:
			ops = append(slices.Clone(comparisons), logical...)
		case dt.IsInt():
			ops = backend.IntBinaryOps
		default:
			ops = append([]backend.BinaryOp{backend.Add, backend.Sub, backend.Mul, backend.Div,
				backend.Maximum, backend.Minimum}, append(slices.Clone(comparisons), logical...)...)
		}
		for li, l := range binaryLayouts {
			a := r.from(dt, randomValues(dt, l.alen, uint64(10*li+1)))
			b := r.from(dt, randomValues(dt, l.blen, uint64(10*li+2)))
			n := 1
			for _, s := range l.shape {
				n *= s
			}
			for _, op := range ops {
				outs := []backend.DType{dt}
				if (op.IsComparison() || op.IsLogical()) && dt != backend.Bool {
					outs = append(outs, backend.Bool)
				}
				for _, odt := range outs {
					dst := r.alloc(odt, n)
					dc, dg := dst.args(0, nil)
					ac, ag := a.args(0, l.as)
					bc, bg := b.args(0, l.bs)
					r.cpu.Binary(op, l.shape, dc, ac, bc)
					r.gpu.Binary(op, l.shape, dg, ag, bg)
					name := fmt.Sprintf("Binary %d on %v into %v, %s", op, dt, odt, l.name)
					if dt.IsFloat() && (op == backend.Maximum || op == backend.Minimum) {
						// The float kernels' max and min may return +0
						// where Go's return -0 (and the reverse): the
						// float results are kept as they were, so the
						// sign of a zero is not compared here.
						r.close(name, dst, math.SmallestNonzeroFloat64)
						continue
					}
					r.same(name, dst)
				}
			}
		}
	}
	// Integer edge cases, elementwise: Min / -1, x / 0, overflow.
	edges := map[backend.DType][2]any{
		backend.Int64: {
			[]int64{math.MinInt64, math.MinInt64, 7, -7, 7, -7, math.MaxInt64, 5, 0, math.MinInt64, math.MaxInt64},
			[]int64{-1, 1, 0, 2, -2, -2, 2, math.MinInt64, 0, math.MinInt64, math.MaxInt64},
		},
		backend.Int32: {
			[]int32{math.MinInt32, math.MinInt32, 7, -7, 7, -7, math.MaxInt32, 5, 0, math.MinInt32, math.MaxInt32},
			[]int32{-1, 1, 0, 2, -2, -2, 2, math.MinInt32, 0, math.MinInt32, math.MaxInt32},
		},
		backend.Uint8: {
			[]uint8{0, 255, 7, 250, 7, 128, 255, 5, 0, 200, 16},
			[]uint8{255, 1, 0, 2, 254, 3, 2, 200, 0, 100, 16},
		},
	}
	for dt, e := range edges {
		a, b := r.from(dt, e[0]), r.from(dt, e[1])
		for _, op := range []backend.BinaryOp{backend.Add, backend.Sub, backend.Mul, backend.Div} {
			dst := r.alloc(dt, a.n)
			dc, dg := dst.args(0, nil)
			ac, ag := a.args(0, nil)
			bc, bg := b.args(0, nil)
			r.cpu.Binary(op, []int{a.n}, dc, ac, bc)
			r.gpu.Binary(op, []int{a.n}, dg, ag, bg)
			r.same(fmt.Sprintf("Binary %d on %v edge cases", op, dt), dst)
		}
	}
}

// reduceCase is a source shape and the axes reduced.
type reduceCase struct {
	shape []int
	axes  []int
}

func (c reduceCase) mask() []bool {
	m := make([]bool, len(c.shape))
	for _, a := range c.axes {
		m[a] = true
	}
	return m
}

func (c reduceCase) outLen() int {
	n := 1
	for i, s := range c.shape {
		if !slices.Contains(c.axes, i) {
			n *= s
		}
	}
	return n
}

// TestDTypeReduce reduces every dtype with Sum, Max, Min, ArgMax and
// ArgMin over shapes that take each kernel path (one thread per output,
// one block per output, several blocks and a second pass), with many ties
// and, for floats, NaN, infinities and rows of -Inf, +Inf or NaN only.
// ArgMax and ArgMin write into Int64, Int32, Float32 and Uint8. Float sums
// are compared to a tolerance (the GPU adds in another order), everything
// else exactly.
func TestDTypeReduce(t *testing.T) {
	r := newRig(t)
	cases := []reduceCase{
		{[]int{6, 7}, []int{1}},
		{[]int{6, 7}, []int{0}},
		{[]int{3, 4, 5}, []int{0, 2}},
		{[]int{40, 40, 40}, []int{1}},    // a block per output
		{[]int{3, 20000}, []int{1}},      // several blocks per output
		{[]int{20000, 3}, []int{0}},      // several blocks, strided
		{[]int{100000}, []int{0}},        // one output, many blocks
		{[]int{5000, 2}, []int{1}},       // a thread per output
		{[]int{2, 3, 2, 3}, []int{1, 3}}, // alternating axes
	}
	for _, dt := range backend.DTypes {
		for ci, c := range cases {
			n := 1
			for _, s := range c.shape {
				n *= s
			}
			vals := reduceValues(dt, n, c.shape, uint64(ci))
			src := r.from(dt, vals)
			// Float sums of huge values cancel, differently in another
			// order: they get a source of moderate values (NaN and
			// infinities kept).
			sumSrc := src
			if dt.IsFloat() {
				sumSrc = r.from(dt, moderate(vals))
			}
			for _, op := range []backend.ReduceOp{backend.Sum, backend.Max, backend.Min, backend.ArgMax, backend.ArgMin} {
				outs := []backend.DType{dt}
				if op == backend.ArgMax || op == backend.ArgMin {
					if len(c.axes) != 1 {
						continue
					}
					outs = []backend.DType{backend.Int64, backend.Int32, backend.Float32, backend.Uint8}
				}
				for _, odt := range outs {
					dst := r.alloc(odt, c.outLen())
					dc, dg := dst.args(0, nil)
					sc, sg := src.args(0, nil)
					if op == backend.Sum {
						sc, sg = sumSrc.args(0, nil)
					}
					r.cpu.Reduce(op, c.shape, c.mask(), dc, sc)
					r.gpu.Reduce(op, c.shape, c.mask(), dg, sg)
					name := fmt.Sprintf("Reduce %d of %v %v over %v into %v", op, dt, c.shape, c.axes, odt)
					if op == backend.Sum && dt.IsFloat() {
						tol := 1e-12
						if dt == backend.Float32 {
							tol = 1e-5
						}
						r.close(name, dst, tol)
					} else {
						r.same(name, dst)
					}
				}
			}
		}
	}
}

// reduceValues returns n source values of dt for a reduction of shape:
// small numbers with many ties, the integer types' extremes (sums wrap),
// and for floats NaN, infinities and, when the shape is [6, 7], rows made
// of -Inf, +Inf, NaN and mixes.
func reduceValues(dt backend.DType, n int, shape []int, seed uint64) any {
	vals := randomValues(dt, n, seed+100)
	if !dt.IsFloat() {
		return vals
	}
	f := make([]float64, n)
	for i := range f {
		switch v := vals.(type) {
		case []float32:
			f[i] = float64(v[i])
		case []float64:
			f[i] = v[i]
		}
		if math.IsNaN(f[i]) && i%5 != 0 { // keep NaN rare enough to leave NaN-free outputs
			f[i] = float64(i % 4)
		}
	}
	if slices.Equal(shape, []int{6, 7}) {
		inf, nan := math.Inf(1), math.NaN()
		copy(f[7:14], []float64{-inf, -inf, -inf, -inf, -inf, -inf, -inf})
		copy(f[14:21], []float64{inf, inf, inf, inf, inf, inf, inf})
		copy(f[21:28], []float64{nan, nan, nan, nan, nan, nan, nan})
		copy(f[28:35], []float64{1, inf, nan, -inf, nan, inf, 2})
		copy(f[35:42], []float64{3, 3, -1, 3, -1, 0, -1})
	}
	if dt == backend.Float32 {
		out := make([]float32, n)
		for i, v := range f {
			out[i] = float32(v)
		}
		return out
	}
	return f
}

// moderate replaces the finite float values of magnitude over 1000 in vals
// by their remainder modulo 100 (plus a fraction).
func moderate(vals any) any {
	f := func(v float64) float64 {
		if math.Abs(v) > 1000 && !math.IsInf(v, 0) {
			return math.Mod(v, 100) + 0.375
		}
		return v
	}
	switch v := vals.(type) {
	case []float32:
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(f(float64(x)))
		}
		return out
	case []float64:
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = f(x)
		}
		return out
	}
	return vals
}

// TestDTypePickOneHot runs Pick, PickBackward and OneHot with indices of
// every dtype (out of range, negative, fractional and NaN among them) and
// OneHot into every dtype with on/off values that need conversion.
func TestDTypePickOneHot(t *testing.T) {
	r := newRig(t)
	idxVals := []float64{0, 1, 2, 3, -1, 9, 2.7, -0.5, 255, math.NaN(), 1, 4}
	outer, n, inner := 3, 5, 4
	for _, idt := range backend.DTypes {
		idx := r.from(idt, idxVals)
		ic, ig := idx.args(0, nil)
		for _, fdt := range []backend.DType{backend.Float32, backend.Float64} {
			x := r.from(fdt, randomValues(fdt, outer*n*inner, 9))
			xc, xg := x.args(0, nil)
			dst := r.alloc(fdt, outer*inner)
			dc, dg := dst.args(0, nil)
			r.cpu.Pick(outer, n, inner, dc, xc, ic)
			r.gpu.Pick(outer, n, inner, dg, xg, ig)
			r.same(fmt.Sprintf("Pick %v with %v indices", fdt, idt), dst)

			dx := r.alloc(fdt, outer*n*inner)
			dxc, dxg := dx.args(0, nil)
			r.cpu.Fill(dxc, dx.n, 0)
			r.gpu.Fill(dxg, dx.n, 0)
			r.cpu.PickBackward(outer, n, inner, dxc, dc, ic)
			r.gpu.PickBackward(outer, n, inner, dxg, dg, ig)
			r.same(fmt.Sprintf("PickBackward %v with %v indices", fdt, idt), dx)
		}
		for _, odt := range backend.DTypes {
			for _, onOff := range [][2]float64{{1, 0}, {2.7, -1.5}, {300, -5}, {math.NaN(), 0}, {-1e20, 1e20}} {
				depth := 6
				dst := r.alloc(odt, len(idxVals)*depth)
				dc, dg := dst.args(0, nil)
				r.cpu.OneHot(len(idxVals), depth, dc, ic, onOff[0], onOff[1])
				r.gpu.OneHot(len(idxVals), depth, dg, ig, onOff[0], onOff[1])
				r.same(fmt.Sprintf("OneHot into %v with %v indices, on/off %v", odt, idt, onOff), dst)
			}
		}
	}
}
