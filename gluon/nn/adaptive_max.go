package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// AdaptiveMaxPool2D takes each feature map's maximum over a fixed grid of
// windows (PyTorch's AdaptiveMaxPool2d), whatever the input size.
type AdaptiveMaxPool2D struct {
	gluon.BlockMeta
	H, W int
}

// NewAdaptiveMaxPool2D returns adaptive max pooling to h×w.
func NewAdaptiveMaxPool2D(h, w int) *AdaptiveMaxPool2D {
	if h <= 0 || w <= 0 {
		nd.Panicf("nn.NewAdaptiveMaxPool2D", nd.ErrArgument, "output size %d×%d must be positive", h, w)
	}
	return &AdaptiveMaxPool2D{BlockMeta: gluon.NewBlockMeta("pool"), H: h, W: w}
}

// Forward pools x to H×W.
func (p *AdaptiveMaxPool2D) Forward(x *nd.NDArray) *nd.NDArray {
	return nd.AdaptiveMaxPool2D(x, p.H, p.W)
}

// ExportONNX writes GlobalMaxPool for a 1×1 output, MaxPool when the
// output size divides the input's, and otherwise PyTorch's windows as
// constant gathers whose Max is taken, one axis at a time (the maximum is
// separable; a short window repeats its last element).
func (p *AdaptiveMaxPool2D) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	if p.H == 1 && p.W == 1 {
		return g.Op("GlobalMaxPool", []string{x}, nil, 1)[0], nil
	}
	shape, err := shapeOf(g, x, "AdaptiveMaxPool2D")
	if err != nil {
		return "", err
	}
	h, w := shape[len(shape)-2], shape[len(shape)-1]
	if h%p.H == 0 && w%p.W == 0 {
		k := []int{h / p.H, w / p.W}
		return g.Op("MaxPool", []string{x}, map[string]any{"kernel_shape": k, "strides": k}, 1)[0], nil
	}
	for axis, io := range [][2]int{{h, p.H}, {w, p.W}} {
		if io[0] == io[1] {
			continue
		}
		idx, _ := adaptiveTaps(io[0], io[1])
		taps := make([]string, len(idx))
		for k := range idx {
			taps[k] = g.Op("Gather", []string{x, g.Const(idx[k], len(idx[k]))}, map[string]any{"axis": 2 + axis}, 1)[0]
		}
		x = taps[0]
		if len(taps) > 1 {
			x = g.Op("Max", taps, nil, 1)[0]
		}
	}
	return x, nil
}
