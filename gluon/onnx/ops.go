package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
)

// node is a node being run: its proto, attributes and the context.
type node struct {
	n     *onnxpb.NodeProto
	a     attrs
	dev   ctx.Context
	opset int // the model's default-domain opset
}

func (n *node) fail(format string, args ...any) {
	nd.Panicf("onnx."+n.n.GetOpType(), nd.ErrArgument, "node %q: %s", n.n.GetName(), fmt.Sprintf(format, args...))
}

// opFunc computes a node's outputs from its inputs (nil for an omitted
// optional input).
type opFunc func(n *node, in []*nd.NDArray) []*nd.NDArray

var ops map[string]opFunc

func init() {
	ops = map[string]opFunc{
		"Identity": func(_ *node, in []*nd.NDArray) []*nd.NDArray { return in[:1] },
		"Dropout":  opDropout,
		"Relu":     unary(nd.Relu),
		"Sigmoid":  unary(nd.Sigmoid),
		"Tanh":     unary(nd.Tanh),
		"Erf":      unary(nd.Erf),
		"Sqrt":     unary(nd.Sqrt),
		"Exp":      unary(nd.Exp),
		"Log":      unary(nd.Log),
		"Neg":      unary(nd.Neg),
		"Abs":      unary(nd.Abs),
		"Floor":    unary(nd.Floor),
		"Ceil":     unary(nd.Ceil),
		"Round":    unary(nd.Round),
		"Sign":     unary(nd.Sign),
		"Mod": func(n *node, in []*nd.NDArray) []*nd.NDArray {
			a, b := match(in[0], in[1])
			if n.a.int("fmod", 0) != 0 {
				return []*nd.NDArray{nd.Fmod(a, b)}
			}
			return []*nd.NDArray{nd.Mod(a, b)}
		},
		"Softplus": unary(nd.Softrelu),
		"LeakyRelu": func(n *node, in []*nd.NDArray) []*nd.NDArray {
			return []*nd.NDArray{nd.LeakyReLU(in[0], n.a.float("alpha", 0.01))}
		},
		"Elu": func(n *node, in []*nd.NDArray) []*nd.NDArray {
			return []*nd.NDArray{nd.ELU(in[0], n.a.float("alpha", 1))}
		},
		"Gelu": func(n *node, in []*nd.NDArray) []*nd.NDArray {
			return []*nd.NDArray{nd.GELU(in[0], n.a.str("approximate", "none") == "tanh")}
		},
		"Add":                binop(nd.Add),
		"Sub":                binop(nd.Sub),
		"Mul":                binop(nd.Mul),
		"Div":                binop(nd.Div),
		"Pow":                opPow,
		"Equal":              binop(nd.Equal),
		"Clip":               opClip,
		"Conv":               opConv,
		"ConvTranspose":      opConvTranspose,
		"MaxPool":            opPool(nd.PoolMax),
		"AveragePool":        opPool(nd.PoolAvg),
		"GlobalAveragePool":  globalPool(nd.GlobalAvgPool2D, nd.MeanKeepDims),
		"GlobalMaxPool":      globalPool(nd.GlobalMaxPool2D, nd.MaxKeepDims),
		"Resize":             opResize,
		"BatchNormalization": opBatchNorm,
		"LayerNormalization": opLayerNorm,
		"Gemm":               opGemm,
		"MatMul":             opMatMul,
		"Where": func(_ *node, in []*nd.NDArray) []*nd.NDArray {
			return []*nd.NDArray{nd.Where(in[0], in[1], in[2])}
		},
		"Cast": opCast,
	}
	for _, table := range []map[string]opFunc{shapeOps, mathOps, moreOps, scatterOps, miscOps, linalgOps, fourierOps} {
		for k, v := range table {
			if _, dup := ops[k]; dup {
				panic("onnx: op " + k + " registered twice")
			}
			ops[k] = v
		}
	}
}

// globalPool pools every spatial axis: with the 2-D op on [N, C, H, W],
// with the reduction on other ranks (1-D and 3-D inputs).
func globalPool(f2 func(*nd.NDArray) *nd.NDArray, reduce func(*nd.NDArray, ...int) *nd.NDArray) opFunc {
	return func(n *node, in []*nd.NDArray) []*nd.NDArray {
		x := in[0]
		if x.NDim() == 4 {
			return []*nd.NDArray{f2(x)}
		}
		if x.NDim() < 3 {
			n.fail("input of shape %v: want [N, C, spatial...]", x.Shape())
		}
		axes := make([]int, 0, x.NDim()-2)
		for i := 2; i < x.NDim(); i++ {
			axes = append(axes, i)
		}
		return []*nd.NDArray{reduce(x, axes...)}
	}
}

func unary(f func(*nd.NDArray) *nd.NDArray) opFunc {
	return func(_ *node, in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{f(in[0])} }
}

// binop applies f with NumPy broadcasting, bringing a constant operand
// to the other's context and a 0-d or integer scalar to its dtype.
func binop(f func(a, b *nd.NDArray) *nd.NDArray) opFunc {
	return func(n *node, in []*nd.NDArray) []*nd.NDArray {
		a, b := match(in[0], in[1])
		return []*nd.NDArray{f(a, b)}
	}
}

// match brings b to a's context and dtype (or a to b's, when a is the
// constant), so that binary ops mix a graph's constants with its data.
func match(a, b *nd.NDArray) (*nd.NDArray, *nd.NDArray) {
	if b.Context() != a.Context() {
		b = b.CopyTo(a.Context())
	}
	if a.DType() != b.DType() {
		if b.Size() <= a.Size() {
			b = b.AsType(a.DType())
		} else {
			a = a.AsType(b.DType())
		}
	}
	return a, b
}

// scalarOf reads a one-element array.
func scalarOf(a *nd.NDArray) float64 { return a.Float64s()[0] }

// opPow computes in the base's floating-point type (float64 for an
// integer base, cast back) with the exponent converted to it.
func opPow(n *node, in []*nd.NDArray) []*nd.NDArray {
	x, dt := in[0], in[0].DType()
	if !dt.IsFloat() {
		x = x.AsType(nd.Float64)
	}
	var y *nd.NDArray
	if in[1].Size() == 1 && in[1].NDim() <= x.NDim() {
		y = nd.PowScalar(x, scalarOf(in[1]))
	} else {
		e := in[1]
		if e.Context() != x.Context() {
			e = e.CopyTo(x.Context())
		}
		y = nd.Pow(x, e.AsType(x.DType()))
	}
	if y.DType() != dt {
		y = y.AsType(dt)
	}
	return []*nd.NDArray{y}
}

// opDropout is Dropout in inference (training_mode false): the input, and
// a mask of ones.
func opDropout(n *node, in []*nd.NDArray) []*nd.NDArray {
	if len(in) > 2 && in[2] != nil && scalarOf(in[2]) != 0 {
		n.fail("training_mode true: dropout in training mode is not supported")
	}
	out := []*nd.NDArray{in[0]}
	if len(n.n.GetOutput()) > 1 {
		out = append(out, nd.Ones(in[0].Context(), nd.Bool, in[0].Shape()...))
	}
	return out
}

func opClip(n *node, in []*nd.NDArray) []*nd.NDArray {
	lo, hi := n.a.float("min", math.Inf(-1)), n.a.float("max", math.Inf(1))
	if len(in) > 1 && in[1] != nil {
		lo = scalarOf(in[1])
	}
	if len(in) > 2 && in[2] != nil {
		hi = scalarOf(in[2])
	}
	return []*nd.NDArray{nd.Clip(in[0], lo, hi)}
}

// spatial returns a 2-D view of a 1-D op's input (N, C, L) → (N, C, 1, L),
// and a function that undoes it on the output.
func spatial(n *node, x *nd.NDArray) (*nd.NDArray, func(*nd.NDArray) *nd.NDArray) {
	switch x.NDim() {
	case 4:
		return x, func(y *nd.NDArray) *nd.NDArray { return y }
	case 3:
		s := x.Shape()
		return nd.Reshape(x, s[0], s[1], 1, s[2]), func(y *nd.NDArray) *nd.NDArray {
			ys := y.Shape()
			return nd.Reshape(y, ys[0], ys[1], ys[3])
		}
	}
	n.fail("input of shape %v: only 1-D and 2-D ops are supported", x.Shape())
	return nil, nil
}

// geom2D reads a 1-D or 2-D op's kernel, strides, dilations and padding
// (pads, or auto_pad computed from the input's spatial size hw) as 2-D
// values: [top, left] and [bottom, right] padding.
func geom2D(n *node, hw [2]int, kernel []int) (k, stride, dil, lo, hi [2]int) {
	two := func(v []int, def int) [2]int {
		switch len(v) {
		case 0:
			return [2]int{def, def}
		case 1:
			return [2]int{1, v[0]}
		}
		return [2]int{v[0], v[1]}
	}
	k = two(kernel, 1)
	if len(kernel) == 1 {
		k[0] = 1
	}
	stride, dil = two(n.a.ints("strides"), 1), two(n.a.ints("dilations"), 1)
	if len(n.a.ints("strides")) == 1 {
		stride[0] = 1
	}
	if len(n.a.ints("dilations")) == 1 {
		dil[0] = 1
	}
	switch p := n.a.ints("pads"); len(p) {
	case 0:
	case 2:
		lo, hi = [2]int{0, p[0]}, [2]int{0, p[1]}
	case 4:
		lo, hi = [2]int{p[0], p[1]}, [2]int{p[2], p[3]}
	default:
		n.fail("pads %v: only 1-D and 2-D ops are supported", p)
	}
	for i := range 2 {
		if stride[i] < 1 || dil[i] < 1 || k[i] < 1 || lo[i] < 0 || hi[i] < 0 {
			n.fail("kernel %v, strides %v, dilations %v, pads %v %v: want positive kernels, strides and dilations and no negative pads", k, stride, dil, lo, hi)
		}
	}
	if ap := n.a.str("auto_pad", "NOTSET"); ap == "SAME_UPPER" || ap == "SAME_LOWER" {
		for i := range 2 {
			out := (hw[i] + stride[i] - 1) / stride[i]
			total := max((out-1)*stride[i]+(k[i]-1)*dil[i]+1-hw[i], 0)
			small, big := total/2, total-total/2
			if ap == "SAME_UPPER" {
				lo[i], hi[i] = small, big
			} else {
				lo[i], hi[i] = big, small
			}
		}
	}
	return
}

// padFor splits padding into what an nd op takes (symmetric, at most
// limit per side; -1 for no limit) and what must be padded explicitly
// first with value.
func padFor(x *nd.NDArray, lo, hi [2]int, limit [2]int, value float64) (*nd.NDArray, [2]int) {
	sym := true
	for i := range 2 {
		sym = sym && lo[i] == hi[i] && (limit[i] < 0 || lo[i] <= limit[i])
	}
	if sym {
		return x, lo
	}
	return nd.Pad(x, [][2]int{{0, 0}, {0, 0}, {lo[0], hi[0]}, {lo[1], hi[1]}}, nd.PadConstant, value), [2]int{}
}

func opConv(n *node, in []*nd.NDArray) []*nd.NDArray {
	if in[0].NDim() == 5 {
		return opConv3D(n, in)
	}
	x, back := spatial(n, in[0])
	w, _ := spatial(n, in[1])
	var b *nd.NDArray
	if len(in) > 2 {
		b = in[2]
	}
	s := x.Shape()
	ws := w.Shape()
	k, stride, dil, lo, hi := geom2D(n, [2]int{s[2], s[3]}, []int{ws[2], ws[3]})
	_ = k
	x, pad := padFor(x, lo, hi, [2]int{-1, -1}, 0)
	return []*nd.NDArray{back(nd.Conv2D(x, w, b, nd.ConvOpts{Stride: stride, Pad: pad, Dilate: dil, Groups: n.a.int("group", 1)}))}
}

// opConvTranspose is ConvTranspose (1-D or 2-D): the output is computed
// with the symmetric part of the padding and cropped by the rest;
// output_shape, when given, sets the padding (ONNX's rule, SAME_UPPER
// putting the extra row at the end).
func opConvTranspose(n *node, in []*nd.NDArray) []*nd.NDArray {
	if in[0].NDim() == 5 {
		return opConvTranspose3D(n, in)
	}
	x, back := spatial(n, in[0])
	w, _ := spatial(n, in[1])
	var b *nd.NDArray
	if len(in) > 2 {
		b = in[2]
	}
	s, ws := x.Shape(), w.Shape()
	k, stride, dil, lo, hi := geom2D(n, [2]int{s[2], s[3]}, []int{ws[2], ws[3]})
	outPad := [2]int{}
	if op := n.a.ints("output_padding"); len(op) > 0 {
		outPad = [2]int{0, op[len(op)-1]}
		if len(op) == 2 {
			outPad[0] = op[0]
		}
	}
	os := n.a.ints("output_shape")
	if ap := n.a.str("auto_pad", "NOTSET"); len(os) == 0 && (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
		os = []int{s[2] * stride[0], s[3] * stride[1]} // SAME: input size × stride
		lo, hi = [2]int{}, [2]int{}
	}
	if len(os) > 0 {
		want := [2]int{1, os[len(os)-1]}
		if len(os) == 2 {
			want[0] = os[0]
		}
		for i := range 2 {
			total := stride[i]*(s[2+i]-1) + outPad[i] + (k[i]-1)*dil[i] + 1 - want[i]
			if total < 0 { // a larger output: the extra rows at the end
				outPad[i] -= total
				total = 0
			}
			if n.a.str("auto_pad", "NOTSET") == "SAME_UPPER" {
				lo[i], hi[i] = total/2, total-total/2
			} else {
				lo[i], hi[i] = total-total/2, total/2
			}
		}
	}
	pad := [2]int{min(lo[0], hi[0]), min(lo[1], hi[1])}
	y := nd.Conv2DTranspose(x, w, b, nd.ConvTransposeOpts{Stride: stride, Pad: pad, OutputPad: outPad, Dilate: dil, Groups: n.a.int("group", 1)})
	for i := range 2 {
		if extraLo, extraHi := lo[i]-pad[i], hi[i]-pad[i]; extraLo > 0 || extraHi > 0 {
			size := y.Shape()[2+i]
			y = nd.SliceAxis(y, extraLo, size-extraHi, 2+i)
		}
	}
	return []*nd.NDArray{back(y)}
}

func opPool(t nd.PoolType) opFunc {
	return func(n *node, in []*nd.NDArray) []*nd.NDArray {
		if in[0].NDim() == 5 {
			return opPool3D(n, t, in)
		}
		x, back := spatial(n, in[0])
		dt := x.DType()
		if !dt.IsFloat() {
			x = x.AsType(nd.Float32)
		}
		s := x.Shape()
		k, stride, dil, lo, hi := geom2D(n, [2]int{s[2], s[3]}, n.a.ints("kernel_shape"))
		if dil != [2]int{1, 1} {
			if t != nd.PoolMax || n.a.int("ceil_mode", 0) != 0 {
				n.fail("dilations %v: only max pooling without ceil mode is dilated", dil)
			}
			return []*nd.NDArray{back(dilatedMax(x, k, stride, dil, lo, hi)).AsType(dt)}
		}
		for i := range 2 {
			if lo[i] >= k[i] || hi[i] >= k[i] {
				n.fail("pads %v %v for kernel %v: a pad as large as the kernel makes windows of padding only", lo, hi, k)
			}
		}
		include := n.a.int("count_include_pad", 0) != 0
		value := 0.0
		if t == nd.PoolMax {
			value = math.Inf(-1)
		}
		limit := [2]int{k[0] / 2, k[1] / 2}
		x2, pad := padFor(x, lo, hi, limit, value)
		o := nd.PoolOpts{Type: t, Kernel: k, Stride: stride, Pad: pad, CeilMode: n.a.int("ceil_mode", 0) != 0, ExcludePad: !include}
		y := nd.Pool2D(x2, o)
		if x2 != x && t == nd.PoolAvg && !include {
			// Padded explicitly, the windows count the padding: divide by
			// the share of each window that lies inside the input.
			o.ExcludePad = false
			inside, _ := padFor(nd.Ones(x.Context(), x.DType(), x.Shape()...), lo, hi, limit, 0)
			y = nd.Div(nd.Pool2D(x2, o), nd.Pool2D(inside, o))
		}
		if n.a.int("ceil_mode", 0) != 0 {
			y = ceilCrop(y, 2, []int{s[2], s[3]}, k[:], stride[:], lo[:], hi[:])
		}
		if y.DType() != dt {
			y = y.AsType(dt)
		}
		return []*nd.NDArray{back(y)}
	}
}

// dilatedMax is max pooling with dilated windows: the maximum, over the
// kernel's positions, of the input padded with −inf and sampled at the
// stride from each position's offset.
func dilatedMax(x *nd.NDArray, k, stride, dil, lo, hi [2]int) *nd.NDArray {
	xp := nd.Pad(x, [][2]int{{}, {}, {lo[0], hi[0]}, {lo[1], hi[1]}}, nd.PadConstant, math.Inf(-1))
	s := xp.Shape()
	var out [2]int
	for i := range 2 {
		out[i] = (s[2+i]-dil[i]*(k[i]-1)-1)/stride[i] + 1
	}
	var y *nd.NDArray
	for a := range k[0] {
		for b := range k[1] {
			r0, c0 := a*dil[0], b*dil[1]
			v := nd.Slice(xp, nd.All(), nd.All(), nd.SpanStep(r0, r0+(out[0]-1)*stride[0]+1, stride[0]), nd.SpanStep(c0, c0+(out[1]-1)*stride[1]+1, stride[1]))
			if y == nil {
				y = v
			} else {
				y = nd.Maximum(y, v)
			}
		}
	}
	return y
}

// ceilCrop drops, from a pooling in ceil mode computed on an input padded
// explicitly, the windows that start in the original right padding
// (which ONNX ignores), on the spatial axes from axis first on.
func ceilCrop(y *nd.NDArray, first int, in, k, stride, lo, hi []int) *nd.NDArray {
	for i := range in {
		out := (in[i]+lo[i]+hi[i]-k[i]+stride[i]-1)/stride[i] + 1
		if (out-1)*stride[i] >= in[i]+lo[i] {
			out--
		}
		if ax := first + i; out >= 1 && out < y.Shape()[ax] {
			y = nd.SliceAxis(y, 0, out, ax)
		}
	}
	return y
}

// opBatchNorm is BatchNormalization in its inference form:
// (x − mean)/√(var + ε)·scale + bias per channel (axis 1).
func opBatchNorm(n *node, in []*nd.NDArray) []*nd.NDArray {
	x, scale, bias, mean, vr := in[0], in[1], in[2], in[3], in[4]
	// Opset 15 allows float32 weights and statistics for half data:
	// compute in the widest of the types and give the data's.
	width := func(dt nd.DType) int {
		switch {
		case dt == nd.Float64:
			return 3
		case dt.IsHalf():
			return 1
		}
		return 2
	}
	ct := x.DType()
	for _, a := range in[1:5] {
		if width(a.DType()) > width(ct) {
			ct = a.DType()
		}
	}
	if ct != x.DType() {
		in32 := make([]*nd.NDArray, 5)
		for i, a := range in[:5] {
			in32[i] = a.AsType(ct)
		}
		return []*nd.NDArray{opBatchNorm(n, in32)[0].AsType(x.DType())}
	}
	for _, a := range []**nd.NDArray{&scale, &bias, &mean, &vr} {
		if (*a).DType() != ct {
			*a = (*a).AsType(ct)
		}
	}
	shape := make([]int, x.NDim())
	for i := range shape {
		shape[i] = 1
	}
	shape[1] = x.Shape()[1]
	r := func(a *nd.NDArray) *nd.NDArray { return nd.Reshape(a, shape...) }
	inv := nd.Rsqrt(nd.AddScalar(vr, n.a.float("epsilon", 1e-5)))
	y := nd.Mul(nd.Sub(x, r(mean)), r(nd.Mul(inv, scale)))
	return []*nd.NDArray{nd.Add(y, r(bias))}
}

// opLayerNorm normalises over the axes from axis to the last, and also
// returns the mean and the inverse standard deviation (outputs 1 and 2).
func opLayerNorm(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	axis := normAxis(n.a.int("axis", -1), x.NDim())
	var axes []int
	for i := axis; i < x.NDim(); i++ {
		axes = append(axes, i)
	}
	mean := nd.MeanKeepDims(x, axes...)
	d := nd.Sub(x, mean)
	inv := nd.Rsqrt(nd.AddScalar(nd.MeanKeepDims(nd.Square(d), axes...), n.a.float("epsilon", 1e-5)))
	y := nd.Mul(nd.Mul(d, inv), in[1])
	if len(in) > 2 && in[2] != nil {
		y = nd.Add(y, in[2])
	}
	return []*nd.NDArray{y, mean, inv}
}

func opGemm(n *node, in []*nd.NDArray) []*nd.NDArray {
	y := nd.Dot(in[0], in[1], n.a.int("transA", 0) != 0, n.a.int("transB", 0) != 0)
	if alpha := n.a.float("alpha", 1); alpha != 1 {
		y = nd.MulScalar(y, alpha)
	}
	if len(in) > 2 && in[2] != nil {
		c := in[2]
		if beta := n.a.float("beta", 1); beta != 1 {
			c = nd.MulScalar(c, beta)
		}
		y = nd.Add(y, c)
	}
	return []*nd.NDArray{y}
}

// opMatMul is NumPy's matmul, which nd.MatMul follows (1-D operands,
// broadcast batch axes).
func opMatMul(_ *node, in []*nd.NDArray) []*nd.NDArray {
	return []*nd.NDArray{nd.MatMul(in[0], in[1])}
}

func opCast(n *node, in []*nd.NDArray) []*nd.NDArray {
	dt, err := dtypeOf(int64(n.a.int("to", 1)))
	if err != nil {
		n.fail("%v", err)
	}
	return []*nd.NDArray{in[0].AsType(dt)}
}

// minInputs is the number of leading inputs an op requires (in every
// opset Load accepts); a node that omits one fails at load.
var minInputs = map[string]int{
	"Add": 2, "Sub": 2, "Mul": 2, "Div": 2, "Pow": 2, "Mod": 2, "Equal": 2, "Less": 2, "LessOrEqual": 2,
	"Greater": 2, "GreaterOrEqual": 2, "And": 2, "Or": 2, "Xor": 2, "MatMul": 2, "Gemm": 2, "PRelu": 2,
	"Where": 3, "Conv": 2, "ConvTranspose": 2, "BatchNormalization": 5, "LayerNormalization": 2,
	"InstanceNormalization": 3, "Reshape": 2, "Expand": 2, "Tile": 2, "CumSum": 2, "Range": 3, "OneHot": 3,
	"GatherElements": 2, "Gather": 2, "CastLike": 2, "NegativeLogLikelihoodLoss": 2, "SoftmaxCrossEntropyLoss": 2,
	"RNN": 3, "GRU": 3, "LSTM": 3, "Max": 1, "Min": 1, "Sum": 1, "Mean": 1,
	"GatherND": 2, "ScatterND": 3, "ScatterElements": 3, "Scatter": 3,
	"Compress": 2, "ReverseSequence": 2, "GridSample": 2, "DFT": 1, "STFT": 2, "MelWeightMatrix": 5,
}

// checkAttrs rejects at load the attribute values the ops do not support,
// and nodes without an input their op requires, in a model of the given
// default-domain opset.
func checkAttrs(n *onnxpb.NodeProto, opset int) error {
	a := attrsOf(n)
	if k := minInputs[n.GetOpType()]; k > 0 {
		in := n.GetInput()
		if len(in) < k || slices.Contains(in[:k], "") {
			return fmt.Errorf("node %q (%s) has inputs %q: the op needs at least %d", n.GetName(), n.GetOpType(), in, k)
		}
	}
	switch n.GetOpType() {
	case "Conv", "ConvTranspose", "MaxPool", "AveragePool":
		if k := a.ints("kernel_shape"); len(k) > 3 {
			return fmt.Errorf("node %q (%s): kernel_shape %v: only 1-D, 2-D and 3-D are supported", n.GetName(), n.GetOpType(), k)
		}
		if len(n.GetOutput()) > 1 {
			return fmt.Errorf("node %q (%s): the Indices output is not supported", n.GetName(), n.GetOpType())
		}
	case "Pad":
		if m := a.str("mode", "constant"); m != "constant" && m != "reflect" && m != "edge" {
			return fmt.Errorf("node %q: Pad mode %q is not supported (constant, reflect and edge are)", n.GetName(), m)
		}
	case "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss":
		if r := a.str("reduction", "mean"); r != "none" && r != "sum" && r != "mean" {
			return fmt.Errorf("node %q: reduction %q is not supported (none, sum and mean are)", n.GetName(), r)
		}
	case "RNN", "GRU", "LSTM":
		return checkRecurrent(n, a)
	case "DFT", "STFT", "MelWeightMatrix":
		return checkFourier(n, a, opset)
	case "DepthToSpace":
		if m := a.str("mode", "DCR"); m != "DCR" && m != "CRD" {
			return fmt.Errorf("node %q: DepthToSpace mode %q is not one of DCR and CRD", n.GetName(), m)
		}
	case "BatchNormalization":
		if a.int("training_mode", 0) != 0 {
			return fmt.Errorf("node %q: BatchNormalization in training mode is not supported", n.GetName())
		}
	}
	return nil
}
