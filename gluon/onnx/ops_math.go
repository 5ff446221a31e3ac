package onnx

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// mathOps are the elementwise activations, comparisons, variadic and
// reduction ops beyond the core table in ops.go.
var mathOps = map[string]opFunc{
	"Reciprocal": unary(nd.Reciprocal),
	"Sin":        unary(nd.Sin),
	"Cos":        unary(nd.Cos),
	"Tan":        unary(nd.Tan),
	"Asin":       unary(nd.Asin),
	"Acos":       unary(nd.Acos),
	"Atan":       unary(nd.Atan),
	"Sinh":       unary(nd.Sinh),
	"Cosh":       unary(nd.Cosh),
	"Asinh":      unary(nd.Asinh),
	"Acosh":      unary(nd.Acosh),
	"Atanh":      unary(nd.Atanh),
	"Softsign": unary(func(x *nd.NDArray) *nd.NDArray {
		return nd.Div(x, nd.AddScalar(nd.Abs(x), 1))
	}),
	"Mish": unary(func(x *nd.NDArray) *nd.NDArray { return nd.Mul(x, nd.Tanh(nd.Softrelu(x))) }),
	"Selu": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		alpha := n.a.float("alpha", 1.67326319217681884765625)
		gamma := n.a.float("gamma", 1.05070102214813232421875)
		return []*nd.NDArray{nd.MulScalar(nd.ELU(in[0], alpha), gamma)}
	},
	"Celu": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		alpha := n.a.float("alpha", 1)
		return []*nd.NDArray{nd.MulScalar(nd.ELU(nd.DivScalar(in[0], alpha), 1), alpha)}
	},
	"HardSigmoid": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{hardSigmoid(in[0], n.a.float("alpha", 0.2), n.a.float("beta", 0.5))}
	},
	"HardSwish": unary(func(x *nd.NDArray) *nd.NDArray { return nd.Mul(x, hardSigmoid(x, 1.0/6, 0.5)) }),
	"ThresholdedRelu": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		x := in[0]
		keep := nd.Greater(x, scalarLike(x, n.a.float("alpha", 1)))
		return []*nd.NDArray{nd.MaskedFill(x, nd.LogicalNot(keep), 0)}
	},
	"Shrink": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		x := in[0]
		bias, lambd := n.a.float("bias", 0), n.a.float("lambd", 0.5)
		s := func(v float64) *nd.NDArray { return scalarLike(x, v) }
		lo, hi := nd.Less(x, s(-lambd)), nd.Greater(x, s(lambd))
		y := nd.Where(lo, nd.Add(x, s(bias)), nd.ZerosLike(x))
		return []*nd.NDArray{nd.Where(hi, nd.Sub(x, s(bias)), y)}
	},
	"PRelu": func(_ *node, in []*nd.NDArray) []*nd.NDArray {
		x, slope := match(in[0], in[1])
		if s := x.Shape(); slope.NDim() == 1 && len(s) > 2 && slope.Size() == s[1] && slope.Size() != s[len(s)-1] && slope.Size() != 1 {
			// Older exporters (PyTorch's PReLU(num_parameters=C)) give a
			// per-channel slope of shape [C] instead of [C, 1, ...].
			slope = nd.Reshape(slope, append([]int{s[1]}, make1s(len(s)-2)...)...)
		}
		neg := nd.Less(x, scalarLike(x, 0))
		return []*nd.NDArray{nd.Where(neg, nd.Mul(x, slope), x)}
	},
	"IsNaN": unary(func(x *nd.NDArray) *nd.NDArray { return nd.NotEqual(x, x) }),
	"IsInf": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		x := in[0]
		pos := nd.Equal(x, scalarLike(x, math.Inf(1)))
		neg := nd.Equal(x, scalarLike(x, math.Inf(-1)))
		p, q := n.a.int("detect_positive", 1) != 0, n.a.int("detect_negative", 1) != 0
		switch {
		case p && q:
			return []*nd.NDArray{nd.LogicalOr(pos, neg)}
		case p:
			return []*nd.NDArray{pos}
		case q:
			return []*nd.NDArray{neg}
		}
		return []*nd.NDArray{nd.LogicalAnd(pos, neg)} // all false
	},

	"Less":           binop(nd.Less),
	"LessOrEqual":    binop(nd.LessEqual),
	"Greater":        binop(nd.Greater),
	"GreaterOrEqual": binop(nd.GreaterEqual),
	"And":            binop(nd.LogicalAnd),
	"Or":             binop(nd.LogicalOr),
	"Xor":            binop(nd.LogicalXor),
	"Not":            unary(nd.LogicalNot),

	"Max":  variadic(nd.Maximum),
	"Min":  variadic(nd.Minimum),
	"Sum":  variadic(nd.Add),
	"Mean": opMean,

	"ReduceMean": floatReduce(opReduce(nd.Mean, nd.MeanKeepDims)),
	"ReduceSum":  opReduce(nd.Sum, nd.SumKeepDims),
	"ReduceMax":  opReduce(nd.Max, nd.MaxKeepDims),
	"ReduceMin":  opReduce(nd.Min, nd.MinKeepDims),
	"ReduceSumSquare": opReduce(
		func(x *nd.NDArray, ax ...int) *nd.NDArray { return nd.Sum(nd.Square(x), ax...) },
		func(x *nd.NDArray, ax ...int) *nd.NDArray { return nd.SumKeepDims(nd.Square(x), ax...) }),
	"ReduceL1": opReduce(
		func(x *nd.NDArray, ax ...int) *nd.NDArray { return nd.Sum(nd.Abs(x), ax...) },
		func(x *nd.NDArray, ax ...int) *nd.NDArray { return nd.SumKeepDims(nd.Abs(x), ax...) }),
	"ReduceL2": floatReduce(opReduce(
		func(x *nd.NDArray, ax ...int) *nd.NDArray { return nd.Norm(x, 2, ax...) },
		func(x *nd.NDArray, ax ...int) *nd.NDArray { return nd.NormKeepDims(x, 2, ax...) })),
	"ReduceLogSum": floatReduce(opReduce(
		func(x *nd.NDArray, ax ...int) *nd.NDArray { return nd.Log(nd.Sum(x, ax...)) },
		func(x *nd.NDArray, ax ...int) *nd.NDArray { return nd.Log(nd.SumKeepDims(x, ax...)) })),
	"ReduceLogSumExp": floatReduce(opReduce(nd.LogSumExp, nd.LogSumExpKeepDims)),
	"ReduceProd": opReduce(
		func(x *nd.NDArray, ax ...int) *nd.NDArray { return nd.Squeeze(prodKeepDims(x, ax...), ax...) },
		prodKeepDims),

	"ArgMax": opArg(nd.ArgMax),
	"ArgMin": opArg(nd.ArgMin),

	"Softmax":    opAlongAxis(nd.Softmax),
	"LogSoftmax": opAlongAxis(nd.LogSoftmax),
	"Hardmax": opAlongAxis(func(x *nd.NDArray, axis int) *nd.NDArray {
		return moveLastAxis(nd.OneHotAs(nd.ArgMax(x, axis), x.Shape()[axis], 1, 0, x.DType()), axis)
	}),
	"CumSum": opCumSum,
}

// scalarLike is a 0-d array of x's dtype on x's context: it broadcasts to
// any shape without adding an axis (nd.Scalar has shape [1], which would
// turn a 0-d input into [1]).
func scalarLike(x *nd.NDArray, v float64) *nd.NDArray {
	return nd.Reshape(nd.Scalar(x.Context(), x.DType(), v))
}

// axis checks an axis against rank (ONNX accepts [−rank, rank)) and
// returns it counted from the start.
func (n *node) axis(a, rank int) int {
	if a < -rank || a >= rank {
		n.fail("axis %d is out of range for rank %d", a, rank)
	}
	if a < 0 {
		a += rank
	}
	return a
}

// scalarInput reads a one-element input (k, an axis, a depth).
func (n *node) scalarInput(in []*nd.NDArray, i int, what string) *nd.NDArray {
	if i >= len(in) || in[i] == nil || in[i].Size() != 1 {
		n.fail("%s (input %d) must hold one value", what, i)
	}
	return in[i]
}

// make1s returns n ones.
func make1s(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// hardSigmoid is max(0, min(1, alpha·x + beta)).
func hardSigmoid(x *nd.NDArray, alpha, beta float64) *nd.NDArray {
	return nd.Clip(nd.AddScalar(nd.MulScalar(x, alpha), beta), 0, 1)
}

// variadic folds f (a broadcasting binary op) over one or more inputs.
func variadic(f func(a, b *nd.NDArray) *nd.NDArray) opFunc {
	return func(n *node, in []*nd.NDArray) []*nd.NDArray {
		if len(in) == 0 {
			n.fail("needs at least one input")
		}
		y := in[0]
		for _, b := range in[1:] {
			y = f(match(y, b))
		}
		return []*nd.NDArray{y}
	}
}

func opMean(n *node, in []*nd.NDArray) []*nd.NDArray {
	y := variadic(nd.Add)(n, in)[0]
	return []*nd.NDArray{nd.DivScalar(y, float64(len(in)))}
}

// opReduce makes a Reduce* op from its nd reduction (f removes the axes,
// keep keeps them as size 1). The axes come from the attribute, or from
// the second input (ReduceSum from opset 13, the others from 18); no axes
// reduce over all of them unless noop_with_empty_axes is set. The result
// has the input's dtype.
func opReduce(f, keep func(x *nd.NDArray, axes ...int) *nd.NDArray) opFunc {
	return func(n *node, in []*nd.NDArray) []*nd.NDArray {
		x := in[0]
		axes := n.a.ints("axes")
		if len(in) > 1 && in[1] != nil {
			axes = intsOf(in[1])
		}
		if len(axes) == 0 {
			if n.a.int("noop_with_empty_axes", 0) != 0 {
				return in[:1]
			}
			for i := range x.NDim() {
				axes = append(axes, i)
			}
		}
		for i, a := range axes {
			axes[i] = n.axis(a, x.NDim())
		}
		var y *nd.NDArray
		if n.a.int("keepdims", 1) != 0 {
			y = keep(x, axes...)
		} else {
			y = f(x, axes...)
		}
		if y.DType() != x.DType() {
			y = y.AsType(x.DType())
		}
		return []*nd.NDArray{y}
	}
}

// prodKeepDims multiplies the elements along each of axes, keeping them
// with size 1: halves multiplied pairwise until one is left (log2 of the
// size in Muls), so the gradient is exact, zeros included, and integers
// stay exact. An empty axis gives 1.
func prodKeepDims(x *nd.NDArray, axes ...int) *nd.NDArray {
	for _, a := range axes {
		n := x.Shape()[a]
		if n == 0 {
			shape := x.Shape()
			shape[a] = 1
			x = nd.Full(x.Context(), x.DType(), 1, shape...)
			continue
		}
		for n > 1 {
			h := n / 2
			y := nd.Mul(nd.SliceAxis(x, 0, h, a), nd.SliceAxis(x, h, 2*h, a))
			if n%2 == 1 {
				y = nd.Concat([]*nd.NDArray{y, nd.SliceAxis(x, 2*h, n, a)}, a)
			}
			x, n = y, (n+1)/2
		}
	}
	return x
}

// floatReduce runs a reduction that needs floating point (a mean, a norm,
// a logarithm) on an integer input in float64, cast back to the input's
// type (ONNX allows integer inputs to every Reduce op).
func floatReduce(f opFunc) opFunc {
	return func(n *node, in []*nd.NDArray) []*nd.NDArray {
		x := in[0]
		if x.DType().IsFloat() {
			return f(n, in)
		}
		in2 := append([]*nd.NDArray{x.AsType(nd.Float64)}, in[1:]...)
		return []*nd.NDArray{f(n, in2)[0].AsType(x.DType())}
	}
}

// opArg makes ArgMax and ArgMin (axis, keepdims, select_last_index).
func opArg(f func(x *nd.NDArray, axis int) *nd.NDArray) opFunc {
	return func(n *node, in []*nd.NDArray) []*nd.NDArray {
		x := in[0]
		axis := n.axis(n.a.int("axis", 0), x.NDim())
		var y *nd.NDArray
		if n.a.int("select_last_index", 0) != 0 {
			// The first extreme of the reversed axis is the last one.
			y = nd.RSubScalar(float64(x.Shape()[axis]-1), f(nd.Flip(x, axis), axis))
		} else {
			y = f(x, axis)
		}
		if n.a.int("keepdims", 1) != 0 {
			y = nd.ExpandDims(y, axis)
		}
		return []*nd.NDArray{y}
	}
}

// opAlongAxis makes Softmax, LogSoftmax and Hardmax: from opset 13 along
// one axis (default −1); before, over the input flattened to 2-D at axis
// (default 1).
func opAlongAxis(f func(x *nd.NDArray, axis int) *nd.NDArray) opFunc {
	return func(n *node, in []*nd.NDArray) []*nd.NDArray {
		x := in[0]
		if n.opset >= 13 || n.opset == 0 {
			return []*nd.NDArray{f(x, n.axis(n.a.int("axis", -1), x.NDim()))}
		}
		s := x.Shape()
		ax := n.axis(n.a.int("axis", 1), len(s))
		outer, inner := 1, 1
		for _, d := range s[:ax] {
			outer *= d
		}
		for _, d := range s[ax:] {
			inner *= d
		}
		y := f(nd.Reshape(x, outer, inner), 1)
		return []*nd.NDArray{nd.Reshape(y, s...)}
	}
}

// moveLastAxis moves y's last axis to position axis.
func moveLastAxis(y *nd.NDArray, axis int) *nd.NDArray {
	r := y.NDim()
	if axis == r-1 {
		return y
	}
	perm := make([]int, 0, r)
	for i := range r - 1 {
		if i == axis {
			perm = append(perm, r-1)
		}
		perm = append(perm, i)
	}
	return nd.Transpose(y, perm...)
}

// opCumSum is the running sum along the axis given as the second input,
// exclusive (each position without its own element) and reversed as the
// attributes say, in the input's dtype.
func opCumSum(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	axis := n.axis(intsOf(n.scalarInput(in, 1, "axis"))[0], x.NDim())
	rev := n.a.int("reverse", 0) != 0
	if rev {
		x = nd.Flip(x, axis)
	}
	y := nd.Cumsum(x, axis)
	if y.DType() != x.DType() {
		y = y.AsType(x.DType())
	}
	if n.a.int("exclusive", 0) != 0 {
		// Shift by one along the axis: a zero first, the last sum dropped.
		w := make([][2]int, x.NDim())
		w[axis] = [2]int{1, 0}
		y = nd.SliceAxis(nd.Pad(y, w, nd.PadConstant, 0), 0, x.Shape()[axis], axis)
	}
	if rev {
		y = nd.Flip(y, axis)
	}
	return []*nd.NDArray{y}
}
