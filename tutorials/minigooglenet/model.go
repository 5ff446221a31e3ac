package main

import (
	"fmt"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// Keras' BatchNormalization defaults, which the tutorial's model uses
// (Gluon's are momentum 0.9 and epsilon 1e-5).
const (
	kerasBNMomentum = 0.99
	kerasBNEpsilon  = 1e-3
)

// convModule is the tutorial's conv_module(x, K, kX, kY, stride, chanDim,
// padding): a K-filter kernel×kernel convolution, batch normalisation over
// the channel axis and a ReLU. With same set it pads by kernel/2, which
// is Keras' padding="same" for the odd kernels and stride 1 it is used
// with here; otherwise it does not pad (padding="valid"). in is the number
// of input channels, given so that every shape is known before the first
// batch (the parameter count, the checkpoints).
func convModule(in, k, kernel, stride int, same bool) *nn.Sequential {
	pad := 0
	if same {
		pad = kernel / 2
	}
	return nn.NewSequential(
		named("conv", nn.NewConv2D(k, kernel, nn.Conv2DOpts{
			Stride: [2]int{stride, stride}, Pad: [2]int{pad, pad}, InChannels: in,
		})),
		named("bn", nn.NewBatchNorm(nn.BatchNormOpts{
			Momentum: new(kerasBNMomentum), Epsilon: new(kerasBNEpsilon), InChannels: k,
		})),
		named("relu", nn.NewActivation("relu")),
	)
}

// inceptionModule is the tutorial's inception_module: a 1x1 and a 3x3
// conv_module side by side on the same input, their outputs concatenated
// on the channel axis. It returns the module and its output channels.
func inceptionModule(in, k1x1, k3x3 int) (*nn.Concurrent, int) {
	return nn.NewConcurrent(
		named("branch1x1", convModule(in, k1x1, 1, 1, true)),
		named("branch3x3", convModule(in, k3x3, 3, 1, true)),
	), k1x1 + k3x3
}

// downsampleModule is the tutorial's downsample_module: a 3x3 stride-2
// "valid" conv_module beside a 3x3 stride-2 max pool, concatenated on the
// channel axis. Both halve the spatial size the same way ((n-3)/2+1), and
// the pool keeps the input's channels, so the output has k+in channels.
func downsampleModule(in, k int) (*nn.Concurrent, int) {
	return nn.NewConcurrent(
		named("conv3x3", convModule(in, k, 3, 2, false)),
		named("pool", nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}})),
	), k + in
}

// builder appends modules to a Sequential, keeping track of the channel
// count and naming the modules as the tutorial's build() lists them.
type builder struct {
	net   *nn.Sequential
	ch    int            // channels the next module receives
	count map[string]int // modules of each kind so far
}

func (b *builder) add(kind string, m gluon.Block, out int) {
	m.Meta().SetName(fmt.Sprintf("%s%d", kind, b.count[kind]))
	b.count[kind]++
	b.net.Add(m)
	b.ch = out
}

func (b *builder) conv(k, kernel int) { b.add("conv", convModule(b.ch, k, kernel, 1, true), k) }

func (b *builder) inception(k1x1, k3x3 int) {
	m, out := inceptionModule(b.ch, k1x1, k3x3)
	b.add("inception", m, out)
}

func (b *builder) downsample(k int) {
	m, out := downsampleModule(b.ch, k)
	b.add("downsample", m, out)
}

// MiniGoogLeNet returns the tutorial's network for 32×32 RGB images (NCHW)
// and the given number of classes. It ends in the class scores (logits):
// the Keras model's final softmax is folded into the softmax cross-entropy
// loss, and argmax, hence accuracy, is the same either way.
func MiniGoogLeNet(classes int) *nn.Sequential { return MiniGoogLeNetFor(3, classes) }

// MiniGoogLeNetFor is MiniGoogLeNet for 32×32 images of the given number
// of channels (1 for Fashion-MNIST padded to 32×32).
func MiniGoogLeNetFor(channels, classes int) *nn.Sequential {
	b := &builder{net: nn.NewSequential(), ch: channels, count: map[string]int{}}
	b.conv(96, 3)
	// two Inception modules followed by a downsample module: 32×32 → 15×15
	b.inception(32, 32)
	b.inception(32, 48)
	b.downsample(80)
	// four Inception modules followed by a downsample module: 15×15 → 7×7
	b.inception(112, 48)
	b.inception(96, 64)
	b.inception(80, 80)
	b.inception(48, 96)
	b.downsample(96)
	// two Inception modules followed by a 7×7 average pool and dropout
	b.inception(176, 160)
	b.inception(176, 160)
	b.add("pool", nn.NewAvgPool2D(7, nn.PoolOpts{}), b.ch)
	b.add("dropout", nn.NewDropout(0.5), b.ch)
	// the classifier
	b.add("flatten", nn.NewFlatten(), b.ch)
	b.add("dense", nn.NewDense(classes, nn.DenseOpts{InUnits: b.ch}), classes)
	return b.net
}

// named sets a block's name and returns it.
func named[B gluon.Block](name string, b B) B {
	b.Meta().SetName(name)
	return b
}

// paramCount counts the values of the parameters, split as Keras'
// model.summary() does: trainable ones (weights, biases, BatchNorm's gamma
// and beta) and the rest (BatchNorm's running mean and variance).
func paramCount(pd *gluon.ParamDict) (trainable, nonTrainable int) {
	for _, p := range pd.List() {
		n := 1
		for _, d := range p.Shape() {
			n *= d
		}
		if p.GradReq() == nd.GradNull {
			nonTrainable += n
		} else {
			trainable += n
		}
	}
	return trainable, nonTrainable
}
