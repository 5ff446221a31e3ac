package text

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// GPT2 is GPT-2 with a language-model head (Hugging Face's
// GPT2LMHeadModel): token and position embeddings, pre-LN transformer
// blocks with causal self-attention, a final layer norm and an output
// layer tied to the token embedding. Its parameters carry
// GPT2LMHeadModel's state-dict names (see the package documentation).
//
// Forward maps token ids to logits; ForwardCached does so for the
// positions after those a Cache holds, and Generate continues a prompt.
// In training mode (autograd.Record) the dropouts of the config apply.
type GPT2 struct {
	gluon.BlockMeta
	cfg  GPT2Config
	body *gpt2Body
}

// gpt2Body is the child "transformer" (Hugging Face's GPT2Model).
type gpt2Body struct {
	gluon.BlockMeta
	wte, wpe *nn.Embedding
	blocks   []*block
	lnF      *nn.LayerNorm
}

// NewGPT2 returns a GPT-2 of configuration cfg, its weights to be
// initialised as GPT-2's are (normal with standard deviation
// cfg.InitializerRange, 0.02 by default, the residual projections'
// scaled by 1/√(2·NLayer), biases zero, layer norms one and zero) by
// gluon.Initialize or loaded by Load. A configuration
// that Validate rejects panics with an *nd.Error of kind ErrArgument.
func NewGPT2(cfg GPT2Config) *GPT2 {
	if err := cfg.Validate(); err != nil {
		nd.Panicf("text.NewGPT2", nd.ErrArgument, "%v", err)
	}
	cfg = cfg.withDefaults()
	m := &GPT2{BlockMeta: gluon.NewBlockMeta("gpt2lmheadmodel"), cfg: cfg}
	b := &gpt2Body{BlockMeta: gluon.NewBlockMeta("gpt2model")}
	b.wte = named(&b.BlockMeta, "wte", nn.NewEmbedding(cfg.VocabSize, cfg.NEmbd))
	b.wte.Weight.Init = initializer.Normal{Sigma: cfg.InitializerRange}
	b.wpe = named(&b.BlockMeta, "wpe", nn.NewEmbedding(cfg.NPositions, cfg.NEmbd))
	b.wpe.Weight.Init = initializer.Normal{Sigma: cfg.InitializerRange}
	for i := range cfg.NLayer {
		b.blocks = append(b.blocks, newBlock(cfg, i))
	}
	named(&b.BlockMeta, "h", newLayers(b.blocks))
	b.lnF = named(&b.BlockMeta, "ln_f", layerNorm(cfg.NEmbd, cfg.LayerNormEpsilon))
	m.body = named(&m.BlockMeta, "transformer", b)
	return m
}

// Config returns the model's configuration, defaults filled in.
func (m *GPT2) Config() GPT2Config { return m.cfg }

// Forward maps token ids [B, T] (Int64 or Int32, T ≤ NPositions) to
// logits [B, T, VocabSize] on the ids' context. Position t attends to
// positions 0..t only. ForwardMasked takes padded batches.
func (m *GPT2) Forward(ids *nd.NDArray) *nd.NDArray {
	return m.forward("text.GPT2.Forward", ids, nil, nil)
}

// ForwardCached maps the token ids [B, T] that follow the c.Len()
// positions c holds to their logits [B, T, VocabSize], attending to the
// held positions too, and appends the new positions' keys and values to
// c: after a prompt, each generated token costs one position's work.
// Logits equal those of Forward on the whole sequence. The cache is for
// inference: calling ForwardCached while recording panics with
// ErrArgument (train with Forward); a batch other than the cache's, or
// more than NPositions positions in all, panics with ErrShape, and ids on
// another context than the cache's with ErrContext, before anything
// changes.
func (m *GPT2) ForwardCached(ids *nd.NDArray, c *Cache) *nd.NDArray {
	const op = "text.GPT2.ForwardCached"
	if c == nil {
		nd.Panicf(op, nd.ErrArgument, "nil cache (make one with NewCache)")
	}
	if ids.Session().IsRecording() {
		nd.Panicf(op, nd.ErrArgument, "the cache is for inference: run Forward, not ForwardCached, while recording")
	}
	return m.forward(op, ids, nil, c)
}

// forward runs the model on ids after the positions c holds (nil: no
// cache), with an attention mask over the held and the new positions
// (nil: the cache's, extended by ones, or none).
func (m *GPT2) forward(op string, ids, mask *nd.NDArray, c *Cache) *nd.NDArray {
	if ids.NDim() != 2 || ids.DType().IsFloat() {
		nd.Panicf(op, nd.ErrShape, "token ids %v of %v: want an integer [batch, time] array", ids.Shape(), ids.DType())
	}
	bsz, t := ids.Shape()[0], ids.Shape()[1]
	past := 0
	if c != nil {
		c.check(op, len(m.body.blocks), bsz, ids.Context())
		past = c.n
	}
	if t < 1 || past+t > m.cfg.NPositions {
		nd.Panicf(op, nd.ErrShape, "%d tokens after %d cached ones: want 1 to %d in all (n_positions)", t, past, m.cfg.NPositions)
	}
	b := m.body
	keep := m.keepMask(op, ids, mask, c, past)
	x := nd.Add(b.wte.Forward(ids), nd.Take(b.wpe.Weight.DataFor(ids), positions(ids, keep, past), 0))
	x = dropout(x, m.cfg.EmbdPdrop)
	var ext *nd.NDArray
	if keep != nil {
		ext = extendedMask(keep, x.DType())
	}
	for i, blk := range b.blocks {
		var kv *layerCache
		if c != nil {
			kv = &c.layers[i]
		}
		x = blk.forward(x, kv, ext)
	}
	if c != nil {
		c.n += t
		if keep != nil {
			c.setMask(keep)
		}
	}
	x = b.lnF.Forward(x)
	logits := nd.FullyConnected(nd.Reshape(x, -1, m.cfg.NEmbd), b.wte.Weight.DataFor(x), nil)
	return nd.Reshape(logits, bsz, t, m.cfg.VocabSize)
}

// LMLoss returns the language-modelling loss of logits [B, T, V] for
// labels [B, T] (integer token ids; the inputs themselves for plain
// next-token training), as GPT2LMHeadModel computes it with labels:
// position t's logits predict label t+1, and the cross-entropy is
// averaged over the B·(T−1) predicted positions whose label is not −100
// (PyTorch's ignore_index). A batch without any such position gives NaN
// with zero gradients, as PyTorch does. A predicted label (labels[:, 1:]) outside [0, V) other
// than −100 panics with an *nd.Error of kind ErrArgument naming its
// position in labels and its value, as torch raises IndexError; the
// labels are read on the host for that (one synchronisation on a GPU).
// Inside a gluon.Hybridize trace, which cannot read values on the host,
// such a label makes the loss and its gradients NaN instead.
func LMLoss(logits, labels *nd.NDArray) *nd.NDArray {
	const op = "text.LMLoss"
	ls, ys := logits.Shape(), labels.Shape()
	if len(ls) != 3 || len(ys) != 2 || ls[0] != ys[0] || ls[1] != ys[1] || ls[1] < 2 {
		nd.Panicf(op, nd.ErrShape, "logits %v and labels %v: want [B, T, V] and [B, T] with T ≥ 2", ls, ys)
	}
	t := ls[1]
	pred := nd.SliceAxis(logits, 0, t-1, 1)
	next := nd.SliceAxis(labels, 1, t, 1)
	return maskedCrossEntropy(op, pred, next, 1)
}

// ignoreLabel is the label LMLoss skips, PyTorch's ignore_index.
const ignoreLabel = -100
