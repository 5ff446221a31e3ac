package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// Conv3DOpts configures Conv3D; the zero value is Gluon's default (stride
// 1, no padding, dilation 1, one group, a bias, in_channels inferred).
// Index 0 is depth, 1 height, 2 width.
type Conv3DOpts struct {
	Stride, Pad, Dilate [3]int
	Groups              int
	InChannels          int // 0: inferred at the first forward pass
	Act                 string
	NoBias              bool
	WeightInit          initializer.Initializer
	BiasInit            initializer.Initializer // default zeros
}

// Conv3D is a 3-D convolution over NCDHW input (video clips, volumes) with
// weights [channels, in_channels/groups, kd, kh, kw] (Gluon's Conv3D,
// PyTorch's nn.Conv3d).
type Conv3D struct {
	gluon.BlockMeta
	convParams
	Channels int
	Kernel   [3]int
	opts     Conv3DOpts
}

// NewConv3D returns a 3-D convolution with the given output channels and
// kernel size (depth, height, width).
func NewConv3D(channels int, kernel [3]int, o Conv3DOpts) *Conv3D {
	const op = "nn.NewConv3D"
	o.Groups = checkConvLayer(op, channels, o.Groups, o.InChannels, kernel[:]...)
	checkActivation(op, o.Act)
	c := &Conv3D{BlockMeta: gluon.NewBlockMeta("conv"), Channels: channels, Kernel: kernel, opts: o}
	c.add(&c.BlockMeta, channels, o.NoBias, o.WeightInit, o.BiasInit, channels, o.InChannels/o.Groups, kernel[0], kernel[1], kernel[2])
	return c
}

// Forward convolves x [N, C, D, H, W] on its context.
func (c *Conv3D) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.Conv3D"
	if x.NDim() != 5 || x.Shape()[1]%c.opts.Groups != 0 {
		nd.Panicf(op, nd.ErrShape, "want NCDHW input with channels divisible by %d groups, got %v", c.opts.Groups, x.Shape())
	}
	w, b := c.data(x, c.Channels, x.Shape()[1]/c.opts.Groups, c.Kernel[0], c.Kernel[1], c.Kernel[2])
	y := nd.Conv3D(x, w, b, nd.Conv3DOpts{Stride: c.opts.Stride, Pad: c.opts.Pad, Dilate: c.opts.Dilate, Groups: c.opts.Groups})
	return activate(op, c.opts.Act, y)
}

// ExportONNX writes a three-dimensional Conv, then the fused activation.
func (c *Conv3D) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	o := c.opts
	in := []string{x, g.Param(c.Weight)}
	if c.Bias != nil {
		in = append(in, g.Param(c.Bias))
	}
	attrs := map[string]any{
		"kernel_shape": c.Kernel[:],
		"strides":      []int{max(o.Stride[0], 1), max(o.Stride[1], 1), max(o.Stride[2], 1)},
		"pads":         []int{o.Pad[0], o.Pad[1], o.Pad[2], o.Pad[0], o.Pad[1], o.Pad[2]},
		"dilations":    []int{max(o.Dilate[0], 1), max(o.Dilate[1], 1), max(o.Dilate[2], 1)},
		"group":        o.Groups,
	}
	return onnxAct(g, o.Act, g.Op("Conv", in, attrs, 1)[0])
}

// Pool3DOpts configures the 3-D pooling layers; zero values are Gluon's
// defaults (stride equal to the pool size, no padding, floor rounding,
// padding counted by the average).
type Pool3DOpts struct {
	Stride, Pad [3]int
	CeilMode    bool
	ExcludePad  bool
}

// Pool3D is a 3-D max or average pooling layer (Gluon's MaxPool3D and
// AvgPool3D, PyTorch's nn.MaxPool3d and nn.AvgPool3d).
type Pool3D struct {
	gluon.BlockMeta
	opts nd.Pool3DOpts
}

func newPool3D(kind string, t nd.PoolType, size [3]int, o Pool3DOpts, global bool) *Pool3D {
	if !global && (size[0] <= 0 || size[1] <= 0 || size[2] <= 0) {
		nd.Panicf("nn.New"+kind, nd.ErrArgument, "pool size %v must be positive", size)
	}
	return &Pool3D{BlockMeta: gluon.NewBlockMeta("pool"), opts: nd.Pool3DOpts{
		Type: t, Kernel: size, Stride: o.Stride, Pad: o.Pad, CeilMode: o.CeilMode, ExcludePad: o.ExcludePad, Global: global,
	}}
}

// NewMaxPool3D returns max pooling over windows of the given size.
func NewMaxPool3D(size [3]int, o Pool3DOpts) *Pool3D {
	return newPool3D("MaxPool3D", nd.PoolMax, size, o, false)
}

// NewAvgPool3D returns average pooling over windows of the given size.
func NewAvgPool3D(size [3]int, o Pool3DOpts) *Pool3D {
	return newPool3D("AvgPool3D", nd.PoolAvg, size, o, false)
}

// NewGlobalAvgPool3D returns a layer reducing each volume to its mean.
func NewGlobalAvgPool3D() *Pool3D {
	return newPool3D("GlobalAvgPool3D", nd.PoolAvg, [3]int{}, Pool3DOpts{}, true)
}

// NewGlobalMaxPool3D returns a layer reducing each volume to its maximum.
func NewGlobalMaxPool3D() *Pool3D {
	return newPool3D("GlobalMaxPool3D", nd.PoolMax, [3]int{}, Pool3DOpts{}, true)
}

// Forward pools x [N, C, D, H, W].
func (p *Pool3D) Forward(x *nd.NDArray) *nd.NDArray { return nd.Pool3D(x, p.opts) }

// ExportONNX writes MaxPool or AveragePool with 3-D windows (GlobalMaxPool
// or GlobalAveragePool for the global layers), ceil mode as 2-D pooling
// writes it.
func (p *Pool3D) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	o := p.opts
	if o.Global {
		if o.Type == nd.PoolMax {
			return g.Op("GlobalMaxPool", []string{x}, nil, 1)[0], nil
		}
		return g.Op("GlobalAveragePool", []string{x}, nil, 1)[0], nil
	}
	return exportPool(g, x, o.Type, o.Kernel[:], o.Stride[:], o.Pad[:], o.CeilMode, o.ExcludePad)
}

// Conv3DTransposeOpts configures Conv3DTranspose; the zero value is
// Gluon's default (stride 1, no padding or output padding, dilation 1,
// one group, a bias, in_channels inferred).
type Conv3DTransposeOpts struct {
	Stride, Pad, OutputPad, Dilate [3]int
	Groups                         int
	InChannels                     int // 0: inferred at the first forward pass
	Act                            string
	NoBias                         bool
	WeightInit                     initializer.Initializer
	BiasInit                       initializer.Initializer // default zeros
}

// Conv3DTranspose is a transposed 3-D convolution (Gluon's
// Conv3DTranspose, PyTorch's nn.ConvTranspose3d) with weights
// [in_channels, channels/groups, kd, kh, kw]: a 3-D decoder's upsampling.
type Conv3DTranspose struct {
	gluon.BlockMeta
	convParams
	Channels int
	Kernel   [3]int
	opts     Conv3DTransposeOpts
}

// NewConv3DTranspose returns a transposed 3-D convolution with the given
// output channels and kernel size.
func NewConv3DTranspose(channels int, kernel [3]int, o Conv3DTransposeOpts) *Conv3DTranspose {
	const op = "nn.NewConv3DTranspose"
	o.Groups = checkConvLayer(op, channels, o.Groups, o.InChannels, kernel[:]...)
	checkActivation(op, o.Act)
	c := &Conv3DTranspose{BlockMeta: gluon.NewBlockMeta("conv"), Channels: channels, Kernel: kernel, opts: o}
	c.add(&c.BlockMeta, channels, o.NoBias, o.WeightInit, o.BiasInit, o.InChannels, channels/o.Groups, kernel[0], kernel[1], kernel[2])
	return c
}

// Forward convolves x [N, C, D, H, W] on its context.
func (c *Conv3DTranspose) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.Conv3DTranspose"
	if x.NDim() != 5 || x.Shape()[1]%c.opts.Groups != 0 {
		nd.Panicf(op, nd.ErrShape, "want NCDHW input with channels divisible by %d groups, got %v", c.opts.Groups, x.Shape())
	}
	w, b := c.data(x, x.Shape()[1], c.Channels/c.opts.Groups, c.Kernel[0], c.Kernel[1], c.Kernel[2])
	o := c.opts
	y := nd.Conv3DTranspose(x, w, b, nd.Conv3DTransposeOpts{Stride: o.Stride, Pad: o.Pad, OutputPad: o.OutputPad, Dilate: o.Dilate, Groups: o.Groups})
	return activate(op, o.Act, y)
}

// ExportONNX writes a three-dimensional ConvTranspose, then the fused
// activation.
func (c *Conv3DTranspose) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	o := c.opts
	in := []string{x, g.Param(c.Weight)}
	if c.Bias != nil {
		in = append(in, g.Param(c.Bias))
	}
	attrs := map[string]any{
		"kernel_shape":   c.Kernel[:],
		"strides":        []int{max(o.Stride[0], 1), max(o.Stride[1], 1), max(o.Stride[2], 1)},
		"pads":           []int{o.Pad[0], o.Pad[1], o.Pad[2], o.Pad[0], o.Pad[1], o.Pad[2]},
		"output_padding": o.OutputPad[:],
		"dilations":      []int{max(o.Dilate[0], 1), max(o.Dilate[1], 1), max(o.Dilate[2], 1)},
		"group":          o.Groups,
	}
	return onnxAct(g, o.Act, g.Op("ConvTranspose", in, attrs, 1)[0])
}
