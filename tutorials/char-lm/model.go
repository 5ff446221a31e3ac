package main

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/nd"
)

// modelOpts are the sizes of both models.
type modelOpts struct {
	Vocab, Context       int
	Layers, Heads, Embed int
	Hidden               int // the LSTM's hidden size
	Dropout              float64
}

// gpt is a decoder-only transformer at nanoGPT's CPU scale: token and
// position embeddings, pre-norm blocks with causal self-attention and a
// GELU feed-forward four times as wide, a final layer norm and a linear
// head (not tied to the token embedding). Its children are named so that
// pytorch_char_lm.py builds the same module with the same names.
type gpt struct {
	gluon.BlockMeta
	wte, wpe *nn.Embedding
	blocks   []*nn.TransformerEncoderLayer
	lnF      *nn.LayerNorm
	head     *nn.Dense
	context  int
	lastT    atomic.Int64 // the sequence length of the last forward pass (ExportONNX)
}

func newGPT(o modelOpts) *gpt {
	m := &gpt{BlockMeta: gluon.NewBlockMeta("gpt"), context: o.Context}
	add := func(c gluon.Component, name string) {
		c.Meta().SetName(name)
		m.AddChild(c)
	}
	m.wte = nn.NewEmbedding(o.Vocab, o.Embed)
	add(m.wte, "wte")
	m.wpe = nn.NewEmbedding(o.Context, o.Embed)
	add(m.wpe, "wpe")
	for i := range o.Layers {
		b := nn.NewTransformerEncoderLayer(o.Embed, o.Heads, nn.TransformerOpts{
			FeedForward: 4 * o.Embed, Dropout: o.Dropout, Activation: "gelu",
			NormFirst: true, Layout: "NTC", Causal: true,
		})
		m.blocks = append(m.blocks, b)
		add(b, fmt.Sprintf("h%d", i))
	}
	m.lnF = nn.NewLayerNorm(-1, nn.NormOpts{InChannels: o.Embed})
	add(m.lnF, "ln_f")
	m.head = nn.NewDense(o.Vocab, nn.DenseOpts{InUnits: o.Embed, NoFlatten: true})
	add(m.head, "head")
	gpt2Init(m)
	return m
}

// gpt2Init gives every weight N(0, 0.02), GPT-2's initialisation; biases
// stay zero and layer norms one and zero.
func gpt2Init(b gluon.Component) {
	for _, p := range gluon.CollectParams(b).List() {
		if n := p.Name(); !strings.HasSuffix(n, "bias") && !strings.HasSuffix(n, "gamma") && !strings.HasSuffix(n, "beta") {
			p.Init = initializer.Normal{Sigma: 0.02}
		}
	}
}

// Forward maps token ids [n, t] (Int64, t ≤ the context) to logits
// [n, t, vocab].
func (m *gpt) Forward(idx *nd.NDArray) *nd.NDArray {
	t := idx.Shape()[1]
	if t > m.context {
		nd.Panicf("gpt", nd.ErrShape, "sequence of %d tokens is longer than the context %d", t, m.context)
	}
	m.lastT.Store(int64(t))
	pos := make([]int64, t)
	for i := range pos {
		pos[i] = int64(i)
	}
	x := nd.Add(m.wte.Forward(idx), m.wpe.Forward(idx.Session().FromSlice(idx.Context(), pos, t)))
	for _, b := range m.blocks {
		x = b.Forward(x)
	}
	return m.head.Forward(m.lnF.Forward(x))
}

// lstmLM is the recurrent alternative: an embedding, a stacked LSTM and a
// linear head.
type lstmLM struct {
	gluon.BlockMeta
	wte  *nn.Embedding
	lstm *rnn.Layer
	head *nn.Dense
}

func newLSTM(o modelOpts) *lstmLM {
	m := &lstmLM{BlockMeta: gluon.NewBlockMeta("lstmlm")}
	m.wte = nn.NewEmbedding(o.Vocab, o.Embed)
	m.wte.SetName("wte")
	m.wte.Weight.Init = initializer.Normal{Sigma: 0.02}
	m.lstm = rnn.NewLSTM(o.Hidden, rnn.Opts{NumLayers: o.Layers, Dropout: o.Dropout, Layout: "NTC", InputSize: o.Embed})
	m.lstm.SetName("lstm")
	m.head = nn.NewDense(o.Vocab, nn.DenseOpts{InUnits: o.Hidden, NoFlatten: true})
	m.head.SetName("head")
	m.head.Weight.Init = initializer.Normal{Sigma: 0.02}
	for _, c := range []gluon.Component{m.wte, m.lstm, m.head} {
		m.AddChild(c)
	}
	return m
}

// Forward maps token ids [n, t] to logits [n, t, vocab].
func (m *lstmLM) Forward(idx *nd.NDArray) *nd.NDArray {
	return m.head.Forward(m.lstm.Forward(m.wte.Forward(idx)))
}

// newModel returns the model named by kind ("gpt" or "lstm").
func newModel(kind string, o modelOpts) (gluon.Block, error) {
	switch kind {
	case "gpt":
		if o.Embed%o.Heads != 0 {
			return nil, fmt.Errorf("-embed %d is not a multiple of -heads %d", o.Embed, o.Heads)
		}
		return newGPT(o), nil
	case "lstm":
		return newLSTM(o), nil
	}
	return nil, fmt.Errorf("-model %q: want gpt or lstm", kind)
}

// ExportONNX writes the GPT for the sequence length of its last forward
// pass (onnx.Export's example; the causal masks are constants of that
// length), batch free: token and position embeddings, the blocks, the
// final norm and the head.
func (m *gpt) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	t := int(m.lastT.Load())
	if t == 0 {
		return "", fmt.Errorf("gpt: run a forward pass before export")
	}
	pos := make([]int64, t)
	for i := range pos {
		pos[i] = int64(i)
	}
	tok, err := g.Block(m.wte, x)
	if err != nil {
		return "", err
	}
	p, err := g.Block(m.wpe, g.Const(pos, t))
	if err != nil {
		return "", err
	}
	h := g.Op("Add", []string{tok, p}, nil, 1)[0]
	for _, b := range m.blocks {
		if h, err = g.Block(b, h); err != nil {
			return "", err
		}
	}
	if h, err = g.Block(m.lnF, h); err != nil {
		return "", err
	}
	return g.Block(m.head, h)
}
