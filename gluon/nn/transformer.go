package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// TransformerOpts configures TransformerEncoderLayer and
// TransformerDecoderLayer. The zero value is PyTorch's default except for
// dropout, which is 0 unless set (PyTorch's default is 0.1): a 2,048-wide
// feed-forward, ReLU, normalisation after each residual sum (post-norm),
// layer-norm epsilon 1e-5 and the TNC layout.
type TransformerOpts struct {
	FeedForward int     // width of the feed-forward hidden layer; 0 means 2048
	Dropout     float64 // on the attention weights and after each sub-layer, in training mode
	Activation  string  // "relu" (default) or "gelu"
	NormFirst   bool    // layer norm before each sub-layer (pre-norm, GPT-2 style)
	Epsilon     float64 // layer-norm epsilon; 0 means 1e-5
	Layout      string  // "TNC" (default) or "NTC" (PyTorch's batch_first=True)
	Causal      bool    // causal self-attention (a decoder-only model's blocks)
}

func (o *TransformerOpts) defaults(op string, dModel, heads int) {
	if o.FeedForward == 0 {
		o.FeedForward = 2048
	}
	if o.Activation == "" {
		o.Activation = "relu"
	}
	if o.Layout == "" {
		o.Layout = "TNC"
	}
	switch {
	case o.FeedForward < 0:
		nd.Panicf(op, nd.ErrArgument, "feed-forward width %d must be positive", o.FeedForward)
	case o.Activation != "relu" && o.Activation != "gelu":
		nd.Panicf(op, nd.ErrArgument, "activation %q: want relu or gelu", o.Activation)
	case o.Dropout < 0 || o.Dropout >= 1:
		nd.Panicf(op, nd.ErrArgument, "dropout %g outside [0, 1)", o.Dropout)
	}
}

// sublayers are the parts both transformer layers have: the self-attention,
// the feed-forward pair and the norms, named as PyTorch names them.
type sublayers struct {
	SelfAttn         *MultiHeadAttention
	Linear1, Linear2 *Dense
	Norms            []*LayerNorm
	opts             TransformerOpts
}

func (s *sublayers) build(m *gluon.BlockMeta, dModel, heads, norms int, o TransformerOpts) {
	s.opts = o
	named := func(c gluon.Component, name string) {
		c.Meta().SetName(name)
		m.AddChild(c)
	}
	s.SelfAttn = NewMultiHeadAttention(dModel, heads, AttentionOpts{Dropout: o.Dropout, Layout: "NTC", Causal: o.Causal})
	named(s.SelfAttn, "self_attn")
	s.Linear1 = NewDense(o.FeedForward, DenseOpts{InUnits: dModel, NoFlatten: true})
	named(s.Linear1, "linear1")
	s.Linear2 = NewDense(dModel, DenseOpts{InUnits: o.FeedForward, NoFlatten: true})
	named(s.Linear2, "linear2")
	for i := range norms {
		ln := NewLayerNorm(-1, NormOpts{Epsilon: o.Epsilon, InChannels: dModel})
		s.Norms = append(s.Norms, ln)
		named(ln, "norm"+string(rune('1'+i)))
	}
}

// toNTC and fromNTC convert between the layer's layout and the batch-first
// one the sub-layers use.
func (s *sublayers) toNTC(x *nd.NDArray) *nd.NDArray {
	if x != nil && s.opts.Layout == "TNC" {
		return nd.SwapAxes(x, 0, 1)
	}
	return x
}

func (s *sublayers) fromNTC(x *nd.NDArray) *nd.NDArray { return s.toNTC(x) }

func (s *sublayers) dropout(x *nd.NDArray) *nd.NDArray {
	if s.opts.Dropout > 0 {
		return nd.Dropout(x, s.opts.Dropout)
	}
	return x
}

// residual adds f's output to x with the norm before f (pre-norm) or after
// the sum (post-norm).
func (s *sublayers) residual(x *nd.NDArray, norm *LayerNorm, f func(*nd.NDArray) *nd.NDArray) *nd.NDArray {
	if s.opts.NormFirst {
		return nd.Add(x, s.dropout(f(norm.Forward(x))))
	}
	return norm.Forward(nd.Add(x, s.dropout(f(x))))
}

func (s *sublayers) feedForward(x *nd.NDArray) *nd.NDArray {
	h := s.Linear1.Forward(x)
	if s.opts.Activation == "gelu" {
		h = nd.GELU(h, false)
	} else {
		h = nd.Relu(h)
	}
	return s.Linear2.Forward(s.dropout(h))
}

// TransformerEncoderLayer is self-attention and a feed-forward network,
// each with a residual connection and layer norm (PyTorch's
// nn.TransformerEncoderLayer, with its child names self_attn, linear1,
// linear2, norm1 and norm2, so a state_dict loads).
//
// ForwardMulti takes src ([T, N, E], NTC: [N, T, E]), an optional
// key-padding mask [N, T] and an optional attention mask [T, T] (see
// MultiHeadAttention) and returns the output, shaped like src. Forward
// takes src alone.
type TransformerEncoderLayer struct {
	gluon.BlockMeta
	sublayers
}

// NewTransformerEncoderLayer returns an encoder layer of width dModel with
// heads attention heads.
func NewTransformerEncoderLayer(dModel, heads int, o TransformerOpts) *TransformerEncoderLayer {
	o.defaults("nn.NewTransformerEncoderLayer", dModel, heads)
	l := &TransformerEncoderLayer{BlockMeta: gluon.NewBlockMeta("transformerencoderlayer")}
	l.build(&l.BlockMeta, dModel, heads, 2, o)
	return l
}

// Forward runs the layer on src without masks.
func (l *TransformerEncoderLayer) Forward(src *nd.NDArray) *nd.NDArray {
	return l.ForwardMulti(src)[0]
}

// ForwardMulti runs the layer on src, key-padding mask and attention mask.
func (l *TransformerEncoderLayer) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	in := takeInputs("nn.TransformerEncoderLayer", inputs, 3, "src, key-padding mask, attention mask")
	x := l.toNTC(in[0])
	x = l.residual(x, l.Norms[0], func(y *nd.NDArray) *nd.NDArray {
		return l.SelfAttn.ForwardMulti(y, nil, nil, in[1], in[2])[0]
	})
	x = l.residual(x, l.Norms[1], l.feedForward)
	return []*nd.NDArray{l.fromNTC(x)}
}

// TransformerDecoderLayer is self-attention, attention over an encoder's
// output (memory) and a feed-forward network, each with a residual
// connection and layer norm (PyTorch's nn.TransformerDecoderLayer, with its
// child names self_attn, multihead_attn, linear1, linear2, norm1, norm2
// and norm3).
//
// ForwardMulti takes, in PyTorch's order, tgt [T, N, E], memory [S, N, E]
// (NTC: batch first), the target attention mask [T, T], the memory
// attention mask [T, S], the target key-padding mask [N, T] and the memory
// key-padding mask [N, S]; all but tgt and memory may be nil or left out.
// It returns the output, shaped like tgt.
type TransformerDecoderLayer struct {
	gluon.BlockMeta
	sublayers
	MultiheadAttn *MultiHeadAttention
}

// NewTransformerDecoderLayer returns a decoder layer of width dModel with
// heads attention heads.
func NewTransformerDecoderLayer(dModel, heads int, o TransformerOpts) *TransformerDecoderLayer {
	o.defaults("nn.NewTransformerDecoderLayer", dModel, heads)
	l := &TransformerDecoderLayer{BlockMeta: gluon.NewBlockMeta("transformerdecoderlayer")}
	l.build(&l.BlockMeta, dModel, heads, 3, o)
	l.MultiheadAttn = NewMultiHeadAttention(dModel, heads, AttentionOpts{Dropout: o.Dropout, Layout: "NTC"})
	l.MultiheadAttn.SetName("multihead_attn")
	l.AddChild(l.MultiheadAttn)
	return l
}

// ForwardMulti runs the layer; see TransformerDecoderLayer for the inputs.
func (l *TransformerDecoderLayer) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	const op = "nn.TransformerDecoderLayer"
	in := takeInputs(op, inputs, 6, "tgt, memory, tgt mask, memory mask, tgt key-padding mask, memory key-padding mask")
	if in[1] == nil {
		nd.Panicf(op, nd.ErrArgument, "memory (the second input) is required")
	}
	x, mem := l.toNTC(in[0]), l.toNTC(in[1])
	x = l.residual(x, l.Norms[0], func(y *nd.NDArray) *nd.NDArray {
		return l.SelfAttn.ForwardMulti(y, nil, nil, in[4], in[2])[0]
	})
	x = l.residual(x, l.Norms[1], func(y *nd.NDArray) *nd.NDArray {
		return l.MultiheadAttn.ForwardMulti(y, mem, mem, in[5], in[3])[0]
	})
	x = l.residual(x, l.Norms[2], l.feedForward)
	return []*nd.NDArray{l.fromNTC(x)}
}

// takeInputs checks a MultiBlock's inputs (the first required, at most max)
// and pads them with nils to max.
func takeInputs(op string, inputs []*nd.NDArray, max int, names string) []*nd.NDArray {
	if len(inputs) < 1 || len(inputs) > max || inputs[0] == nil {
		nd.Panicf(op, nd.ErrArgument, "takes %s (the first required); got %d inputs", names, len(inputs))
	}
	in := make([]*nd.NDArray, max)
	copy(in, inputs)
	return in
}
