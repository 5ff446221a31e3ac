package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// LocalResponseNormOpts configures LocalResponseNorm. A nil field takes
// PyTorch's default (alpha 1e-4, beta 0.75, k 1); any value is written
// with new(v), e.g. Alpha: new(0.001).
type LocalResponseNormOpts struct {
	Alpha, Beta, K *float64
}

// LocalResponseNorm normalises each element by the activity of the
// neighbouring channels at the same position (AlexNet's local response
// normalisation; PyTorch's nn.LocalResponseNorm, Gluon's LRN), over input
// [N, C, ...] of three or more axes:
//
//	y[n, c, ...] = x[n, c, ...] / (K + Alpha/Size · Σ x[n, c', ...]²)^Beta
//
// the sum over the Size channels c' from c − Size/2 to c + (Size−1)/2
// (integer division), those outside [0, C) counting as zeros. For an even
// Size the window reaches one channel further back than forward, as
// PyTorch's does. It is built from differentiable nd ops (a square, a
// pad of the channel axis and an average pooling over it), so gradients
// flow to the input. It has no parameters.
type LocalResponseNorm struct {
	gluon.BlockMeta
	Size           int
	Alpha, Beta, K float64
}

// NewLocalResponseNorm returns local response normalisation over windows
// of size channels. A size below 1 panics with ErrArgument.
func NewLocalResponseNorm(size int, o LocalResponseNormOpts) *LocalResponseNorm {
	if size < 1 {
		nd.Panicf("nn.NewLocalResponseNorm", nd.ErrArgument, "size %d must be positive", size)
	}
	l := &LocalResponseNorm{BlockMeta: gluon.NewBlockMeta("lrn"), Size: size, Alpha: 1e-4, Beta: 0.75, K: 1}
	if o.Alpha != nil {
		l.Alpha = *o.Alpha
	}
	if o.Beta != nil {
		l.Beta = *o.Beta
	}
	if o.K != nil {
		l.K = *o.K
	}
	return l
}

// Forward normalises x [N, C, ...] on its context.
func (l *LocalResponseNorm) Forward(x *nd.NDArray) *nd.NDArray {
	shape := x.Shape()
	if len(shape) < 3 {
		nd.Panicf("nn.LocalResponseNorm", nd.ErrShape, "want input [N, C, ...] of 3 or more axes, got %v", shape)
	}
	if x.Size() == 0 {
		return x
	}
	n, c := shape[0], shape[1]
	// [N, 1, C, rest]: the channels become the rows an average pooling of
	// Size × 1 windows slides over.
	sq := nd.Reshape(nd.Square(x), n, 1, c, -1)
	front, back := l.Size/2, (l.Size-1)/2
	padded := nd.Pad(sq, [][2]int{{0, 0}, {0, 0}, {front, back}, {0, 0}}, nd.PadConstant, 0)
	avg := nd.AvgPool2D(padded, [2]int{l.Size, 1}, [2]int{1, 1}, [2]int{0, 0})
	den := nd.PowScalar(nd.AddScalar(nd.MulScalar(avg, l.Alpha), l.K), l.Beta)
	return nd.Div(x, nd.Reshape(den, shape...))
}

// ExportONNX writes ONNX's LRN for an odd Size, whose window (c −
// (Size−1)/2 to c + Size/2, scaled by alpha/size) is then PyTorch's. For
// an even Size, where ONNX's window reaches one channel further forward
// than PyTorch's, it writes the same composition as Forward (Mul, Pad,
// AveragePool, then the scale, the shift and the power).
func (l *LocalResponseNorm) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	shape, err := shapeOf(g, x, "LocalResponseNorm")
	if err != nil {
		return "", err
	}
	if l.Size%2 == 1 {
		attrs := map[string]any{"size": l.Size, "alpha": l.Alpha, "beta": l.Beta, "bias": l.K}
		if len(shape) == 4 {
			return g.Op("LRN", []string{x}, attrs, 1)[0], nil
		}
		// ONNX Runtime's LRN takes [N, C, H, W] only: the axes after the
		// channels are flattened into one and a unit one, then restored.
		flat := g.Op("Reshape", []string{x, g.Const([]int64{0, int64(shape[1]), -1, 1}, 4)}, nil, 1)[0]
		y := g.Op("LRN", []string{flat}, attrs, 1)[0]
		return g.Op("Reshape", []string{y, g.Op("Shape", []string{x}, nil, 1)[0]}, nil, 1)[0], nil
	}
	sq := g.Op("Mul", []string{x, x}, nil, 1)[0]
	rows := g.Op("Reshape", []string{sq, g.Const([]int64{0, 1, int64(shape[1]), -1}, 4)}, nil, 1)[0]
	pads := g.Const([]int64{0, 0, int64(l.Size / 2), 0, 0, 0, int64((l.Size - 1) / 2), 0}, 8)
	padded := g.Op("Pad", []string{rows, pads}, nil, 1)[0]
	avg := g.Op("AveragePool", []string{padded}, map[string]any{"kernel_shape": []int{l.Size, 1}}, 1)[0]
	den := g.Op("Mul", []string{avg, g.Const([]float32{float32(l.Alpha)})}, nil, 1)[0]
	den = g.Op("Add", []string{den, g.Const([]float32{float32(l.K)})}, nil, 1)[0]
	den = g.Op("Pow", []string{den, g.Const([]float32{float32(l.Beta)})}, nil, 1)[0]
	den = g.Op("Reshape", []string{den, g.Op("Shape", []string{x}, nil, 1)[0]}, nil, 1)[0]
	return g.Op("Div", []string{x, den}, nil, 1)[0], nil
}
