// Package vision is Goluon's model zoo of image classifiers, Gluon's
// model_zoo.vision and torchvision.models: ResNet-18, 34 and 50, VGG-11
// and VGG-16 with and without BatchNorm, MobileNetV2 and the Vision
// Transformer (ViT-B/16, or smaller through ViTOptions), built with
// torchvision's layouts so that their parameter names and shapes are the
// keys and shapes of torchvision's state_dict() (BatchNorm running
// statistics included; num_batches_tracked, which Goluon's BatchNorm does
// not keep, is skipped when loading and written as 0 when saving).
//
//	net := vision.ResNet18(vision.Options{Classes: 10})
//	params := gluon.CollectParams(net)
//	err := vision.LoadStateDict(params, "resnet18.safetensors", devs)
//
// tools/torch2safetensors.py converts a PyTorch .pth state dict (no other
// Python package needed). Outputs equal torchvision's within 1e-4 on
// seeded random weights (testdata/make_fixtures.py makes the fixtures).
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
	// Width scales the network: ResNet's and VGG's first stage width
	// (default 64; the later stages are 2, 4 and 8 times as wide),
	// MobileNetV2's width multiplier in 1/64 steps (64 is 1.0). Small
	// widths make test-sized networks of the same layout.
	Width int
	// Hidden is VGG's classifier width (default 4096).
	Hidden int
	// Dropout is the classifier's dropout rate (default: VGG 0.5,
	// MobileNetV2 0.2; negative for none).
	Dropout float64
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

// Model is what every model of the zoo offers besides Forward.
type Model interface {
	gluon.Block
	// Head is the name of the classifier layer, the one transfer
	// learning replaces ("fc", "classifier.6", "classifier.1",
	// "heads.head").
	Head() string
	// ReplaceHead puts a new classifier for classes classes in its
	// place, initialised on the old one's contexts if that was
	// initialised, and returns it.
	ReplaceHead(classes int) *nn.Dense
}

// FreezeAllButHead sets GradReq null on every parameter of net but the
// head's, so that a Trainer over all the parameters (or only those with a
// gradient) fine-tunes the head alone.
func FreezeAllButHead(net Model) {
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
func Unfreeze(net Model) {
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
	if old != nil && old.Weight.Initialized() {
		ps := []*gluon.Parameter{head.Weight, head.Bias}
		for _, p := range ps {
			if err := p.Initialize(nil, old.Weight.Contexts(), false); err != nil {
				nd.Panicf("vision.ReplaceHead", nd.ErrArgument, "%v", err)
			}
		}
	}
	if old != nil && old.Weight.DType() != head.Weight.DType() { // a network cast to another dtype
		if err := gluon.Cast(head, old.Weight.DType()); err != nil {
			nd.Panicf("vision.ReplaceHead", nd.ErrArgument, "%v", err)
		}
	}
	return head
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
