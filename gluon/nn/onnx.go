package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// The layers' ONNX forms (gluon.ONNXExporter), in predict mode, for opset
// 17. Activations fused into a layer (Act) follow its node.

// onnxAct appends the activation called name on x ("" is none).
func onnxAct(g gluon.ONNXGraph, name, x string) (string, error) {
	one := func(op string, attrs map[string]any) string { return g.Op(op, []string{x}, attrs, 1)[0] }
	switch name {
	case "":
		return x, nil
	case "relu":
		return one("Relu", nil), nil
	case "sigmoid":
		return one("Sigmoid", nil), nil
	case "tanh":
		return one("Tanh", nil), nil
	case "softrelu":
		return one("Softplus", nil), nil
	case "silu", "swish":
		return g.Op("Mul", []string{x, one("Sigmoid", nil)}, nil, 1)[0], nil
	case "gelu":
		return onnxGELU(g, x), nil
	case "softsign":
		return one("Softsign", nil), nil
	case "selu":
		return one("Selu", map[string]any{"alpha": seluAlpha, "gamma": seluScale}), nil
	case "hardsigmoid":
		return one("HardSigmoid", map[string]any{"alpha": 1.0 / 6, "beta": 0.5}), nil
	case "hardswish":
		return one("HardSwish", nil), nil
	case "mish": // Mish is an op only from opset 18
		sp := one("Softplus", nil)
		return g.Op("Mul", []string{x, g.Op("Tanh", []string{sp}, nil, 1)[0]}, nil, 1)[0], nil
	case "relu6":
		return g.Op("Clip", []string{x, g.Const([]float32{0}), g.Const([]float32{6})}, nil, 1)[0], nil
	case "hardtanh":
		return g.Op("Clip", []string{x, g.Const([]float32{-1}), g.Const([]float32{1})}, nil, 1)[0], nil
	case "logsigmoid":
		sp := g.Op("Softplus", []string{one("Neg", nil)}, nil, 1)[0]
		return g.Op("Neg", []string{sp}, nil, 1)[0], nil
	case "tanhshrink":
		return g.Op("Sub", []string{x, one("Tanh", nil)}, nil, 1)[0], nil
	case "celu":
		return one("Celu", map[string]any{"alpha": 1.0}), nil
	}
	return "", fmt.Errorf("activation %q has no ONNX form", name)
}

// onnxGELU writes x·(1 + erf(x/√2))/2 (Gelu is an op only from opset 20).
func onnxGELU(g gluon.ONNXGraph, x string) string {
	s := g.Op("Div", []string{x, g.Const([]float32{float32(math.Sqrt2)})}, nil, 1)[0]
	e := g.Op("Erf", []string{s}, nil, 1)[0]
	p := g.Op("Add", []string{e, g.Const([]float32{1})}, nil, 1)[0]
	h := g.Op("Mul", []string{x, p}, nil, 1)[0]
	return g.Op("Mul", []string{h, g.Const([]float32{0.5})}, nil, 1)[0]
}

// ExportONNX writes Conv (and the fused activation).
func (c *Conv2D) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	o := c.opts
	in := []string{x, g.Param(c.Weight)}
	if c.Bias != nil {
		in = append(in, g.Param(c.Bias))
	}
	attrs := map[string]any{
		"kernel_shape": []int{o.Kernel[0], o.Kernel[1]},
		"strides":      []int{max(o.Stride[0], 1), max(o.Stride[1], 1)},
		"pads":         []int{o.Pad[0], o.Pad[1], o.Pad[0], o.Pad[1]},
		"dilations":    []int{max(o.Dilate[0], 1), max(o.Dilate[1], 1)},
		"group":        max(o.Groups, 1),
	}
	return onnxAct(g, o.Act, g.Op("Conv", in, attrs, 1)[0])
}

// ExportONNX writes Gemm on the flattened input (MatMul and Add on the
// last axis with NoFlatten), then the fused activation.
func (d *Dense) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	var y string
	if d.opts.NoFlatten {
		wt := g.Op("Transpose", []string{g.Param(d.Weight)}, map[string]any{"perm": []int{1, 0}}, 1)[0]
		y = g.Op("MatMul", []string{x, wt}, nil, 1)[0]
		if d.Bias != nil {
			y = g.Op("Add", []string{y, g.Param(d.Bias)}, nil, 1)[0]
		}
	} else {
		f := g.Op("Flatten", []string{x}, map[string]any{"axis": 1}, 1)[0]
		in := []string{f, g.Param(d.Weight)}
		if d.Bias != nil {
			in = append(in, g.Param(d.Bias))
		}
		y = g.Op("Gemm", in, map[string]any{"transB": 1}, 1)[0]
	}
	return onnxAct(g, d.opts.Act, y)
}

// onnxBatchNorm writes BatchNormalization with the running statistics;
// a missing scale or shift is a constant 1 or 0.
func onnxBatchNorm(g gluon.ONNXGraph, x string, axis int, eps float64, gamma, beta, mean, variance *gluon.Parameter) (string, error) {
	if axis != 1 {
		// BatchNormalization normalises axis 1: move the channel axis
		// there and back.
		shape, err := shapeOf(g, x, "BatchNorm on another axis than 1")
		if err != nil {
			return "", err
		}
		ax := axis
		if ax < 0 {
			ax += len(shape)
		}
		if ax < 0 || ax >= len(shape) || len(shape) < 2 {
			return "", fmt.Errorf("BatchNorm on axis %d of an input of shape %v", axis, shape)
		}
		if ax != 1 {
			perm := moveAxisPerm(len(shape), ax, 1)
			y := g.Op("Transpose", []string{x}, map[string]any{"perm": perm}, 1)[0]
			y, err := onnxBatchNorm(g, y, 1, eps, gamma, beta, mean, variance)
			if err != nil {
				return "", err
			}
			return g.Op("Transpose", []string{y}, map[string]any{"perm": inversePerm(perm)}, 1)[0], nil
		}
	}
	c := mean.Shape()[0]
	scale, shift := "", ""
	if gamma != nil {
		scale = g.Param(gamma)
	} else {
		scale = g.Const(filled(c, 1), c)
	}
	if beta != nil {
		shift = g.Param(beta)
	} else {
		shift = g.Const(filled(c, 0), c)
	}
	in := []string{x, scale, shift, g.Param(mean), g.Param(variance)}
	return g.Op("BatchNormalization", in, map[string]any{"epsilon": eps}, 1)[0], nil
}

// moveAxisPerm is the permutation of a rank-r array that moves axis from
// to position to, keeping the others in order.
func moveAxisPerm(r, from, to int) []int {
	var rest []int
	for i := range r {
		if i != from {
			rest = append(rest, i)
		}
	}
	perm := append(append(append([]int{}, rest[:to]...), from), rest[to:]...)
	return perm
}

// inversePerm undoes perm.
func inversePerm(perm []int) []int {
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	return inv
}

func filled(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// ExportONNX writes BatchNormalization (inference form).
func (b *BatchNorm) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return onnxBatchNorm(g, x, b.axis, b.epsilon, b.Gamma, b.Beta, b.RunningMean, b.RunningVar)
}

// ExportONNX writes the activation.
func (a *Activation) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return onnxAct(g, a.Name, x)
}

// ExportONNX writes Flatten(axis 1).
func (f *Flatten) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return g.Op("Flatten", []string{x}, map[string]any{"axis": 1}, 1)[0], nil
}

// ExportONNX writes nothing: dropout is the identity in predict mode.
func (d *Dropout) ExportONNX(_ gluon.ONNXGraph, x string) (string, error) { return x, nil }

// ExportONNX writes MaxPool or AveragePool (GlobalMaxPool or
// GlobalAveragePool for the global layers).
func (p *Pool2D) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	o := p.opts
	if o.Global {
		op := "GlobalMaxPool"
		if o.Type != nd.PoolMax {
			op = "GlobalAveragePool"
		}
		return g.Op(op, []string{x}, nil, 1)[0], nil
	}
	return exportPool(g, x, o.Type, o.Kernel[:], o.Stride[:], o.Pad[:], o.CeilMode, o.ExcludePad)
}

// exportPool writes MaxPool or AveragePool over the spatial axes (one per
// kernel entry; a zero stride is the kernel), PyTorch's ceil mode in
// ONNX's terms (ceilForm).
func exportPool(g gluon.ONNXGraph, x string, typ nd.PoolType, kernel, stride, pad []int, ceil, excludePad bool) (string, error) {
	n := len(kernel)
	stride = slices.Clone(stride)
	for i := range stride {
		if stride[i] == 0 {
			stride[i] = kernel[i]
		}
	}
	pads := append(slices.Clone(pad), pad...)
	attrs := map[string]any{"kernel_shape": slices.Clone(kernel), "strides": stride}
	avg, include := typ != nd.PoolMax, !excludePad
	if ceil {
		c, err := ceilForm(g, x, kernel, stride, pad, pads)
		if err != nil {
			return "", err
		}
		if slices.ContainsFunc(c.crop, func(v int) bool { return v != 0 }) {
			// Rows and columns only the dropped windows would read.
			starts, ends, axes := make([]int64, n), make([]int64, n), make([]int64, n)
			for i := range n {
				ends[i], axes[i] = int64(c.in[i]-c.crop[i]), int64(2+i)
			}
			x = g.Op("Slice", []string{x, g.Const(starts, n), g.Const(ends, n), g.Const(axes, n)}, nil, 1)[0]
		}
		if c.ceil && avg && include {
			return avgCeilIncludePad(g, x, kernel, stride, pads, c), nil
		}
		if c.ceil {
			attrs["ceil_mode"] = 1
		}
	}
	attrs["pads"] = pads
	op := "MaxPool"
	if avg {
		op = "AveragePool"
		if include {
			attrs["count_include_pad"] = 1
		}
	}
	return g.Op(op, []string{x}, attrs, 1)[0], nil
}

// avgCeilIncludePad writes an average pooling in ceil mode that counts
// the padding. PyTorch divides a partial window by its part inside the
// padded input; runtimes differ on what ONNX's count_include_pad means
// for it (ONNX Runtime divides by the whole kernel). So the form has no
// partial windows and no implicit padding: the input padded explicitly
// with zeros to cover every window whole, averaged over the whole kernel,
// then multiplied by a constant that turns each window's divisor into
// PyTorch's (a product of one count per axis).
func avgCeilIncludePad(g gluon.ONNXGraph, x string, kernel, stride, pads []int, c ceilShape) string {
	n := len(kernel)
	out := make([]int, n)
	padSpec := make([]int64, 2*(n+2))
	div := make([][]float64, n)
	size := 1
	for i := range n {
		in := c.in[i] - c.crop[i]
		out[i] = (in+pads[i]+pads[n+i]-kernel[i]+stride[i]-1)/stride[i] + 1
		padSpec[2+i] = int64(pads[i])
		padSpec[n+2+2+i] = int64((out[i]-1)*stride[i] + kernel[i] - in - pads[i])
		for j := range out[i] {
			start := j*stride[i] - pads[i]
			div[i] = append(div[i], float64(min(start+kernel[i], in+pads[n+i])-start))
		}
		size *= out[i]
	}
	x = g.Op("Pad", []string{x, g.Const(padSpec, len(padSpec))}, nil, 1)[0]
	y := g.Op("AveragePool", []string{x}, map[string]any{"kernel_shape": slices.Clone(kernel), "strides": slices.Clone(stride),
		"pads": make([]int, 2*n), "count_include_pad": 1}, 1)[0]
	whole := 1.0
	for _, k := range kernel {
		whole *= float64(k)
	}
	scale := make([]float32, size)
	for p := range scale {
		d, rest := 1.0, p
		for i := n - 1; i >= 0; i-- {
			d *= div[i][rest%out[i]]
			rest /= out[i]
		}
		scale[p] = float32(whole / d)
	}
	return g.Op("Mul", []string{y, g.Const(scale, append([]int{1, 1}, out...)...)}, nil, 1)[0]
}

// ceilShape is how a pooling in ceil mode is written in ONNX's terms.
type ceilShape struct {
	ceil bool  // write ceil_mode: some axis keeps a partial window
	crop []int // elements to cut from each spatial axis's end first
	in   []int // the input's spatial sizes
}

// ceilForm writes ceil mode in ONNX's terms. PyTorch's ceil mode (nd's)
// drops a last window that would start in the end padding; ONNX's
// formula before opset 19, ceil((in + pads − k)/s) + 1, keeps it. Where
// the two differ only by that dropped window, ceil mode gives floor's
// size, so on such an axis the end padding shrinks by the remainder that
// made ONNX round up (the windows and their divisors stay the same),
// cutting the input's last elements when the padding is too small to
// shrink (only the dropped window reads them); ceil mode is written only
// when some axis keeps a partial window. pads ([begins..., ends...]) is
// updated.
func ceilForm(g gluon.ONNXGraph, x string, kernel, stride, pad []int, pads []int) (ceilShape, error) {
	n := len(kernel)
	c := ceilShape{crop: make([]int, n)}
	sg, ok := g.(gluon.ONNXShapes)
	if !ok {
		return c, fmt.Errorf("pooling in ceil mode needs the input's size: the ONNX graph does not give shapes (gluon.ONNXShapes)")
	}
	shape, err := sg.Shape(x)
	if err != nil {
		return c, err
	}
	if len(shape) != n+2 {
		return c, fmt.Errorf("pooling input of shape %v: want [N, C] and %d spatial axes", shape, n)
	}
	c.in = slices.Clone(shape[2:])
	// Division rounds towards minus infinity: a window larger than the
	// padded input makes the span negative.
	fdiv := func(a, b int) int {
		q := a / b
		if a%b != 0 && a < 0 {
			q--
		}
		return q
	}
	floorOut := func(in, k, s, p int) int { return fdiv(in+2*p-k, s) + 1 }
	torchOut := func(in, k, s, p int) int {
		out := fdiv(in+2*p-k+s-1, s) + 1
		if out > 0 && (out-1)*s >= in+p {
			out--
		}
		return out
	}
	for i := range n {
		if torchOut(c.in[i], kernel[i], stride[i], pad[i]) > floorOut(c.in[i], kernel[i], stride[i], pad[i]) {
			c.ceil = true
		}
	}
	if !c.ceil {
		return c, nil
	}
	for i := range n {
		in, k, s, p := c.in[i], kernel[i], stride[i], pad[i]
		if torchOut(in, k, s, p) > floorOut(in, k, s, p) {
			continue
		}
		span := in + 2*p - k
		if span < 0 { // one window, larger than the padded input: ONNX agrees
			continue
		}
		r := span % s
		cut := min(r, pads[n+i])
		pads[n+i] -= cut
		c.crop[i] = r - cut
	}
	return c, nil
}

// ExportONNX writes GlobalAveragePool for a 1×1 output, AveragePool when
// the output size divides the input's (the windows are then equal and do
// not overlap), and otherwise PyTorch's windows (rows floor(i·H/h) to
// ceil((i+1)·H/h)) as constant gathers and weights, one axis at a time
// (the average is separable).
func (p *AdaptiveAvgPool2D) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	if p.H == 1 && p.W == 1 {
		return g.Op("GlobalAveragePool", []string{x}, nil, 1)[0], nil
	}
	shape, err := shapeOf(g, x, "AdaptiveAvgPool2D")
	if err != nil {
		return "", err
	}
	h, w := shape[len(shape)-2], shape[len(shape)-1]
	if h%p.H == 0 && w%p.W == 0 {
		k := []int{h / p.H, w / p.W}
		return g.Op("AveragePool", []string{x}, map[string]any{"kernel_shape": k, "strides": k}, 1)[0], nil
	}
	for axis, io := range [][2]int{{h, p.H}, {w, p.W}} {
		idx, wt := adaptiveTaps(io[0], io[1])
		x = gatherTaps(g, x, axis, idx, wt)
	}
	return x, nil
}

// adaptiveTaps are the taps of adaptive average pooling from in to out
// positions: window i covers floor(i·in/out) to ceil((i+1)·in/out), each
// element weighted by one over the window's length.
func adaptiveTaps(in, out int) ([][]int64, [][]float64) {
	lo, hi := make([]int, out), make([]int, out)
	most := 0
	for i := range out {
		lo[i], hi[i] = i*in/out, ((i+1)*in+out-1)/out
		most = max(most, hi[i]-lo[i])
	}
	idx, w := make([][]int64, most), make([][]float64, most)
	for k := range most {
		idx[k], w[k] = make([]int64, out), make([]float64, out)
		for i := range out {
			idx[k][i] = int64(min(lo[i]+k, hi[i]-1))
			if lo[i]+k < hi[i] {
				w[k][i] = 1 / float64(hi[i]-lo[i])
			}
		}
	}
	return idx, w
}

// ExportONNX writes the children in order.
func (s *Sequential) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	for _, c := range s.Children() {
		var err error
		if x, err = g.Block(c, x); err != nil {
			return "", err
		}
	}
	return x, nil
}

// ExportONNX writes every branch and a Concat along Axis.
func (c *Concurrent) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	outs := make([]string, len(c.Children()))
	for i, b := range c.Children() {
		var err error
		if outs[i], err = g.Block(b, x); err != nil {
			return "", err
		}
	}
	return g.Op("Concat", outs, map[string]any{"axis": c.Axis}, 1)[0], nil
}

// ExportONNX writes LeakyRelu.
func (l *LeakyReLU) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return g.Op("LeakyRelu", []string{x}, map[string]any{"alpha": l.Alpha}, 1)[0], nil
}

// ExportONNX writes Elu.
func (e *ELU) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return g.Op("Elu", []string{x}, map[string]any{"alpha": e.Alpha}, 1)[0], nil
}

// ExportONNX writes x·σ(x).
func (s *SiLU) ExportONNX(g gluon.ONNXGraph, x string) (string, error) { return onnxAct(g, "silu", x) }

// ExportONNX writes the exact GELU, or PyTorch's tanh approximation
// x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))/2.
func (l *GELU) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	if !l.TanhApprox {
		return onnxGELU(g, x), nil
	}
	mul := func(a, b string) string { return g.Op("Mul", []string{a, b}, nil, 1)[0] }
	c := func(v float64) string { return g.Const([]float32{float32(v)}) }
	x3 := mul(mul(x, x), x)
	inner := g.Op("Add", []string{x, mul(x3, c(0.044715))}, nil, 1)[0]
	t := g.Op("Tanh", []string{mul(inner, c(math.Sqrt(2/math.Pi)))}, nil, 1)[0]
	return mul(mul(x, g.Op("Add", []string{t, c(1)}, nil, 1)[0]), c(0.5)), nil
}

// ExportONNX writes Gather of the weight's rows at the (integer) input.
func (e *Embedding) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return g.Op("Gather", []string{g.Param(e.Weight), x}, map[string]any{"axis": 0}, 1)[0], nil
}
