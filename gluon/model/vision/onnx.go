package vision

import (
	"fmt"

	"github.com/goluon/goluon/gluon"
)

// The networks' ONNX forms (gluon.ONNXExporter, predict mode); see
// gluon/onnx.Export.

// chain writes blocks one after the other.
func chain(g gluon.ONNXGraph, x string, blocks ...gluon.Component) (string, error) {
	for _, b := range blocks {
		var err error
		if x, err = g.Block(b, x); err != nil {
			return "", err
		}
	}
	return x, nil
}

// relu writes Relu.
func onnxRelu(g gluon.ONNXGraph, x string) string { return g.Op("Relu", []string{x}, nil, 1)[0] }

// pooledHead writes GlobalAveragePool, Flatten and the head.
func pooledHead(g gluon.ONNXGraph, x string, head gluon.Component) (string, error) {
	p := g.Op("GlobalAveragePool", []string{x}, nil, 1)[0]
	f := g.Op("Flatten", []string{p}, map[string]any{"axis": 1}, 1)[0]
	return g.Block(head, f)
}

// ExportONNX writes the parameter-free layer.
func (l *fn) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	if l.onnx == nil {
		return "", fmt.Errorf("layer %s has no ONNX form", l.Name())
	}
	return l.onnx(g, x), nil
}

// ExportONNX writes the ResNet.
func (r *ResNet) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := chain(g, x, r.Conv1, r.BN1)
	if err != nil {
		return "", err
	}
	if y, err = g.Block(r.MaxPool, onnxRelu(g, y)); err != nil {
		return "", err
	}
	for _, l := range r.Layers {
		if y, err = g.Block(l, y); err != nil {
			return "", err
		}
	}
	return pooledHead(g, y, r.FC)
}

// residual writes relu(y + shortcut(x)).
func residual(g gluon.ONNXGraph, x, y string, down gluon.Component) (string, error) {
	s := x
	if down != nil {
		var err error
		if s, err = g.Block(down, x); err != nil {
			return "", err
		}
	}
	return onnxRelu(g, g.Op("Add", []string{y, s}, nil, 1)[0]), nil
}

// ExportONNX writes the basic block.
func (b *basicBlock) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := chain(g, x, b.conv1, b.bn1)
	if err != nil {
		return "", err
	}
	if y, err = chain(g, onnxRelu(g, y), b.conv2, b.bn2); err != nil {
		return "", err
	}
	return residual(g, x, y, componentOrNil(b.down))
}

// ExportONNX writes the bottleneck block.
func (b *bottleneck) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := chain(g, x, b.conv1, b.bn1)
	if err != nil {
		return "", err
	}
	if y, err = chain(g, onnxRelu(g, y), b.conv2, b.bn2); err != nil {
		return "", err
	}
	if y, err = chain(g, onnxRelu(g, y), b.conv3, b.bn3); err != nil {
		return "", err
	}
	return residual(g, x, y, componentOrNil(b.down))
}

// componentOrNil keeps a nil *nn.Sequential nil as an interface.
func componentOrNil[T gluon.Component](c T) gluon.Component {
	var zero T
	if any(c) == any(zero) {
		return nil
	}
	return c
}

// ExportONNX writes the MobileNetV2.
func (m *MobileNetV2) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(m.Features, x)
	if err != nil {
		return "", err
	}
	return pooledHead(g, y, m.Classifier)
}

// ExportONNX writes the inverted residual block.
func (b *invertedResidual) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(b.conv, x)
	if err != nil || !b.res {
		return y, err
	}
	return g.Op("Add", []string{x, y}, nil, 1)[0], nil
}

// ExportONNX writes the VGG. The adaptive pooling to 7×7 is nn's
// (AveragePool when the feature map's size is a multiple of 7, PyTorch's
// windows as gathers otherwise).
func (v *VGG) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := chain(g, x, v.Features, v.avgPool)
	if err != nil {
		return "", err
	}
	f := g.Op("Flatten", []string{y}, map[string]any{"axis": 1}, 1)[0]
	return g.Block(v.Classifier, f)
}

// ExportONNX writes the VisionTransformer for its image size; the batch
// is free (the class token is expanded to it).
func (v *VisionTransformer) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	d := v.opts.HiddenDim
	p, err := g.Block(v.ConvProj, x) // [N, D, nh, nw]
	if err != nil {
		return "", err
	}
	p = g.Op("Reshape", []string{p, g.Const([]int64{0, int64(d), -1}, 3)}, nil, 1)[0]
	p = g.Op("Transpose", []string{p}, map[string]any{"perm": []int{0, 2, 1}}, 1)[0] // [N, L, D]
	// The class token, expanded to [N, 1, D]: N from the input's shape.
	n := g.Op("Slice", []string{g.Op("Shape", []string{x}, nil, 1)[0], g.Const([]int64{0}, 1), g.Const([]int64{1}, 1)}, nil, 1)[0]
	shape := g.Op("Concat", []string{n, g.Const([]int64{1, int64(d)}, 2)}, map[string]any{"axis": 0}, 1)[0]
	cls := g.Op("Expand", []string{g.Param(v.ClassToken), shape}, nil, 1)[0]
	h := g.Op("Concat", []string{cls, p}, map[string]any{"axis": 1}, 1)[0]
	if h, err = g.Block(v.Encoder, h); err != nil {
		return "", err
	}
	first := g.Op("Gather", []string{h, g.Const([]int64{0})}, map[string]any{"axis": 1}, 1)[0] // [N, D]
	return g.Block(v.Heads, first)
}

// ExportONNX writes the encoder: position embedding, blocks, norm.
func (e *vitEncoder) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(e.layers, g.Op("Add", []string{x, g.Param(e.pos)}, nil, 1)[0])
	if err != nil {
		return "", err
	}
	return g.Block(e.ln, y)
}

// ExportONNX writes the pre-norm encoder block.
func (b *vitBlock) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	a, err := chain(g, x, b.ln1, b.attn)
	if err != nil {
		return "", err
	}
	h := g.Op("Add", []string{x, a}, nil, 1)[0]
	m, err := chain(g, h, b.ln2, b.mlp)
	if err != nil {
		return "", err
	}
	return g.Op("Add", []string{h, m}, nil, 1)[0], nil
}
