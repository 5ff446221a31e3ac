package vision

import (
	"fmt"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// ShuffleNetV2 is torchvision's ShuffleNetV2, with its parameter names:
// conv1.{0,1}, stage2, stage3 and stage4 (inverted residual blocks:
// branch1 and branch2, Sequentials of convolutions and BatchNorms),
// conv5.{0,1}, fc. Its widths are the variant's (NewShuffleNetV2's
// channels); Options.Width is not used.
type ShuffleNetV2 struct {
	gluon.BlockMeta
	Conv1   *nn.Sequential
	MaxPool *nn.Pool2D
	Stages  [3]*nn.Sequential
	Conv5   *nn.Sequential
	FC      *nn.Dense
	feat    int
}

// ShuffleNetV2X0_5 returns ShuffleNetV2 x0.5 (stage widths 48, 96, 192;
// 1024 features).
func ShuffleNetV2X0_5(o Options) *ShuffleNetV2 {
	return newShuffleNetV2("shufflenet_v2_x0_5", [3]int{4, 8, 4}, [5]int{24, 48, 96, 192, 1024}, o)
}

// ShuffleNetV2X1_0 returns ShuffleNetV2 x1.0 (stage widths 116, 232, 464;
// 1024 features).
func ShuffleNetV2X1_0(o Options) *ShuffleNetV2 {
	return newShuffleNetV2("shufflenet_v2_x1_0", [3]int{4, 8, 4}, [5]int{24, 116, 232, 464, 1024}, o)
}

// ShuffleNetV2X1_5 returns ShuffleNetV2 x1.5 (stage widths 176, 352, 704;
// 1024 features).
func ShuffleNetV2X1_5(o Options) *ShuffleNetV2 {
	return newShuffleNetV2("shufflenet_v2_x1_5", [3]int{4, 8, 4}, [5]int{24, 176, 352, 704, 1024}, o)
}

// ShuffleNetV2X2_0 returns ShuffleNetV2 x2.0 (stage widths 244, 488, 976;
// 2048 features).
func ShuffleNetV2X2_0(o Options) *ShuffleNetV2 {
	return newShuffleNetV2("shufflenet_v2_x2_0", [3]int{4, 8, 4}, [5]int{24, 244, 488, 976, 2048}, o)
}

// NewShuffleNetV2 returns a ShuffleNetV2 with torchvision's
// stages_repeats and stages_out_channels: the stages' numbers of blocks,
// and the widths of the stem, the three stages (even) and the last
// convolution.
func NewShuffleNetV2(repeats [3]int, channels [5]int, o Options) *ShuffleNetV2 {
	return newShuffleNetV2("shufflenetv2", repeats, channels, o)
}

func newShuffleNetV2(kind string, repeats [3]int, channels [5]int, o Options) *ShuffleNetV2 {
	o = o.withDefaults()
	for i, r := range repeats {
		if r <= 0 || channels[i+1]%2 != 0 {
			nd.Panicf("vision."+kind, nd.ErrArgument, "stage %d: %d blocks of width %d (want at least one, of an even width)", i+2, r, channels[i+1])
		}
	}
	m := &ShuffleNetV2{BlockMeta: gluon.NewBlockMeta(kind), feat: channels[4]}
	m.Conv1 = named("conv1", convNormAct(o.InChannels, channels[0], 3, 2, 1, bn, reluBlock))
	m.MaxPool = named("maxpool", nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}))
	m.AddChild(m.Conv1)
	m.AddChild(m.MaxPool)
	in := channels[0]
	for i, n := range repeats {
		out := channels[i+1]
		blocks := []gluon.Block{newShuffleBlock(in, out, 2)}
		for range n - 1 {
			blocks = append(blocks, newShuffleBlock(out, out, 1))
		}
		m.Stages[i] = named(fmt.Sprintf("stage%d", i+2), seq(blocks...))
		m.AddChild(m.Stages[i])
		in = out
	}
	m.Conv5 = named("conv5", convNormAct(in, channels[4], 1, 1, 1, bn, reluBlock))
	m.FC = named("fc", linear(channels[4], o.Classes))
	m.AddChild(m.Conv5)
	m.AddChild(m.FC)
	return m
}

// Forward maps NCHW images to class scores.
func (m *ShuffleNetV2) Forward(x *nd.NDArray) *nd.NDArray {
	x = m.MaxPool.Forward(m.Conv1.Forward(x))
	for _, s := range m.Stages {
		x = s.Forward(x)
	}
	return m.FC.Forward(nd.Flatten(nd.GlobalAvgPool2D(m.Conv5.Forward(x))))
}

// Head returns "fc".
func (m *ShuffleNetV2) Head() string { return "fc" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (m *ShuffleNetV2) ReplaceHead(classes int) *nn.Dense {
	m.FC = newHead(&m.BlockMeta, "fc", m.FC, linear(m.feat, classes))
	return m.FC
}

// ExportONNX writes the ShuffleNetV2.
func (m *ShuffleNetV2) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := chain(g, x, m.Conv1, m.MaxPool, m.Stages[0], m.Stages[1], m.Stages[2], m.Conv5)
	if err != nil {
		return "", err
	}
	return pooledHead(g, y, m.FC)
}

// shuffleBlock is torchvision's ShuffleNetV2 InvertedResidual: with
// stride 1 half the channels pass and the other half go through branch2
// (1×1, depthwise 3×3, 1×1 convolutions); with stride 2 both branch1
// (depthwise 3×3, 1×1) and branch2 take all of them; the halves are
// concatenated and their channels shuffled (interleaved).
type shuffleBlock struct {
	gluon.BlockMeta
	branch1, branch2 *nn.Sequential // branch1 nil at stride 1
}

func newShuffleBlock(in, out, stride int) *shuffleBlock {
	half := out / 2
	b := &shuffleBlock{BlockMeta: gluon.NewBlockMeta("invertedresidual")}
	b2in := half
	if stride > 1 {
		b.branch1 = named("branch1", seq(conv(in, in, 3, stride, 1, in), bn(in), conv(in, half, 1, 1, 0, 1), bn(half), relu()))
		b.AddChild(b.branch1)
		b2in = in
	} else if in != out {
		nd.Panicf("vision.ShuffleNetV2", nd.ErrArgument, "a stride-1 block of %d channels in and %d out", in, out)
	}
	b.branch2 = named("branch2", seq(conv(b2in, half, 1, 1, 0, 1), bn(half), relu(),
		conv(half, half, 3, stride, 1, half), bn(half), conv(half, half, 1, 1, 0, 1), bn(half), relu()))
	b.AddChild(b.branch2)
	return b
}

func (b *shuffleBlock) Forward(x *nd.NDArray) *nd.NDArray {
	var y *nd.NDArray
	if b.branch1 == nil {
		c := x.Shape()[1]
		y = nd.Concat([]*nd.NDArray{nd.SliceAxis(x, 0, c/2, 1), b.branch2.Forward(nd.SliceAxis(x, c/2, c, 1))}, 1)
	} else {
		y = nd.Concat([]*nd.NDArray{b.branch1.Forward(x), b.branch2.Forward(x)}, 1)
	}
	s := y.Shape()
	return nd.Reshape(nd.SwapAxes(nd.Reshape(y, s[0], 2, s[1]/2, s[2], s[3]), 1, 2), s...)
}

// ExportONNX writes the block.
func (b *shuffleBlock) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	s, err := onnxShape(g, x, "channel shuffle")
	if err != nil {
		return "", err
	}
	var y1, y2 string
	if b.branch1 == nil {
		c := int64(s[1])
		y1 = onnxSlice(g, x, []int64{0}, []int64{c / 2}, []int64{1})
		y2, err = g.Block(b.branch2, onnxSlice(g, x, []int64{c / 2}, []int64{c}, []int64{1}))
	} else {
		if y1, err = g.Block(b.branch1, x); err == nil {
			y2, err = g.Block(b.branch2, x)
		}
	}
	if err != nil {
		return "", err
	}
	y := g.Op("Concat", []string{y1, y2}, map[string]any{"axis": 1}, 1)[0]
	// The channels interleaved: [N, 2, C/2, H, W] → [N, C/2, 2, H, W].
	ys, err := onnxShape(g, y, "channel shuffle")
	if err != nil {
		return "", err
	}
	c, h, w := ys[1], ys[2], ys[3]
	y = onnxTranspose(g, onnxReshape(g, y, -1, 2, c/2, h, w), 0, 2, 1, 3, 4)
	return onnxReshape(g, y, -1, c, h, w), nil
}
