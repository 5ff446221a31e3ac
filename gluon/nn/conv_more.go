package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// convParams are the weight and optional bias every convolution layer
// has, with Gluon's initialisation rules (explicit initialisers win, the
// bias starts at zero).
type convParams struct {
	Weight *gluon.Parameter
	Bias   *gluon.Parameter
}

func (c *convParams) add(m *gluon.BlockMeta, channels int, noBias bool, wInit, bInit initializer.Initializer, shape ...int) {
	c.Weight = m.AddParam(gluon.NewParameter("weight", shape...))
	c.Weight.Init = wInit
	if !noBias {
		c.Bias = m.AddParam(gluon.NewParameter("bias", channels))
		c.Bias.Init = bInit
		if c.Bias.Init == nil {
			c.Bias.Init = initializer.Zero()
		}
	}
}

// data returns the weight and bias for the input x (Parameter.DataFor)
// after inferring the weight's shape.
func (c *convParams) data(x *nd.NDArray, wShape ...int) (w, b *nd.NDArray) {
	c.Weight.InferShape(wShape...)
	if c.Bias != nil {
		b = c.Bias.DataFor(x)
	}
	return c.Weight.DataFor(x), b
}

// checkConvLayer validates what the convolution constructors share.
func checkConvLayer(op string, channels, groups, inChannels int, kernel ...int) int {
	for _, k := range kernel {
		if k <= 0 {
			nd.Panicf(op, nd.ErrArgument, "kernel %v must be positive", kernel)
		}
	}
	if groups == 0 {
		groups = 1
	}
	if channels <= 0 || groups < 0 || inChannels < 0 || channels%groups != 0 || inChannels%groups != 0 {
		nd.Panicf(op, nd.ErrArgument, "channels %d and in_channels %d must be positive and divide by groups %d", channels, inChannels, groups)
	}
	return groups
}

// Conv1DOpts configures Conv1D; the zero value is Gluon's default (stride
// 1, no padding, dilation 1, one group, a bias, in_channels inferred).
type Conv1DOpts struct {
	Stride, Pad, Dilate, Groups int
	InChannels                  int // 0: inferred at the first forward pass
	Act                         string
	NoBias                      bool
	WeightInit                  initializer.Initializer
	BiasInit                    initializer.Initializer // default zeros
}

// Conv1D is a 1-D convolution over NCW input (sequences with channels:
// audio, character or token features) with weights [channels,
// in_channels/groups, kernel] (Gluon's Conv1D, PyTorch's nn.Conv1d).
type Conv1D struct {
	gluon.BlockMeta
	convParams
	Channels, Kernel int
	opts             Conv1DOpts
}

// NewConv1D returns a 1-D convolution with the given output channels and
// kernel size.
func NewConv1D(channels, kernel int, o Conv1DOpts) *Conv1D {
	const op = "nn.NewConv1D"
	o.Groups = checkConvLayer(op, channels, o.Groups, o.InChannels, kernel)
	checkActivation(op, o.Act)
	c := &Conv1D{BlockMeta: gluon.NewBlockMeta("conv"), Channels: channels, Kernel: kernel, opts: o}
	c.add(&c.BlockMeta, channels, o.NoBias, o.WeightInit, o.BiasInit, channels, o.InChannels/o.Groups, kernel)
	return c
}

// Forward convolves x [N, C, W] on its context.
func (c *Conv1D) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.Conv1D"
	if x.NDim() != 3 || x.Shape()[1]%c.opts.Groups != 0 {
		nd.Panicf(op, nd.ErrShape, "want NCW input with channels divisible by %d groups, got %v", c.opts.Groups, x.Shape())
	}
	w, b := c.data(x, c.Channels, x.Shape()[1]/c.opts.Groups, c.Kernel)
	y := nd.Conv1D(x, w, b, nd.Conv1DOpts{Stride: c.opts.Stride, Pad: c.opts.Pad, Dilate: c.opts.Dilate, Groups: c.opts.Groups})
	return activate(op, c.opts.Act, y)
}

// Conv2DTransposeOpts configures Conv2DTranspose; the zero value is
// Gluon's default (stride 1, no padding or output padding, dilation 1, one
// group, a bias, in_channels inferred).
type Conv2DTransposeOpts struct {
	Kernel     [2]int // overrides the square kernel size given to NewConv2DTranspose
	Stride     [2]int
	Pad        [2]int
	OutputPad  [2]int
	Dilate     [2]int
	Groups     int
	InChannels int // 0: inferred at the first forward pass
	Act        string
	NoBias     bool
	WeightInit initializer.Initializer
	BiasInit   initializer.Initializer // default zeros
}

// Conv2DTranspose is the transposed 2-D convolution (the upsampling
// "deconvolution" of decoders and GANs; Gluon's Conv2DTranspose, PyTorch's
// nn.ConvTranspose2d) over NCHW input, with weights [in_channels,
// channels/groups, kh, kw] as PyTorch lays them out.
type Conv2DTranspose struct {
	gluon.BlockMeta
	convParams
	Channels int
	opts     Conv2DTransposeOpts
}

// NewConv2DTranspose returns a transposed convolution with the given
// output channels and square kernel size.
func NewConv2DTranspose(channels, kernel int, o Conv2DTransposeOpts) *Conv2DTranspose {
	const op = "nn.NewConv2DTranspose"
	if o.Kernel == [2]int{} {
		o.Kernel = [2]int{kernel, kernel}
	}
	o.Groups = checkConvLayer(op, channels, o.Groups, o.InChannels, o.Kernel[0], o.Kernel[1])
	checkActivation(op, o.Act)
	c := &Conv2DTranspose{BlockMeta: gluon.NewBlockMeta("conv_transpose"), Channels: channels, opts: o}
	c.add(&c.BlockMeta, channels, o.NoBias, o.WeightInit, o.BiasInit, o.InChannels, channels/o.Groups, o.Kernel[0], o.Kernel[1])
	return c
}

// Forward applies the transposed convolution to x [N, C, H, W].
func (c *Conv2DTranspose) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.Conv2DTranspose"
	if x.NDim() != 4 || x.Shape()[1]%c.opts.Groups != 0 {
		nd.Panicf(op, nd.ErrShape, "want NCHW input with channels divisible by %d groups, got %v", c.opts.Groups, x.Shape())
	}
	w, b := c.data(x, x.Shape()[1], c.Channels/c.opts.Groups, c.opts.Kernel[0], c.opts.Kernel[1])
	y := nd.Conv2DTranspose(x, w, b, nd.ConvTransposeOpts{Stride: c.opts.Stride, Pad: c.opts.Pad,
		OutputPad: c.opts.OutputPad, Dilate: c.opts.Dilate, Groups: c.opts.Groups})
	return activate(op, c.opts.Act, y)
}
