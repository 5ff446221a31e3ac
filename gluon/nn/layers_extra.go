package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// Unflatten splits one axis into several (PyTorch's nn.Unflatten): an
// input [N, 12] unflattened at axis 1 into [3, 4] becomes [N, 3, 4]. One
// entry of Shape may be −1, inferred from the axis's size.
type Unflatten struct {
	gluon.BlockMeta
	Axis  int
	Shape []int
}

// NewUnflatten returns a layer splitting axis into shape. An empty shape,
// a size below 1 other than a single −1 panics.
func NewUnflatten(axis int, shape ...int) *Unflatten {
	if len(shape) == 0 {
		nd.Panicf("nn.NewUnflatten", nd.ErrArgument, "empty shape")
	}
	free := 0
	for _, d := range shape {
		switch {
		case d == -1:
			free++
		case d < 1:
			nd.Panicf("nn.NewUnflatten", nd.ErrArgument, "shape %v: sizes must be positive (one may be -1)", shape)
		}
	}
	if free > 1 {
		nd.Panicf("nn.NewUnflatten", nd.ErrArgument, "shape %v has more than one -1", shape)
	}
	return &Unflatten{BlockMeta: gluon.NewBlockMeta("unflatten"), Axis: axis, Shape: slices.Clone(shape)}
}

// outShape returns the output's shape for an input of the given shape.
func (u *Unflatten) outShape(shape []int) []int {
	const op = "nn.Unflatten"
	ax := checkAxis(op, u.Axis, shape)
	n, known, free := shape[ax], 1, -1
	for i, d := range u.Shape {
		if d == -1 {
			free = i
		} else {
			known *= d
		}
	}
	sizes := slices.Clone(u.Shape)
	switch {
	case len(sizes) == 0:
		nd.Panicf(op, nd.ErrArgument, "empty shape (build it with NewUnflatten)")
	case free >= 0 && known > 0 && n%known == 0:
		sizes[free] = n / known
	case free < 0 && known == n:
	default:
		nd.Panicf(op, nd.ErrShape, "axis %d of size %d cannot be unflattened into %v (input %v)", u.Axis, n, u.Shape, shape)
	}
	return slices.Concat(shape[:ax], sizes, shape[ax+1:])
}

// Forward reshapes x.
func (u *Unflatten) Forward(x *nd.NDArray) *nd.NDArray {
	if x == nil {
		nd.Panicf("nn.Unflatten", nd.ErrArgument, "nil input")
	}
	return nd.Reshape(x, u.outShape(x.Shape())...)
}

// ExportONNX writes Reshape to the input's shape (from Shape, so the
// other axes stay free) with the axis replaced by the sizes.
func (u *Unflatten) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	shape, err := shapeOf(g, x, "Unflatten")
	if err != nil {
		return "", err
	}
	var out []int
	if err := nd.Catch(func() { out = u.outShape(shape) }); err != nil {
		return "", err
	}
	ax := checkAxis("nn.Unflatten", u.Axis, shape)
	k := len(u.Shape)
	sizes := make([]int64, k)
	for i := range sizes {
		sizes[i] = int64(out[ax+i])
	}
	s := g.Op("Shape", []string{x}, nil, 1)[0]
	parts := []string{}
	if ax > 0 {
		parts = append(parts, g.Op("Slice", []string{s, g.Const([]int64{0}, 1), g.Const([]int64{int64(ax)}, 1)}, nil, 1)[0])
	}
	parts = append(parts, g.Const(sizes, k))
	if ax+1 < len(shape) {
		parts = append(parts, g.Op("Slice", []string{s, g.Const([]int64{int64(ax + 1)}, 1), g.Const([]int64{int64(len(shape))}, 1)}, nil, 1)[0])
	}
	target := parts[0]
	if len(parts) > 1 {
		target = g.Op("Concat", parts, map[string]any{"axis": 0}, 1)[0]
	}
	return g.Op("Reshape", []string{x, target}, nil, 1)[0], nil
}

// ChannelShuffle interleaves the channels (axis 1) of [N, C, ...] from
// Groups groups (ShuffleNet's shuffle; PyTorch's nn.ChannelShuffle): the
// channels, viewed as [Groups, C/Groups], are transposed, so that the
// next grouped convolution sees channels of every group.
type ChannelShuffle struct {
	gluon.BlockMeta
	Groups int
}

// NewChannelShuffle returns a channel shuffle of groups ≥ 1 groups.
func NewChannelShuffle(groups int) *ChannelShuffle {
	if groups < 1 {
		nd.Panicf("nn.NewChannelShuffle", nd.ErrArgument, "groups %d must be positive", groups)
	}
	return &ChannelShuffle{BlockMeta: gluon.NewBlockMeta("channelshuffle"), Groups: groups}
}

// check validates an input shape.
func (c *ChannelShuffle) check(shape []int) {
	const op = "nn.ChannelShuffle"
	if c.Groups < 1 {
		nd.Panicf(op, nd.ErrArgument, "groups %d must be positive (build it with NewChannelShuffle)", c.Groups)
	}
	if len(shape) < 3 || shape[1]%c.Groups != 0 {
		nd.Panicf(op, nd.ErrShape, "want [N, C, ...] with at least one spatial axis and C divisible by %d groups, got %v", c.Groups, shape)
	}
}

// Forward shuffles the channels of x.
func (c *ChannelShuffle) Forward(x *nd.NDArray) *nd.NDArray {
	if x == nil {
		nd.Panicf("nn.ChannelShuffle", nd.ErrArgument, "nil input")
	}
	s := x.Shape()
	c.check(s)
	rest := 1
	for _, d := range s[2:] {
		rest *= d
	}
	y := nd.Reshape(x, s[0], c.Groups, s[1]/c.Groups, rest)
	return nd.Reshape(nd.SwapAxes(y, 1, 2), s...)
}

// ExportONNX writes Reshape, Transpose and Reshape back to the input's
// shape.
func (c *ChannelShuffle) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	shape, err := shapeOf(g, x, "ChannelShuffle")
	if err != nil {
		return "", err
	}
	if err := nd.Catch(func() { c.check(shape) }); err != nil {
		return "", err
	}
	grouped := g.Const([]int64{0, int64(c.Groups), int64(shape[1] / c.Groups), -1}, 4)
	y := g.Op("Reshape", []string{x, grouped}, nil, 1)[0]
	y = g.Op("Transpose", []string{y}, map[string]any{"perm": []int{0, 2, 1, 3}}, 1)[0]
	return g.Op("Reshape", []string{y, g.Op("Shape", []string{x}, nil, 1)[0]}, nil, 1)[0], nil
}

// takePair checks the two inputs of a distance layer.
func takePair(op string, inputs []*nd.NDArray) (a, b *nd.NDArray) {
	if len(inputs) != 2 || inputs[0] == nil || inputs[1] == nil {
		nd.Panicf(op, nd.ErrArgument, "takes two inputs, got %d (a nil one counts as none)", len(inputs)-nilInputs(inputs))
	}
	a, b = inputs[0], inputs[1]
	checkFloatInput(op, a)
	checkFloatInput(op, b)
	return a, b
}

func nilInputs(xs []*nd.NDArray) int {
	n := 0
	for _, x := range xs {
		if x == nil {
			n++
		}
	}
	return n
}

// PairwiseDistance is the p-norm distance between the rows of two inputs
// along their last axis, ‖x1 − x2 + Eps‖ₚ (PyTorch's nn.PairwiseDistance,
// which adds Eps to the difference). The inputs broadcast against each
// other; the last axis is removed unless KeepDim. P is any positive
// number or +Inf (the largest absolute difference). A zero
// distance has gradient 0; with P = +Inf, elements that share the largest
// absolute difference split the gradient, as in PyTorch. It is a
// gluon.MultiBlock of two inputs.
type PairwiseDistance struct {
	gluon.BlockMeta
	P, Eps  float64
	KeepDim bool
}

// NewPairwiseDistance returns a p-norm distance (PyTorch's defaults are
// p 2, eps 1e-6, keepdim false). A p that is not positive (NaN
// included) or a negative or infinite eps panics.
func NewPairwiseDistance(p, eps float64, keepDim bool) *PairwiseDistance {
	checkDistance("nn.NewPairwiseDistance", p, eps)
	return &PairwiseDistance{BlockMeta: gluon.NewBlockMeta("pairwisedistance"), P: p, Eps: eps, KeepDim: keepDim}
}

func checkDistance(op string, p, eps float64) {
	if !(p > 0) {
		nd.Panicf(op, nd.ErrArgument, "p = %g: want a positive number or +Inf", p)
	}
	if !(eps >= 0) || math.IsInf(eps, 1) {
		nd.Panicf(op, nd.ErrArgument, "eps %g must be finite and non-negative", eps)
	}
}

// ForwardMulti takes x1 and x2 and returns their distances.
func (d *PairwiseDistance) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	const op = "nn.PairwiseDistance"
	a, b := takePair(op, inputs)
	checkDistance(op, d.P, d.Eps)
	diff := nd.AddScalar(nd.Sub(a, b), d.Eps)
	if diff.NDim() == 0 {
		nd.Panicf(op, nd.ErrShape, "inputs of shapes %v and %v have no axis to measure along", a.Shape(), b.Shape())
	}
	ax := diff.NDim() - 1
	var out *nd.NDArray
	switch {
	case d.P == 1:
		out = nd.Sum(nd.Abs(diff), ax)
	case d.P == 2:
		out = nd.Norm(diff, 2, ax)
	case math.IsInf(d.P, 1):
		if diff.Shape()[ax] == 0 {
			out = nd.Sum(diff, ax)
		} else {
			out = nd.Max(nd.Abs(diff), ax)
		}
	default:
		out = pNorm(diff, d.P, ax)
	}
	if d.KeepDim {
		out = nd.ExpandDims(out, -1)
	}
	return []*nd.NDArray{out}
}

// pNorm is (Σ|d|ᵖ)^(1/p) along axis, with PyTorch's gradients at zero: 0
// for a zero norm, and 0 for a zero element when p < 1.
func pNorm(d *nd.NDArray, p float64, axis int) *nd.NDArray {
	ad := nd.Abs(d)
	zero := nd.ZerosLike(ad)
	nz := nd.Greater(ad, zero)
	safe := nd.Where(nz, ad, nd.OnesLike(ad)) // no 0^(p−1) in the gradient
	s := nd.Sum(nd.Where(nz, nd.PowScalar(safe, p), zero), axis)
	sz := nd.ZerosLike(s)
	pos := nd.Greater(s, sz)
	root := nd.PowScalar(nd.Where(pos, s, nd.OnesLike(s)), 1/p)
	return nd.Where(pos, root, sz)
}

// ExportONNXMulti writes the distance: Sub and Add, then ReduceL1,
// ReduceL2, ReduceMax of Abs, or Pow, ReduceSum and Pow.
func (d *PairwiseDistance) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	if len(inputs) != 2 || inputs[0] == "" || inputs[1] == "" {
		return nil, fmt.Errorf("PairwiseDistance takes two inputs, got %d", len(inputs))
	}
	diff := g.Op("Sub", inputs, nil, 1)[0]
	if d.Eps != 0 {
		diff = g.Op("Add", []string{diff, g.Const([]float32{float32(d.Eps)})}, nil, 1)[0]
	}
	keep := 0
	if d.KeepDim {
		keep = 1
	}
	attrs := map[string]any{"axes": []int{-1}, "keepdims": keep}
	var out string
	switch {
	case d.P == 1:
		out = g.Op("ReduceL1", []string{diff}, attrs, 1)[0]
	case d.P == 2:
		out = g.Op("ReduceL2", []string{diff}, attrs, 1)[0]
	case math.IsInf(d.P, 1):
		out = g.Op("ReduceMax", []string{g.Op("Abs", []string{diff}, nil, 1)[0]}, attrs, 1)[0]
	default:
		pw := g.Op("Pow", []string{g.Op("Abs", []string{diff}, nil, 1)[0], g.Const([]float32{float32(d.P)})}, nil, 1)[0]
		s := g.Op("ReduceSum", []string{pw, g.Const([]int64{-1}, 1)}, map[string]any{"keepdims": keep}, 1)[0]
		out = g.Op("Pow", []string{s, g.Const([]float32{float32(1 / d.P)})}, nil, 1)[0]
	}
	return []string{out}, nil
}

// CosineSimilarity is the cosine of the angle between two inputs along
// Axis, the dot product of x1/max(‖x1‖, Eps) and x2/max(‖x2‖, Eps)
// (PyTorch's nn.CosineSimilarity; nd.CosineSimilarity's values). The
// inputs broadcast against each other; Axis is removed. Where a norm is
// below Eps the gradient still reaches the input through it, as in
// PyTorch 1.13, which clamps the norm without recording the clamp (see
// clampNorm); nd.CosineSimilarity stops it there. It is a
// gluon.MultiBlock of two inputs.
type CosineSimilarity struct {
	gluon.BlockMeta
	Axis int
	Eps  float64
}

// NewCosineSimilarity returns a cosine similarity along axis (PyTorch's
// defaults are axis 1 and eps 1e-8); a negative or non-finite eps panics.
func NewCosineSimilarity(axis int, eps float64) *CosineSimilarity {
	if !(eps >= 0) || math.IsInf(eps, 1) {
		nd.Panicf("nn.NewCosineSimilarity", nd.ErrArgument, "eps %g must be finite and non-negative", eps)
	}
	return &CosineSimilarity{BlockMeta: gluon.NewBlockMeta("cosinesimilarity"), Axis: axis, Eps: eps}
}

// ForwardMulti takes x1 and x2 and returns their cosine similarity.
func (c *CosineSimilarity) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	const op = "nn.CosineSimilarity"
	a, b := takePair(op, inputs)
	shape := broadcastShapes(op, a.Shape(), b.Shape())
	ax := checkAxis(op, c.Axis, shape)
	if !slices.Equal(a.Shape(), shape) {
		a = nd.BroadcastTo(a, shape...)
	}
	if !slices.Equal(b.Shape(), shape) {
		b = nd.BroadcastTo(b, shape...)
	}
	return []*nd.NDArray{nd.Sum(nd.Mul(nd.Div(a, clampNorm(a, ax, c.Eps)), nd.Div(b, clampNorm(b, ax, c.Eps))), ax)}
}

// clampNorm is ‖x‖ along axis (kept), at least eps in value, with
// PyTorch 1.13's gradient: it clamps the norm in place without recording
// the clamp, so the gradient still reaches x where the norm is below eps,
// through the norm's backward, x/max(‖x‖, eps), that reads the clamped
// value.
func clampNorm(x *nd.NDArray, axis int, eps float64) *nd.NDArray {
	n := nd.NormKeepDims(x, 2, axis)
	n0 := n.Detach()
	nc := nd.MaximumScalar(n0, eps)
	zero := nd.ZerosLike(nc)
	ratio := nd.Where(nd.Greater(nc, zero), nd.Div(n0, nc), zero) // 0 for a zero norm and eps 0
	return nd.Add(nc, nd.Mul(nd.Sub(n, n0), ratio))
}

// broadcastShapes is the shape a and b broadcast to, NumPy's rule.
func broadcastShapes(op string, a, b []int) []int {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := range n {
		da, db := 1, 1
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			nd.Panicf(op, nd.ErrShape, "inputs of shapes %v and %v do not broadcast", a, b)
		}
	}
	return out
}

// ExportONNXMulti writes the inputs expanded to their common shape,
// each divided by Max(ReduceL2, eps), Mul and ReduceSum.
func (c *CosineSimilarity) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	if len(inputs) != 2 || inputs[0] == "" || inputs[1] == "" {
		return nil, fmt.Errorf("CosineSimilarity takes two inputs, got %d", len(inputs))
	}
	a, b := inputs[0], inputs[1]
	sa, err := shapeOf(g, a, "CosineSimilarity")
	if err != nil {
		return nil, err
	}
	sb, err := shapeOf(g, b, "CosineSimilarity")
	if err != nil {
		return nil, err
	}
	if !slices.Equal(sa, sb) {
		common := g.Op("Shape", []string{g.Op("Add", []string{a, b}, nil, 1)[0]}, nil, 1)[0]
		a = g.Op("Expand", []string{a, common}, nil, 1)[0]
		b = g.Op("Expand", []string{b, common}, nil, 1)[0]
	}
	unit := func(v string) string {
		n := g.Op("ReduceL2", []string{v}, map[string]any{"axes": []int{c.Axis}, "keepdims": 1}, 1)[0]
		n = g.Op("Max", []string{n, g.Const([]float32{float32(c.Eps)})}, nil, 1)[0]
		return g.Op("Div", []string{v, n}, nil, 1)[0]
	}
	prod := g.Op("Mul", []string{unit(a), unit(b)}, nil, 1)[0]
	return []string{g.Op("ReduceSum", []string{prod, g.Const([]int64{int64(c.Axis)}, 1)}, map[string]any{"keepdims": 0}, 1)[0]}, nil
}
