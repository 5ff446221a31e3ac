package vision

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// MobileNetV2 is torchvision's MobileNetV2, with its parameter names:
// features.0.0 (stem convolution), features.N.conv.* (inverted residual
// blocks), features.18.0 (last 1×1 convolution), classifier.1.
type MobileNetV2 struct {
	gluon.BlockMeta
	Features   *nn.Sequential
	Classifier *nn.Sequential
	last       int
}

// makeDivisible is torchvision's _make_divisible: v rounded to the
// nearest multiple of divisor, not below divisor nor below 0.9·v.
func makeDivisible(v float64, divisor int) int {
	n := max(divisor, int(v+float64(divisor)/2)/divisor*divisor)
	if float64(n) < 0.9*v {
		n += divisor
	}
	return n
}

// convBNReLU6 is torchvision's Conv2dNormActivation with ReLU6.
func convBNReLU6(in, out, kernel, stride, groups int) *nn.Sequential {
	return seq(conv(in, out, kernel, stride, (kernel-1)/2, groups), bn(out), relu6())
}

// NewMobileNetV2 returns MobileNetV2; Options.Width is the width
// multiplier in 1/64 steps (64: 1.0, 32: 0.5).
func NewMobileNetV2(o Options) *MobileNetV2 {
	o = o.withDefaults()
	mult := float64(o.Width) / 64
	dropout := o.Dropout
	if dropout == 0 {
		dropout = 0.2
	}
	in := makeDivisible(32*mult, 8)
	last := makeDivisible(1280*max(1, mult), 8)
	features := []gluon.Block{convBNReLU6(o.InChannels, in, 3, 2, 1)}
	for _, s := range [][4]int{{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}} {
		t, c, n, stride := s[0], s[1], s[2], s[3]
		out := makeDivisible(float64(c)*mult, 8)
		for i := range n {
			st := 1
			if i == 0 {
				st = stride
			}
			features = append(features, newInvertedResidual(in, out, st, t))
			in = out
		}
	}
	features = append(features, convBNReLU6(in, last, 1, 1, 1))
	m := &MobileNetV2{BlockMeta: gluon.NewBlockMeta("mobilenetv2"), last: last}
	m.Features = named("features", seq(features...))
	var head []gluon.Block
	if dropout > 0 {
		head = append(head, nn.NewDropout(dropout))
	} else {
		head = append(head, identity())
	}
	m.Classifier = named("classifier", seq(append(head, linear(last, o.Classes))...))
	m.AddChild(m.Features)
	m.AddChild(m.Classifier)
	return m
}

// Forward maps NCHW images to class scores.
func (m *MobileNetV2) Forward(x *nd.NDArray) *nd.NDArray {
	return m.Classifier.Forward(nd.Flatten(nd.GlobalAvgPool2D(m.Features.Forward(x))))
}

// Head returns "classifier.1".
func (m *MobileNetV2) Head() string { return "classifier.1" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (m *MobileNetV2) ReplaceHead(classes int) *nn.Dense {
	old, _ := child(&m.Classifier.BlockMeta, "1").(*nn.Dense)
	return newHead(&m.BlockMeta, "classifier.1", old, linear(m.last, classes))
}

// invertedResidual is torchvision's InvertedResidual: an optional 1×1
// expansion, a depthwise 3×3 convolution, a linear 1×1 projection, and a
// residual connection when the shape is kept.
type invertedResidual struct {
	gluon.BlockMeta
	conv *nn.Sequential
	res  bool
}

func newInvertedResidual(in, out, stride, expand int) *invertedResidual {
	hidden := in * expand
	var layers []gluon.Block
	if expand != 1 {
		layers = append(layers, convBNReLU6(in, hidden, 1, 1, 1))
	}
	layers = append(layers, convBNReLU6(hidden, hidden, 3, stride, hidden), conv(hidden, out, 1, 1, 0, 1), bn(out))
	b := &invertedResidual{BlockMeta: gluon.NewBlockMeta("invertedresidual"), res: stride == 1 && in == out}
	b.conv = named("conv", seq(layers...))
	b.AddChild(b.conv)
	return b
}

func (b *invertedResidual) Forward(x *nd.NDArray) *nd.NDArray {
	y := b.conv.Forward(x)
	if b.res {
		return nd.Add(x, y)
	}
	return y
}
