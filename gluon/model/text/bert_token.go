package text

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// BertForTokenClassification is BERT with a classifier on every token
// (Hugging Face's BertForTokenClassification, for named entities or
// parts of speech): the encoder without a pooler, dropout
// (ClassifierDropout, else HiddenDropoutProb) and a dense layer to
// NumLabels logits per token. Its parameters are the encoder's under
// "bert." and classifier.weight [NumLabels, HiddenSize] and
// classifier.bias.
//
// Logits maps (ids, token types, attention mask) to logits [B, T,
// NumLabels] (see Bert.Run for the inputs); ForwardMulti takes the same
// inputs and returns the logits alone; Forward takes the ids alone. Loss
// is the loss transformers computes with labels.
type BertForTokenClassification struct {
	gluon.BlockMeta
	cfg        BertConfig
	bert       *Bert
	classifier *nn.Dense
}

// NewBertForTokenClassification returns a token classifier of
// configuration cfg (cfg.NumLabels classes), to be initialised as NewBert
// says or loaded by LoadBert (a pre-trained encoder with a new
// classifier: BertLoadOpts.Partial). An invalid configuration panics with
// ErrArgument.
func NewBertForTokenClassification(cfg BertConfig) *BertForTokenClassification {
	b := newBert("text.NewBertForTokenClassification", cfg, false)
	cfg = b.cfg
	m := &BertForTokenClassification{BlockMeta: gluon.NewBlockMeta("bertfortokenclassification"), cfg: cfg}
	m.bert = named(&m.BlockMeta, "bert", b)
	m.classifier = named(&m.BlockMeta, "classifier", bertDense(cfg.HiddenSize, cfg.NumLabels, cfg.InitializerRange))
	return m
}

// Config returns the model's configuration, defaults filled in.
func (m *BertForTokenClassification) Config() BertConfig { return m.cfg }

// Bert returns the model's encoder (the child "bert"; it has no pooler,
// so its Run returns a nil pooled output).
func (m *BertForTokenClassification) Bert() *Bert { return m.bert }

// Logits returns the logits [B, T, NumLabels] of every token of token ids
// [B, T], with token types and an attention mask [B, T] that may be nil
// (see Bert.Run). The padding's logits are computed too: give its labels
// −100.
func (m *BertForTokenClassification) Logits(ids, tokenTypes, mask *nd.NDArray) *nd.NDArray {
	seq, _ := m.bert.run("text.BertForTokenClassification.Logits", ids, tokenTypes, mask)
	return m.classifier.Forward(dropout(seq, m.cfg.classifierDropout()))
}

// ForwardMulti takes (ids, token types, attention mask), the last two
// optional, and returns (logits); see Logits.
func (m *BertForTokenClassification) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	ids, tt, mask := bertInputs("text.BertForTokenClassification.ForwardMulti", inputs)
	return []*nd.NDArray{m.Logits(ids, tt, mask)}
}

// Forward returns the logits of token ids alone (segment 0, no padding).
func (m *BertForTokenClassification) Forward(ids *nd.NDArray) *nd.NDArray {
	return m.Logits(ids, nil, nil)
}

// Loss returns the loss of logits [B, T, NumLabels] for integer labels
// [B, T], as BertForTokenClassification computes it with labels: the
// cross-entropy of every token against its label, averaged over the
// tokens whose label is not −100 (the padding, and the word pieces after
// a word's first, as transformers' examples label them; none left gives
// NaN, as PyTorch does). Shapes that do not fit panic with ErrShape; a
// label outside [0, NumLabels) other than −100 panics with ErrArgument
// naming its position and value, as torch raises IndexError (the labels
// are read on the host for that; inside a gluon.Hybridize trace, which
// cannot read them, such a label makes the loss and its gradients NaN
// instead).
func (m *BertForTokenClassification) Loss(logits, labels *nd.NDArray) *nd.NDArray {
	const op = "text.BertForTokenClassification.Loss"
	ls, ys := logits.Shape(), labels.Shape()
	if len(ls) != 3 || len(ys) != 2 || ls[0] != ys[0] || ls[1] != ys[1] || ls[2] != m.cfg.NumLabels || labels.DType().IsFloat() {
		nd.Panicf(op, nd.ErrShape, "logits %v and labels %v of %v: want [B, T, %d] and integer [B, T]",
			ls, ys, labels.DType(), m.cfg.NumLabels)
	}
	return maskedCrossEntropy(op, logits, labels, 0)
}

// BertForQuestionAnswering is BERT for extractive question answering
// (Hugging Face's BertForQuestionAnswering, SQuAD's span prediction): the
// encoder without a pooler and a dense layer qa_outputs from every token
// to two logits, the span's start and end scores. Its parameters are the
// encoder's under "bert." and qa_outputs.weight [2, HiddenSize] and
// qa_outputs.bias [2]; qa_outputs has two outputs whatever NumLabels says
// (transformers' question-answering models have num_labels 2).
//
// Logits maps (ids, token types, attention mask) to the start and end
// logits [B, T] (see Bert.Run for the inputs; the question is segment 0,
// the context segment 1); ForwardMulti takes the same inputs and returns
// both; Forward takes the ids alone and returns qa_outputs' logits [B, T,
// 2], start then end on the last axis. Loss is the loss transformers
// computes with start and end positions.
type BertForQuestionAnswering struct {
	gluon.BlockMeta
	cfg  BertConfig
	bert *Bert
	qa   *nn.Dense
}

// NewBertForQuestionAnswering returns a span predictor of configuration
// cfg, to be initialised as NewBert says or loaded by LoadBert (a
// pre-trained encoder with new qa_outputs: BertLoadOpts.Partial). An
// invalid configuration panics with ErrArgument.
func NewBertForQuestionAnswering(cfg BertConfig) *BertForQuestionAnswering {
	b := newBert("text.NewBertForQuestionAnswering", cfg, false)
	cfg = b.cfg
	m := &BertForQuestionAnswering{BlockMeta: gluon.NewBlockMeta("bertforquestionanswering"), cfg: cfg}
	m.bert = named(&m.BlockMeta, "bert", b)
	m.qa = named(&m.BlockMeta, "qa_outputs", bertDense(cfg.HiddenSize, 2, cfg.InitializerRange))
	return m
}

// Config returns the model's configuration, defaults filled in.
func (m *BertForQuestionAnswering) Config() BertConfig { return m.cfg }

// Bert returns the model's encoder (the child "bert"; it has no pooler).
func (m *BertForQuestionAnswering) Bert() *Bert { return m.bert }

// Logits returns the start and end logits [B, T] of token ids [B, T],
// with token types and an attention mask [B, T] that may be nil (see
// Bert.Run). The padding's logits are computed too (transformers leaves
// them as well): a span search should skip them, and the question's
// tokens.
func (m *BertForQuestionAnswering) Logits(ids, tokenTypes, mask *nd.NDArray) (start, end *nd.NDArray) {
	y := m.logits("text.BertForQuestionAnswering.Logits", ids, tokenTypes, mask)
	sh := y.Shape()
	return nd.Reshape(nd.SliceAxis(y, 0, 1, 2), sh[0], sh[1]), nd.Reshape(nd.SliceAxis(y, 1, 2, 2), sh[0], sh[1])
}

func (m *BertForQuestionAnswering) logits(op string, ids, tt, mask *nd.NDArray) *nd.NDArray {
	seq, _ := m.bert.run(op, ids, tt, mask)
	return m.qa.Forward(seq)
}

// ForwardMulti takes (ids, token types, attention mask), the last two
// optional, and returns (start logits, end logits); see Logits.
func (m *BertForQuestionAnswering) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	ids, tt, mask := bertInputs("text.BertForQuestionAnswering.ForwardMulti", inputs)
	start, end := m.Logits(ids, tt, mask)
	return []*nd.NDArray{start, end}
}

// Forward returns qa_outputs' logits [B, T, 2] of token ids alone
// (segment 0, no padding): the start logits at index 0 of the last axis,
// the end logits at 1.
func (m *BertForQuestionAnswering) Forward(ids *nd.NDArray) *nd.NDArray {
	return m.logits("text.BertForQuestionAnswering.Forward", ids, nil, nil)
}

// Loss returns the loss of start and end logits [B, T] for the answers'
// start and end positions [B] (integer token indices), as
// BertForQuestionAnswering computes it: each position is clamped to
// [0, T] (a negative one becomes 0; one at or beyond T, an answer cut
// off by truncation, becomes T and is ignored), and the loss is the mean
// of the start logits' and the end logits' cross-entropies, each averaged
// over its positions not ignored (none left gives NaN with zero gradients,
// as PyTorch does).
// Shapes or dtypes that do not fit panic with ErrShape; no position is an
// error, as none is for transformers.
func (m *BertForQuestionAnswering) Loss(start, end, startPositions, endPositions *nd.NDArray) *nd.NDArray {
	const op = "text.BertForQuestionAnswering.Loss"
	ss, es, sp, ep := start.Shape(), end.Shape(), startPositions.Shape(), endPositions.Shape()
	if len(ss) != 2 || len(es) != 2 || ss[0] != es[0] || ss[1] != es[1] || len(sp) != 1 || len(ep) != 1 || sp[0] != ss[0] || ep[0] != ss[0] ||
		startPositions.DType().IsFloat() || endPositions.DType().IsFloat() {
		nd.Panicf(op, nd.ErrShape, "start %v, end %v, start positions %v and end positions %v of %v and %v: want logits [B, T] and integer positions [B]",
			ss, es, sp, ep, startPositions.DType(), endPositions.DType())
	}
	t := ss[1]
	// clamped turns positions into labels: clamped to [0, T], T → −100.
	clamped := func(p *nd.NDArray) *nd.NDArray {
		c := nd.Clip(p.AsType(nd.Int64), 0, float64(t))
		return nd.Where(nd.Equal(c, nd.FullLike(c, float64(t))), nd.FullLike(c, ignoreLabel), c)
	}
	startLoss := maskedCrossEntropy(op, start, clamped(startPositions), 0)
	endLoss := maskedCrossEntropy(op, end, clamped(endPositions), 0)
	return nd.MulScalar(nd.Add(startLoss, endLoss), 0.5)
}
