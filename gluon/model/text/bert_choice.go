package text

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// BertForMultipleChoice is BERT scoring the choices of a question
// (Hugging Face's BertForMultipleChoice, for SWAG or RACE): every choice
// is a sequence of its own (the question and that answer, [CLS] Q [SEP]
// A [SEP]); the encoder with its pooler runs on all of them, then dropout
// (ClassifierDropout, else HiddenDropoutProb) and a dense layer to one
// score per choice. Its parameters are the encoder's under "bert." and
// classifier.weight [1, HiddenSize] and classifier.bias [1], whatever
// NumLabels says.
//
// Logits maps (ids, token types, attention mask) [B, C, T] — B questions
// of C choices of T tokens — to logits [B, C]; ForwardMulti takes the
// same inputs, Forward the ids alone. Loss is the loss transformers
// computes with labels, the index of each question's right choice.
type BertForMultipleChoice struct {
	gluon.BlockMeta
	cfg        BertConfig
	bert       *Bert
	classifier *nn.Dense
}

// NewBertForMultipleChoice returns a multiple-choice model of
// configuration cfg, to be initialised as NewBert says or loaded by
// LoadBert (a pre-trained encoder with a new classifier:
// BertLoadOpts.Partial). An invalid configuration panics with
// ErrArgument.
func NewBertForMultipleChoice(cfg BertConfig) *BertForMultipleChoice {
	b := newBert("text.NewBertForMultipleChoice", cfg, true)
	cfg = b.cfg
	m := &BertForMultipleChoice{BlockMeta: gluon.NewBlockMeta("bertformultiplechoice"), cfg: cfg}
	m.bert = named(&m.BlockMeta, "bert", b)
	m.classifier = named(&m.BlockMeta, "classifier", bertDense(cfg.HiddenSize, 1, cfg.InitializerRange))
	return m
}

// Config returns the model's configuration, defaults filled in.
func (m *BertForMultipleChoice) Config() BertConfig { return m.cfg }

// Bert returns the model's encoder (the child "bert"), which runs on the
// choices as a batch of B·C sequences.
func (m *BertForMultipleChoice) Bert() *Bert { return m.bert }

// Logits returns the scores [B, C] of the choices of token ids [B, C, T]
// (Int64 or Int32), with token types and an attention mask [B, C, T]
// that may be nil (see Bert.Run for their values). Inputs of other ranks
// or shapes panic with ErrShape.
func (m *BertForMultipleChoice) Logits(ids, tokenTypes, mask *nd.NDArray) *nd.NDArray {
	const op = "text.BertForMultipleChoice.Logits"
	if ids.NDim() != 3 || ids.DType().IsFloat() {
		nd.Panicf(op, nd.ErrShape, "token ids %v of %v: want an integer [batch, choices, time] array", ids.Shape(), ids.DType())
	}
	sh := ids.Shape()
	flat := func(what string, x *nd.NDArray) *nd.NDArray {
		if x == nil {
			return nil
		}
		if xs := x.Shape(); len(xs) != 3 || xs[0] != sh[0] || xs[1] != sh[1] || xs[2] != sh[2] {
			nd.Panicf(op, nd.ErrShape, "%s %v: want the ids' shape %v", what, xs, sh)
		}
		return nd.Reshape(x, sh[0]*sh[1], sh[2])
	}
	_, pooled := m.bert.run(op, flat("token ids", ids), flat("token types", tokenTypes), flat("attention mask", mask))
	y := m.classifier.Forward(dropout(pooled, m.cfg.classifierDropout())) // [B·C, 1]
	return nd.Reshape(y, sh[0], sh[1])
}

// ForwardMulti takes (ids, token types, attention mask) [B, C, T], the
// last two optional, and returns (logits [B, C]); see Logits.
func (m *BertForMultipleChoice) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	ids, tt, mask := bertInputs("text.BertForMultipleChoice.ForwardMulti", inputs)
	return []*nd.NDArray{m.Logits(ids, tt, mask)}
}

// Forward returns the logits [B, C] of token ids [B, C, T] alone
// (segment 0, no padding).
func (m *BertForMultipleChoice) Forward(ids *nd.NDArray) *nd.NDArray {
	return m.Logits(ids, nil, nil)
}

// Loss returns the loss of logits [B, C] for labels [B] (each question's
// right choice, in [0, C)), as BertForMultipleChoice computes it with
// labels: the cross-entropy over the choices, averaged over the labels
// that are not −100. Shapes that do not fit panic with ErrShape; a label
// outside [0, C) other than −100 panics with ErrArgument naming its
// position and value, as torch raises IndexError (see
// BertForSequenceClassification.Loss for traces).
func (m *BertForMultipleChoice) Loss(logits, labels *nd.NDArray) *nd.NDArray {
	const op = "text.BertForMultipleChoice.Loss"
	ls, ys := logits.Shape(), labels.Shape()
	if len(ls) != 2 || len(ys) != 1 || ys[0] != ls[0] || labels.DType().IsFloat() {
		nd.Panicf(op, nd.ErrShape, "logits %v and labels %v of %v: want [B, C] and integer [B]", ls, ys, labels.DType())
	}
	return maskedCrossEntropy(op, logits, labels, 0)
}
