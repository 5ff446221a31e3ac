package onnx

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// moreOps are padding, triangular masks, the losses torch.onnx exports,
// indexing and rearranging ops beyond the core table in ops.go.
var moreOps = map[string]opFunc{
	"Pad":   opPad,
	"Trilu": opTrilu,
	"NegativeLogLikelihoodLoss": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{nllLoss(n, in[0], in[1], optional(in, 2))}
	},
	"SoftmaxCrossEntropyLoss": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		logp := nd.LogSoftmax(in[0], 1)
		loss := nllLoss(n, logp, in[1], optional(in, 2))
		if len(n.n.GetOutput()) > 1 {
			return []*nd.NDArray{loss, logp}
		}
		return []*nd.NDArray{loss}
	},
	"OneHot": opOneHot,
	"TopK": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		x := in[0]
		axis := n.axis(n.a.int("axis", -1), x.NDim())
		k := n.a.int("k", 0) // before opset 10, an attribute
		if n.opset == 0 || n.opset >= 10 {
			k = intsOf(n.scalarInput(in, 1, "K"))[0]
		}
		if k < 0 || k > x.Shape()[axis] {
			n.fail("k %d outside [0, %d]", k, x.Shape()[axis])
		}
		v, i := nd.TopK(x, k, axis, n.a.int("largest", 1) != 0)
		return []*nd.NDArray{v, i}
	},
	"Range": opRange,
	"Tile": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		reps := intsOf(in[1])
		if len(reps) != in[0].NDim() {
			n.fail("%d repeats for an input of rank %d", len(reps), in[0].NDim())
		}
		return []*nd.NDArray{nd.Tile(in[0], reps...)}
	},
	"CastLike": func(_ *node, in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{in[0].AsType(in[1].DType())}
	},
	"Size": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{nd.Reshape(nd.Scalar(n.dev, nd.Int64, float64(in[0].Size())))}
	},
	"GatherElements": opGatherElements,
	"InstanceNormalization": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		if len(in) < 3 || in[1] == nil || in[2] == nil {
			n.fail("InstanceNormalization needs input, scale and B")
		}
		x, gamma, beta := in[0], in[1], in[2]
		if x.NDim() < 3 {
			n.fail("input of rank %d: InstanceNormalization needs [N, C, D1, ...]", x.NDim())
		}
		return []*nd.NDArray{nd.InstanceNorm(x, gamma, beta, n.a.float("epsilon", 1e-5))}
	},
	"Einsum": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{nd.Einsum(n.a.str("equation", ""), in...)}
	},
	"DepthToSpace": opDepthToSpace,
	"RNN":          opRecurrent,
	"GRU":          opRecurrent,
	"LSTM":         opRecurrent,
	"SpaceToDepth": opSpaceToDepth,
}

// optional returns input i, or nil when the node omits it.
func optional(in []*nd.NDArray, i int) *nd.NDArray {
	if i < len(in) {
		return in[i]
	}
	return nil
}

// wrapIndices maps ONNX's negative indices (counting from the end of an
// axis of size n) to positions.
func wrapIndices(idx *nd.NDArray, n int) *nd.NDArray {
	neg := nd.Less(idx, scalarLike(idx, 0))
	return nd.Where(neg, nd.AddScalar(idx, float64(n)), idx)
}

// checkIndices fails unless every index lies in [−size, size) (what, for
// the message): ONNX calls others an error, where nd would clip them.
func (n *node) checkIndices(idx *nd.NDArray, size int, what string) {
	for _, v := range idx.Int64s() {
		if v < int64(-size) || v >= int64(size) {
			n.fail("%s %d is out of range for an axis of %d", what, v, size)
		}
	}
}

// opGatherElements picks along axis at each index (torch.gather); the
// indices may be shorter than the data on the other axes.
func opGatherElements(n *node, in []*nd.NDArray) []*nd.NDArray {
	x, idx := in[0], in[1]
	if x.NDim() == 0 || idx.NDim() != x.NDim() {
		n.fail("data of rank %d and indices of rank %d: want equal ranks of at least 1", x.NDim(), idx.NDim())
	}
	axis := n.axis(n.a.int("axis", 0), x.NDim())
	n.checkIndices(idx, x.Shape()[axis], "index")
	ranges := make([]nd.Range, x.NDim())
	cut := false
	for d := range x.NDim() {
		ranges[d] = nd.All()
		if d == axis {
			continue
		}
		if idx.Shape()[d] > x.Shape()[d] {
			n.fail("indices %v longer than the data %v on axis %d", idx.Shape(), x.Shape(), d)
		}
		if idx.Shape()[d] < x.Shape()[d] {
			ranges[d], cut = nd.Span(0, idx.Shape()[d]), true
		}
	}
	if cut {
		x = nd.Slice(x, ranges...)
	}
	return []*nd.NDArray{nd.Gather(x, wrapIndices(idx, x.Shape()[axis]), axis)}
}

// opRange is start, start+delta, ... before limit: max(ceil((limit −
// start)/delta), 0) values, computed in int64 for integer types so that
// values beyond 2^53 stay exact.
func opRange(n *node, in []*nd.NDArray) []*nd.NDArray {
	for i, what := range []string{"start", "limit", "delta"} {
		n.scalarInput(in, i, what)
	}
	dt := in[0].DType()
	if !dt.IsFloat() {
		start, limit, delta := in[0].Int64s()[0], in[1].Int64s()[0], in[2].Int64s()[0]
		if delta == 0 {
			n.fail("delta is 0")
		}
		var v []int64
		for x := start; (delta > 0 && x < limit) || (delta < 0 && x > limit); x += delta {
			v = append(v, x)
		}
		return []*nd.NDArray{nd.FromSlice(n.dev, v, len(v)).AsType(dt)}
	}
	start, limit, delta := scalarOf(in[0]), scalarOf(in[1]), scalarOf(in[2])
	if delta == 0 || math.IsNaN(start+limit+delta) || math.IsInf(start, 0) || math.IsInf(limit, 0) {
		n.fail("start %g, limit %g, delta %g: want finite values and a delta other than 0", start, limit, delta)
	}
	if count := math.Ceil((limit - start) / delta); count <= 0 {
		return []*nd.NDArray{nd.Zeros(n.dev, dt, 0)}
	}
	return []*nd.NDArray{nd.Arange(n.dev, dt, start, limit, delta)}
}

// opPad pads (or, with negative widths, crops) in constant, reflect or
// edge mode: pads and the constant value are attributes before opset 11
// and inputs after, with an optional axes input from opset 18.
func opPad(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	r := x.NDim()
	var pads []int
	value := 0.0
	if n.opset != 0 && n.opset < 11 {
		pads, value = n.a.ints("pads"), n.a.float("value", 0)
	} else {
		pads = intsOf(in[1])
		if c := optional(in, 2); c != nil && c.Size() > 0 {
			value = scalarOf(c)
		}
	}
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if a := optional(in, 3); a != nil {
		axes = intsOf(a)
	}
	if len(pads) != 2*len(axes) {
		n.fail("%d pads for %d axes: want begins then ends, 2 per axis", len(pads), len(axes))
	}
	var mode nd.PadMode
	switch m := n.a.str("mode", "constant"); m {
	case "constant":
		mode = nd.PadConstant
	case "reflect":
		mode = nd.PadReflect
	case "edge":
		mode = nd.PadEdge
	default:
		n.fail("mode %q is not supported (constant, reflect and edge are)", m)
	}
	widths := make([][2]int, r)
	crops := make([][2]int, r)
	cropped := false
	for i, a := range axes {
		a = n.axis(a, r)
		if -min(pads[i], 0)-min(pads[i+len(axes)], 0) > x.Shape()[a] {
			n.fail("pads %d and %d crop more than axis %d's %d elements", pads[i], pads[i+len(axes)], a, x.Shape()[a])
		}
		for j, p := range []int{pads[i], pads[i+len(axes)]} {
			if p >= 0 {
				widths[a][j] = p
			} else {
				crops[a][j], cropped = -p, true
			}
		}
	}
	y := nd.Pad(x, widths, mode, value)
	if cropped {
		ranges := make([]nd.Range, r)
		for a, c := range crops {
			ranges[a] = nd.Span(c[0], y.Shape()[a]-c[1])
		}
		y = nd.Slice(y, ranges...)
	}
	return []*nd.NDArray{y}
}

// opTrilu keeps the upper (or lower) triangle of the last two axes,
// diagonal k (an optional input) and above (or below), zeroing the rest.
func opTrilu(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	if x.NDim() < 2 {
		n.fail("input of rank %d: Trilu needs at least 2", x.NDim())
	}
	k := 0
	if kk := optional(in, 1); kk != nil {
		k = intsOf(n.scalarInput(in, 1, "k"))[0]
	}
	upper := n.a.int("upper", 1) != 0
	s := x.Shape()
	rows, cols := s[len(s)-2], s[len(s)-1]
	drop := make([]bool, rows*cols)
	for i := range rows {
		for j := range cols {
			if upper {
				drop[i*cols+j] = j-i < k
			} else {
				drop[i*cols+j] = j-i > k
			}
		}
	}
	return []*nd.NDArray{nd.MaskedFill(x, nd.FromSlice(x.Context(), drop, rows, cols), 0)}
}

// nllLoss is NegativeLogLikelihoodLoss: −logp[n, target[n, d...], d...],
// weighted by weight[target] when given, with ignore_index's positions
// left out, reduced by "none", "sum" or "mean" (the mean divides by the
// summed weights of the positions kept).
func nllLoss(n *node, logp, target, weight *nd.NDArray) *nd.NDArray {
	if logp.NDim() < 2 {
		n.fail("input of rank %d: want [N, C, d...]", logp.NDim())
	}
	dev, dt := logp.Context(), logp.DType()
	if target.Context() != dev {
		target = target.CopyTo(dev)
	}
	var keep *nd.NDArray
	if _, ok := n.a["ignore_index"]; ok {
		keep = nd.NotEqual(target, scalarLike(target, float64(n.a.int("ignore_index", 0))))
		target = nd.Where(keep, target, nd.ZerosLike(target))
	}
	c := logp.Shape()[1]
	for _, v := range target.Int64s() {
		if v < 0 || v >= int64(c) {
			n.fail("target %d is out of range for %d classes (and not ignore_index)", v, c)
		}
	}
	loss := nd.Neg(nd.Pick(logp, target, 1))
	var w *nd.NDArray
	if weight != nil {
		if weight.NDim() != 1 || weight.Size() != c {
			n.fail("weight of shape %v for %d classes", weight.Shape(), c)
		}
		_, weight = match(logp, weight)
		w = nd.Take(weight, target, 0)
	}
	if keep != nil {
		if k := keep.AsType(dt); w == nil {
			w = k
		} else {
			w = nd.Mul(w, k)
		}
	}
	if w != nil {
		loss = nd.Mul(loss, w)
	}
	switch red := n.a.str("reduction", "mean"); red {
	case "none":
		return loss
	case "sum":
		return nd.Sum(loss)
	case "mean":
		if w == nil {
			return nd.Mean(loss)
		}
		return nd.Div(nd.Sum(loss), nd.Sum(w))
	default:
		n.fail("reduction %q is not supported (none, sum and mean are)", red)
	}
	return nil
}

// opOneHot writes values[1] at each index (negative ones count from the
// end of depth) and values[0] elsewhere, on a new axis at position axis.
func opOneHot(n *node, in []*nd.NDArray) []*nd.NDArray {
	idx, values := in[0], in[2].Float64s()
	depth := math.Trunc(scalarOf(n.scalarInput(in, 1, "depth"))) // a float depth is cast to int64
	if depth < 1 {
		n.fail("depth %g: want a positive number", depth)
	}
	if len(values) != 2 {
		n.fail("values has %d elements: want [off, on]", len(values))
	}
	d := int(depth)
	if idx.DType().IsFloat() {
		idx = nd.Trunc(idx)
	}
	if n.opset == 0 || n.opset >= 11 { // negative indices count from the end since opset 11
		idx = wrapIndices(idx, d)
	}
	y := nd.OneHotAs(idx, d, values[1], values[0], in[2].DType())
	axis := n.a.int("axis", -1)
	if axis < 0 {
		axis += y.NDim()
	}
	if axis < 0 || axis >= y.NDim() {
		n.fail("axis %d is out of range for an output of rank %d", n.a.int("axis", -1), y.NDim())
	}
	return []*nd.NDArray{moveLastAxis(y, axis)}
}

// opDepthToSpace moves blocks of channels into b×b spatial blocks, in
// DCR (depth, column, row) or CRD order.
func opDepthToSpace(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	b := n.a.int("blocksize", 0)
	if x.NDim() != 4 || b < 1 || x.Shape()[1]%(b*b) != 0 {
		n.fail("input %v with blocksize %d: want [N, C, H, W] with C divisible by blocksize²", x.Shape(), b)
	}
	s := x.Shape()
	c := s[1] / (b * b)
	var y *nd.NDArray
	if n.a.str("mode", "DCR") == "CRD" {
		y = nd.Transpose(nd.Reshape(x, s[0], c, b, b, s[2], s[3]), 0, 1, 4, 2, 5, 3)
	} else {
		y = nd.Transpose(nd.Reshape(x, s[0], b, b, c, s[2], s[3]), 0, 3, 4, 1, 5, 2)
	}
	return []*nd.NDArray{nd.Reshape(y, s[0], c, s[2]*b, s[3]*b)}
}

// opSpaceToDepth is DepthToSpace's inverse in DCR order.
func opSpaceToDepth(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	b := n.a.int("blocksize", 0)
	if x.NDim() != 4 || b < 1 || x.Shape()[2]%b != 0 || x.Shape()[3]%b != 0 {
		n.fail("input %v with blocksize %d: want [N, C, H, W] with H and W divisible by blocksize", x.Shape(), b)
	}
	s := x.Shape()
	y := nd.Transpose(nd.Reshape(x, s[0], s[1], s[2]/b, b, s[3]/b, b), 0, 3, 5, 1, 2, 4)
	return []*nd.NDArray{nd.Reshape(y, s[0], s[1]*b*b, s[2]/b, s[3]/b)}
}
