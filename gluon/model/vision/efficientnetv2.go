package vision

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// effV2Stage is a row of torchvision's EfficientNetV2 setting: a fused
// (FusedMBConv) or depthwise (MBConv) stage, expansion ratio, kernel,
// stride, input and output channels, layers.
type effV2Stage struct {
	fused                         bool
	expand                        float64
	kernel, stride, in, out, reps int
}

var (
	effV2S = []effV2Stage{
		{true, 1, 3, 1, 24, 24, 2},
		{true, 4, 3, 2, 24, 48, 4},
		{true, 4, 3, 2, 48, 64, 4},
		{false, 4, 3, 2, 64, 128, 6},
		{false, 6, 3, 1, 128, 160, 9},
		{false, 6, 3, 2, 160, 256, 15},
	}
	effV2M = []effV2Stage{
		{true, 1, 3, 1, 24, 24, 3},
		{true, 4, 3, 2, 24, 48, 5},
		{true, 4, 3, 2, 48, 80, 5},
		{false, 4, 3, 2, 80, 160, 7},
		{false, 6, 3, 1, 160, 176, 14},
		{false, 6, 3, 2, 176, 304, 18},
		{false, 6, 3, 1, 304, 512, 5},
	}
	effV2L = []effV2Stage{
		{true, 1, 3, 1, 32, 32, 4},
		{true, 4, 3, 2, 32, 64, 7},
		{true, 4, 3, 2, 64, 96, 7},
		{false, 4, 3, 2, 96, 192, 10},
		{false, 6, 3, 1, 192, 224, 19},
		{false, 6, 3, 2, 224, 384, 25},
		{false, 6, 3, 1, 384, 640, 7},
	}
)

// EfficientNetV2S returns EfficientNetV2-S (fused MBConv blocks in its
// first three stages, a 1280-wide last convolution, dropout 0.2), an
// EfficientNet with the same parameter names; its BatchNorms have
// epsilon 0.001. Options.Width scales the widths, the last convolution's
// included, in 1/64 steps.
func EfficientNetV2S(o Options) *EfficientNet {
	return newEfficientNetV2("efficientnet_v2_s", effV2S, 0.2, o)
}

// EfficientNetV2M returns EfficientNetV2-M (dropout 0.3).
func EfficientNetV2M(o Options) *EfficientNet {
	return newEfficientNetV2("efficientnet_v2_m", effV2M, 0.3, o)
}

// EfficientNetV2L returns EfficientNetV2-L (dropout 0.4).
func EfficientNetV2L(o Options) *EfficientNet {
	return newEfficientNetV2("efficientnet_v2_l", effV2L, 0.4, o)
}

func newEfficientNetV2(kind string, stages []effV2Stage, drop float64, o Options) *EfficientNet {
	o = o.withDefaults()
	mult := float64(o.Width) / 64
	adjust := func(c int) int { return makeDivisible(float64(c)*mult, 8) }
	norm := func(c int) *nn.BatchNorm { return bnWith(c, 1e-3, 0.1) }
	sd := depthRate("vision."+kind, o, 0.2)
	total := 0
	for _, s := range stages {
		total += s.reps
	}
	features := []gluon.Block{convNormAct(o.InChannels, adjust(stages[0].in), 3, 2, 1, norm, siluBlock)}
	id := 0
	for _, s := range stages {
		in, out := adjust(s.in), adjust(s.out)
		var stage []gluon.Block
		for j := range s.reps {
			stride := s.stride
			if j > 0 {
				in, stride = out, 1
			}
			p := sd * float64(id) / float64(total)
			if s.fused {
				stage = append(stage, newFusedMBConv(in, out, s.kernel, stride, s.expand, p, norm))
			} else {
				stage = append(stage, newMBConv(in, out, s.kernel, stride, s.expand, p, norm))
			}
			id++
		}
		features = append(features, seq(stage...))
	}
	lastIn, last := adjust(stages[len(stages)-1].out), adjust(1280)
	features = append(features, convNormAct(lastIn, last, 1, 1, 1, norm, siluBlock))
	e := &EfficientNet{BlockMeta: gluon.NewBlockMeta(kind), last: last}
	e.Features = named("features", seq(features...))
	e.Classifier = named("classifier", seq(dropout(rate(o.Dropout, drop)), effHead(last, o.Classes)))
	e.AddChild(e.Features)
	e.AddChild(e.Classifier)
	return e
}

// fusedMBConv is torchvision's FusedMBConv: a full convolution of the
// block's kernel and stride expanding the channels and a linear 1×1
// projection (or, without expansion, the convolution alone), SiLU
// activations, in "block", and a residual connection with stochastic
// depth when the shape is kept.
type fusedMBConv struct {
	gluon.BlockMeta
	block *nn.Sequential
	res   bool
	drop  float64
}

func newFusedMBConv(in, out, kernel, stride int, expand, drop float64, norm func(int) *nn.BatchNorm) *fusedMBConv {
	expanded := makeDivisible(float64(in)*expand, 8)
	var layers []gluon.Block
	if expanded != in {
		layers = append(layers,
			convNormAct(in, expanded, kernel, stride, 1, norm, siluBlock),
			convNormAct(expanded, out, 1, 1, 1, norm, nil))
	} else {
		layers = append(layers, convNormAct(in, out, kernel, stride, 1, norm, siluBlock))
	}
	b := &fusedMBConv{BlockMeta: gluon.NewBlockMeta("fusedmbconv"), res: stride == 1 && in == out, drop: drop}
	b.block = named("block", seq(layers...))
	b.AddChild(b.block)
	return b
}

func (b *fusedMBConv) Forward(x *nd.NDArray) *nd.NDArray {
	y := b.block.Forward(x)
	if !b.res {
		return y
	}
	return nd.Add(stochasticDepth(y, b.drop), x)
}

// ExportONNX writes the block (stochastic depth is the identity in
// predict mode).
func (b *fusedMBConv) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(b.block, x)
	if err != nil || !b.res {
		return y, err
	}
	return g.Op("Add", []string{y, x}, nil, 1)[0], nil
}
