package vision

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// InceptionOptions configure GoogLeNet and InceptionV3; zero values give
// the layout of torchvision's pretrained weights. Options.Width scales
// every width (the classifiers' inputs and the auxiliary classifiers'
// hidden widths included) in 1/64 steps; Options.Dropout is the
// classifier's rate (GoogLeNet 0.2, Inception v3 0.5), and, when set,
// GoogLeNet's auxiliary classifiers' too (default 0.7).
type InceptionOptions struct {
	Options
	// AuxLogits adds the auxiliary classifiers (true) or leaves them out
	// (false); nil is torchvision's pretrained layout: GoogLeNet without
	// (googlenet(weights=...) drops aux1 and aux2), Inception v3 with its
	// AuxLogits. LoadStateDict skips a checkpoint's auxiliary classifiers
	// when the model has none, as torchvision's builders do.
	AuxLogits *bool
	// TransformInput maps inputs normalised with ImageNet's means and
	// standard deviations to the [−1, 1] scaling the ported weights
	// expect (torchvision's transform_input); nil is on, as with
	// torchvision's pretrained weights, for 3 input channels.
	TransformInput *bool
}

// flags resolves the options' defaults: the auxiliary classifiers (aux
// their default) and the input transform.
func (o InceptionOptions) flags(op string, aux bool) (bool, bool) {
	if o.AuxLogits != nil {
		aux = *o.AuxLogits
	}
	transform := o.InChannels == 3
	if o.TransformInput != nil {
		transform = *o.TransformInput
		if transform && o.InChannels != 3 {
			nd.Panicf(op, nd.ErrArgument, "the input transform is for 3 channels, not %d", o.InChannels)
		}
	}
	return aux, transform
}

// scaler returns the width scaling of Options.Width: c·Width/64, at least 1.
func scaler(op string, width int) func(int) int {
	return func(c int) int {
		s := c * width / 64
		if s <= 0 {
			nd.Panicf(op, nd.ErrArgument, "width %d leaves no channels of %d", width, c)
		}
		return s
	}
}

// The input transform of torchvision's GoogLeNet and Inception3: each
// channel x·(std/0.5) + (mean−0.5)/0.5.
var (
	transformScale = []float32{0.229 / 0.5, 0.224 / 0.5, 0.225 / 0.5}
	transformShift = []float32{(0.485 - 0.5) / 0.5, (0.456 - 0.5) / 0.5, (0.406 - 0.5) / 0.5}
)

func transformInput(x *nd.NDArray) *nd.NDArray {
	s, dev := x.Session(), x.Context()
	scale := s.FromSlice(dev, transformScale, 1, 3, 1, 1).AsType(x.DType())
	shift := s.FromSlice(dev, transformShift, 1, 3, 1, 1).AsType(x.DType())
	return nd.Add(nd.Mul(x, scale), shift)
}

func onnxTransformInput(g gluon.ONNXGraph, x string) string {
	y := g.Op("Mul", []string{x, g.Const(transformScale, 1, 3, 1, 1)}, nil, 1)[0]
	return g.Op("Add", []string{y, g.Const(transformShift, 1, 3, 1, 1)}, nil, 1)[0]
}

// basicConv is torchvision's BasicConv2d of GoogLeNet and Inception v3:
// a convolution without bias ("conv"), BatchNorm with epsilon 0.001
// ("bn") and ReLU.
type basicConv struct {
	gluon.BlockMeta
	conv *nn.Conv2D
	bn   *nn.BatchNorm
}

// newBasicConv returns a BasicConv2d of kernel kh×kw, stride and padding
// ph, pw, its weights normal of standard deviation sigma (torchvision's
// trunc_normal_ cut at ±2, which is 20 or more of them out).
func newBasicConv(in, out, kh, kw, stride, ph, pw int, sigma float64) *basicConv {
	b := &basicConv{BlockMeta: gluon.NewBlockMeta("basicconv2d")}
	b.conv = named("conv", nn.NewConv2D(out, kh, nn.Conv2DOpts{Kernel: [2]int{kh, kw}, Stride: [2]int{stride, stride},
		Pad: [2]int{ph, pw}, InChannels: in, NoBias: true, WeightInit: initializer.Normal{Sigma: sigma}}))
	b.bn = named("bn", bnWith(out, 1e-3, 0.1))
	b.AddChild(b.conv)
	b.AddChild(b.bn)
	return b
}

func (b *basicConv) Forward(x *nd.NDArray) *nd.NDArray { return b.bn.ForwardRelu(b.conv.Forward(x)) }

// ExportONNX writes the convolution, BatchNorm and Relu.
func (b *basicConv) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := chain(g, x, b.conv, b.bn)
	if err != nil {
		return "", err
	}
	return onnxRelu(g, y), nil
}

// incPath is one branch of an inception block: steps applied in turn (its
// children, or parameter-free poolings), then, if split is set, each of
// split applied to that and the results concatenated (Inception v3's
// InceptionE).
type incPath struct {
	steps, split []gluon.Block
}

// incBlock is an inception block: its paths' outputs concatenated along
// the channels.
type incBlock struct {
	gluon.BlockMeta
	paths []incPath
}

func newIncBlock(kind string, paths ...incPath) *incBlock {
	return &incBlock{BlockMeta: gluon.NewBlockMeta(kind), paths: paths}
}

// add makes blocks children of b, in the order of torchvision's
// attributes.
func (b *incBlock) add(blocks ...gluon.Component) {
	for _, c := range blocks {
		b.AddChild(c)
	}
}

func (b *incBlock) Forward(x *nd.NDArray) *nd.NDArray {
	var outs []*nd.NDArray
	for _, p := range b.paths {
		y := x
		for _, s := range p.steps {
			y = s.Forward(y)
		}
		if len(p.split) > 0 {
			parts := make([]*nd.NDArray, len(p.split))
			for i, s := range p.split {
				parts[i] = s.Forward(y)
			}
			y = nd.Concat(parts, 1)
		}
		outs = append(outs, y)
	}
	return nd.Concat(outs, 1)
}

// ExportONNX writes the paths and a Concat.
func (b *incBlock) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	concat := func(xs []string) string { return g.Op("Concat", xs, map[string]any{"axis": 1}, 1)[0] }
	var outs []string
	for _, p := range b.paths {
		y := x
		var err error
		for _, s := range p.steps {
			if y, err = g.Block(s, y); err != nil {
				return "", err
			}
		}
		if len(p.split) > 0 {
			parts := make([]string, len(p.split))
			for i, s := range p.split {
				if parts[i], err = g.Block(s, y); err != nil {
					return "", err
				}
			}
			y = concat(parts)
		}
		outs = append(outs, y)
	}
	return concat(outs), nil
}

// pool3 is a 3×3 pooling of stride 1 and padding 1 (max, or average
// counting the padding, as F.avg_pool2d); maxPool3s2 a 3×3 max pooling of
// stride 2.
func pool3(maxPool bool, ceil bool) gluon.Block {
	o := nn.PoolOpts{Stride: [2]int{1, 1}, Pad: [2]int{1, 1}, CeilMode: ceil}
	if maxPool {
		return nn.NewMaxPool2D(3, o)
	}
	return nn.NewAvgPool2D(3, o)
}

func maxPool3s2(ceil bool) *nn.Pool2D {
	return nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}, CeilMode: ceil})
}

// InceptionV3 is torchvision's Inception3, with its parameter names:
// Conv2d_1a_3x3 to Conv2d_4a_3x3, Mixed_5b to Mixed_7c (the inception
// blocks: branch1x1, branch5x5_1, ..., branch_pool, each a BasicConv2d
// of conv and bn), AuxLogits (conv0, conv1, fc) and fc. Its input is
// 299×299 (at least 75×75; in training mode with the auxiliary
// classifier, 299×299). Forward returns the main classifier's scores;
// ForwardAux the auxiliary classifier's too, in training mode.
type InceptionV3 struct {
	gluon.BlockMeta
	FC        *nn.Dense
	AuxLogits *inceptionAux // nil without the auxiliary classifier
	before    []gluon.Block // the trunk up to the auxiliary classifier
	after     []gluon.Block // and after it
	drop      gluon.Block
	transform bool
	feat      int
}

// NewInceptionV3 returns Inception v3 (torchvision's inception_v3).
func NewInceptionV3(o InceptionOptions) *InceptionV3 {
	const op = "vision.NewInceptionV3"
	o.Options = o.withDefaults()
	aux, transform := o.flags(op, true)
	s := scaler(op, o.Width)
	m := &InceptionV3{BlockMeta: gluon.NewBlockMeta("inception_v3"), transform: transform, feat: s(2048)}
	bc := func(name string, in, out, k, stride, pad int) *basicConv {
		return named(name, newBasicConv(in, out, k, k, stride, pad, pad, 0.1))
	}
	m.before = []gluon.Block{
		bc("Conv2d_1a_3x3", o.InChannels, s(32), 3, 2, 0),
		bc("Conv2d_2a_3x3", s(32), s(32), 3, 1, 0),
		bc("Conv2d_2b_3x3", s(32), s(64), 3, 1, 1),
		named("maxpool1", maxPool3s2(false)),
		bc("Conv2d_3b_1x1", s(64), s(80), 1, 1, 0),
		bc("Conv2d_4a_3x3", s(80), s(192), 3, 1, 0),
		named("maxpool2", maxPool3s2(false)),
		named("Mixed_5b", inceptionA(s, s(192), s(32))),
		named("Mixed_5c", inceptionA(s, s(256), s(64))),
		named("Mixed_5d", inceptionA(s, s(288), s(64))),
		named("Mixed_6a", inceptionB(s, s(288))),
		named("Mixed_6b", inceptionC(s, s(768), s(128))),
		named("Mixed_6c", inceptionC(s, s(768), s(160))),
		named("Mixed_6d", inceptionC(s, s(768), s(160))),
		named("Mixed_6e", inceptionC(s, s(768), s(192))),
	}
	m.after = []gluon.Block{
		named("Mixed_7a", inceptionD(s, s(768))),
		named("Mixed_7b", inceptionE(s, s(1280))),
		named("Mixed_7c", inceptionE(s, s(2048))),
	}
	for _, b := range m.before {
		m.AddChild(b)
	}
	if aux {
		m.AuxLogits = named("AuxLogits", newInceptionAux(s, s(768), o.Classes))
		m.AddChild(m.AuxLogits)
	}
	for _, b := range m.after {
		m.AddChild(b)
	}
	m.drop = dropout(rate(o.Dropout, 0.5))
	m.FC = named("fc", nn.NewDense(o.Classes, nn.DenseOpts{InUnits: m.feat, WeightInit: initializer.Normal{Sigma: 0.1}}))
	m.AddChild(m.FC)
	return m
}

// Forward maps NCHW images to class scores (the main classifier's).
func (m *InceptionV3) Forward(x *nd.NDArray) *nd.NDArray { return m.forward(x, false)[0] }

// ForwardAux is Forward with, in training mode, the auxiliary
// classifier's scores after the main ones (torchvision's
// InceptionOutputs: logits, aux_logits); in predict mode, or without the
// auxiliary classifier, the main scores alone.
func (m *InceptionV3) ForwardAux(x *nd.NDArray) []*nd.NDArray { return m.forward(x, true) }

func (m *InceptionV3) forward(x *nd.NDArray, withAux bool) []*nd.NDArray {
	if m.transform {
		x = transformInput(x)
	}
	for _, b := range m.before {
		x = b.Forward(x)
	}
	var aux *nd.NDArray
	if withAux && m.AuxLogits != nil && x.Session().IsTraining() {
		aux = m.AuxLogits.Forward(x)
	}
	for _, b := range m.after {
		x = b.Forward(x)
	}
	y := m.FC.Forward(nd.Flatten(m.drop.Forward(nd.GlobalAvgPool2D(x))))
	if aux == nil {
		return []*nd.NDArray{y}
	}
	return []*nd.NDArray{y, aux}
}

// Head returns "fc".
func (m *InceptionV3) Head() string { return "fc" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead);
// the auxiliary classifier keeps its classes.
func (m *InceptionV3) ReplaceHead(classes int) *nn.Dense {
	m.FC = newHead(&m.BlockMeta, "fc", m.FC, linear(m.feat, classes))
	return m.FC
}

// ExportONNX writes the Inception v3 of predict mode (no auxiliary
// classifier).
func (m *InceptionV3) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	if m.transform {
		x = onnxTransformInput(g, x)
	}
	var blocks []gluon.Component
	for _, b := range append(append([]gluon.Block{}, m.before...), m.after...) {
		blocks = append(blocks, b)
	}
	y, err := chain(g, x, blocks...)
	if err != nil {
		return "", err
	}
	return pooledHead(g, y, m.FC)
}

// The inception blocks of Inception v3 (torchvision's InceptionA to
// InceptionE), their widths scaled by s.
func inceptionA(s func(int) int, in, pool int) *incBlock {
	bc := func(name string, in, out, k, pad int) *basicConv {
		return named(name, newBasicConv(in, out, k, k, 1, pad, pad, 0.1))
	}
	b1 := bc("branch1x1", in, s(64), 1, 0)
	b5a, b5b := bc("branch5x5_1", in, s(48), 1, 0), bc("branch5x5_2", s(48), s(64), 5, 2)
	d1, d2, d3 := bc("branch3x3dbl_1", in, s(64), 1, 0), bc("branch3x3dbl_2", s(64), s(96), 3, 1), bc("branch3x3dbl_3", s(96), s(96), 3, 1)
	bp := bc("branch_pool", in, pool, 1, 0)
	b := newIncBlock("inceptiona", incPath{steps: []gluon.Block{b1}}, incPath{steps: []gluon.Block{b5a, b5b}},
		incPath{steps: []gluon.Block{d1, d2, d3}}, incPath{steps: []gluon.Block{pool3(false, false), bp}})
	b.add(b1, b5a, b5b, d1, d2, d3, bp)
	return b
}

func inceptionB(s func(int) int, in int) *incBlock {
	b3 := named("branch3x3", newBasicConv(in, s(384), 3, 3, 2, 0, 0, 0.1))
	d1 := named("branch3x3dbl_1", newBasicConv(in, s(64), 1, 1, 1, 0, 0, 0.1))
	d2 := named("branch3x3dbl_2", newBasicConv(s(64), s(96), 3, 3, 1, 1, 1, 0.1))
	d3 := named("branch3x3dbl_3", newBasicConv(s(96), s(96), 3, 3, 2, 0, 0, 0.1))
	b := newIncBlock("inceptionb", incPath{steps: []gluon.Block{b3}}, incPath{steps: []gluon.Block{d1, d2, d3}},
		incPath{steps: []gluon.Block{maxPool3s2(false)}})
	b.add(b3, d1, d2, d3)
	return b
}

// conv1x7 and conv7x1 are the factorised 7×7 convolutions (padding 3
// along the long side).
func conv1x7(name string, in, out int) *basicConv {
	return named(name, newBasicConv(in, out, 1, 7, 1, 0, 3, 0.1))
}

func conv7x1(name string, in, out int) *basicConv {
	return named(name, newBasicConv(in, out, 7, 1, 1, 3, 0, 0.1))
}

func conv1x1(name string, in, out int) *basicConv {
	return named(name, newBasicConv(in, out, 1, 1, 1, 0, 0, 0.1))
}

func inceptionC(s func(int) int, in, c7 int) *incBlock {
	b1 := conv1x1("branch1x1", in, s(192))
	a1, a2, a3 := conv1x1("branch7x7_1", in, c7), conv1x7("branch7x7_2", c7, c7), conv7x1("branch7x7_3", c7, s(192))
	d1, d2, d3 := conv1x1("branch7x7dbl_1", in, c7), conv7x1("branch7x7dbl_2", c7, c7), conv1x7("branch7x7dbl_3", c7, c7)
	d4, d5 := conv7x1("branch7x7dbl_4", c7, c7), conv1x7("branch7x7dbl_5", c7, s(192))
	bp := conv1x1("branch_pool", in, s(192))
	b := newIncBlock("inceptionc", incPath{steps: []gluon.Block{b1}}, incPath{steps: []gluon.Block{a1, a2, a3}},
		incPath{steps: []gluon.Block{d1, d2, d3, d4, d5}}, incPath{steps: []gluon.Block{pool3(false, false), bp}})
	b.add(b1, a1, a2, a3, d1, d2, d3, d4, d5, bp)
	return b
}

func inceptionD(s func(int) int, in int) *incBlock {
	a1 := conv1x1("branch3x3_1", in, s(192))
	a2 := named("branch3x3_2", newBasicConv(s(192), s(320), 3, 3, 2, 0, 0, 0.1))
	d1, d2, d3 := conv1x1("branch7x7x3_1", in, s(192)), conv1x7("branch7x7x3_2", s(192), s(192)), conv7x1("branch7x7x3_3", s(192), s(192))
	d4 := named("branch7x7x3_4", newBasicConv(s(192), s(192), 3, 3, 2, 0, 0, 0.1))
	b := newIncBlock("inceptiond", incPath{steps: []gluon.Block{a1, a2}}, incPath{steps: []gluon.Block{d1, d2, d3, d4}},
		incPath{steps: []gluon.Block{maxPool3s2(false)}})
	b.add(a1, a2, d1, d2, d3, d4)
	return b
}

func inceptionE(s func(int) int, in int) *incBlock {
	b1 := conv1x1("branch1x1", in, s(320))
	a1 := conv1x1("branch3x3_1", in, s(384))
	a2a := named("branch3x3_2a", newBasicConv(s(384), s(384), 1, 3, 1, 0, 1, 0.1))
	a2b := named("branch3x3_2b", newBasicConv(s(384), s(384), 3, 1, 1, 1, 0, 0.1))
	d1 := conv1x1("branch3x3dbl_1", in, s(448))
	d2 := named("branch3x3dbl_2", newBasicConv(s(448), s(384), 3, 3, 1, 1, 1, 0.1))
	d3a := named("branch3x3dbl_3a", newBasicConv(s(384), s(384), 1, 3, 1, 0, 1, 0.1))
	d3b := named("branch3x3dbl_3b", newBasicConv(s(384), s(384), 3, 1, 1, 1, 0, 0.1))
	bp := conv1x1("branch_pool", in, s(192))
	b := newIncBlock("inceptione", incPath{steps: []gluon.Block{b1}},
		incPath{steps: []gluon.Block{a1}, split: []gluon.Block{a2a, a2b}},
		incPath{steps: []gluon.Block{d1, d2}, split: []gluon.Block{d3a, d3b}},
		incPath{steps: []gluon.Block{pool3(false, false), bp}})
	b.add(b1, a1, a2a, a2b, d1, d2, d3a, d3b, bp)
	return b
}

// inceptionAux is torchvision's InceptionAux: 5×5 average pooling of
// stride 3, a 1×1 and a 5×5 BasicConv2d (conv0, conv1), global average
// pooling and a linear classifier (fc).
type inceptionAux struct {
	gluon.BlockMeta
	conv0, conv1 *basicConv
	fc           *nn.Dense
	pool         *nn.Pool2D
}

func newInceptionAux(s func(int) int, in, classes int) *inceptionAux {
	a := &inceptionAux{BlockMeta: gluon.NewBlockMeta("inceptionaux"),
		pool: nn.NewAvgPool2D(5, nn.PoolOpts{Stride: [2]int{3, 3}})}
	a.conv0 = named("conv0", newBasicConv(in, s(128), 1, 1, 1, 0, 0, 0.1))
	a.conv1 = named("conv1", newBasicConv(s(128), s(768), 5, 5, 1, 0, 0, 0.01))
	a.fc = named("fc", nn.NewDense(classes, nn.DenseOpts{InUnits: s(768), WeightInit: initializer.Normal{Sigma: 0.001}}))
	a.AddChild(a.conv0)
	a.AddChild(a.conv1)
	a.AddChild(a.fc)
	return a
}

func (a *inceptionAux) Forward(x *nd.NDArray) *nd.NDArray {
	y := a.conv1.Forward(a.conv0.Forward(a.pool.Forward(x)))
	return a.fc.Forward(nd.Flatten(nd.GlobalAvgPool2D(y)))
}
