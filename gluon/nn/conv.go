package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// Conv2DOpts configures Conv2D; the zero value is Gluon's default (stride
// 1, no padding, dilation 1, one group, a bias, in_channels inferred).
type Conv2DOpts struct {
	Kernel     [2]int // overrides the square kernel size given to NewConv2D
	Stride     [2]int
	Pad        [2]int
	Dilate     [2]int
	Groups     int
	InChannels int // 0: inferred at the first forward pass
	Act        string
	NoBias     bool
	WeightInit initializer.Initializer
	BiasInit   initializer.Initializer // default zeros
}

// Conv2D is a 2-D convolution over NCHW input with weights of shape
// [channels, in_channels/groups, kh, kw].
type Conv2D struct {
	gluon.BlockMeta
	Channels int
	opts     Conv2DOpts
	Weight   *gluon.Parameter
	Bias     *gluon.Parameter
	// delegate, when set, computes Forward instead (Delegate).
	delegate gluon.Block
}

// NewConv2D returns a convolution with the given output channels and
// square kernel size.
func NewConv2D(channels, kernel int, o Conv2DOpts) *Conv2D {
	if o.Kernel == [2]int{} {
		o.Kernel = [2]int{kernel, kernel}
	}
	o.Groups = checkConvLayer("nn.NewConv2D", channels, o.Groups, o.InChannels, o.Kernel[0], o.Kernel[1])
	checkActivation("nn.NewConv2D", o.Act)
	c := &Conv2D{BlockMeta: gluon.NewBlockMeta("conv"), Channels: channels, opts: o}
	c.Weight = c.AddParam(gluon.NewParameter("weight", channels, o.InChannels/o.Groups, o.Kernel[0], o.Kernel[1]))
	c.Weight.Init = o.WeightInit
	if !o.NoBias {
		c.Bias = c.AddParam(gluon.NewParameter("bias", channels))
		c.Bias.Init = o.BiasInit
		if c.Bias.Init == nil {
			c.Bias.Init = initializer.Zero()
		}
	}
	return c
}

// Options returns the options c was made with (Kernel and Groups filled
// in).
func (c *Conv2D) Options() Conv2DOpts { return c.opts }

// Delegate makes Forward return b.Forward(x) instead of computing the
// layer (nil restores it), as nn.Dense.Delegate: gluon/quantization uses
// it for a convolution its parent calls through a field of its own (a
// ResNet block's).
func (c *Conv2D) Delegate(b gluon.Block) {
	c.delegate = b
	c.Changed()
}

// Delegated returns the block Delegate set, or nil.
func (c *Conv2D) Delegated() gluon.Block { return c.delegate }

// Forward convolves x on its context.
func (c *Conv2D) Forward(x *nd.NDArray) *nd.NDArray {
	if c.delegate != nil {
		return c.delegate.Forward(x)
	}
	if x.NDim() != 4 {
		nd.Panicf("nn.Conv2D", nd.ErrShape, "want NCHW input, got %v", x.Shape())
	}
	inC := x.Shape()[1]
	if inC%c.opts.Groups != 0 {
		nd.Panicf("nn.Conv2D", nd.ErrShape, "%d input channels do not divide by %d groups", inC, c.opts.Groups)
	}
	c.Weight.InferShape(c.Channels, inC/c.opts.Groups, c.opts.Kernel[0], c.opts.Kernel[1])
	opts := nd.ConvOpts{Stride: c.opts.Stride, Pad: c.opts.Pad, Dilate: c.opts.Dilate, Groups: c.opts.Groups}
	if c.Bias == nil {
		return activate("nn.Conv2D", c.opts.Act, nd.Conv2D(x, c.Weight.DataFor(x), nil, opts))
	}
	b := c.Bias.DataFor(x)
	if c.opts.Act == "relu" { // bias and ReLU on each image's output while it is in cache
		return nd.Conv2DBiasRelu(x, c.Weight.DataFor(x), b, opts)
	}
	return activate("nn.Conv2D", c.opts.Act, nd.Conv2D(x, c.Weight.DataFor(x), b, opts))
}
