package nn

import (
	"slices"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// RMSNormOpts configures RMSNorm. The zero value is PyTorch's default:
// the machine epsilon of the computation type and a learnable scale.
type RMSNormOpts struct {
	// Epsilon is added to the mean square; 0 means the machine epsilon of
	// the type the statistics are computed in: 2⁻⁵² for float64 inputs,
	// float32's 2⁻²³ otherwise (half inputs are computed in float32, as
	// PyTorch's eps=None picks the epsilon of its float32 opmath type).
	Epsilon float64
	// NoScale leaves out the learnable scale (PyTorch's
	// elementwise_affine=False).
	NoScale bool
}

// RMSNorm is root-mean-square layer normalisation (Zhang and Sennrich,
// 2019; PyTorch 2.4's nn.RMSNorm): each sample is divided by the root of
// the mean of its squares over the trailing axes NormalizedShape, plus
// Epsilon, and multiplied by a learnt scale of that shape (Gamma, PyTorch's
// "weight", initialised to one):
//
//	y = x / sqrt(mean(x², trailing axes) + ε) · γ
//
// Unlike LayerNorm it neither subtracts the mean nor adds a shift. Half
// inputs are normalised in float32 and rounded once before the scale.
type RMSNorm struct {
	gluon.BlockMeta
	// Gamma is the scale, shape NormalizedShape; nil with NoScale.
	Gamma *gluon.Parameter
	// NormalizedShape is the shape of the trailing axes normalised over.
	NormalizedShape []int
	opts            RMSNormOpts
}

// NewRMSNorm returns an RMS normalisation over the trailing axes of the
// given shape (PyTorch's normalized_shape: [D] for the last axis of
// width D). An empty shape, a size below 1 or a negative epsilon panics.
func NewRMSNorm(normalizedShape []int, o RMSNormOpts) *RMSNorm {
	const op = "nn.NewRMSNorm"
	if len(normalizedShape) == 0 {
		nd.Panicf(op, nd.ErrArgument, "empty normalized shape (want the sizes of the trailing axes, such as [D])")
	}
	for _, d := range normalizedShape {
		if d < 1 {
			nd.Panicf(op, nd.ErrArgument, "normalized shape %v: sizes must be positive", normalizedShape)
		}
	}
	if !(o.Epsilon >= 0) {
		nd.Panicf(op, nd.ErrArgument, "epsilon %g must be non-negative", o.Epsilon)
	}
	r := &RMSNorm{BlockMeta: gluon.NewBlockMeta("rmsnorm"), NormalizedShape: slices.Clone(normalizedShape), opts: o}
	if !o.NoScale {
		r.Gamma = r.AddParam(gluon.NewParameter("gamma", normalizedShape...))
		r.Gamma.Alias = "weight" // PyTorch's name
	}
	return r
}

// eps returns the epsilon for inputs of dtype dt.
func (r *RMSNorm) eps(dt nd.DType) float64 {
	if r.opts.Epsilon != 0 {
		return r.opts.Epsilon
	}
	if dt == nd.Float64 {
		return 0x1p-52
	}
	return 0x1p-23
}

// axes returns the normalised axes of an input of the given shape,
// checking that its trailing sizes are NormalizedShape.
func (r *RMSNorm) axes(op string, shape []int) []int {
	k := len(r.NormalizedShape)
	if k == 0 {
		nd.Panicf(op, nd.ErrArgument, "no normalized shape (build it with NewRMSNorm)")
	}
	if len(shape) < k || !slices.Equal(shape[len(shape)-k:], r.NormalizedShape) {
		nd.Panicf(op, nd.ErrShape, "input of shape %v does not end with the normalized shape %v", shape, r.NormalizedShape)
	}
	axes := make([]int, k)
	for i := range axes {
		axes[i] = len(shape) - k + i
	}
	return axes
}

// Forward normalises x, whose trailing axes are NormalizedShape.
func (r *RMSNorm) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.RMSNorm"
	if x == nil {
		nd.Panicf(op, nd.ErrArgument, "nil input")
	}
	if !x.DType().IsFloat() {
		nd.Panicf(op, nd.ErrDType, "input of dtype %v: want a floating-point type", x.DType())
	}
	axes := r.axes(op, x.Shape())
	xw := x
	if x.DType().IsHalf() {
		xw = x.AsType(nd.Float32)
	}
	ms := nd.MeanKeepDims(nd.Square(xw), axes...)
	y := nd.Mul(xw, nd.Rsqrt(nd.AddScalar(ms, r.eps(x.DType()))))
	if xw != x {
		y = y.AsType(x.DType())
	}
	if r.Gamma != nil {
		y = nd.Mul(y, r.Gamma.DataFor(x))
	}
	return y
}

// ExportONNX writes the normalisation from ONNX operators
// (RMSNormalization is an operator only from opset 23): Mul, ReduceMean
// over the trailing axes, Add, Sqrt, Div, and Mul by the scale.
func (r *RMSNorm) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	shape, err := shapeOf(g, x, "RMSNorm")
	if err != nil {
		return "", err
	}
	var axes []int
	if err := nd.Catch(func() { axes = r.axes("nn.RMSNorm", shape) }); err != nil {
		return "", err
	}
	dt := nd.Float32
	if tg, ok := g.(gluon.ONNXTypes); ok {
		if t, err := tg.DType(x); err == nil && t.IsFloat() {
			dt = t
		}
	}
	sq := g.Op("Mul", []string{x, x}, nil, 1)[0]
	ms := g.Op("ReduceMean", []string{sq}, map[string]any{"axes": axes, "keepdims": 1}, 1)[0]
	den := g.Op("Sqrt", []string{g.Op("Add", []string{ms, g.Const([]float32{float32(r.eps(dt))})}, nil, 1)[0]}, nil, 1)[0]
	y := g.Op("Div", []string{x, den}, nil, 1)[0]
	if r.Gamma != nil {
		y = g.Op("Mul", []string{y, g.Param(r.Gamma)}, nil, 1)[0]
	}
	return y, nil
}
