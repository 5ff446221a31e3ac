package vision

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// VGG is torchvision's VGG, with its parameter names: features.N (the
// convolutions and, with BatchNorm, their norms, at torchvision's
// indices), classifier.0, classifier.3, classifier.6.
type VGG struct {
	gluon.BlockMeta
	Features   *nn.Sequential
	Classifier *nn.Sequential
	avgPool    *nn.AdaptiveAvgPool2D
	hidden     int
}

// The VGG configurations (torchvision's cfgs "A", "B", "D" and "E"):
// output channels in multiples of the first stage's width, 0 for a max
// pool.
var (
	vgg11 = []int{1, 0, 2, 0, 4, 4, 0, 8, 8, 0, 8, 8, 0}
	vgg13 = []int{1, 1, 0, 2, 2, 0, 4, 4, 0, 8, 8, 0, 8, 8, 0}
	vgg16 = []int{1, 1, 0, 2, 2, 0, 4, 4, 4, 0, 8, 8, 8, 0, 8, 8, 8, 0}
	vgg19 = []int{1, 1, 0, 2, 2, 0, 4, 4, 4, 4, 0, 8, 8, 8, 8, 0, 8, 8, 8, 8, 0}
)

// VGG11 returns VGG-11 (configuration A); batchNorm adds a BatchNorm
// after every convolution (vgg11_bn).
func VGG11(batchNorm bool, o Options) *VGG { return newVGG("vgg11", vgg11, batchNorm, o) }

// VGG13 returns VGG-13 (configuration B); batchNorm gives vgg13_bn.
func VGG13(batchNorm bool, o Options) *VGG { return newVGG("vgg13", vgg13, batchNorm, o) }

// VGG16 returns VGG-16 (configuration D); batchNorm gives vgg16_bn.
func VGG16(batchNorm bool, o Options) *VGG { return newVGG("vgg16", vgg16, batchNorm, o) }

// VGG19 returns VGG-19 (configuration E); batchNorm gives vgg19_bn.
func VGG19(batchNorm bool, o Options) *VGG { return newVGG("vgg19", vgg19, batchNorm, o) }

func newVGG(kind string, cfg []int, batchNorm bool, o Options) *VGG {
	o = o.withDefaults()
	dropout := o.Dropout
	if dropout == 0 {
		dropout = 0.5
	}
	var layers []gluon.Block
	in := o.InChannels
	for _, c := range cfg {
		if c == 0 {
			layers = append(layers, nn.NewMaxPool2D(2, nn.PoolOpts{Stride: [2]int{2, 2}}))
			continue
		}
		out := c * o.Width
		cv := nn.NewConv2D(out, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: in, WeightInit: kaiming})
		layers = append(layers, cv)
		if batchNorm {
			layers = append(layers, bn(out))
		}
		layers = append(layers, relu())
		in = out
	}
	drop := func() gluon.Block {
		if dropout > 0 {
			return nn.NewDropout(dropout)
		}
		return identity()
	}
	v := &VGG{BlockMeta: gluon.NewBlockMeta(kind), hidden: o.Hidden}
	v.Features = named("features", seq(layers...))
	v.Classifier = named("classifier", seq(
		linear(in*7*7, o.Hidden), relu(), drop(),
		linear(o.Hidden, o.Hidden), relu(), drop(),
		linear(o.Hidden, o.Classes)))
	v.avgPool = named("avgpool", nn.NewAdaptiveAvgPool2D(7, 7))
	v.AddChild(v.Features)
	v.AddChild(v.avgPool)
	v.AddChild(v.Classifier)
	return v
}

// Forward maps NCHW images to class scores; the features are pooled to
// 7×7 (adaptive average pooling) whatever the input size.
func (v *VGG) Forward(x *nd.NDArray) *nd.NDArray {
	return v.Classifier.Forward(nd.Flatten(v.avgPool.Forward(v.Features.Forward(x))))
}

// Head returns "classifier.6".
func (v *VGG) Head() string { return "classifier.6" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (v *VGG) ReplaceHead(classes int) *nn.Dense {
	old, _ := child(&v.Classifier.BlockMeta, "6").(*nn.Dense)
	return newHead(&v.BlockMeta, "classifier.6", old, linear(v.hidden, classes))
}
