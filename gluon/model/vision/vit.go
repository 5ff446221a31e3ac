package vision

import (
	"fmt"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// ViTOptions configure a VisionTransformer; zero values are ViT-B/16's
// (torchvision's vit_b_16): 224×224 images in 16×16 patches, 12 layers of
// 12 heads, width 768, MLP width 3072.
type ViTOptions struct {
	Options
	ImageSize, PatchSize int
	Layers, Heads        int
	HiddenDim, MLPDim    int
}

func (o ViTOptions) withDefaults() ViTOptions {
	o.Options = o.Options.withDefaults()
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.ImageSize, 224)
	def(&o.PatchSize, 16)
	def(&o.Layers, 12)
	def(&o.Heads, 12)
	def(&o.HiddenDim, 768)
	def(&o.MLPDim, 3072)
	return o
}

// VisionTransformer is torchvision's VisionTransformer with its parameter
// names: class_token, conv_proj (the patch embedding),
// encoder.pos_embedding, encoder.layers.encoder_layer_N.{ln_1,
// self_attention, ln_2, mlp.0, mlp.3}, encoder.ln, heads.head. Images
// must be ImageSize×ImageSize.
type VisionTransformer struct {
	gluon.BlockMeta
	ConvProj   *nn.Conv2D
	ClassToken *gluon.Parameter
	Encoder    *vitEncoder
	Heads      *nn.Sequential
	opts       ViTOptions
}

// NewViT returns a VisionTransformer (ViT-B/16 with zero options).
func NewViT(o ViTOptions) *VisionTransformer { return newViT("visiontransformer", o) }

func newViT(kind string, o ViTOptions) *VisionTransformer {
	o = o.withDefaults()
	if o.ImageSize%o.PatchSize != 0 || o.HiddenDim%o.Heads != 0 {
		nd.Panicf("vision.NewViT", nd.ErrArgument, "image size %d must be a multiple of the patch size %d, and width %d of the heads %d",
			o.ImageSize, o.PatchSize, o.HiddenDim, o.Heads)
	}
	v := &VisionTransformer{BlockMeta: gluon.NewBlockMeta(kind), opts: o}
	d := o.HiddenDim
	v.ClassToken = v.AddParam(gluon.NewParameter("class_token", 1, 1, d))
	v.ClassToken.Init = initializer.Zero()
	v.ConvProj = named("conv_proj", nn.NewConv2D(d, o.PatchSize, nn.Conv2DOpts{
		Stride: [2]int{o.PatchSize, o.PatchSize}, InChannels: o.InChannels,
		WeightInit: initializer.Xavier{Gaussian: true, Factor: initializer.FactorIn, Magnitude: 1},
	}))
	seqLen := (o.ImageSize/o.PatchSize)*(o.ImageSize/o.PatchSize) + 1
	v.Encoder = named("encoder", newViTEncoder(seqLen, o))
	head := named("head", nn.NewDense(o.Classes, nn.DenseOpts{InUnits: d, WeightInit: initializer.Zero()}))
	v.Heads = named("heads", nn.NewSequential(head))
	v.AddChild(v.ConvProj)
	v.AddChild(v.Encoder)
	v.AddChild(v.Heads)
	return v
}

// ViTB16 returns ViT-B/16 (torchvision's vit_b_16: 16×16 patches, 12
// layers of 12 heads, width 768, MLP width 3072) for 224×224 images.
func ViTB16(o Options) *VisionTransformer {
	return newViT("vit_b_16", ViTOptions{Options: o, PatchSize: 16, Layers: 12, Heads: 12, HiddenDim: 768, MLPDim: 3072})
}

// ViTB32 returns ViT-B/32 (32×32 patches, 12 layers of 12 heads, width
// 768, MLP width 3072) for 224×224 images.
func ViTB32(o Options) *VisionTransformer {
	return newViT("vit_b_32", ViTOptions{Options: o, PatchSize: 32, Layers: 12, Heads: 12, HiddenDim: 768, MLPDim: 3072})
}

// ViTL16 returns ViT-L/16 (16×16 patches, 24 layers of 16 heads, width
// 1024, MLP width 4096) for 224×224 images.
func ViTL16(o Options) *VisionTransformer {
	return newViT("vit_l_16", ViTOptions{Options: o, PatchSize: 16, Layers: 24, Heads: 16, HiddenDim: 1024, MLPDim: 4096})
}

// ViTL32 returns ViT-L/32 (32×32 patches, 24 layers of 16 heads, width
// 1024, MLP width 4096) for 224×224 images.
func ViTL32(o Options) *VisionTransformer {
	return newViT("vit_l_32", ViTOptions{Options: o, PatchSize: 32, Layers: 24, Heads: 16, HiddenDim: 1024, MLPDim: 4096})
}

// ViTH14 returns ViT-H/14 (14×14 patches, 32 layers of 16 heads, width
// 1280, MLP width 5120) for 224×224 images, torchvision's vit_h_14
// without weights; its published weights are for 518×518 (NewViT with
// ImageSize 518 and these sizes).
func ViTH14(o Options) *VisionTransformer {
	return newViT("vit_h_14", ViTOptions{Options: o, PatchSize: 14, Layers: 32, Heads: 16, HiddenDim: 1280, MLPDim: 5120})
}

// Forward maps NCHW images to class scores: patch embedding, the class
// token in front, the encoder, and the head on the class token.
func (v *VisionTransformer) Forward(x *nd.NDArray) *nd.NDArray {
	shape := x.Shape()
	if len(shape) != 4 || shape[2] != v.opts.ImageSize || shape[3] != v.opts.ImageSize {
		nd.Panicf("vision.VisionTransformer", nd.ErrShape, "input %v: want [N, C, %d, %d]", shape, v.opts.ImageSize, v.opts.ImageSize)
	}
	n, d := shape[0], v.opts.HiddenDim
	p := v.ConvProj.Forward(x) // [N, D, nh, nw]
	p = nd.Transpose(nd.Reshape(p, n, d, -1), 0, 2, 1)
	cls := nd.BroadcastTo(v.ClassToken.DataFor(x), n, 1, d)
	h := v.Encoder.Forward(nd.Concat([]*nd.NDArray{cls, p}, 1))
	return v.Heads.Forward(nd.Reshape(nd.SliceAxis(h, 0, 1, 1), n, d))
}

// Head returns "heads.head".
func (v *VisionTransformer) Head() string { return "heads.head" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (v *VisionTransformer) ReplaceHead(classes int) *nn.Dense {
	old, _ := child(&v.Heads.BlockMeta, "head").(*nn.Dense)
	return newHead(&v.BlockMeta, "heads.head", old, linear(v.opts.HiddenDim, classes))
}

// vitEncoder is torchvision's Encoder: the position embedding, the
// layers, a final LayerNorm.
type vitEncoder struct {
	gluon.BlockMeta
	pos    *gluon.Parameter
	layers *nn.Sequential
	ln     *nn.LayerNorm
}

func newViTEncoder(seqLen int, o ViTOptions) *vitEncoder {
	e := &vitEncoder{BlockMeta: gluon.NewBlockMeta("encoder")}
	e.pos = e.AddParam(gluon.NewParameter("pos_embedding", 1, seqLen, o.HiddenDim))
	e.pos.Init = initializer.Normal{Sigma: 0.02}
	e.layers = named("layers", nn.NewSequential())
	for i := range o.Layers {
		e.layers.Add(named(fmt.Sprintf("encoder_layer_%d", i), newViTBlock(o)))
	}
	e.ln = named("ln", layerNorm(o.HiddenDim))
	e.AddChild(e.layers)
	e.AddChild(e.ln)
	return e
}

func (e *vitEncoder) Forward(x *nd.NDArray) *nd.NDArray {
	return e.ln.Forward(e.layers.Forward(nd.Add(x, e.pos.DataFor(x))))
}

// vitBlock is torchvision's EncoderBlock (pre-norm): attention and MLP,
// each around a residual connection.
type vitBlock struct {
	gluon.BlockMeta
	ln1, ln2 *nn.LayerNorm
	attn     *nn.MultiHeadAttention
	mlp      *nn.Sequential
}

func newViTBlock(o ViTOptions) *vitBlock {
	b := &vitBlock{BlockMeta: gluon.NewBlockMeta("encoderblock")}
	d := o.HiddenDim
	b.ln1 = named("ln_1", layerNorm(d))
	b.attn = named("self_attention", nn.NewMultiHeadAttention(d, o.Heads, nn.AttentionOpts{Layout: "NTC"}))
	b.ln2 = named("ln_2", layerNorm(d))
	mlpInit := initializer.Xavier{}
	b.mlp = named("mlp", seq(
		nn.NewDense(o.MLPDim, nn.DenseOpts{InUnits: d, NoFlatten: true, WeightInit: mlpInit}),
		nn.NewGELU(false),
		identity(),
		nn.NewDense(d, nn.DenseOpts{InUnits: o.MLPDim, NoFlatten: true, WeightInit: mlpInit}),
		identity()))
	for _, c := range []gluon.Component{b.ln1, b.attn, b.ln2, b.mlp} {
		b.AddChild(c)
	}
	return b
}

func (b *vitBlock) Forward(x *nd.NDArray) *nd.NDArray {
	h := nd.Add(x, b.attn.Forward(b.ln1.Forward(x)))
	return nd.Add(h, b.mlp.Forward(b.ln2.Forward(h)))
}

// layerNorm is a LayerNorm over the last axis with PyTorch's names and
// torchvision's epsilon (1e-6).
func layerNorm(d int) *nn.LayerNorm { return layerNormAxis(-1, d) }

// layerNormAxis is layerNorm over the given axis.
func layerNormAxis(axis, d int) *nn.LayerNorm {
	l := nn.NewLayerNorm(axis, nn.NormOpts{Epsilon: 1e-6, InChannels: d})
	l.Gamma.Rename("weight")
	l.Beta.Rename("bias")
	l.Gamma.Init, l.Beta.Init = initializer.One(), initializer.Zero()
	return l
}
