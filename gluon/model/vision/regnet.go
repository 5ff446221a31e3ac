package vision

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// RegNetParams are the parameters from which torchvision's
// BlockParams.from_init_params generates a RegNet's stages: Depth blocks
// whose widths grow linearly from W0 by WA per block, quantised in log
// space to powers of WM (and to multiples of 8), blocks of equal width
// making a stage; GroupWidth is the width of the 3×3 convolutions'
// groups, BottleneckMultiplier (default 1) the bottleneck's width over
// the block's, SERatio (0 for none: RegNetX) the squeeze-and-excitation's
// width over the block's input width.
type RegNetParams struct {
	Depth                int
	W0                   int
	WA, WM               float64
	GroupWidth           int
	BottleneckMultiplier float64
	SERatio              float64
}

// regNetStage is one stage of a RegNet: its width, depth and group width.
type regNetStage struct{ width, depth, groupWidth int }

// stages computes the stages as torchvision's from_init_params does (in
// float32, as its torch computation), widths adjusted to their groups.
func (p RegNetParams) stages(op string) []regNetStage {
	if p.WA < 0 || p.W0 <= 0 || p.WM <= 1 || p.W0%8 != 0 || p.Depth <= 0 || p.GroupWidth <= 0 {
		nd.Panicf(op, nd.ErrArgument, "invalid RegNet parameters %+v", p)
	}
	b := p.BottleneckMultiplier
	if b <= 0 {
		b = 1
	}
	const quant = 8
	var widths []int
	logWM := float32(math.Log(p.WM))
	for i := range p.Depth {
		cont := float32(i)*float32(p.WA) + float32(p.W0)
		capacity := float32(math.RoundToEven(float64(float32(math.Log(float64(cont/float32(p.W0)))) / logWM)))
		w := float32(p.W0) * float32(math.Pow(float64(float32(p.WM)), float64(capacity)))
		widths = append(widths, int(math.RoundToEven(float64(w/quant)))*quant)
	}
	var stages []regNetStage
	for i, w := range widths {
		if i == 0 || w != widths[i-1] {
			stages = append(stages, regNetStage{width: w})
		}
		stages[len(stages)-1].depth++
	}
	// _adjust_widths_groups_compatibilty
	for i, s := range stages {
		wb := int(float64(s.width) * b)
		g := min(p.GroupWidth, wb)
		stages[i].width = int(float64(makeDivisible(float64(wb), g)) / b)
		stages[i].groupWidth = g
	}
	return stages
}

// RegNet is torchvision's RegNet (X, and Y with squeeze-and-excitation),
// with its parameter names: stem.{0,1} (3×3 convolution and BatchNorm),
// trunk_output.blockN.blockN-M (residual bottleneck blocks: proj, f.a,
// f.b, f.se.fc1, f.se.fc2, f.c), fc. Options.Width is the stem's width
// (default 32); the stages come from RegNetParams.
type RegNet struct {
	gluon.BlockMeta
	Stem  *nn.Sequential
	Trunk *nn.Sequential
	FC    *nn.Dense
	feat  int
}

// The torchvision RegNets' parameters.
var (
	regNetY400MF = RegNetParams{Depth: 16, W0: 48, WA: 27.89, WM: 2.09, GroupWidth: 8, SERatio: 0.25}
	regNetY800MF = RegNetParams{Depth: 14, W0: 56, WA: 38.84, WM: 2.4, GroupWidth: 16, SERatio: 0.25}
	regNetY1_6GF = RegNetParams{Depth: 27, W0: 48, WA: 20.71, WM: 2.65, GroupWidth: 24, SERatio: 0.25}
	regNetY3_2GF = RegNetParams{Depth: 21, W0: 80, WA: 42.63, WM: 2.66, GroupWidth: 24, SERatio: 0.25}
	regNetY8GF   = RegNetParams{Depth: 17, W0: 192, WA: 76.82, WM: 2.19, GroupWidth: 56, SERatio: 0.25}
	regNetY16GF  = RegNetParams{Depth: 18, W0: 200, WA: 106.23, WM: 2.48, GroupWidth: 112, SERatio: 0.25}
	regNetY32GF  = RegNetParams{Depth: 20, W0: 232, WA: 115.89, WM: 2.53, GroupWidth: 232, SERatio: 0.25}
	regNetY128GF = RegNetParams{Depth: 27, W0: 456, WA: 160.83, WM: 2.52, GroupWidth: 264, SERatio: 0.25}
	regNetX400MF = RegNetParams{Depth: 22, W0: 24, WA: 24.48, WM: 2.54, GroupWidth: 16}
	regNetX800MF = RegNetParams{Depth: 16, W0: 56, WA: 35.73, WM: 2.28, GroupWidth: 16}
	regNetX1_6GF = RegNetParams{Depth: 18, W0: 80, WA: 34.01, WM: 2.25, GroupWidth: 24}
	regNetX3_2GF = RegNetParams{Depth: 25, W0: 88, WA: 26.31, WM: 2.25, GroupWidth: 48}
	regNetX8GF   = RegNetParams{Depth: 23, W0: 80, WA: 49.56, WM: 2.88, GroupWidth: 120}
	regNetX16GF  = RegNetParams{Depth: 22, W0: 216, WA: 55.59, WM: 2.1, GroupWidth: 128}
	regNetX32GF  = RegNetParams{Depth: 23, W0: 320, WA: 69.86, WM: 2.0, GroupWidth: 168}
)

// RegNetY400MF returns RegNetY-400MF.
func RegNetY400MF(o Options) *RegNet { return newRegNet("regnet_y_400mf", regNetY400MF, o) }

// RegNetY800MF returns RegNetY-800MF.
func RegNetY800MF(o Options) *RegNet { return newRegNet("regnet_y_800mf", regNetY800MF, o) }

// RegNetY1_6GF returns RegNetY-1.6GF.
func RegNetY1_6GF(o Options) *RegNet { return newRegNet("regnet_y_1_6gf", regNetY1_6GF, o) }

// RegNetY3_2GF returns RegNetY-3.2GF.
func RegNetY3_2GF(o Options) *RegNet { return newRegNet("regnet_y_3_2gf", regNetY3_2GF, o) }

// RegNetY8GF returns RegNetY-8GF.
func RegNetY8GF(o Options) *RegNet { return newRegNet("regnet_y_8gf", regNetY8GF, o) }

// RegNetY16GF returns RegNetY-16GF.
func RegNetY16GF(o Options) *RegNet { return newRegNet("regnet_y_16gf", regNetY16GF, o) }

// RegNetY32GF returns RegNetY-32GF.
func RegNetY32GF(o Options) *RegNet { return newRegNet("regnet_y_32gf", regNetY32GF, o) }

// RegNetY128GF returns RegNetY-128GF.
func RegNetY128GF(o Options) *RegNet { return newRegNet("regnet_y_128gf", regNetY128GF, o) }

// RegNetX400MF returns RegNetX-400MF.
func RegNetX400MF(o Options) *RegNet { return newRegNet("regnet_x_400mf", regNetX400MF, o) }

// RegNetX800MF returns RegNetX-800MF.
func RegNetX800MF(o Options) *RegNet { return newRegNet("regnet_x_800mf", regNetX800MF, o) }

// RegNetX1_6GF returns RegNetX-1.6GF.
func RegNetX1_6GF(o Options) *RegNet { return newRegNet("regnet_x_1_6gf", regNetX1_6GF, o) }

// RegNetX3_2GF returns RegNetX-3.2GF.
func RegNetX3_2GF(o Options) *RegNet { return newRegNet("regnet_x_3_2gf", regNetX3_2GF, o) }

// RegNetX8GF returns RegNetX-8GF.
func RegNetX8GF(o Options) *RegNet { return newRegNet("regnet_x_8gf", regNetX8GF, o) }

// RegNetX16GF returns RegNetX-16GF.
func RegNetX16GF(o Options) *RegNet { return newRegNet("regnet_x_16gf", regNetX16GF, o) }

// RegNetX32GF returns RegNetX-32GF.
func RegNetX32GF(o Options) *RegNet { return newRegNet("regnet_x_32gf", regNetX32GF, o) }

// NewRegNet returns the RegNet that p generates (torchvision's
// RegNet(BlockParams.from_init_params(...))).
func NewRegNet(p RegNetParams, o Options) *RegNet { return newRegNet("regnet", p, o) }

func newRegNet(kind string, p RegNetParams, o Options) *RegNet {
	if o.Width <= 0 {
		o.Width = 32
	}
	o = o.withDefaults()
	b := p.BottleneckMultiplier
	if b <= 0 {
		b = 1
	}
	r := &RegNet{BlockMeta: gluon.NewBlockMeta(kind)}
	r.Stem = named("stem", convNormAct(o.InChannels, o.Width, 3, 2, 1, bn, reluBlock))
	trunk := nn.NewSequential()
	in := o.Width
	for i, s := range p.stages("vision." + kind) {
		stage := nn.NewSequential()
		for j := range s.depth {
			stride := 1
			if j == 0 {
				stride = 2
			}
			stage.Add(named(fmt.Sprintf("block%d-%d", i+1, j), newRegNetBlock(in, s.width, stride, s.groupWidth, b, p.SERatio)))
			in = s.width
		}
		trunk.Add(named(fmt.Sprintf("block%d", i+1), stage))
	}
	r.Trunk = named("trunk_output", trunk)
	r.feat = in
	r.FC = named("fc", linear(in, o.Classes))
	r.AddChild(r.Stem)
	r.AddChild(r.Trunk)
	r.AddChild(r.FC)
	return r
}

// Forward maps NCHW images to class scores.
func (r *RegNet) Forward(x *nd.NDArray) *nd.NDArray {
	return r.FC.Forward(nd.Flatten(nd.GlobalAvgPool2D(r.Trunk.Forward(r.Stem.Forward(x)))))
}

// Head returns "fc".
func (r *RegNet) Head() string { return "fc" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (r *RegNet) ReplaceHead(classes int) *nn.Dense {
	r.FC = newHead(&r.BlockMeta, "fc", r.FC, linear(r.feat, classes))
	return r.FC
}

// ExportONNX writes the RegNet.
func (r *RegNet) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := chain(g, x, r.Stem, r.Trunk)
	if err != nil {
		return "", err
	}
	return pooledHead(g, y, r.FC)
}

// regNetBlock is torchvision's ResBottleneckBlock: a 1×1 convolution
// (f.a), a grouped 3×3 one (f.b), squeeze-and-excitation (f.se, RegNetY)
// and a 1×1 projection (f.c), around a shortcut (a 1×1 convolution and
// BatchNorm, proj, when the shape changes), then ReLU.
type regNetBlock struct {
	gluon.BlockMeta
	proj *nn.Sequential // nil: identity shortcut
	f    *nn.Sequential
}

func newRegNetBlock(in, out, stride, groupWidth int, bottleneck, seRatio float64) *regNetBlock {
	b := &regNetBlock{BlockMeta: gluon.NewBlockMeta("resbottleneckblock")}
	if in != out || stride != 1 {
		b.proj = named("proj", convNormAct(in, out, 1, stride, 1, bn, nil))
		b.AddChild(b.proj)
	}
	wb := int(math.RoundToEven(float64(out) * bottleneck))
	f := nn.NewSequential()
	f.Add(named("a", convNormAct(in, wb, 1, 1, 1, bn, reluBlock)))
	f.Add(named("b", convNormAct(wb, wb, 3, stride, wb/groupWidth, bn, reluBlock)))
	if seRatio > 0 {
		f.Add(named("se", newSE(wb, int(math.RoundToEven(seRatio*float64(in))), relu(), nn.NewActivation("sigmoid"))))
	}
	f.Add(named("c", convNormAct(wb, out, 1, 1, 1, bn, nil)))
	b.f = named("f", f)
	b.AddChild(b.f)
	return b
}

func (b *regNetBlock) Forward(x *nd.NDArray) *nd.NDArray {
	return nd.AddRelu(b.f.Forward(x), shortcut(b.proj, x))
}

// ExportONNX writes the block.
func (b *regNetBlock) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(b.f, x)
	if err != nil {
		return "", err
	}
	return residual(g, x, y, componentOrNil(b.proj))
}
