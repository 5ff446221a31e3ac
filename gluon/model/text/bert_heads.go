package text

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// BertForSequenceClassification is BERT with a classifier on the pooled
// output (Hugging Face's BertForSequenceClassification): dropout
// (ClassifierDropout, else HiddenDropoutProb) and a dense layer to
// NumLabels logits. Its parameters are the encoder's under "bert." and
// classifier.weight [NumLabels, HiddenSize] and classifier.bias.
//
// Logits maps (ids, token types, attention mask) to logits [B, NumLabels]
// (see Bert.Run for the inputs); ForwardMulti takes the same inputs and
// returns the logits alone; Forward takes the ids alone. Loss is the loss
// transformers computes with labels.
type BertForSequenceClassification struct {
	gluon.BlockMeta
	cfg        BertConfig
	bert       *Bert
	classifier *nn.Dense
}

// NewBertForSequenceClassification returns a BERT classifier of
// configuration cfg (cfg.NumLabels classes), to be initialised as NewBert
// says or loaded by LoadBert (a pre-trained encoder with a new classifier:
// BertLoadOpts.Partial). An invalid configuration panics with ErrArgument.
func NewBertForSequenceClassification(cfg BertConfig) *BertForSequenceClassification {
	b := newBert("text.NewBertForSequenceClassification", cfg, true)
	cfg = b.cfg
	m := &BertForSequenceClassification{BlockMeta: gluon.NewBlockMeta("bertforsequenceclassification"), cfg: cfg}
	m.bert = named(&m.BlockMeta, "bert", b)
	m.classifier = named(&m.BlockMeta, "classifier", bertDense(cfg.HiddenSize, cfg.NumLabels, cfg.InitializerRange))
	return m
}

// Config returns the model's configuration, defaults filled in.
func (m *BertForSequenceClassification) Config() BertConfig { return m.cfg }

// Bert returns the model's encoder (the child "bert").
func (m *BertForSequenceClassification) Bert() *Bert { return m.bert }

// Logits returns the class logits [B, NumLabels] of token ids [B, T],
// with token types and an attention mask [B, T] that may be nil (see
// Bert.Run).
func (m *BertForSequenceClassification) Logits(ids, tokenTypes, mask *nd.NDArray) *nd.NDArray {
	_, pooled := m.bert.run("text.BertForSequenceClassification.Logits", ids, tokenTypes, mask)
	return m.classifier.Forward(dropout(pooled, m.cfg.classifierDropout()))
}

// ForwardMulti takes (ids, token types, attention mask), the last two
// optional, and returns (logits); see Logits.
func (m *BertForSequenceClassification) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	ids, tt, mask := bertInputs("text.BertForSequenceClassification.ForwardMulti", inputs)
	return []*nd.NDArray{m.Logits(ids, tt, mask)}
}

// Forward returns the logits of token ids alone (segment 0, no padding).
func (m *BertForSequenceClassification) Forward(ids *nd.NDArray) *nd.NDArray {
	return m.Logits(ids, nil, nil)
}

// Loss returns the loss of logits [B, NumLabels] for labels [B], as
// BertForSequenceClassification computes it with labels: for NumLabels >
// 1 (single-label classification) the cross-entropy with integer class
// labels, averaged over the samples whose label is not −100 (PyTorch's
// ignore_index; none left gives NaN, with zero gradients, as PyTorch does); for NumLabels 1 (regression) the
// mean squared error with float labels. Shapes that do not fit panic with
// ErrShape; a class label outside [0, NumLabels) other than −100 panics
// with ErrArgument naming its position and value, as torch raises
// IndexError (the labels are read on the host for that; inside a
// gluon.Hybridize trace, which cannot read them, such a label makes the
// loss and its gradients NaN instead).
func (m *BertForSequenceClassification) Loss(logits, labels *nd.NDArray) *nd.NDArray {
	const op = "text.BertForSequenceClassification.Loss"
	ls, ys := logits.Shape(), labels.Shape()
	if len(ls) != 2 || ls[1] != m.cfg.NumLabels || len(ys) != 1 || ys[0] != ls[0] {
		nd.Panicf(op, nd.ErrShape, "logits %v and labels %v: want [B, %d] and [B]", ls, ys, m.cfg.NumLabels)
	}
	if m.cfg.NumLabels == 1 {
		d := nd.Sub(nd.Reshape(logits, ls[0]), labels.AsType(logits.DType()))
		return nd.Mean(nd.Mul(d, d))
	}
	if labels.DType().IsFloat() {
		nd.Panicf(op, nd.ErrShape, "labels of %v: want integer class indices", labels.DType())
	}
	return maskedCrossEntropy(op, logits, labels, 0)
}

// maskedCrossEntropy averages the softmax cross-entropy of logits
// [..., V] and integer labels [...] over the labels that are not −100.
// A label outside [0, V) other than −100 (which the loss op would clip
// to a class; torch raises IndexError) panics with ErrArgument naming op,
// its position and its value; the labels are read on the host for that
// (one synchronisation on a GPU). Inside a trace (gluon.Hybridize), which
// cannot read values on the host, such a label makes its position's loss
// and gradient NaN instead, and so the mean: never a wrong finite loss.
// shift is added to the last index in the message (LMLoss's labels are
// the caller's shifted by one).
func maskedCrossEntropy(op string, logits, labels *nd.NDArray, shift int) *nd.NDArray {
	ls := logits.Shape()
	classes := ls[len(ls)-1]
	traced := nd.Tracing()
	if !traced {
		checkLabels(op, labels, classes, shift)
	}
	per := nd.SoftmaxCrossEntropy(logits, labels, -1) // −100 is clipped to 0, then masked out
	keep := nd.NotEqual(labels, nd.FullLike(labels, ignoreLabel)).AsType(per.DType())
	if traced {
		per = nd.Mul(per, badLabelNaN(labels, keep, classes))
	}
	n := nd.Sum(keep)
	mean := nd.Div(nd.Sum(nd.Mul(per, keep)), nd.MaximumScalar(n, 1))
	// NaN when no label is kept, as PyTorch's value, through a term with
	// no gradient path (n depends on the labels alone): the logits'
	// gradients are then 0, as nll_loss's backward gives them, not 0/0.
	return nd.Add(mean, nd.Div(nd.MulScalar(n, 0), n))
}

// checkLabels panics with ErrArgument at the first label outside
// [0, classes) that is not −100.
func checkLabels(op string, labels *nd.NDArray, classes, shift int) {
	sh := labels.Shape()
	for i, y := range labels.Int64s() {
		if y == ignoreLabel || y >= 0 && y < int64(classes) {
			continue
		}
		at := make([]int, len(sh))
		for a, r := len(sh)-1, i; a >= 0; a-- {
			at[a], r = r%sh[a], r/sh[a]
		}
		if len(at) > 0 {
			at[len(at)-1] += shift
		}
		nd.Panicf(op, nd.ErrArgument, "label %d at %v outside [0, %d) (−100 is ignored; torch raises IndexError)", y, at, classes)
	}
}

// badLabelNaN returns, in keep's dtype, 1 where a label lies in
// [0, classes) or is −100 and NaN where it does not: 0/0 from array ops,
// so that a traced computation needs no host read. The comparison runs in
// float32, exact for any vocabulary below 2²⁴.
func badLabelNaN(labels, keep *nd.NDArray, classes int) *nd.NDArray {
	y := labels.AsType(nd.Float32)
	outside := nd.NotEqual(nd.Clip(y, 0, float64(classes-1)), y).AsType(nd.Float32)
	ok := nd.RSubScalar(1, nd.Mul(outside, keep.AsType(nd.Float32))) // 1 − bad
	return nd.Div(ok, ok).AsType(keep.DType())
}

// BertForMaskedLM is BERT with the masked-language-model head (Hugging
// Face's BertForMaskedLM): the encoder without a pooler, then
// cls.predictions — a dense layer, the activation and a layer norm
// (transform.dense, transform.LayerNorm), and an output layer tied to the
// word embeddings with a bias of its own, cls.predictions.bias
// [VocabSize]. The files' cls.predictions.decoder.weight and .bias are
// those tied tensors.
//
// Logits maps (ids, token types, attention mask) to logits [B, T,
// VocabSize]; ForwardMulti takes the same inputs, Forward the ids alone.
// Loss is the masked-LM loss.
type BertForMaskedLM struct {
	gluon.BlockMeta
	cfg  BertConfig
	bert *Bert
	pred *bertLMPrediction
}

// bertLMPrediction is cls.predictions: the transform and the output bias
// (the weight is the word embedding's).
type bertLMPrediction struct {
	gluon.BlockMeta
	bias      *gluon.Parameter
	transform *bertTransform
}

// bertTransform is cls.predictions.transform.
type bertTransform struct {
	gluon.BlockMeta
	dense *nn.Dense
	ln    *nn.LayerNorm
	act   string
}

// NewBertForMaskedLM returns a masked language model of configuration
// cfg, to be initialised as NewBert says (the output bias zero) or loaded
// by LoadBert. An invalid configuration panics with ErrArgument.
func NewBertForMaskedLM(cfg BertConfig) *BertForMaskedLM {
	b := newBert("text.NewBertForMaskedLM", cfg, false)
	cfg = b.cfg
	m := &BertForMaskedLM{BlockMeta: gluon.NewBlockMeta("bertformaskedlm"), cfg: cfg}
	m.bert = named(&m.BlockMeta, "bert", b)
	cls := named(&m.BlockMeta, "cls", &group{gluon.NewBlockMeta("cls")})
	m.pred = named(&cls.BlockMeta, "predictions", newBertLMPrediction(cfg))
	return m
}

// newBertLMPrediction returns cls.predictions of configuration cfg, its
// bias zero.
func newBertLMPrediction(cfg BertConfig) *bertLMPrediction {
	p := &bertLMPrediction{BlockMeta: gluon.NewBlockMeta("predictions")}
	p.bias = p.AddParam(gluon.NewParameter("bias", cfg.VocabSize))
	p.bias.Init = initializer.Zero()
	tr := &bertTransform{BlockMeta: gluon.NewBlockMeta("transform"), act: cfg.HiddenAct}
	tr.dense = named(&tr.BlockMeta, "dense", bertDense(cfg.HiddenSize, cfg.HiddenSize, cfg.InitializerRange))
	tr.ln = named(&tr.BlockMeta, "LayerNorm", layerNorm(cfg.HiddenSize, cfg.LayerNormEps))
	p.transform = named(&p.BlockMeta, "transform", tr)
	return p
}

// logits maps the sequence output [B, T, H] to token logits [B, T, V]:
// the transform, then the word embedding word [V, H] (tied) and the bias.
func (p *bertLMPrediction) logits(seq *nd.NDArray, word *gluon.Parameter) *nd.NDArray {
	tr := p.transform
	h := tr.ln.Forward(activations[tr.act](tr.dense.Forward(seq)))
	sh, w := seq.Shape(), word.DataFor(h)
	v, hidden := w.Shape()[0], w.Shape()[1]
	logits := nd.FullyConnected(nd.Reshape(h, -1, hidden), w, p.bias.DataFor(h))
	return nd.Reshape(logits, sh[0], sh[1], v)
}

// Config returns the model's configuration, defaults filled in.
func (m *BertForMaskedLM) Config() BertConfig { return m.cfg }

// Bert returns the model's encoder (the child "bert"; it has no pooler,
// so its Run returns a nil pooled output).
func (m *BertForMaskedLM) Bert() *Bert { return m.bert }

// Logits returns the token logits [B, T, VocabSize] of token ids [B, T],
// with token types and an attention mask [B, T] that may be nil (see
// Bert.Run).
func (m *BertForMaskedLM) Logits(ids, tokenTypes, mask *nd.NDArray) *nd.NDArray {
	seq, _ := m.bert.run("text.BertForMaskedLM.Logits", ids, tokenTypes, mask)
	return m.pred.logits(seq, m.bert.emb.word.Weight)
}

// ForwardMulti takes (ids, token types, attention mask), the last two
// optional, and returns (logits); see Logits.
func (m *BertForMaskedLM) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	ids, tt, mask := bertInputs("text.BertForMaskedLM.ForwardMulti", inputs)
	return []*nd.NDArray{m.Logits(ids, tt, mask)}
}

// Forward returns the logits of token ids alone (segment 0, no padding).
func (m *BertForMaskedLM) Forward(ids *nd.NDArray) *nd.NDArray { return m.Logits(ids, nil, nil) }

// Loss returns the masked-LM loss of logits [B, T, VocabSize] for labels
// [B, T], as BertForMaskedLM computes it with labels: the cross-entropy of
// each position against its label (the original token at the positions
// the input masked, −100 elsewhere), averaged over the positions whose
// label is not −100 (none gives NaN with zero gradients, as PyTorch does). There is no shift:
// position t predicts label t. A label outside [0, VocabSize) other than
// −100 panics with ErrArgument naming its position and value, as torch
// raises IndexError (the labels are read on the host for that; inside a
// gluon.Hybridize trace, which cannot read them, such a label makes the
// loss and its gradients NaN instead).
func (m *BertForMaskedLM) Loss(logits, labels *nd.NDArray) *nd.NDArray {
	const op = "text.BertForMaskedLM.Loss"
	ls, ys := logits.Shape(), labels.Shape()
	if len(ls) != 3 || len(ys) != 2 || ls[0] != ys[0] || ls[1] != ys[1] || ls[2] != m.cfg.VocabSize || labels.DType().IsFloat() {
		nd.Panicf(op, nd.ErrShape, "logits %v and labels %v of %v: want [B, T, %d] and integer [B, T]",
			ls, ys, labels.DType(), m.cfg.VocabSize)
	}
	return maskedCrossEntropy(op, logits, labels, 0)
}
