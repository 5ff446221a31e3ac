package vision

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// AlexNet is torchvision's AlexNet, with its parameter names: features.0,
// features.3, features.6, features.8, features.10 (the convolutions),
// classifier.1, classifier.4, classifier.6. Options.Width is a width
// multiplier in 1/64 steps (64: 1.0) and Options.Hidden the classifier's
// width (4096).
type AlexNet struct {
	gluon.BlockMeta
	Features   *nn.Sequential
	AvgPool    *nn.AdaptiveAvgPool2D
	Classifier *nn.Sequential
	hidden     int
}

// NewAlexNet returns AlexNet. The features are pooled to 6×6 (adaptive
// average pooling) whatever the input size (at least 63×63).
func NewAlexNet(o Options) *AlexNet {
	o = o.withDefaults()
	ch := func(c int) int { return max(1, c*o.Width/64) }
	cv := func(in, out, k, stride, pad int) *nn.Conv2D {
		return nn.NewConv2D(out, k, nn.Conv2DOpts{Stride: [2]int{stride, stride}, Pad: [2]int{pad, pad}, InChannels: in, WeightInit: torchLinear})
	}
	pool := func() gluon.Block { return nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}}) }
	c1, c2, c3, c4 := ch(64), ch(192), ch(384), ch(256)
	a := &AlexNet{BlockMeta: gluon.NewBlockMeta("alexnet"), hidden: o.Hidden}
	a.Features = named("features", seq(
		cv(o.InChannels, c1, 11, 4, 2), relu(), pool(),
		cv(c1, c2, 5, 1, 2), relu(), pool(),
		cv(c2, c3, 3, 1, 1), relu(),
		cv(c3, c4, 3, 1, 1), relu(),
		cv(c4, c4, 3, 1, 1), relu(), pool()))
	a.AvgPool = named("avgpool", nn.NewAdaptiveAvgPool2D(6, 6))
	drop := rate(o.Dropout, 0.5)
	a.Classifier = named("classifier", seq(
		dropout(drop), alexLinear(c4*6*6, o.Hidden), relu(),
		dropout(drop), alexLinear(o.Hidden, o.Hidden), relu(),
		alexLinear(o.Hidden, o.Classes)))
	a.AddChild(a.Features)
	a.AddChild(a.AvgPool)
	a.AddChild(a.Classifier)
	return a
}

// alexLinear is a Linear layer with PyTorch's default initialisation.
func alexLinear(in, out int) *nn.Dense {
	return nn.NewDense(out, nn.DenseOpts{InUnits: in, WeightInit: torchLinear})
}

// Forward maps NCHW images to class scores.
func (a *AlexNet) Forward(x *nd.NDArray) *nd.NDArray {
	return a.Classifier.Forward(nd.Flatten(a.AvgPool.Forward(a.Features.Forward(x))))
}

// Head returns "classifier.6".
func (a *AlexNet) Head() string { return "classifier.6" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (a *AlexNet) ReplaceHead(classes int) *nn.Dense {
	old, _ := child(&a.Classifier.BlockMeta, "6").(*nn.Dense)
	return newHead(&a.BlockMeta, "classifier.6", old, linear(a.hidden, classes))
}

// ExportONNX writes the AlexNet.
func (a *AlexNet) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := chain(g, x, a.Features, a.AvgPool)
	if err != nil {
		return "", err
	}
	return g.Block(a.Classifier, g.Op("Flatten", []string{y}, map[string]any{"axis": 1}, 1)[0])
}
