package vision

import (
	"fmt"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// DenseNet is torchvision's DenseNet-BC, with its parameter names:
// features.conv0, features.norm0, features.denseblockN.denselayerM.{norm1,
// conv1, norm2, conv2}, features.transitionN.{norm, conv},
// features.norm5, classifier. Options.Width is the stem's width
// (num_init_features) and the growth rate is half of it, as in every
// torchvision DenseNet; Options.Dropout is the dropout after each dense
// layer (torchvision's drop_rate, default 0). State dicts of the
// torchvision checkpoints, whose dense layers are named norm.1, conv.1,
// ..., load too (LoadStateDict renames them as torchvision does).
type DenseNet struct {
	gluon.BlockMeta
	Features   *nn.Sequential
	Classifier *nn.Dense
	feat       int
}

// DenseNet121 returns DenseNet-121 (growth rate 32, 6-12-24-16 layers).
func DenseNet121(o Options) *DenseNet {
	return newDenseNet("densenet121", 64, [4]int{6, 12, 24, 16}, o)
}

// DenseNet161 returns DenseNet-161 (stem width 96, growth rate 48,
// 6-12-36-24 layers).
func DenseNet161(o Options) *DenseNet {
	return newDenseNet("densenet161", 96, [4]int{6, 12, 36, 24}, o)
}

// DenseNet169 returns DenseNet-169 (growth rate 32, 6-12-32-32 layers).
func DenseNet169(o Options) *DenseNet {
	return newDenseNet("densenet169", 64, [4]int{6, 12, 32, 32}, o)
}

// DenseNet201 returns DenseNet-201 (growth rate 32, 6-12-48-32 layers).
func DenseNet201(o Options) *DenseNet {
	return newDenseNet("densenet201", 64, [4]int{6, 12, 48, 32}, o)
}

// denseBNSize is torchvision's bn_size: a dense layer's bottleneck is
// bn_size times the growth rate wide.
const denseBNSize = 4

func newDenseNet(kind string, width int, blocks [4]int, o Options) *DenseNet {
	if o.Width <= 0 {
		o.Width = width
	}
	o = o.withDefaults()
	growth := o.Width / 2
	if growth < 1 {
		nd.Panicf("vision."+kind, nd.ErrArgument, "width %d leaves no growth rate", o.Width)
	}
	drop := max(o.Dropout, 0)
	d := &DenseNet{BlockMeta: gluon.NewBlockMeta(kind)}
	d.Features = named("features", nn.NewSequential(
		named("conv0", convInit(o.InChannels, o.Width, 7, 2, 3, 1, kaimingIn)),
		named("norm0", bn(o.Width)),
		named("relu0", relu()),
		named("pool0", nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}})),
	))
	c := o.Width
	for i, n := range blocks {
		b := &denseBlock{BlockMeta: gluon.NewBlockMeta("denseblock")}
		for j := range n {
			b.AddChild(named(fmt.Sprintf("denselayer%d", j+1), newDenseLayer(c+j*growth, growth, drop)))
		}
		d.Features.Add(named(fmt.Sprintf("denseblock%d", i+1), b))
		c += n * growth
		if i < len(blocks)-1 {
			d.Features.Add(named(fmt.Sprintf("transition%d", i+1), nn.NewSequential(
				named("norm", bn(c)), named("relu", relu()), named("conv", convInit(c, c/2, 1, 1, 0, 1, kaimingIn)),
				named("pool", nn.NewAvgPool2D(2, nn.PoolOpts{Stride: [2]int{2, 2}})))))
			c /= 2
		}
	}
	d.Features.Add(named("norm5", bn(c)))
	d.feat = c
	d.Classifier = named("classifier", denseHead(c, o.Classes))
	d.AddChild(d.Features)
	d.AddChild(d.Classifier)
	return d
}

// denseHead is DenseNet's classifier, initialised as torchvision's
// (PyTorch's default weights, zero bias).
func denseHead(in, classes int) *nn.Dense {
	return nn.NewDense(classes, nn.DenseOpts{InUnits: in, WeightInit: torchLinear})
}

// Forward maps NCHW images to class scores.
func (d *DenseNet) Forward(x *nd.NDArray) *nd.NDArray {
	return d.Classifier.Forward(nd.Flatten(nd.GlobalAvgPool2D(nd.Relu(d.Features.Forward(x)))))
}

// Head returns "classifier".
func (d *DenseNet) Head() string { return "classifier" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (d *DenseNet) ReplaceHead(classes int) *nn.Dense {
	d.Classifier = newHead(&d.BlockMeta, "classifier", d.Classifier, linear(d.feat, classes))
	return d.Classifier
}

// ExportONNX writes the DenseNet.
func (d *DenseNet) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(d.Features, x)
	if err != nil {
		return "", err
	}
	return pooledHead(g, onnxRelu(g, y), d.Classifier)
}

// denseBlock is torchvision's _DenseBlock: each layer sees the block's
// input and every earlier layer's output, concatenated along the
// channels, and the block's output is all of them.
type denseBlock struct{ gluon.BlockMeta }

func (b *denseBlock) Forward(x *nd.NDArray) *nd.NDArray {
	for _, c := range b.Children() {
		x = nd.Concat([]*nd.NDArray{x, c.(*denseLayer).Forward(x)}, 1)
	}
	return x
}

// ExportONNX writes the block.
func (b *denseBlock) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	for _, c := range b.Children() {
		y, err := g.Block(c, x)
		if err != nil {
			return "", err
		}
		x = g.Op("Concat", []string{x, y}, map[string]any{"axis": 1}, 1)[0]
	}
	return x, nil
}

// denseLayer is torchvision's _DenseLayer: BatchNorm, ReLU, a 1×1
// convolution to bn_size·growth channels, BatchNorm, ReLU, a 3×3
// convolution to growth channels, and dropout.
type denseLayer struct {
	gluon.BlockMeta
	norm1, norm2 *nn.BatchNorm
	conv1, conv2 *nn.Conv2D
	drop         float64
}

func newDenseLayer(in, growth int, drop float64) *denseLayer {
	l := &denseLayer{BlockMeta: gluon.NewBlockMeta("denselayer"), drop: drop}
	mid := denseBNSize * growth
	l.norm1 = named("norm1", bn(in))
	l.conv1 = named("conv1", convInit(in, mid, 1, 1, 0, 1, kaimingIn))
	l.norm2 = named("norm2", bn(mid))
	l.conv2 = named("conv2", convInit(mid, growth, 3, 1, 1, 1, kaimingIn))
	for _, c := range []gluon.Component{l.norm1, l.conv1, l.norm2, l.conv2} {
		l.AddChild(c)
	}
	return l
}

func (l *denseLayer) Forward(x *nd.NDArray) *nd.NDArray {
	y := l.conv1.Forward(l.norm1.ForwardRelu(x))
	y = l.conv2.Forward(l.norm2.ForwardRelu(y))
	if l.drop > 0 {
		y = nd.Dropout(y, l.drop)
	}
	return y
}

// ExportONNX writes the layer (no dropout: predict mode).
func (l *denseLayer) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(l.norm1, x)
	if err != nil {
		return "", err
	}
	if y, err = g.Block(l.conv1, onnxRelu(g, y)); err != nil {
		return "", err
	}
	if y, err = g.Block(l.norm2, y); err != nil {
		return "", err
	}
	return g.Block(l.conv2, onnxRelu(g, y))
}
