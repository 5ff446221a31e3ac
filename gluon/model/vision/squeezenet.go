package vision

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// SqueezeNet is torchvision's SqueezeNet 1.0 or 1.1, with its parameter
// names: features.0 (stem convolution), features.N.{squeeze, expand1x1,
// expand3x3} (the Fire modules), classifier.1 (the final 1×1
// convolution, which is the head). Options.Width is a width multiplier in
// 1/64 steps (64: 1.0). Its head being a convolution, SqueezeNet is not a
// Model: its ReplaceHead returns the new convolution.
type SqueezeNet struct {
	gluon.BlockMeta
	Features   *nn.Sequential
	Classifier *nn.Sequential
	last       int
}

// SqueezeNet1_0 returns SqueezeNet 1.0.
func SqueezeNet1_0(o Options) *SqueezeNet { return newSqueezeNet("squeezenet1_0", false, o) }

// SqueezeNet1_1 returns SqueezeNet 1.1 (a 3×3 stem of 64 channels and
// earlier pooling: 2.4 times less computation than 1.0).
func SqueezeNet1_1(o Options) *SqueezeNet { return newSqueezeNet("squeezenet1_1", true, o) }

// squeezeInit is kaiming_uniform_ (fan_in, ReLU gain): U(±√(6/fan_in)).
var squeezeInit = initializer.Xavier{Factor: initializer.FactorIn, Magnitude: 6}

func newSqueezeNet(kind string, v11 bool, o Options) *SqueezeNet {
	o = o.withDefaults()
	ch := func(c int) int { return max(1, c*o.Width/64) }
	pool := func() gluon.Block {
		return nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}, CeilMode: true})
	}
	// fire is a Fire module of squeeze s and expansions e (both branches)
	// on in channels, which it updates.
	in := 0
	fire := func(s, e int) gluon.Block {
		f := newFire(in, ch(s), ch(e), ch(e))
		in = 2 * ch(e)
		return f
	}
	var layers []gluon.Block
	if v11 {
		in = ch(64)
		layers = []gluon.Block{convSqueeze(o.InChannels, in, 3, 2, 0), relu(), pool(),
			fire(16, 64), fire(16, 64), pool(),
			fire(32, 128), fire(32, 128), pool(),
			fire(48, 192), fire(48, 192), fire(64, 256), fire(64, 256)}
	} else {
		in = ch(96)
		layers = []gluon.Block{convSqueeze(o.InChannels, in, 7, 2, 0), relu(), pool(),
			fire(16, 64), fire(16, 64), fire(32, 128), pool(),
			fire(32, 128), fire(48, 192), fire(48, 192), fire(64, 256), pool(),
			fire(64, 256)}
	}
	s := &SqueezeNet{BlockMeta: gluon.NewBlockMeta(kind), last: in}
	s.Features = named("features", seq(layers...))
	s.Classifier = named("classifier", seq(dropout(rate(o.Dropout, 0.5)), squeezeHead(in, o.Classes), relu(), nn.NewAdaptiveAvgPool2D(1, 1)))
	s.AddChild(s.Features)
	s.AddChild(s.Classifier)
	return s
}

// convSqueeze is a convolution with a bias, initialised as SqueezeNet's.
func convSqueeze(in, out, kernel, stride, pad int) *nn.Conv2D {
	return nn.NewConv2D(out, kernel, nn.Conv2DOpts{Stride: [2]int{stride, stride}, Pad: [2]int{pad, pad}, InChannels: in, WeightInit: squeezeInit})
}

// squeezeHead is the final convolution (N(0, 0.01²) weights, zero bias).
func squeezeHead(in, classes int) *nn.Conv2D {
	return nn.NewConv2D(classes, 1, nn.Conv2DOpts{InChannels: in, WeightInit: initializer.Normal{Sigma: 0.01}})
}

// Forward maps NCHW images to class scores.
func (s *SqueezeNet) Forward(x *nd.NDArray) *nd.NDArray {
	return nd.Flatten(s.Classifier.Forward(s.Features.Forward(x)))
}

// Head returns "classifier.1", the final convolution.
func (s *SqueezeNet) Head() string { return "classifier.1" }

// ReplaceHead gives the network a new final convolution for classes
// classes, initialised on the old one's contexts if that was
// initialised, in its dtype, and returns it.
func (s *SqueezeNet) ReplaceHead(classes int) *nn.Conv2D {
	old, _ := child(&s.Classifier.BlockMeta, "1").(*nn.Conv2D)
	head := replaceChild(&s.BlockMeta, "classifier.1", squeezeHead(s.last, classes))
	if old != nil {
		initLike(head, old.Weight)
	}
	return head
}

// ExportONNX writes the SqueezeNet.
func (s *SqueezeNet) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := chain(g, x, s.Features, s.Classifier)
	if err != nil {
		return "", err
	}
	return g.Op("Flatten", []string{y}, map[string]any{"axis": 1}, 1)[0], nil
}

// fire is torchvision's Fire module: a 1×1 squeeze convolution, then 1×1
// and 3×3 expansions concatenated, each with a ReLU.
type fire struct {
	gluon.BlockMeta
	squeeze, expand1, expand3 *nn.Conv2D
}

func newFire(in, squeeze, e1, e3 int) *fire {
	f := &fire{BlockMeta: gluon.NewBlockMeta("fire")}
	f.squeeze = named("squeeze", fireConv(in, squeeze, 1, 0))
	f.expand1 = named("expand1x1", fireConv(squeeze, e1, 1, 0))
	f.expand3 = named("expand3x3", fireConv(squeeze, e3, 3, 1))
	f.AddChild(f.squeeze)
	f.AddChild(f.expand1)
	f.AddChild(f.expand3)
	return f
}

// fireConv is a Fire module's convolution, with its ReLU.
func fireConv(in, out, kernel, pad int) *nn.Conv2D {
	return nn.NewConv2D(out, kernel, nn.Conv2DOpts{Pad: [2]int{pad, pad}, InChannels: in, Act: "relu", WeightInit: squeezeInit})
}

func (f *fire) Forward(x *nd.NDArray) *nd.NDArray {
	x = f.squeeze.Forward(x)
	return nd.Concat([]*nd.NDArray{f.expand1.Forward(x), f.expand3.Forward(x)}, 1)
}

// ExportONNX writes the module.
func (f *fire) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	s, err := g.Block(f.squeeze, x)
	if err != nil {
		return "", err
	}
	a, err := g.Block(f.expand1, s)
	if err != nil {
		return "", err
	}
	b, err := g.Block(f.expand3, s)
	if err != nil {
		return "", err
	}
	return g.Op("Concat", []string{a, b}, map[string]any{"axis": 1}, 1)[0], nil
}
