package text

import (
	"math"
	"strconv"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// activations maps GPT2Config.Activation to the MLP's nonlinearity.
var activations = map[string]func(*nd.NDArray) *nd.NDArray{
	"gelu_new":          func(x *nd.NDArray) *nd.NDArray { return nd.GELU(x, true) },
	"gelu_pytorch_tanh": func(x *nd.NDArray) *nd.NDArray { return nd.GELU(x, true) },
	"gelu":              func(x *nd.NDArray) *nd.NDArray { return nd.GELU(x, false) },
	"relu":              nd.Relu,
}

// named names c and adds it to parent; it returns c.
func named[C gluon.Component](parent *gluon.BlockMeta, name string, c C) C {
	c.Meta().SetName(name)
	parent.AddChild(c)
	return c
}

// dropout applies nd.Dropout when the rate is positive (it is the
// identity in predict mode).
func dropout(x *nd.NDArray, p float64) *nd.NDArray {
	if p > 0 {
		return nd.Dropout(x, p)
	}
	return x
}

// conv1D is Hugging Face's Conv1D, a dense layer whose weight is stored
// [in, out]: y = x·W + b over the last axis.
type conv1D struct {
	gluon.BlockMeta
	in, out int
	Weight  *gluon.Parameter // [in, out]
	Bias    *gluon.Parameter // [out]
}

// newConv1D returns a projection from in to out features whose weight
// starts from N(0, std²) and bias from zero.
func newConv1D(in, out int, std float64) *conv1D {
	c := &conv1D{BlockMeta: gluon.NewBlockMeta("conv1d"), in: in, out: out}
	c.Weight = c.AddParam(gluon.NewParameter("weight", in, out))
	c.Weight.Init = initializer.Normal{Sigma: std}
	c.Bias = c.AddParam(gluon.NewParameter("bias", out))
	c.Bias.Init = initializer.Zero()
	return c
}

// Forward maps [..., in] to [..., out].
func (c *conv1D) Forward(x *nd.NDArray) *nd.NDArray {
	sh := x.Shape()
	if len(sh) == 0 || sh[len(sh)-1] != c.in {
		nd.Panicf("text.Conv1D", nd.ErrShape, "%s: input %v, want %d features on the last axis", c.Name(), sh, c.in)
	}
	y := nd.Add(nd.Dot(nd.Reshape(x, -1, c.in), c.Weight.DataFor(x), false, false), c.Bias.DataFor(x))
	sh[len(sh)-1] = c.out
	return nd.Reshape(y, sh...)
}

// layerNorm returns an nn.LayerNorm over the last axis whose parameters
// are named weight and bias, as PyTorch's (gamma and beta stay aliases),
// starting from one and zero.
func layerNorm(width int, eps float64) *nn.LayerNorm {
	l := nn.NewLayerNorm(-1, nn.NormOpts{Epsilon: eps, InChannels: width})
	l.Gamma.Rename("weight")
	l.Gamma.Init = initializer.One()
	l.Beta.Rename("bias")
	l.Beta.Init = initializer.Zero()
	return l
}

// attention is GPT-2's causal self-attention: the fused query, key and
// value projection c_attn ([E, 3E]), the heads and the output projection
// c_proj.
type attention struct {
	gluon.BlockMeta
	cAttn, cProj         *conv1D
	heads                int
	attnDrop, residDrop  float64
	width, headDim, nPos int
	scale                float64 // the scores' factor (GPT2Config.attnScale)
}

// newAttention returns the attention of the block at index layer.
func newAttention(c GPT2Config, layer int, projStd float64) *attention {
	a := &attention{BlockMeta: gluon.NewBlockMeta("attention"), heads: c.NHead, attnDrop: c.AttnPdrop,
		residDrop: c.ResidPdrop, width: c.NEmbd, headDim: c.NEmbd / c.NHead, nPos: c.NPositions, scale: c.attnScale(layer)}
	a.cAttn = named(&a.BlockMeta, "c_attn", newConv1D(c.NEmbd, 3*c.NEmbd, c.InitializerRange))
	a.cProj = named(&a.BlockMeta, "c_proj", newConv1D(c.NEmbd, c.NEmbd, projStd))
	return a
}

// forward attends x [B, T, E] to itself and, ahead of it, to the keys and
// values kv holds (nil: none), which it extends by x's. ext [B, 1, 1, S]
// (nil: none), added to the scores of the S keys, holds 0 for the tokens
// and the dtype's lowest value for the padding.
func (a *attention) forward(x *nd.NDArray, kv *layerCache, ext *nd.NDArray) *nd.NDArray {
	sh := x.Shape()
	b, t, e, h, d := sh[0], sh[1], a.width, a.heads, a.headDim
	qkv := nd.Split(a.cAttn.Forward(x), 3, 2)
	// [B, T, E] → [B·h, T, d]
	split := func(z *nd.NDArray) *nd.NDArray {
		return nd.Reshape(nd.Transpose(nd.Reshape(z, b, t, h, d), 0, 2, 1, 3), b*h, t, d)
	}
	q, k, v := split(qkv[0]), split(qkv[1]), split(qkv[2])
	if kv != nil {
		k, v = kv.extend(k, v)
	}
	s := k.Shape()[1]
	scores := nd.Dot(q, k, false, true) // [B·h, T, S]
	if a.scale != 1 {
		scores = nd.MulScalar(scores, a.scale)
	}
	if ext != nil {
		scores = nd.Reshape(nd.Add(nd.Reshape(scores, b, h, t, s), ext), b*h, t, s)
	}
	if t > 1 {
		scores = nd.MaskedFill(scores, nn.CausalMask(scores, t, s), math.Inf(-1))
	}
	w := dropout(nd.Softmax(scores, -1), a.attnDrop)
	out := nd.Dot(w, v, false, false) // [B·h, T, d]
	out = nd.Reshape(nd.Transpose(nd.Reshape(out, b, h, t, d), 0, 2, 1, 3), b, t, e)
	return dropout(a.cProj.Forward(out), a.residDrop)
}

// mlp is the block's feed-forward part: c_fc, the activation, c_proj.
type mlp struct {
	gluon.BlockMeta
	cFc, cProj *conv1D
	act        string
	drop       float64
}

func newMLP(c GPT2Config, projStd float64) *mlp {
	m := &mlp{BlockMeta: gluon.NewBlockMeta("mlp"), act: c.Activation, drop: c.ResidPdrop}
	m.cFc = named(&m.BlockMeta, "c_fc", newConv1D(c.NEmbd, c.NInner, c.InitializerRange))
	m.cProj = named(&m.BlockMeta, "c_proj", newConv1D(c.NInner, c.NEmbd, projStd))
	return m
}

// Forward maps [..., E] to [..., E].
func (m *mlp) Forward(x *nd.NDArray) *nd.NDArray {
	return dropout(m.cProj.Forward(activations[m.act](m.cFc.Forward(x))), m.drop)
}

// block is one pre-LN transformer block: x + attn(ln_1(x)), then
// x + mlp(ln_2(x)).
type block struct {
	gluon.BlockMeta
	ln1, ln2 *nn.LayerNorm
	attn     *attention
	mlp      *mlp
}

// newBlock returns the block at index layer (from 0).
func newBlock(c GPT2Config, layer int) *block {
	// GPT-2 scales the initial residual projections by 1/√(2·layers).
	projStd := c.InitializerRange / math.Sqrt(2*float64(c.NLayer))
	b := &block{BlockMeta: gluon.NewBlockMeta("block")}
	b.ln1 = named(&b.BlockMeta, "ln_1", layerNorm(c.NEmbd, c.LayerNormEpsilon))
	b.attn = named(&b.BlockMeta, "attn", newAttention(c, layer, projStd))
	b.ln2 = named(&b.BlockMeta, "ln_2", layerNorm(c.NEmbd, c.LayerNormEpsilon))
	b.mlp = named(&b.BlockMeta, "mlp", newMLP(c, projStd))
	return b
}

func (b *block) forward(x *nd.NDArray, kv *layerCache, ext *nd.NDArray) *nd.NDArray {
	x = nd.Add(x, b.attn.forward(b.ln1.Forward(x), kv, ext))
	return nd.Add(x, b.mlp.Forward(b.ln2.Forward(x)))
}

// layers holds blocks (GPT-2's, BERT's encoder layers) as children "0",
// "1", ..., as PyTorch's ModuleList names them.
type layers struct{ gluon.BlockMeta }

func newLayers[C gluon.Component](bs []C) *layers {
	l := &layers{gluon.NewBlockMeta("layers")}
	for i, b := range bs {
		named(&l.BlockMeta, strconv.Itoa(i), b)
	}
	return l
}
