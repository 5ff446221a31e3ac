package vision

import (
	"fmt"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// ResNet is torchvision's ResNet (v1.5: a bottleneck's stride is on its
// 3×3 convolution), with its parameter names: conv1, bn1, layer1.0.conv1,
// ..., layer2.0.downsample.0, ..., fc. ResNeXt and Wide ResNet are the
// same network with other bottlenecks: torchvision's groups and
// width_per_group (Options.Groups and Options.WidthPerGroup) make a
// bottleneck of planes planes int(planes·WidthPerGroup/64)·Groups wide
// inside, its 3×3 convolution in Groups groups.
type ResNet struct {
	gluon.BlockMeta
	Conv1   *nn.Conv2D
	BN1     *nn.BatchNorm
	MaxPool *nn.Pool2D
	Layers  [4]*nn.Sequential
	FC      *nn.Dense
	feat    int // the head's input features
}

// ResNet18 returns ResNet-18 (basic blocks, 2-2-2-2).
func ResNet18(o Options) *ResNet { return newResNet("resnet18", false, [4]int{2, 2, 2, 2}, 1, 64, o) }

// ResNet34 returns ResNet-34 (basic blocks, 3-4-6-3).
func ResNet34(o Options) *ResNet { return newResNet("resnet34", false, [4]int{3, 4, 6, 3}, 1, 64, o) }

// ResNet50 returns ResNet-50 (bottleneck blocks, 3-4-6-3).
func ResNet50(o Options) *ResNet { return newResNet("resnet50", true, [4]int{3, 4, 6, 3}, 1, 64, o) }

// ResNet101 returns ResNet-101 (bottleneck blocks, 3-4-23-3).
func ResNet101(o Options) *ResNet { return newResNet("resnet101", true, [4]int{3, 4, 23, 3}, 1, 64, o) }

// ResNet152 returns ResNet-152 (bottleneck blocks, 3-8-36-3).
func ResNet152(o Options) *ResNet { return newResNet("resnet152", true, [4]int{3, 8, 36, 3}, 1, 64, o) }

// ResNeXt50_32x4d returns ResNeXt-50 32×4d (ResNet-50 with 32 groups of
// width 4 per 64 planes: Groups 32, WidthPerGroup 4).
func ResNeXt50_32x4d(o Options) *ResNet {
	return newResNet("resnext50_32x4d", true, [4]int{3, 4, 6, 3}, 32, 4, o)
}

// ResNeXt101_32x8d returns ResNeXt-101 32×8d (Groups 32, WidthPerGroup 8).
func ResNeXt101_32x8d(o Options) *ResNet {
	return newResNet("resnext101_32x8d", true, [4]int{3, 4, 23, 3}, 32, 8, o)
}

// ResNeXt101_64x4d returns ResNeXt-101 64×4d (Groups 64, WidthPerGroup 4).
func ResNeXt101_64x4d(o Options) *ResNet {
	return newResNet("resnext101_64x4d", true, [4]int{3, 4, 23, 3}, 64, 4, o)
}

// WideResNet50_2 returns Wide ResNet-50-2 (ResNet-50 with bottlenecks
// twice as wide inside: WidthPerGroup 128).
func WideResNet50_2(o Options) *ResNet {
	return newResNet("wide_resnet50_2", true, [4]int{3, 4, 6, 3}, 1, 128, o)
}

// WideResNet101_2 returns Wide ResNet-101-2 (WidthPerGroup 128).
func WideResNet101_2(o Options) *ResNet {
	return newResNet("wide_resnet101_2", true, [4]int{3, 4, 23, 3}, 1, 128, o)
}

// newResNet builds a ResNet; groups and widthPerGroup are the
// bottlenecks' defaults, which Options.Groups and Options.WidthPerGroup
// override (basic blocks take neither).
func newResNet(kind string, bottleneck bool, blocks [4]int, groups, widthPerGroup int, o Options) *ResNet {
	o = o.withDefaults()
	if o.Groups > 0 {
		groups = o.Groups
	}
	if o.WidthPerGroup > 0 {
		widthPerGroup = o.WidthPerGroup
	}
	if !bottleneck && (groups != 1 || widthPerGroup != 64) {
		nd.Panicf("vision."+kind, nd.ErrArgument, "basic blocks take 1 group of width 64, not %d of %d", groups, widthPerGroup)
	}
	w := o.Width
	r := &ResNet{BlockMeta: gluon.NewBlockMeta(kind)}
	r.Conv1 = named("conv1", conv(o.InChannels, w, 7, 2, 3, 1))
	r.BN1 = named("bn1", bn(w))
	r.MaxPool = named("maxpool", nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}))
	r.AddChild(r.Conv1)
	r.AddChild(r.BN1)
	r.AddChild(named("relu", relu()))
	r.AddChild(r.MaxPool)
	in := w
	expansion := 1
	if bottleneck {
		expansion = 4
	}
	for i, n := range blocks {
		planes := w << i
		stride := 2
		if i == 0 {
			stride = 1
		}
		var bs []gluon.Block
		for j := range n {
			s := 1
			if j == 0 {
				s = stride
			}
			if bottleneck {
				width := int(float64(planes)*(float64(widthPerGroup)/64)) * groups
				if width <= 0 {
					nd.Panicf("vision."+kind, nd.ErrArgument, "%d planes with width per group %d leave no width", planes, widthPerGroup)
				}
				bs = append(bs, newBottleneck(in, planes, width, groups, s))
			} else {
				bs = append(bs, newBasicBlock(in, planes, s))
			}
			in = planes * expansion
		}
		r.Layers[i] = named(fmt.Sprintf("layer%d", i+1), seq(bs...))
		r.AddChild(r.Layers[i])
	}
	r.feat = in
	r.FC = named("fc", linear(in, o.Classes))
	r.AddChild(r.FC)
	return r
}

// Forward maps NCHW images to class scores.
func (r *ResNet) Forward(x *nd.NDArray) *nd.NDArray {
	x = r.MaxPool.Forward(r.BN1.ForwardRelu(r.Conv1.Forward(x)))
	for _, l := range r.Layers {
		x = l.Forward(x)
	}
	return r.FC.Forward(nd.Flatten(nd.GlobalAvgPool2D(x)))
}

// Head returns the name of the classifier layer ("fc").
func (r *ResNet) Head() string { return "fc" }

// ReplaceHead gives the network a new classifier for classes classes
// (transfer learning), initialised on the old one's contexts if that was
// initialised, and returns it.
func (r *ResNet) ReplaceHead(classes int) *nn.Dense {
	r.FC = newHead(&r.BlockMeta, "fc", r.FC, linear(r.feat, classes))
	return r.FC
}

// basicBlock is torchvision's BasicBlock: two 3×3 convolutions and a
// shortcut.
type basicBlock struct {
	gluon.BlockMeta
	conv1, conv2 *nn.Conv2D
	bn1, bn2     *nn.BatchNorm
	down         *nn.Sequential // nil: identity shortcut
}

func newBasicBlock(in, planes, stride int) *basicBlock {
	b := &basicBlock{BlockMeta: gluon.NewBlockMeta("basicblock")}
	b.conv1 = named("conv1", conv(in, planes, 3, stride, 1, 1))
	b.bn1 = named("bn1", bn(planes))
	b.conv2 = named("conv2", conv(planes, planes, 3, 1, 1, 1))
	b.bn2 = named("bn2", bn(planes))
	for _, c := range []gluon.Component{b.conv1, b.bn1, b.conv2, b.bn2} {
		b.AddChild(c)
	}
	b.down = downsample(&b.BlockMeta, in, planes, stride)
	return b
}

func (b *basicBlock) Forward(x *nd.NDArray) *nd.NDArray {
	y := b.bn1.ForwardRelu(b.conv1.Forward(x))
	y = b.bn2.Forward(b.conv2.Forward(y))
	return nd.AddRelu(y, shortcut(b.down, x))
}

// bottleneck is torchvision's Bottleneck (expansion 4, stride on the 3×3
// convolution, which is width wide in groups groups).
type bottleneck struct {
	gluon.BlockMeta
	conv1, conv2, conv3 *nn.Conv2D
	bn1, bn2, bn3       *nn.BatchNorm
	down                *nn.Sequential
}

func newBottleneck(in, planes, width, groups, stride int) *bottleneck {
	b := &bottleneck{BlockMeta: gluon.NewBlockMeta("bottleneck")}
	b.conv1 = named("conv1", conv(in, width, 1, 1, 0, 1))
	b.bn1 = named("bn1", bn(width))
	b.conv2 = named("conv2", conv(width, width, 3, stride, 1, groups))
	b.bn2 = named("bn2", bn(width))
	b.conv3 = named("conv3", conv(width, planes*4, 1, 1, 0, 1))
	b.bn3 = named("bn3", bn(planes*4))
	for _, c := range []gluon.Component{b.conv1, b.bn1, b.conv2, b.bn2, b.conv3, b.bn3} {
		b.AddChild(c)
	}
	b.down = downsample(&b.BlockMeta, in, planes*4, stride)
	return b
}

func (b *bottleneck) Forward(x *nd.NDArray) *nd.NDArray {
	y := b.bn1.ForwardRelu(b.conv1.Forward(x))
	y = b.bn2.ForwardRelu(b.conv2.Forward(y))
	y = b.bn3.Forward(b.conv3.Forward(y))
	return nd.AddRelu(y, shortcut(b.down, x))
}

// downsample adds torchvision's projection shortcut (1×1 convolution and
// BatchNorm, "downsample.0" and "downsample.1") to m when the shape
// changes, and returns it (nil for an identity shortcut).
func downsample(m *gluon.BlockMeta, in, out, stride int) *nn.Sequential {
	if stride == 1 && in == out {
		return nil
	}
	d := named("downsample", seq(conv(in, out, 1, stride, 0, 1), bn(out)))
	m.AddChild(d)
	return d
}

func shortcut(down *nn.Sequential, x *nd.NDArray) *nd.NDArray {
	if down == nil {
		return x
	}
	return down.Forward(x)
}
