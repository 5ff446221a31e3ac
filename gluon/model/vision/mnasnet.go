package vision

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// MNASNet is torchvision's MNASNet (B1, its version 2: the stem scales
// with the width multiplier too), with its parameter names: layers.N (the
// stem's convolutions and BatchNorms at 0 to 7, the stacks of inverted
// residual blocks at 8 to 13, layers.N.M.layers.K, the last 1×1
// convolution and BatchNorm at 14 and 15), classifier.1. Its BatchNorms
// have torchvision's momentum 0.0003. Options.Width scales the variant's
// width multiplier (alpha) in 1/64 steps; the last convolution's 1280
// channels do not scale.
type MNASNet struct {
	gluon.BlockMeta
	Layers     *nn.Sequential
	Classifier *nn.Sequential
}

// MNASNet0_5 returns MNASNet with width multiplier 0.5.
func MNASNet0_5(o Options) *MNASNet { return newMNASNet("mnasnet0_5", 0.5, o) }

// MNASNet0_75 returns MNASNet with width multiplier 0.75.
func MNASNet0_75(o Options) *MNASNet { return newMNASNet("mnasnet0_75", 0.75, o) }

// MNASNet1_0 returns MNASNet with width multiplier 1.0.
func MNASNet1_0(o Options) *MNASNet { return newMNASNet("mnasnet1_0", 1.0, o) }

// MNASNet1_3 returns MNASNet with width multiplier 1.3.
func MNASNet1_3(o Options) *MNASNet { return newMNASNet("mnasnet1_3", 1.3, o) }

// mnasBN is MNASNet's BatchNorm (momentum 1 − 0.9997).
func mnasBN(c int) *nn.BatchNorm { return bnWith(c, 1e-5, 1-0.9997) }

// mnasRound is torchvision's _round_to_multiple_of with its bias 0.9:
// v rounded to a multiple of divisor, up unless that is more than 10%
// above the multiple below.
func mnasRound(v float64, divisor int) int {
	n := max(divisor, int(v+float64(divisor)/2)/divisor*divisor)
	if float64(n) >= 0.9*v {
		return n
	}
	return n + divisor
}

func newMNASNet(kind string, alpha float64, o Options) *MNASNet {
	o = o.withDefaults()
	alpha *= float64(o.Width) / 64
	var d [8]int
	for i, c := range [8]int{32, 16, 24, 40, 80, 96, 192, 320} {
		d[i] = mnasRound(float64(c)*alpha, 8)
	}
	layers := []gluon.Block{
		conv(o.InChannels, d[0], 3, 2, 1, 1), mnasBN(d[0]), relu(),
		conv(d[0], d[0], 3, 1, 1, d[0]), mnasBN(d[0]), relu(),
		conv(d[0], d[1], 1, 1, 0, 1), mnasBN(d[1]),
	}
	for i, s := range [][4]int{{3, 2, 3, 3}, {5, 2, 3, 3}, {5, 2, 6, 3}, {3, 1, 6, 2}, {5, 2, 6, 4}, {3, 1, 6, 1}} {
		kernel, stride, expand, reps := s[0], s[1], s[2], s[3]
		in, out := d[i+1], d[i+2]
		stack := []gluon.Block{newMNASBlock(in, out, kernel, stride, expand)}
		for range reps - 1 {
			stack = append(stack, newMNASBlock(out, out, kernel, 1, expand))
		}
		layers = append(layers, seq(stack...))
	}
	layers = append(layers, conv(d[7], 1280, 1, 1, 0, 1), mnasBN(1280), relu())
	m := &MNASNet{BlockMeta: gluon.NewBlockMeta(kind)}
	m.Layers = named("layers", seq(layers...))
	m.Classifier = named("classifier", seq(dropout(rate(o.Dropout, 0.2)), linear(1280, o.Classes)))
	m.AddChild(m.Layers)
	m.AddChild(m.Classifier)
	return m
}

// Forward maps NCHW images to class scores.
func (m *MNASNet) Forward(x *nd.NDArray) *nd.NDArray {
	return m.Classifier.Forward(nd.Flatten(nd.GlobalAvgPool2D(m.Layers.Forward(x))))
}

// Head returns "classifier.1".
func (m *MNASNet) Head() string { return "classifier.1" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (m *MNASNet) ReplaceHead(classes int) *nn.Dense {
	old, _ := child(&m.Classifier.BlockMeta, "1").(*nn.Dense)
	return newHead(&m.BlockMeta, "classifier.1", old, linear(1280, classes))
}

// ExportONNX writes the MNASNet.
func (m *MNASNet) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(m.Layers, x)
	if err != nil {
		return "", err
	}
	return pooledHead(g, y, m.Classifier)
}

// mnasBlock is torchvision's MNASNet _InvertedResidual: 1×1 expansion,
// depthwise convolution, linear 1×1 projection ("layers"), and a residual
// connection when the shape is kept.
type mnasBlock struct {
	gluon.BlockMeta
	layers *nn.Sequential
	res    bool
}

func newMNASBlock(in, out, kernel, stride, expand int) *mnasBlock {
	mid := in * expand
	b := &mnasBlock{BlockMeta: gluon.NewBlockMeta("invertedresidual"), res: in == out && stride == 1}
	b.layers = named("layers", seq(
		conv(in, mid, 1, 1, 0, 1), mnasBN(mid), relu(),
		conv(mid, mid, kernel, stride, kernel/2, mid), mnasBN(mid), relu(),
		conv(mid, out, 1, 1, 0, 1), mnasBN(out)))
	b.AddChild(b.layers)
	return b
}

func (b *mnasBlock) Forward(x *nd.NDArray) *nd.NDArray {
	y := b.layers.Forward(x)
	if b.res {
		return nd.Add(y, x)
	}
	return y
}

// ExportONNX writes the block.
func (b *mnasBlock) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(b.layers, x)
	if err != nil || !b.res {
		return y, err
	}
	return g.Op("Add", []string{y, x}, nil, 1)[0], nil
}
