package nn

import (
	"fmt"

	"github.com/goluon/goluon/gluon"
)

// shapeOf asks the graph for x's shape on the export's example input.
func shapeOf(g gluon.ONNXGraph, x, what string) ([]int, error) {
	sg, ok := g.(gluon.ONNXShapes)
	if !ok {
		return nil, fmt.Errorf("%s needs its input's shape: the ONNX graph does not give shapes (gluon.ONNXShapes)", what)
	}
	return sg.Shape(x)
}

// ones returns n copies of v.
func ones(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// channelShape is [c, 1, ...] for broadcasting a per-channel vector over
// an input of the given rank (channels on axis 1).
func channelShape(c, rank int) []int64 {
	s := make([]int64, max(rank-1, 1))
	for i := range s {
		s[i] = 1
	}
	s[0] = int64(c)
	return s
}

// ExportONNX writes a one-dimensional Conv, then the fused activation.
func (c *Conv1D) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	o := c.opts
	in := []string{x, g.Param(c.Weight)}
	if c.Bias != nil {
		in = append(in, g.Param(c.Bias))
	}
	attrs := map[string]any{
		"kernel_shape": []int{c.Kernel},
		"strides":      []int{max(o.Stride, 1)},
		"pads":         []int{o.Pad, o.Pad},
		"dilations":    []int{max(o.Dilate, 1)},
		"group":        max(o.Groups, 1),
	}
	return onnxAct(g, o.Act, g.Op("Conv", in, attrs, 1)[0])
}

// ExportONNX writes ConvTranspose (its weight layout, [in, out/groups,
// kH, kW], is ONNX's), then the fused activation.
func (c *Conv2DTranspose) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	o := c.opts
	in := []string{x, g.Param(c.Weight)}
	if c.Bias != nil {
		in = append(in, g.Param(c.Bias))
	}
	attrs := map[string]any{
		"kernel_shape":   []int{o.Kernel[0], o.Kernel[1]},
		"strides":        []int{max(o.Stride[0], 1), max(o.Stride[1], 1)},
		"pads":           []int{o.Pad[0], o.Pad[1], o.Pad[0], o.Pad[1]},
		"output_padding": []int{o.OutputPad[0], o.OutputPad[1]},
		"dilations":      []int{max(o.Dilate[0], 1), max(o.Dilate[1], 1)},
		"group":          max(o.Groups, 1),
	}
	return onnxAct(g, o.Act, g.Op("ConvTranspose", in, attrs, 1)[0])
}

// affine returns the graph names of the scale and shift over c channels:
// the parameters, or constant ones and zeros without them.
func (a *affineParams) affine(g gluon.ONNXGraph, c int) (scale, shift string) {
	if a.Gamma != nil {
		scale = g.Param(a.Gamma)
	} else {
		scale = g.Const(ones(c, 1), c)
	}
	if a.Beta != nil {
		shift = g.Param(a.Beta)
	} else {
		shift = g.Const(ones(c, 0), c)
	}
	return scale, shift
}

// ExportONNX writes InstanceNormalization.
func (n *InstanceNorm) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	shape, err := shapeOf(g, x, "InstanceNorm")
	if err != nil {
		return "", err
	}
	scale, shift := n.affine(g, shape[1])
	return g.Op("InstanceNormalization", []string{x, scale, shift}, map[string]any{"epsilon": n.opts.eps()}, 1)[0], nil
}

// ExportONNX writes GroupNorm as torch.onnx does before opset 18's
// GroupNormalization: InstanceNormalization over [N, groups, rest], the
// input's shape back, then the per-channel scale and shift.
func (gn *GroupNorm) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	shape, err := shapeOf(g, x, "GroupNorm")
	if err != nil {
		return "", err
	}
	c := shape[1]
	grouped := g.Op("Reshape", []string{x, g.Const([]int64{0, int64(gn.Groups), -1}, 3)}, nil, 1)[0]
	norm := g.Op("InstanceNormalization", []string{grouped, g.Const(ones(gn.Groups, 1), gn.Groups), g.Const(ones(gn.Groups, 0), gn.Groups)},
		map[string]any{"epsilon": gn.opts.eps()}, 1)[0]
	y := g.Op("Reshape", []string{norm, g.Op("Shape", []string{x}, nil, 1)[0]}, nil, 1)[0]
	cs := channelShape(c, len(shape))
	if gn.Gamma != nil {
		y = g.Op("Mul", []string{y, g.Op("Reshape", []string{g.Param(gn.Gamma), g.Const(cs, len(cs))}, nil, 1)[0]}, nil, 1)[0]
	}
	if gn.Beta != nil {
		y = g.Op("Add", []string{y, g.Op("Reshape", []string{g.Param(gn.Beta), g.Const(cs, len(cs))}, nil, 1)[0]}, nil, 1)[0]
	}
	return y, nil
}

// ExportONNX writes PRelu with the slopes on the channel axis (1; 0 for a
// one-dimensional input).
func (p *PReLU) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	shape, err := shapeOf(g, x, "PReLU")
	if err != nil {
		return "", err
	}
	slope := g.Param(p.Alpha)
	if len(shape) > 2 {
		cs := channelShape(p.Alpha.Shape()[0], len(shape))
		slope = g.Op("Reshape", []string{slope, g.Const(cs, len(cs))}, nil, 1)[0]
	}
	return g.Op("PRelu", []string{x, slope}, nil, 1)[0], nil
}
