package vision

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// ConvNeXt is torchvision's ConvNeXt, with its parameter names:
// features.0.{0,1} (the 4×4 patch convolution and its LayerNorm),
// features.{1,3,5,7}.M (the blocks: block.0 the depthwise 7×7
// convolution, block.2 the LayerNorm, block.3 and block.5 the MLP,
// layer_scale), features.{2,4,6}.{0,1} (LayerNorm and 2×2 downsampling
// convolution), classifier.0 (LayerNorm) and classifier.2. Its
// LayerNorms normalise the channels of NCHW maps (torchvision's
// LayerNorm2d, epsilon 1e-6). Options.Width is the first stage's width;
// the residual branches have stochastic depth (Options.StochasticDepth,
// growing with the block's index to the last block's, as torchvision's).
type ConvNeXt struct {
	gluon.BlockMeta
	Features   *nn.Sequential
	Classifier *nn.Sequential
	last       int
}

// ConvNeXtTiny returns ConvNeXt-Tiny (width 96, 3-3-9-3 blocks,
// stochastic depth 0.1).
func ConvNeXtTiny(o Options) *ConvNeXt {
	return newConvNeXt("convnext_tiny", 96, [4]int{3, 3, 9, 3}, 0.1, o)
}

// ConvNeXtSmall returns ConvNeXt-Small (width 96, 3-3-27-3 blocks,
// stochastic depth 0.4).
func ConvNeXtSmall(o Options) *ConvNeXt {
	return newConvNeXt("convnext_small", 96, [4]int{3, 3, 27, 3}, 0.4, o)
}

// ConvNeXtBase returns ConvNeXt-Base (width 128, 3-3-27-3 blocks,
// stochastic depth 0.5).
func ConvNeXtBase(o Options) *ConvNeXt {
	return newConvNeXt("convnext_base", 128, [4]int{3, 3, 27, 3}, 0.5, o)
}

// ConvNeXtLarge returns ConvNeXt-Large (width 192, 3-3-27-3 blocks,
// stochastic depth 0.5).
func ConvNeXtLarge(o Options) *ConvNeXt {
	return newConvNeXt("convnext_large", 192, [4]int{3, 3, 27, 3}, 0.5, o)
}

// truncNormal stands for torchvision's trunc_normal_(std=0.02) (its
// cut at ±2 is 100 standard deviations out).
var truncNormal = initializer.Normal{Sigma: 0.02}

// convNeXtLayerScale is torchvision's initial layer scale.
const convNeXtLayerScale = 1e-6

func newConvNeXt(kind string, width int, blocks [4]int, sd float64, o Options) *ConvNeXt {
	if o.Width <= 0 {
		o.Width = width
	}
	o = o.withDefaults()
	p := depthRate("vision."+kind, o, sd)
	w := o.Width
	cv := func(in, out, k int) *nn.Conv2D {
		return nn.NewConv2D(out, k, nn.Conv2DOpts{Stride: [2]int{k, k}, InChannels: in, WeightInit: truncNormal})
	}
	features := []gluon.Block{seq(cv(o.InChannels, w, 4), layerNorm2D(w))}
	total := blocks[0] + blocks[1] + blocks[2] + blocks[3]
	id := 0
	for i, n := range blocks {
		c := w << i
		var stage []gluon.Block
		for range n {
			stage = append(stage, newCNBlock(c, p*float64(id)/float64(total-1)))
			id++
		}
		features = append(features, seq(stage...))
		if i < len(blocks)-1 {
			features = append(features, seq(layerNorm2D(c), cv(c, 2*c, 2)))
		}
	}
	last := w << 3
	m := &ConvNeXt{BlockMeta: gluon.NewBlockMeta(kind), last: last}
	m.Features = named("features", seq(features...))
	m.Classifier = named("classifier", seq(layerNorm2D(last), nn.NewFlatten(), convNeXtHead(last, o.Classes)))
	m.AddChild(m.Features)
	m.AddChild(m.Classifier)
	return m
}

func convNeXtHead(in, classes int) *nn.Dense {
	return nn.NewDense(classes, nn.DenseOpts{InUnits: in, WeightInit: truncNormal})
}

// layerNorm2D is torchvision's LayerNorm2d: a LayerNorm of the channels
// (axis 1) of NCHW maps, epsilon 1e-6.
func layerNorm2D(c int) *nn.LayerNorm { return layerNormAxis(1, c) }

// Forward maps NCHW images to class scores.
func (m *ConvNeXt) Forward(x *nd.NDArray) *nd.NDArray {
	return m.Classifier.Forward(nd.GlobalAvgPool2D(m.Features.Forward(x)))
}

// Head returns "classifier.2".
func (m *ConvNeXt) Head() string { return "classifier.2" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (m *ConvNeXt) ReplaceHead(classes int) *nn.Dense {
	old, _ := child(&m.Classifier.BlockMeta, "2").(*nn.Dense)
	return newHead(&m.BlockMeta, "classifier.2", old, linear(m.last, classes))
}

// ExportONNX writes the ConvNeXt.
func (m *ConvNeXt) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(m.Features, x)
	if err != nil {
		return "", err
	}
	return g.Block(m.Classifier, g.Op("GlobalAveragePool", []string{y}, nil, 1)[0])
}

// cnBlock is torchvision's CNBlock: a depthwise 7×7 convolution, then in
// NHWC a LayerNorm and an MLP (4× wide, GELU), scaled per channel by
// layer_scale, with stochastic depth, around a residual connection.
type cnBlock struct {
	gluon.BlockMeta
	block *nn.Sequential
	scale *gluon.Parameter
	drop  float64
}

func newCNBlock(c int, drop float64) *cnBlock {
	b := &cnBlock{BlockMeta: gluon.NewBlockMeta("cnblock"), drop: drop}
	b.scale = b.AddParam(gluon.NewParameter("layer_scale", c, 1, 1))
	b.scale.Init = initializer.Constant{Value: convNeXtLayerScale}
	dw := nn.NewConv2D(c, 7, nn.Conv2DOpts{Pad: [2]int{3, 3}, Groups: c, InChannels: c, WeightInit: truncNormal})
	mlp := func(in, out int) *nn.Dense {
		return nn.NewDense(out, nn.DenseOpts{InUnits: in, NoFlatten: true, WeightInit: truncNormal})
	}
	b.block = named("block", seq(dw, permute(0, 2, 3, 1), layerNorm(c), mlp(c, 4*c), nn.NewGELU(false), mlp(4*c, c), permute(0, 3, 1, 2)))
	b.AddChild(b.block)
	return b
}

func (b *cnBlock) Forward(x *nd.NDArray) *nd.NDArray {
	y := nd.Mul(b.scale.DataFor(x), b.block.Forward(x))
	return nd.Add(stochasticDepth(y, b.drop), x)
}

// ExportONNX writes the block (stochastic depth is the identity in
// predict mode).
func (b *cnBlock) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(b.block, x)
	if err != nil {
		return "", err
	}
	y = g.Op("Mul", []string{g.Param(b.scale), y}, nil, 1)[0]
	return g.Op("Add", []string{y, x}, nil, 1)[0], nil
}

// permute is torchvision's Permute: the axes of x in the order given.
func permute(axes ...int) *fn {
	return &fn{gluon.NewBlockMeta("permute"), func(x *nd.NDArray) *nd.NDArray { return nd.Transpose(x, axes...) },
		func(g gluon.ONNXGraph, x string) string {
			return g.Op("Transpose", []string{x}, map[string]any{"perm": axes}, 1)[0]
		}}
}
