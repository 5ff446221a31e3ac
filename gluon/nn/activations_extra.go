package nn

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// The activation layers of PyTorch that take an axis (GLU, Softmax,
// LogSoftmax, Softmin, Softmax2D) or draw random slopes (RReLU), with
// their ONNX forms.

// checkAxis resolves axis of an input of the given shape.
func checkAxis(op string, axis int, shape []int) int {
	a := axis
	if a < 0 {
		a += len(shape)
	}
	if a < 0 || a >= len(shape) {
		nd.Panicf(op, nd.ErrShape, "axis %d out of range for an input of shape %v", axis, shape)
	}
	return a
}

// checkFloatInput panics unless x is a floating-point array.
func checkFloatInput(op string, x *nd.NDArray) {
	if x == nil {
		nd.Panicf(op, nd.ErrArgument, "nil input")
	}
	if !x.DType().IsFloat() {
		nd.Panicf(op, nd.ErrDType, "input of dtype %v: want a floating-point type", x.DType())
	}
}

// GLU is the gated linear unit (Dauphin et al. 2017; PyTorch's nn.GLU):
// the input is split in two halves a and b along Axis, and the output is
// a·σ(b), half as wide along Axis.
type GLU struct {
	gluon.BlockMeta
	Axis int
}

// NewGLU returns a gated linear unit over axis (PyTorch's default −1).
func NewGLU(axis int) *GLU { return &GLU{BlockMeta: gluon.NewBlockMeta("glu"), Axis: axis} }

// Forward gates x, whose size along Axis must be even.
func (l *GLU) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.GLU"
	checkFloatInput(op, x)
	ax := checkAxis(op, l.Axis, x.Shape())
	n := x.Shape()[ax]
	if n%2 != 0 {
		nd.Panicf(op, nd.ErrShape, "axis %d of the input of shape %v has odd size %d: GLU halves it", l.Axis, x.Shape(), n)
	}
	return nd.Mul(nd.SliceAxis(x, 0, n/2, ax), nd.Sigmoid(nd.SliceAxis(x, n/2, n, ax)))
}

// ExportONNX writes Split, Sigmoid and Mul.
func (l *GLU) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	shape, err := shapeOf(g, x, "GLU")
	if err != nil {
		return "", err
	}
	var ax int
	if err := nd.Catch(func() { ax = checkAxis("nn.GLU", l.Axis, shape) }); err != nil {
		return "", err
	}
	h := int64(shape[ax] / 2)
	parts := g.Op("Split", []string{x, g.Const([]int64{h, h}, 2)}, map[string]any{"axis": ax}, 2)
	return g.Op("Mul", []string{parts[0], g.Op("Sigmoid", []string{parts[1]}, nil, 1)[0]}, nil, 1)[0], nil
}

// Softmax rescales the input along Axis to positive values that sum to
// one, exp(x)/Σexp(x) (PyTorch's nn.Softmax(dim)).
type Softmax struct {
	gluon.BlockMeta
	Axis int
}

// NewSoftmax returns a softmax over axis.
func NewSoftmax(axis int) *Softmax {
	return &Softmax{BlockMeta: gluon.NewBlockMeta("softmax"), Axis: axis}
}

// Forward applies the softmax.
func (s *Softmax) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.Softmax"
	checkFloatInput(op, x)
	return nd.Softmax(x, checkAxis(op, s.Axis, x.Shape()))
}

// ExportONNX writes Softmax.
func (s *Softmax) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return g.Op("Softmax", []string{x}, map[string]any{"axis": s.Axis}, 1)[0], nil
}

// LogSoftmax is the log of Softmax along Axis, computed stably
// (PyTorch's nn.LogSoftmax(dim)): the input of a negative log-likelihood
// (loss.SoftmaxCrossEntropy with FromLogits).
type LogSoftmax struct {
	gluon.BlockMeta
	Axis int
}

// NewLogSoftmax returns a log-softmax over axis.
func NewLogSoftmax(axis int) *LogSoftmax {
	return &LogSoftmax{BlockMeta: gluon.NewBlockMeta("logsoftmax"), Axis: axis}
}

// Forward applies the log-softmax.
func (s *LogSoftmax) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.LogSoftmax"
	checkFloatInput(op, x)
	return nd.LogSoftmax(x, checkAxis(op, s.Axis, x.Shape()))
}

// ExportONNX writes LogSoftmax.
func (s *LogSoftmax) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return g.Op("LogSoftmax", []string{x}, map[string]any{"axis": s.Axis}, 1)[0], nil
}

// Softmin is the softmax of −x along Axis, exp(−x)/Σexp(−x) (PyTorch's
// nn.Softmin(dim)): the smallest inputs get the largest weights.
type Softmin struct {
	gluon.BlockMeta
	Axis int
}

// NewSoftmin returns a softmin over axis.
func NewSoftmin(axis int) *Softmin {
	return &Softmin{BlockMeta: gluon.NewBlockMeta("softmin"), Axis: axis}
}

// Forward applies the softmin.
func (s *Softmin) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.Softmin"
	checkFloatInput(op, x)
	return nd.Softmax(nd.Neg(x), checkAxis(op, s.Axis, x.Shape()))
}

// ExportONNX writes Neg and Softmax.
func (s *Softmin) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return g.Op("Softmax", []string{g.Op("Neg", []string{x}, nil, 1)[0]}, map[string]any{"axis": s.Axis}, 1)[0], nil
}

// Softmax2D is a softmax over the channels at every spatial position of
// [N, C, H, W] or [C, H, W] (PyTorch's nn.Softmax2d: axis −3).
type Softmax2D struct{ gluon.BlockMeta }

// NewSoftmax2D returns a softmax over the channel axis of images.
func NewSoftmax2D() *Softmax2D { return &Softmax2D{gluon.NewBlockMeta("softmax2d")} }

// Forward applies the softmax over axis −3 of a 3- or 4-dimensional x.
func (s *Softmax2D) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.Softmax2D"
	checkFloatInput(op, x)
	if x.NDim() != 3 && x.NDim() != 4 {
		nd.Panicf(op, nd.ErrShape, "want an [N, C, H, W] or [C, H, W] input, got %v", x.Shape())
	}
	return nd.Softmax(x, x.NDim()-3)
}

// ExportONNX writes Softmax over axis −3.
func (s *Softmax2D) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return g.Op("Softmax", []string{x}, map[string]any{"axis": -3}, 1)[0], nil
}

// RReLU is the randomized leaky ReLU (Xu et al. 2015; PyTorch's
// nn.RReLU): inputs above zero pass, the others are multiplied by a
// slope. In training mode each element draws its slope uniformly from
// [Lower, Upper) from the input's session generator (nd.Seed makes it
// reproducible; a hybridized replay draws new slopes); in predict mode
// the slope is (Lower + Upper)/2. As in PyTorch, an input of exactly 0
// takes the slope's side, so its gradient is the slope.
type RReLU struct {
	gluon.BlockMeta
	Lower, Upper float64
}

// NewRReLU returns a randomized leaky ReLU with slopes in [lower, upper)
// (PyTorch's defaults are 1/8 and 1/3). Bounds that are not finite or
// with lower above upper panic.
func NewRReLU(lower, upper float64) *RReLU {
	if math.IsNaN(lower) || math.IsNaN(upper) || math.IsInf(lower, 0) || math.IsInf(upper, 0) || lower > upper {
		nd.Panicf("nn.NewRReLU", nd.ErrArgument, "slope bounds [%g, %g): want finite bounds, lower <= upper", lower, upper)
	}
	return &RReLU{BlockMeta: gluon.NewBlockMeta("rrelu"), Lower: lower, Upper: upper}
}

// Forward applies the activation with random slopes in training mode and
// their mean in predict mode.
func (r *RReLU) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.RReLU"
	checkFloatInput(op, x)
	if !(r.Lower <= r.Upper) {
		nd.Panicf(op, nd.ErrArgument, "slope bounds [%g, %g): lower above upper", r.Lower, r.Upper)
	}
	pos := nd.Greater(x, nd.ZerosLike(x))
	var neg *nd.NDArray
	if x.Session().IsTraining() {
		neg = nd.Mul(x, nd.RandomUniformLike(x, r.Lower, r.Upper))
	} else {
		neg = nd.MulScalar(x, (r.Lower+r.Upper)/2)
	}
	return nd.Where(pos, x, neg)
}

// ExportONNX writes the predict-mode form, LeakyRelu with the mean slope.
func (r *RReLU) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	if !(r.Lower <= r.Upper) {
		return "", fmt.Errorf("RReLU with slope bounds [%g, %g)", r.Lower, r.Upper)
	}
	return g.Op("LeakyRelu", []string{x}, map[string]any{"alpha": (r.Lower + r.Upper) / 2}, 1)[0], nil
}
