package vision

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// MobileNetV3 is torchvision's MobileNetV3 (Large or Small), with its
// parameter names: features.0.0 (stem convolution), features.N.block.M
// (inverted residual blocks: expansion, depthwise convolution,
// squeeze-and-excitation with fc1 and fc2, projection), the last 1×1
// convolution, classifier.0 and classifier.3. Its BatchNorms have
// torchvision's epsilon 0.001 and momentum 0.01.
type MobileNetV3 struct {
	gluon.BlockMeta
	Features   *nn.Sequential
	Classifier *nn.Sequential
	last       int // the classifier's hidden width
}

// mbv3Block is a row of torchvision's inverted_residual_setting:
// input, kernel, expanded and output channels (before the width
// multiplier), squeeze-and-excitation, hardswish (else ReLU), stride.
type mbv3Block struct {
	in, kernel, expanded, out int
	se, hardswish             bool
	stride                    int
}

var (
	mobileNetV3Large = []mbv3Block{
		{16, 3, 16, 16, false, false, 1},
		{16, 3, 64, 24, false, false, 2},
		{24, 3, 72, 24, false, false, 1},
		{24, 5, 72, 40, true, false, 2},
		{40, 5, 120, 40, true, false, 1},
		{40, 5, 120, 40, true, false, 1},
		{40, 3, 240, 80, false, true, 2},
		{80, 3, 200, 80, false, true, 1},
		{80, 3, 184, 80, false, true, 1},
		{80, 3, 184, 80, false, true, 1},
		{80, 3, 480, 112, true, true, 1},
		{112, 3, 672, 112, true, true, 1},
		{112, 5, 672, 160, true, true, 2},
		{160, 5, 960, 160, true, true, 1},
		{160, 5, 960, 160, true, true, 1},
	}
	mobileNetV3Small = []mbv3Block{
		{16, 3, 16, 16, true, false, 2},
		{16, 3, 72, 24, false, false, 2},
		{24, 3, 88, 24, false, false, 1},
		{24, 5, 96, 40, true, true, 2},
		{40, 5, 240, 40, true, true, 1},
		{40, 5, 240, 40, true, true, 1},
		{40, 5, 120, 48, true, true, 1},
		{48, 5, 144, 48, true, true, 1},
		{48, 5, 288, 96, true, true, 2},
		{96, 5, 576, 96, true, true, 1},
		{96, 5, 576, 96, true, true, 1},
	}
)

// MobileNetV3Large returns MobileNetV3-Large; Options.Width is the width
// multiplier in 1/64 steps (64: 1.0).
func MobileNetV3Large(o Options) *MobileNetV3 {
	return newMobileNetV3("mobilenet_v3_large", mobileNetV3Large, 1280, o)
}

// MobileNetV3Small returns MobileNetV3-Small; Options.Width is the width
// multiplier in 1/64 steps (64: 1.0).
func MobileNetV3Small(o Options) *MobileNetV3 {
	return newMobileNetV3("mobilenet_v3_small", mobileNetV3Small, 1024, o)
}

// bnV3 is MobileNetV3's BatchNorm (epsilon 0.001, momentum 0.01).
func bnV3(c int) *nn.BatchNorm { return bnWith(c, 1e-3, 0.01) }

func newMobileNetV3(kind string, setting []mbv3Block, lastChannel int, o Options) *MobileNetV3 {
	o = o.withDefaults()
	mult := float64(o.Width) / 64
	adjust := func(c int) int { return makeDivisible(float64(c)*mult, 8) }
	first := adjust(setting[0].in)
	features := []gluon.Block{convNormAct(o.InChannels, first, 3, 2, 1, bnV3, hardswishBlock)}
	for _, s := range setting {
		features = append(features, newMBV3Block(adjust(s.in), s.kernel, adjust(s.expanded), adjust(s.out), s.se, s.hardswish, s.stride))
	}
	lastIn := adjust(setting[len(setting)-1].out)
	lastOut := 6 * lastIn
	features = append(features, convNormAct(lastIn, lastOut, 1, 1, 1, bnV3, hardswishBlock))
	last := adjust(lastChannel)
	m := &MobileNetV3{BlockMeta: gluon.NewBlockMeta(kind), last: last}
	m.Features = named("features", seq(features...))
	m.Classifier = named("classifier", seq(
		linear(lastOut, last), nn.NewHardSwish(), dropout(rate(o.Dropout, 0.2)), linear(last, o.Classes)))
	m.AddChild(m.Features)
	m.AddChild(m.Classifier)
	return m
}

// Forward maps NCHW images to class scores.
func (m *MobileNetV3) Forward(x *nd.NDArray) *nd.NDArray {
	return m.Classifier.Forward(nd.Flatten(nd.GlobalAvgPool2D(m.Features.Forward(x))))
}

// Head returns "classifier.3".
func (m *MobileNetV3) Head() string { return "classifier.3" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (m *MobileNetV3) ReplaceHead(classes int) *nn.Dense {
	old, _ := child(&m.Classifier.BlockMeta, "3").(*nn.Dense)
	return newHead(&m.BlockMeta, "classifier.3", old, linear(m.last, classes))
}

// ExportONNX writes the MobileNetV3.
func (m *MobileNetV3) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(m.Features, x)
	if err != nil {
		return "", err
	}
	return pooledHead(g, y, m.Classifier)
}

// mbv3Residual is torchvision's MobileNetV3 InvertedResidual: an
// optional 1×1 expansion, a depthwise convolution, an optional
// squeeze-and-excitation (ReLU, then hardsigmoid), a linear 1×1
// projection, all in "block", and a residual connection when the shape is
// kept.
type mbv3Residual struct {
	gluon.BlockMeta
	block *nn.Sequential
	res   bool
}

func newMBV3Block(in, kernel, expanded, out int, se, hardswish bool, stride int) *mbv3Residual {
	act := reluBlock
	if hardswish {
		act = hardswishBlock
	}
	var layers []gluon.Block
	if expanded != in {
		layers = append(layers, convNormAct(in, expanded, 1, 1, 1, bnV3, act))
	}
	layers = append(layers, convNormAct(expanded, expanded, kernel, stride, expanded, bnV3, act))
	if se {
		layers = append(layers, newSE(expanded, makeDivisible(float64(expanded/4), 8), relu(), nn.NewHardSigmoid()))
	}
	layers = append(layers, convNormAct(expanded, out, 1, 1, 1, bnV3, nil))
	b := &mbv3Residual{BlockMeta: gluon.NewBlockMeta("invertedresidual"), res: stride == 1 && in == out}
	b.block = named("block", seq(layers...))
	b.AddChild(b.block)
	return b
}

func (b *mbv3Residual) Forward(x *nd.NDArray) *nd.NDArray {
	y := b.block.Forward(x)
	if b.res {
		return nd.Add(y, x)
	}
	return y
}

// ExportONNX writes the block.
func (b *mbv3Residual) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(b.block, x)
	if err != nil || !b.res {
		return y, err
	}
	return g.Op("Add", []string{y, x}, nil, 1)[0], nil
}
