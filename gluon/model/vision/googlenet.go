package vision

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// GoogLeNet is torchvision's GoogLeNet (Inception v1), with its parameter
// names: conv1 to conv3 (BasicConv2d: conv and bn), inception3a to
// inception5b (branch1, branch2.{0,1}, branch3.{0,1}, branch4.1), aux1
// and aux2 (the auxiliary classifiers: conv, fc1, fc2) and fc. Its max
// poolings round their output sizes up (ceil mode). Forward returns the
// main classifier's scores; ForwardAux the auxiliary classifiers' too, in
// training mode.
type GoogLeNet struct {
	gluon.BlockMeta
	FC         *nn.Dense
	Aux1, Aux2 *googLeNetAux    // nil without the auxiliary classifiers
	parts      [3][]gluon.Block // the trunk: up to aux1, to aux2, after
	drop       gluon.Block
	transform  bool
	feat       int
}

// NewGoogLeNet returns GoogLeNet (torchvision's googlenet: with zero
// options, the layout of its pretrained weights, without auxiliary
// classifiers and with the input transform).
func NewGoogLeNet(o InceptionOptions) *GoogLeNet {
	const op = "vision.NewGoogLeNet"
	o.Options = o.withDefaults()
	aux, transform := o.flags(op, false)
	s := scaler(op, o.Width)
	m := &GoogLeNet{BlockMeta: gluon.NewBlockMeta("googlenet"), transform: transform, feat: s(1024)}
	pool := func(name string, k int) *nn.Pool2D {
		return named(name, nn.NewMaxPool2D(k, nn.PoolOpts{Stride: [2]int{2, 2}, CeilMode: true}))
	}
	inc := func(name string, in, c1, c3r, c3, c5r, c5, pp int) *incBlock {
		return named(name, googLeNetInception(s(in), s(c1), s(c3r), s(c3), s(c5r), s(c5), s(pp)))
	}
	m.parts[0] = []gluon.Block{
		named("conv1", newBasicConv(o.InChannels, s(64), 7, 7, 2, 3, 3, 0.01)),
		pool("maxpool1", 3),
		named("conv2", newBasicConv(s(64), s(64), 1, 1, 1, 0, 0, 0.01)),
		named("conv3", newBasicConv(s(64), s(192), 3, 3, 1, 1, 1, 0.01)),
		pool("maxpool2", 3),
		inc("inception3a", 192, 64, 96, 128, 16, 32, 32),
		inc("inception3b", 256, 128, 128, 192, 32, 96, 64),
		pool("maxpool3", 3),
		inc("inception4a", 480, 192, 96, 208, 16, 48, 64),
	}
	m.parts[1] = []gluon.Block{
		inc("inception4b", 512, 160, 112, 224, 24, 64, 64),
		inc("inception4c", 512, 128, 128, 256, 24, 64, 64),
		inc("inception4d", 512, 112, 144, 288, 32, 64, 64),
	}
	m.parts[2] = []gluon.Block{
		inc("inception4e", 528, 256, 160, 320, 32, 128, 128),
		pool("maxpool4", 2),
		inc("inception5a", 832, 256, 160, 320, 32, 128, 128),
		inc("inception5b", 832, 384, 192, 384, 48, 128, 128),
	}
	for _, part := range m.parts {
		for _, b := range part {
			m.AddChild(b)
		}
	}
	if aux {
		auxDrop := rate(o.Dropout, 0.7)
		m.Aux1 = named("aux1", newGoogLeNetAux(s, s(512), o.Classes, auxDrop))
		m.Aux2 = named("aux2", newGoogLeNetAux(s, s(528), o.Classes, auxDrop))
		m.AddChild(m.Aux1)
		m.AddChild(m.Aux2)
	}
	m.drop = dropout(rate(o.Dropout, 0.2))
	m.FC = named("fc", nn.NewDense(o.Classes, nn.DenseOpts{InUnits: m.feat, WeightInit: initializer.Normal{Sigma: 0.01}}))
	m.AddChild(m.FC)
	return m
}

// googLeNetInception is torchvision's GoogLeNet Inception block: a 1×1
// convolution (branch1), 1×1 then 3×3 (branch2), 1×1 then 3×3 again
// (branch3, torchvision's 3×3 where the paper has 5×5), a 3×3 max pooling
// (ceil mode) then 1×1 (branch4), concatenated.
func googLeNetInception(in, c1, c3r, c3, c5r, c5, pp int) *incBlock {
	bc := func(in, out, k int) *basicConv { return newBasicConv(in, out, k, k, 1, k/2, k/2, 0.01) }
	b1 := named("branch1", bc(in, c1, 1))
	b2 := named("branch2", seq(bc(in, c3r, 1), bc(c3r, c3, 3)))
	b3 := named("branch3", seq(bc(in, c5r, 1), bc(c5r, c5, 3)))
	b4 := named("branch4", seq(pool3(true, true), bc(in, pp, 1)))
	b := newIncBlock("inception", incPath{steps: []gluon.Block{b1}}, incPath{steps: []gluon.Block{b2}},
		incPath{steps: []gluon.Block{b3}}, incPath{steps: []gluon.Block{b4}})
	b.add(b1, b2, b3, b4)
	return b
}

// Forward maps NCHW images to class scores (the main classifier's).
func (m *GoogLeNet) Forward(x *nd.NDArray) *nd.NDArray { return m.forward(x, false)[0] }

// ForwardAux is Forward with, in training mode, the auxiliary
// classifiers' scores after the main ones: aux1's, then aux2's, in the
// order of torchvision's GoogLeNetOutputs (whose field aux_logits2 holds
// aux1's output); in predict mode, or without auxiliary classifiers, the
// main scores alone.
func (m *GoogLeNet) ForwardAux(x *nd.NDArray) []*nd.NDArray { return m.forward(x, true) }

func (m *GoogLeNet) forward(x *nd.NDArray, withAux bool) []*nd.NDArray {
	if m.transform {
		x = transformInput(x)
	}
	withAux = withAux && m.Aux1 != nil && x.Session().IsTraining()
	var aux []*nd.NDArray
	for i, part := range m.parts {
		for _, b := range part {
			x = b.Forward(x)
		}
		if withAux && i < 2 {
			aux = append(aux, [2]*googLeNetAux{m.Aux1, m.Aux2}[i].Forward(x))
		}
	}
	y := m.FC.Forward(m.drop.Forward(nd.Flatten(nd.GlobalAvgPool2D(x))))
	return append([]*nd.NDArray{y}, aux...)
}

// Head returns "fc".
func (m *GoogLeNet) Head() string { return "fc" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead);
// the auxiliary classifiers keep their classes.
func (m *GoogLeNet) ReplaceHead(classes int) *nn.Dense {
	m.FC = newHead(&m.BlockMeta, "fc", m.FC, linear(m.feat, classes))
	return m.FC
}

// ExportONNX writes the GoogLeNet of predict mode (no auxiliary
// classifiers).
func (m *GoogLeNet) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	if m.transform {
		x = onnxTransformInput(g, x)
	}
	var blocks []gluon.Component
	for _, part := range m.parts {
		for _, b := range part {
			blocks = append(blocks, b)
		}
	}
	y, err := chain(g, x, blocks...)
	if err != nil {
		return "", err
	}
	return pooledHead(g, y, m.FC)
}

// googLeNetAux is torchvision's GoogLeNet InceptionAux: adaptive average
// pooling to 4×4, a 1×1 BasicConv2d (conv), two linear layers (fc1 with
// ReLU and dropout, fc2).
type googLeNetAux struct {
	gluon.BlockMeta
	conv     *basicConv
	fc1, fc2 *nn.Dense
	drop     gluon.Block
}

func newGoogLeNetAux(s func(int) int, in, classes int, drop float64) *googLeNetAux {
	a := &googLeNetAux{BlockMeta: gluon.NewBlockMeta("inceptionaux"), drop: dropout(drop)}
	a.conv = named("conv", newBasicConv(in, s(128), 1, 1, 1, 0, 0, 0.01))
	init := initializer.Normal{Sigma: 0.01}
	a.fc1 = named("fc1", nn.NewDense(s(1024), nn.DenseOpts{InUnits: s(128) * 16, WeightInit: init}))
	a.fc2 = named("fc2", nn.NewDense(classes, nn.DenseOpts{InUnits: s(1024), WeightInit: init}))
	a.AddChild(a.conv)
	a.AddChild(a.fc1)
	a.AddChild(a.fc2)
	return a
}

func (a *googLeNetAux) Forward(x *nd.NDArray) *nd.NDArray {
	y := nd.Flatten(a.conv.Forward(nd.AdaptiveAvgPool2D(x, 4, 4)))
	return a.fc2.Forward(a.drop.Forward(nd.Relu(a.fc1.Forward(y))))
}
