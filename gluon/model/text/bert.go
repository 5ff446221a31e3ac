package text

import (
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// Bert is the BERT encoder (Hugging Face's BertModel): word, position and
// token-type embeddings summed and normalised, post-LN encoder layers of
// bidirectional self-attention and a feed-forward part, and a pooler (a
// dense layer and tanh on the first token, [CLS]). Its parameters carry
// BertModel's state-dict names: embeddings.word_embeddings.weight,
// encoder.layer.0.attention.self.query.weight, ..., pooler.dense.bias;
// the dense layers' weights are [out, in], as nn.Linear's.
//
// Run maps token ids, token types and an attention mask to the sequence
// output [B, T, HiddenSize] and the pooled output [B, HiddenSize]. As a
// gluon.MultiBlock, ForwardMulti takes the same three inputs (the last two
// may be nil or left out) and returns both outputs; Forward takes the ids
// alone and returns the sequence output. In training mode
// (autograd.Record) the dropouts of the config apply.
type Bert struct {
	gluon.BlockMeta
	cfg    BertConfig
	emb    *bertEmbeddings
	layers []*bertLayer
	pooler *bertPooler // nil in BertForMaskedLM's encoder
}

// NewBert returns a BERT encoder of configuration cfg, its weights to be
// initialised as transformers initialises them (normal with standard
// deviation InitializerRange, the padding token's embedding zero, biases
// zero, layer norms one and zero) by gluon.Initialize or loaded by
// LoadBert. A configuration that Validate rejects panics with an
// *nd.Error of kind ErrArgument.
func NewBert(cfg BertConfig) *Bert { return newBert("text.NewBert", cfg, true) }

func newBert(op string, cfg BertConfig, pool bool) *Bert {
	if err := cfg.Validate(); err != nil {
		nd.Panicf(op, nd.ErrArgument, "%v", err)
	}
	cfg = cfg.withDefaults()
	m := &Bert{BlockMeta: gluon.NewBlockMeta("bertmodel"), cfg: cfg}
	m.emb = named(&m.BlockMeta, "embeddings", newBertEmbeddings(cfg))
	enc := &group{gluon.NewBlockMeta("encoder")}
	for range cfg.NumHiddenLayers {
		m.layers = append(m.layers, newBertLayer(cfg))
	}
	named(&enc.BlockMeta, "layer", newLayers(m.layers))
	named(&m.BlockMeta, "encoder", enc)
	if pool {
		m.pooler = named(&m.BlockMeta, "pooler", &bertPooler{BlockMeta: gluon.NewBlockMeta("pooler")})
		m.pooler.dense = named(&m.pooler.BlockMeta, "dense", bertDense(cfg.HiddenSize, cfg.HiddenSize, cfg.InitializerRange))
	}
	return m
}

// Config returns the model's configuration, defaults filled in.
func (m *Bert) Config() BertConfig { return m.cfg }

// Run encodes token ids [B, T] (Int64 or Int32, T ≤
// MaxPositionEmbeddings) on the ids' context. tokenTypes [B, T] (integers
// below TypeVocabSize) gives each position's segment; nil means all 0.
// mask [B, T] (any dtype: 1 or true for a token, 0 or false for padding)
// keeps attention off the padding: as transformers does, (1 − mask) times
// the dtype's lowest value is added to the attention scores; nil attends
// everywhere. It returns the sequence output [B, T, HiddenSize] and the
// pooled output [B, HiddenSize] (nil for the encoder of BertForMaskedLM,
// which has no pooler). Shapes that do not fit panic with ErrShape.
func (m *Bert) Run(ids, tokenTypes, mask *nd.NDArray) (seq, pooled *nd.NDArray) {
	return m.run("text.Bert.Run", ids, tokenTypes, mask)
}

// ForwardMulti runs the model on (ids, token types, attention mask), the
// last two optional, and returns (sequence output, pooled output); see
// Run.
func (m *Bert) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	ids, tt, mask := bertInputs("text.Bert.ForwardMulti", inputs)
	seq, pooled := m.run("text.Bert.ForwardMulti", ids, tt, mask)
	if pooled == nil {
		return []*nd.NDArray{seq}
	}
	return []*nd.NDArray{seq, pooled}
}

// Forward returns the sequence output [B, T, HiddenSize] of token ids
// [B, T], every token of segment 0 and none masked.
func (m *Bert) Forward(ids *nd.NDArray) *nd.NDArray {
	seq, _ := m.run("text.Bert.Forward", ids, nil, nil)
	return seq
}

// bertInputs unpacks a MultiBlock's (ids, token types, mask).
func bertInputs(op string, inputs []*nd.NDArray) (ids, tt, mask *nd.NDArray) {
	if len(inputs) < 1 || len(inputs) > 3 || inputs[0] == nil {
		nd.Panicf(op, nd.ErrArgument, "%d inputs: want token ids, then optionally token types and an attention mask", len(inputs))
	}
	ids = inputs[0]
	if len(inputs) > 1 {
		tt = inputs[1]
	}
	if len(inputs) > 2 {
		mask = inputs[2]
	}
	return ids, tt, mask
}

func (m *Bert) run(op string, ids, tt, mask *nd.NDArray) (seq, pooled *nd.NDArray) {
	if ids.NDim() != 2 || ids.DType().IsFloat() {
		nd.Panicf(op, nd.ErrShape, "token ids %v of %v: want an integer [batch, time] array", ids.Shape(), ids.DType())
	}
	sh := ids.Shape()
	if sh[1] < 1 || sh[1] > m.cfg.MaxPositionEmbeddings {
		nd.Panicf(op, nd.ErrShape, "%d tokens: want 1 to %d (max_position_embeddings)", sh[1], m.cfg.MaxPositionEmbeddings)
	}
	for _, a := range []struct {
		what string
		x    *nd.NDArray
	}{{"token types", tt}, {"attention mask", mask}} {
		if a.x != nil && (a.x.NDim() != 2 || a.x.Shape()[0] != sh[0] || a.x.Shape()[1] != sh[1]) {
			nd.Panicf(op, nd.ErrShape, "%s %v: want the ids' shape %v", a.what, a.x.Shape(), sh)
		}
	}
	if tt != nil && tt.DType().IsFloat() {
		nd.Panicf(op, nd.ErrShape, "token types of %v: want integers", tt.DType())
	}
	x := m.emb.forward(ids, tt)
	var ext *nd.NDArray
	if mask != nil {
		ext = extendedMask(mask, x.DType())
	}
	for _, l := range m.layers {
		x = l.forward(x, ext)
	}
	if m.pooler == nil {
		return x, nil
	}
	first := nd.Reshape(nd.SliceAxis(x, 0, 1, 1), sh[0], m.cfg.HiddenSize)
	return x, nd.Tanh(m.pooler.dense.Forward(first))
}

// extendedMask turns an attention mask [B, T] into the scores' additive
// mask [B, 1, 1, T]: 0 where mask is 1, the dtype's lowest value where it
// is 0.
func extendedMask(mask *nd.NDArray, dt nd.DType) *nd.NDArray {
	sh := mask.Shape()
	m := mask.AsType(dt)
	return nd.Reshape(nd.MulScalar(nd.RSubScalar(1, m), lowest(dt)), sh[0], 1, 1, sh[1])
}

// lowest is the most negative finite value of dt (PyTorch's
// finfo(dtype).min).
func lowest(dt nd.DType) float64 {
	switch dt {
	case nd.Float64:
		return -math.MaxFloat64
	case nd.Float16:
		return -65504
	case nd.BFloat16:
		return -3.3895313892515355e38
	}
	return -math.MaxFloat32
}

// group is a block that only holds children (BertModel's encoder).
type group struct{ gluon.BlockMeta }

// bertDense returns an nn.Linear-like dense layer from in to out features
// over the last axis, its weight [out, in] from N(0, std²), its bias zero.
func bertDense(in, out int, std float64) *nn.Dense {
	return nn.NewDense(out, nn.DenseOpts{InUnits: in, NoFlatten: true, WeightInit: initializer.Normal{Sigma: std}, BiasInit: initializer.Zero()})
}

// bertEmbeddings sums the word, position and token-type embeddings and
// normalises them (BertEmbeddings).
type bertEmbeddings struct {
	gluon.BlockMeta
	word, position, tokenType *nn.Embedding
	ln                        *nn.LayerNorm
	drop                      float64
}

func newBertEmbeddings(c BertConfig) *bertEmbeddings {
	e := &bertEmbeddings{BlockMeta: gluon.NewBlockMeta("embeddings"), drop: c.HiddenDropoutProb}
	emb := func(name string, n int) *nn.Embedding {
		x := nn.NewEmbedding(n, c.HiddenSize)
		x.Weight.Init = initializer.Normal{Sigma: c.InitializerRange}
		return named(&e.BlockMeta, name, x)
	}
	e.word = emb("word_embeddings", c.VocabSize).WithPadding(c.PadTokenID)
	e.position = emb("position_embeddings", c.MaxPositionEmbeddings)
	e.tokenType = emb("token_type_embeddings", c.TypeVocabSize)
	e.ln = named(&e.BlockMeta, "LayerNorm", layerNorm(c.HiddenSize, c.LayerNormEps))
	return e
}

func (e *bertEmbeddings) forward(ids, tt *nd.NDArray) *nd.NDArray {
	dev, t := ids.Context(), ids.Shape()[1]
	pos := ids.Session().Arange(dev, nd.Int64, 0, float64(t), 1)
	x := nd.Add(e.word.Forward(ids), nd.Take(e.position.Weight.DataFor(ids), pos, 0))
	if tt == nil { // every token of type 0: that row, broadcast
		x = nd.Add(x, nd.SliceAxis(e.tokenType.Weight.DataFor(ids), 0, 1, 0))
	} else {
		x = nd.Add(x, e.tokenType.Forward(tt))
	}
	return dropout(e.ln.Forward(x), e.drop)
}

// bertSelfAttention projects the hidden states to the heads' queries,
// keys and values and attends (BertSelfAttention).
type bertSelfAttention struct {
	gluon.BlockMeta
	query, key, value *nn.Dense
	heads, headDim    int
	drop              float64
}

// bertOutput is a dense layer, dropout, the residual and a layer norm
// (BertSelfOutput and BertOutput).
type bertOutput struct {
	gluon.BlockMeta
	dense *nn.Dense
	ln    *nn.LayerNorm
	drop  float64
}

func newBertOutput(c BertConfig, in int) *bertOutput {
	o := &bertOutput{BlockMeta: gluon.NewBlockMeta("output"), drop: c.HiddenDropoutProb}
	o.dense = named(&o.BlockMeta, "dense", bertDense(in, c.HiddenSize, c.InitializerRange))
	o.ln = named(&o.BlockMeta, "LayerNorm", layerNorm(c.HiddenSize, c.LayerNormEps))
	return o
}

func (o *bertOutput) forward(x, residual *nd.NDArray) *nd.NDArray {
	return o.ln.Forward(nd.Add(dropout(o.dense.Forward(x), o.drop), residual))
}

// bertAttention is the self-attention and its output (BertAttention).
type bertAttention struct {
	gluon.BlockMeta
	self   *bertSelfAttention
	output *bertOutput
}

// bertIntermediate is the feed-forward part's first dense layer and its
// activation.
type bertIntermediate struct {
	gluon.BlockMeta
	dense *nn.Dense
	act   string
}

// bertLayer is one post-LN encoder layer (BertLayer).
type bertLayer struct {
	gluon.BlockMeta
	attention    *bertAttention
	intermediate *bertIntermediate
	output       *bertOutput
}

func newBertLayer(c BertConfig) *bertLayer {
	h, std := c.HiddenSize, c.InitializerRange
	l := &bertLayer{BlockMeta: gluon.NewBlockMeta("layer")}
	l.attention = named(&l.BlockMeta, "attention", &bertAttention{BlockMeta: gluon.NewBlockMeta("attention")})
	sa := &bertSelfAttention{BlockMeta: gluon.NewBlockMeta("self"), heads: c.NumAttentionHeads,
		headDim: h / c.NumAttentionHeads, drop: c.AttentionProbsDropoutProb}
	sa.query = named(&sa.BlockMeta, "query", bertDense(h, h, std))
	sa.key = named(&sa.BlockMeta, "key", bertDense(h, h, std))
	sa.value = named(&sa.BlockMeta, "value", bertDense(h, h, std))
	l.attention.self = named(&l.attention.BlockMeta, "self", sa)
	l.attention.output = named(&l.attention.BlockMeta, "output", newBertOutput(c, h))
	l.intermediate = named(&l.BlockMeta, "intermediate", &bertIntermediate{BlockMeta: gluon.NewBlockMeta("intermediate"), act: c.HiddenAct})
	l.intermediate.dense = named(&l.intermediate.BlockMeta, "dense", bertDense(h, c.IntermediateSize, std))
	l.output = named(&l.BlockMeta, "output", newBertOutput(c, c.IntermediateSize))
	return l
}

// forward runs the layer on x [B, T, H] with the additive mask ext
// [B, 1, 1, T] (nil: none).
func (l *bertLayer) forward(x, ext *nd.NDArray) *nd.NDArray {
	a := l.attention.output.forward(l.attention.self.forward(x, ext), x)
	h := activations[l.intermediate.act](l.intermediate.dense.Forward(a))
	return l.output.forward(h, a)
}

// forward attends x [B, T, H] to itself and returns the heads' outputs
// concatenated, [B, T, H].
func (s *bertSelfAttention) forward(x, ext *nd.NDArray) *nd.NDArray {
	sh := x.Shape()
	b, t, h, d := sh[0], sh[1], s.heads, s.headDim
	split := func(z *nd.NDArray) *nd.NDArray { // [B, T, H] → [B·h, T, d]
		return nd.Reshape(nd.Transpose(nd.Reshape(z, b, t, h, d), 0, 2, 1, 3), b*h, t, d)
	}
	q, k, v := split(s.query.Forward(x)), split(s.key.Forward(x)), split(s.value.Forward(x))
	scores := nd.MulScalar(nd.Dot(q, k, false, true), 1/math.Sqrt(float64(d))) // [B·h, T, T]
	if ext != nil {
		scores = nd.Reshape(nd.Add(nd.Reshape(scores, b, h, t, t), ext), b*h, t, t)
	}
	w := dropout(nd.Softmax(scores, -1), s.drop)
	out := nd.Dot(w, v, false, false) // [B·h, T, d]
	return nd.Reshape(nd.Transpose(nd.Reshape(out, b, h, t, d), 0, 2, 1, 3), b, t, h*d)
}

// bertPooler is a dense layer and tanh on the first token (BertPooler).
type bertPooler struct {
	gluon.BlockMeta
	dense *nn.Dense
}
