package vision

import (
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// EfficientNet is torchvision's EfficientNet (B0 to B7), with its
// parameter names: features.0.0 (stem convolution), features.N.M.block.K
// (the MBConv blocks of stage N: expansion, depthwise convolution,
// squeeze-and-excitation with fc1 and fc2, projection), features.8.0 (the
// last 1×1 convolution), classifier.1. Options.Width scales the variant's
// width multiplier (64: the variant's own); the residual branches have
// stochastic depth (Options.StochasticDepth, default 0.2, growing with
// the block's index as torchvision's).
type EfficientNet struct {
	gluon.BlockMeta
	Features   *nn.Sequential
	Classifier *nn.Sequential
	last       int
}

// effVariant is one of torchvision's efficientnet_bN: width and depth
// multipliers, classifier dropout, and BatchNorm epsilon and momentum.
type effVariant struct {
	kind               string
	width, depth, drop float64
	bnEps, bnMomentum  float64
}

// effStage is a row of torchvision's MBConv setting: expansion ratio,
// kernel, stride, input and output channels, layers (before the
// multipliers).
type effStage struct {
	expand                        float64
	kernel, stride, in, out, reps int
}

var effStages = []effStage{
	{1, 3, 1, 32, 16, 1},
	{6, 3, 2, 16, 24, 2},
	{6, 5, 2, 24, 40, 2},
	{6, 3, 2, 40, 80, 3},
	{6, 5, 1, 80, 112, 3},
	{6, 5, 2, 112, 192, 4},
	{6, 3, 1, 192, 320, 1},
}

// EfficientNetB0 returns EfficientNet-B0 (width 1.0, depth 1.0, dropout 0.2).
func EfficientNetB0(o Options) *EfficientNet {
	return newEfficientNet(effVariant{"efficientnet_b0", 1.0, 1.0, 0.2, 1e-5, 0.1}, o)
}

// EfficientNetB1 returns EfficientNet-B1 (width 1.0, depth 1.1, dropout 0.2).
func EfficientNetB1(o Options) *EfficientNet {
	return newEfficientNet(effVariant{"efficientnet_b1", 1.0, 1.1, 0.2, 1e-5, 0.1}, o)
}

// EfficientNetB2 returns EfficientNet-B2 (width 1.1, depth 1.2, dropout 0.3).
func EfficientNetB2(o Options) *EfficientNet {
	return newEfficientNet(effVariant{"efficientnet_b2", 1.1, 1.2, 0.3, 1e-5, 0.1}, o)
}

// EfficientNetB3 returns EfficientNet-B3 (width 1.2, depth 1.4, dropout 0.3).
func EfficientNetB3(o Options) *EfficientNet {
	return newEfficientNet(effVariant{"efficientnet_b3", 1.2, 1.4, 0.3, 1e-5, 0.1}, o)
}

// EfficientNetB4 returns EfficientNet-B4 (width 1.4, depth 1.8, dropout 0.4).
func EfficientNetB4(o Options) *EfficientNet {
	return newEfficientNet(effVariant{"efficientnet_b4", 1.4, 1.8, 0.4, 1e-5, 0.1}, o)
}

// EfficientNetB5 returns EfficientNet-B5 (width 1.6, depth 2.2, dropout
// 0.4; BatchNorm epsilon 0.001 and momentum 0.01, as B6 and B7).
func EfficientNetB5(o Options) *EfficientNet {
	return newEfficientNet(effVariant{"efficientnet_b5", 1.6, 2.2, 0.4, 1e-3, 0.01}, o)
}

// EfficientNetB6 returns EfficientNet-B6 (width 1.8, depth 2.6, dropout 0.5).
func EfficientNetB6(o Options) *EfficientNet {
	return newEfficientNet(effVariant{"efficientnet_b6", 1.8, 2.6, 0.5, 1e-3, 0.01}, o)
}

// EfficientNetB7 returns EfficientNet-B7 (width 2.0, depth 3.1, dropout 0.5).
func EfficientNetB7(o Options) *EfficientNet {
	return newEfficientNet(effVariant{"efficientnet_b7", 2.0, 3.1, 0.5, 1e-3, 0.01}, o)
}

func newEfficientNet(v effVariant, o Options) *EfficientNet {
	o = o.withDefaults()
	mult := v.width * float64(o.Width) / 64
	adjust := func(c int) int { return makeDivisible(float64(c)*mult, 8) }
	norm := func(c int) *nn.BatchNorm { return bnWith(c, v.bnEps, v.bnMomentum) }
	sd := depthRate("vision."+v.kind, o, 0.2)
	reps := make([]int, len(effStages))
	total := 0
	for i, s := range effStages {
		reps[i] = int(math.Ceil(float64(s.reps) * v.depth))
		total += reps[i]
	}
	features := []gluon.Block{convNormAct(o.InChannels, adjust(effStages[0].in), 3, 2, 1, norm, siluBlock)}
	id := 0
	for i, s := range effStages {
		in, out := adjust(s.in), adjust(s.out)
		var stage []gluon.Block
		for j := range reps[i] {
			stride := s.stride
			if j > 0 {
				in, stride = out, 1
			}
			stage = append(stage, newMBConv(in, out, s.kernel, stride, s.expand, sd*float64(id)/float64(total), norm))
			id++
		}
		features = append(features, seq(stage...))
	}
	lastIn := adjust(effStages[len(effStages)-1].out)
	last := 4 * lastIn
	features = append(features, convNormAct(lastIn, last, 1, 1, 1, norm, siluBlock))
	e := &EfficientNet{BlockMeta: gluon.NewBlockMeta(v.kind), last: last}
	e.Features = named("features", seq(features...))
	e.Classifier = named("classifier", seq(dropout(rate(o.Dropout, v.drop)), effHead(last, o.Classes)))
	e.AddChild(e.Features)
	e.AddChild(e.Classifier)
	return e
}

// effHead is EfficientNet's classifier, initialised as torchvision's
// (U(−1/√classes, 1/√classes), zero bias).
func effHead(in, classes int) *nn.Dense {
	return nn.NewDense(classes, nn.DenseOpts{InUnits: in, WeightInit: initializer.Xavier{Factor: initializer.FactorOut, Magnitude: 1}})
}

// Forward maps NCHW images to class scores.
func (e *EfficientNet) Forward(x *nd.NDArray) *nd.NDArray {
	return e.Classifier.Forward(nd.Flatten(nd.GlobalAvgPool2D(e.Features.Forward(x))))
}

// Head returns "classifier.1".
func (e *EfficientNet) Head() string { return "classifier.1" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (e *EfficientNet) ReplaceHead(classes int) *nn.Dense {
	old, _ := child(&e.Classifier.BlockMeta, "1").(*nn.Dense)
	return newHead(&e.BlockMeta, "classifier.1", old, linear(e.last, classes))
}

// ExportONNX writes the EfficientNet.
func (e *EfficientNet) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(e.Features, x)
	if err != nil {
		return "", err
	}
	return pooledHead(g, y, e.Classifier)
}

// mbConv is torchvision's MBConv: an optional 1×1 expansion, a depthwise
// convolution, squeeze-and-excitation (SiLU, then sigmoid), a linear 1×1
// projection, all with SiLU activations and in "block", and a residual
// connection with stochastic depth when the shape is kept.
type mbConv struct {
	gluon.BlockMeta
	block *nn.Sequential
	res   bool
	drop  float64 // the stochastic depth's probability
}

func newMBConv(in, out, kernel, stride int, expand, drop float64, norm func(int) *nn.BatchNorm) *mbConv {
	expanded := makeDivisible(float64(in)*expand, 8)
	var layers []gluon.Block
	if expanded != in {
		layers = append(layers, convNormAct(in, expanded, 1, 1, 1, norm, siluBlock))
	}
	layers = append(layers,
		convNormAct(expanded, expanded, kernel, stride, expanded, norm, siluBlock),
		newSE(expanded, max(1, in/4), nn.NewSiLU(), nn.NewActivation("sigmoid")),
		convNormAct(expanded, out, 1, 1, 1, norm, nil))
	b := &mbConv{BlockMeta: gluon.NewBlockMeta("mbconv"), res: stride == 1 && in == out, drop: drop}
	b.block = named("block", seq(layers...))
	b.AddChild(b.block)
	return b
}

func (b *mbConv) Forward(x *nd.NDArray) *nd.NDArray {
	y := b.block.Forward(x)
	if !b.res {
		return y
	}
	return nd.Add(stochasticDepth(y, b.drop), x)
}

// ExportONNX writes the block (stochastic depth is the identity in
// predict mode).
func (b *mbConv) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(b.block, x)
	if err != nil || !b.res {
		return y, err
	}
	return g.Op("Add", []string{y, x}, nil, 1)[0], nil
}
