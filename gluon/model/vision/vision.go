// Package vision is Goluon's model zoo of image classifiers, Gluon's
// model_zoo.vision and torchvision.models, built with torchvision's
// layouts so that their parameter names and shapes are the keys and
// shapes of torchvision's state_dict() (BatchNorm running statistics
// included; num_batches_tracked, which Goluon's BatchNorm does not keep,
// is skipped when loading and written as 0 when saving):
//
//   - ResNet-18, 34, 50, 101 and 152; ResNeXt-50 32×4d, ResNeXt-101
//     32×8d and 64×4d; Wide ResNet-50-2 and 101-2 (ResNet with grouped or
//     wider bottlenecks: Options.Groups, Options.WidthPerGroup)
//   - VGG-11, 13, 16 and 19, with and without BatchNorm; AlexNet
//   - GoogLeNet and Inception v3 (auxiliary classifiers in training
//     mode, the input transform of their pretrained weights)
//   - MobileNetV2, MobileNetV3-Large and -Small (hardswish,
//     squeeze-and-excitation with hardsigmoid); MNASNet 0.5, 0.75, 1.0
//     and 1.3; ShuffleNetV2 x0.5, x1.0, x1.5 and x2.0
//   - DenseNet-121, 161, 169 and 201
//   - EfficientNet-B0 to B7 and EfficientNetV2-S, M and L (SiLU,
//     squeeze-and-excitation, fused MBConv blocks, stochastic depth)
//   - RegNetX-400MF to 32GF and RegNetY-400MF to 128GF, or any other
//     RegNet of torchvision's generator (RegNetParams)
//   - ConvNeXt-Tiny, Small, Base and Large (LayerNorm over the channels,
//     layer scale, stochastic depth)
//   - Swin-T, S and B (shifted-window attention with relative position
//     biases, patch merging, stochastic depth)
//   - SqueezeNet 1.0 and 1.1
//   - the Vision Transformer (ViT-B/16, B/32, L/16, L/32 and H/14, or
//     other sizes through ViTOptions)
//
// Options' zero values are torchvision's defaults; Options.Width makes
// narrower networks of the same layout. Every model but SqueezeNet is a
// Model, whose ReplaceHead puts a new classifier in place for transfer
// learning (SqueezeNet's head is a convolution; its ReplaceHead returns
// that). Stochastic depth (EfficientNet, ConvNeXt, Swin) drops residual
// branches per sample in training mode and is the identity in predict
// mode, as torchvision's; every model hybridizes (gluon.Hybridize) and
// exports to ONNX (gluon/onnx) in predict mode.
//
//	net := vision.ResNet18(vision.Options{Classes: 10})
//	params := gluon.CollectParams(net)
//	err := vision.LoadStateDict(params, "resnet18.safetensors", devs)
//
// tools/torch2safetensors.py converts a PyTorch .pth state dict (no other
// Python package needed). Outputs equal torchvision 0.14's within 1e-4 on
// seeded random weights (testdata/make_fixtures.py makes the fixtures:
// width-reduced configurations in the tests, the full sizes with make
// zoo-full).
package vision

import (
	"strings"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// Options configure a model. Zero values are torchvision's defaults.
type Options struct {
	// Classes is the number of output classes (default 1000).
	Classes int
	// InChannels is the number of input channels (default 3).
	InChannels int
	// Width scales the network: the first stage's width of ResNet, VGG,
	// ConvNeXt and Swin (default 64; ConvNeXt's 96, 128 or 192, Swin's
	// 96 or 128; the later stages are 2, 4 and 8 times as wide),
	// DenseNet's stem width (default 64, DenseNet-161's 96; its growth
	// rate is half of it) and RegNet's (default 32; its stages come from
	// RegNetParams); for MobileNetV2, MobileNetV3, MNASNet, EfficientNet
	// (V1 and V2), GoogLeNet, Inception v3, AlexNet and SqueezeNet a
	// width multiplier in 1/64 steps (64, the default, is the model's own
	// width). ShuffleNetV2 takes its widths from NewShuffleNetV2. Small
	// widths make test-sized networks of the same layout.
	Width int
	// Hidden is the classifier width of VGG and AlexNet (default 4096).
	Hidden int
	// Dropout is the classifier's dropout rate (default: VGG, AlexNet,
	// SqueezeNet and Inception v3 0.5, MobileNetV2 and V3, MNASNet and
	// GoogLeNet 0.2, EfficientNet-B0 to B7 0.2 to 0.5, EfficientNetV2
	// 0.2 to 0.4, DenseNet 0 after every dense layer, Swin 0 after its
	// MLPs' layers and attention projections; GoogLeNet's auxiliary
	// classifiers' 0.7 unless set; negative for none).
	Dropout float64
	// Groups and WidthPerGroup are the ResNet bottleneck's
	// (torchvision's groups and width_per_group; default the model's: 1
	// and 64 for ResNet, 32 and 4 for ResNeXt-50 32×4d, 1 and 128 for
	// Wide ResNet-50-2).
	Groups, WidthPerGroup int
	// StochasticDepth is the drop probability of the residual branches'
	// stochastic depth (torchvision's stochastic_depth_prob: EfficientNet
	// (V1 and V2) 0.2, ConvNeXt-Tiny 0.1, Small 0.4, Base and Large 0.5,
	// Swin-T 0.2, S 0.3, B 0.5; the blocks' probabilities grow linearly
	// with depth to it; negative for none).
	// In training mode a branch is dropped for each sample apart, as
	// torchvision's StochasticDepth in "row" mode; in predict mode it is
	// kept.
	StochasticDepth float64
}

func (o Options) withDefaults() Options {
	if o.Classes <= 0 {
		o.Classes = 1000
	}
	if o.InChannels <= 0 {
		o.InChannels = 3
	}
	if o.Width <= 0 {
		o.Width = 64
	}
	if o.Hidden <= 0 {
		o.Hidden = 4096
	}
	return o
}

// Headed is a network with a named classifier layer, its head: every
// Model, and SqueezeNet, whose head is a convolution.
type Headed interface {
	gluon.Block
	// Head is the name of the classifier layer, the one transfer
	// learning replaces ("fc", "classifier.6", "classifier.1",
	// "heads.head").
	Head() string
}

// Model is what every model of the zoo but SqueezeNet offers besides
// Forward.
type Model interface {
	Headed
	// ReplaceHead puts a new classifier for classes classes in its
	// place, initialised on the old one's contexts if that was
	// initialised, and returns it.
	ReplaceHead(classes int) *nn.Dense
}

// FreezeAllButHead sets GradReq null on every parameter of net but the
// head's, so that a Trainer over all the parameters (or only those with a
// gradient) fine-tunes the head alone.
func FreezeAllButHead(net Headed) {
	head := net.Head() + "."
	for _, p := range gluon.CollectParams(net).List() {
		if !strings.HasPrefix(p.Name(), head) {
			p.SetGradReq(nd.GradNull)
		}
	}
}

// Unfreeze undoes FreezeAllButHead: every parameter of net takes a
// gradient again (GradWrite) but the running statistics
// (gluon.Parameter.Statistic), which never do. A Trainer over all of
// net's parameters trains them from its next Step, keeping the head's
// optimizer state: the second stage of fine-tuning.
func Unfreeze(net Headed) {
	for _, p := range gluon.CollectParams(net).List() {
		if !p.Statistic {
			p.SetGradReq(nd.GradWrite)
		}
	}
}

// newHead puts a new classifier in the place of the old one (path) and,
// when the old one was initialised, initialises it on the same contexts
// (normal, standard deviation 0.01, as torchvision's classifiers), in the
// old one's dtype.
func newHead(m *gluon.BlockMeta, path string, old, head *nn.Dense) *nn.Dense {
	replaceChild(m, path, head)
	if old != nil {
		initLike(head, old.Weight)
	}
	return head
}

// initLike initialises head's parameters on the contexts of old (the
// weight of the layer head replaces) if old is initialised, and casts
// head to old's dtype if that differs.
func initLike(head gluon.Component, old *gluon.Parameter) {
	if old.Initialized() {
		for _, p := range head.Meta().Params() { // a Dense or Conv2D: its own weight and bias
			if err := p.Initialize(nil, old.Contexts(), false); err != nil {
				nd.Panicf("vision.ReplaceHead", nd.ErrArgument, "%v", err)
			}
		}
	}
	if old.DType() != head.Meta().Params()[0].DType() { // a network cast to another dtype
		if err := gluon.Cast(head, old.DType()); err != nil {
			nd.Panicf("vision.ReplaceHead", nd.ErrArgument, "%v", err)
		}
	}
}

// replaceChild replaces m's child name (a dotted path: "classifier.6")
// with b.
func replaceChild[B gluon.Component](m *gluon.BlockMeta, path string, b B) B {
	for {
		first, rest, ok := strings.Cut(path, ".")
		if !ok {
			m.ReplaceChild(path, b)
			return b
		}
		m, path = child(m, first).Meta(), rest
	}
}

func child(m *gluon.BlockMeta, name string) gluon.Component {
	for _, c := range m.Children() {
		if c.Meta().Name() == name {
			return c
		}
	}
	nd.Panicf("vision", nd.ErrArgument, "no child named %q", name)
	return nil
}
