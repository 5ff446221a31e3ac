package text

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// BertForPreTraining is BERT with both pre-training heads (Hugging Face's
// BertForPreTraining, the layout of the hub's bert-base-uncased
// checkpoint): the encoder with its pooler; cls.predictions, the
// masked-LM head of BertForMaskedLM (its output layer tied to the word
// embeddings, with cls.predictions.bias), on every token; and
// cls.seq_relationship, a dense layer from the pooled output to two
// next-sentence logits (index 0: the second segment follows the first;
// 1: it is a random one). Its parameters are the encoder's under "bert.",
// cls.predictions.* as BertForMaskedLM's and cls.seq_relationship.weight
// [2, HiddenSize] and .bias, so that such a checkpoint loads strictly.
//
// Logits maps (ids, token types, attention mask) to the token logits [B,
// T, VocabSize] and the next-sentence logits [B, 2]; ForwardMulti takes
// the same inputs and returns both; Forward takes the ids alone and
// returns the token logits. Loss is the sum of the two losses, as
// transformers computes it with both labels.
type BertForPreTraining struct {
	gluon.BlockMeta
	cfg  BertConfig
	bert *Bert
	pred *bertLMPrediction
	rel  *nn.Dense
}

// NewBertForPreTraining returns BERT with its pre-training heads, of
// configuration cfg, to be initialised as NewBert says (the output bias
// zero) or loaded by LoadBert. An invalid configuration panics with
// ErrArgument.
func NewBertForPreTraining(cfg BertConfig) *BertForPreTraining {
	b := newBert("text.NewBertForPreTraining", cfg, true)
	cfg = b.cfg
	m := &BertForPreTraining{BlockMeta: gluon.NewBlockMeta("bertforpretraining"), cfg: cfg}
	m.bert = named(&m.BlockMeta, "bert", b)
	cls := named(&m.BlockMeta, "cls", &group{gluon.NewBlockMeta("cls")})
	m.pred = named(&cls.BlockMeta, "predictions", newBertLMPrediction(cfg))
	m.rel = named(&cls.BlockMeta, "seq_relationship", bertDense(cfg.HiddenSize, 2, cfg.InitializerRange))
	return m
}

// Config returns the model's configuration, defaults filled in.
func (m *BertForPreTraining) Config() BertConfig { return m.cfg }

// Bert returns the model's encoder (the child "bert").
func (m *BertForPreTraining) Bert() *Bert { return m.bert }

// Logits returns the token logits [B, T, VocabSize] and the
// next-sentence logits [B, 2] of token ids [B, T], with token types and
// an attention mask [B, T] that may be nil (see Bert.Run).
func (m *BertForPreTraining) Logits(ids, tokenTypes, mask *nd.NDArray) (prediction, seqRelationship *nd.NDArray) {
	seq, pooled := m.bert.run("text.BertForPreTraining.Logits", ids, tokenTypes, mask)
	return m.pred.logits(seq, m.bert.emb.word.Weight), m.rel.Forward(pooled)
}

// ForwardMulti takes (ids, token types, attention mask), the last two
// optional, and returns (token logits, next-sentence logits); see Logits.
func (m *BertForPreTraining) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	ids, tt, mask := bertInputs("text.BertForPreTraining.ForwardMulti", inputs)
	pred, rel := m.Logits(ids, tt, mask)
	return []*nd.NDArray{pred, rel}
}

// Forward returns the token logits of token ids alone (segment 0, no
// padding).
func (m *BertForPreTraining) Forward(ids *nd.NDArray) *nd.NDArray {
	pred, _ := m.Logits(ids, nil, nil)
	return pred
}

// Loss returns the pre-training loss of the token logits [B, T,
// VocabSize] and the next-sentence logits [B, 2] for masked-LM labels
// [B, T] (−100 where the input was not masked) and next-sentence labels
// [B] (0: the second segment follows the first; 1: random), as
// BertForPreTraining computes it with both: the masked-LM loss
// (BertForMaskedLM.Loss) plus the next-sentence cross-entropy averaged
// over the labels that are not −100. Shapes that do not fit panic with
// ErrShape; a label out of range other than −100 panics with
// ErrArgument naming its position and value, as torch raises IndexError
// (see BertForMaskedLM.Loss for traces).
func (m *BertForPreTraining) Loss(prediction, seqRelationship, mlmLabels, nspLabels *nd.NDArray) *nd.NDArray {
	const op = "text.BertForPreTraining.Loss"
	ls, ys := prediction.Shape(), mlmLabels.Shape()
	if len(ls) != 3 || len(ys) != 2 || ls[0] != ys[0] || ls[1] != ys[1] || ls[2] != m.cfg.VocabSize || mlmLabels.DType().IsFloat() {
		nd.Panicf(op, nd.ErrShape, "token logits %v and masked-LM labels %v of %v: want [B, T, %d] and integer [B, T]",
			ls, ys, mlmLabels.DType(), m.cfg.VocabSize)
	}
	checkNSP(op, seqRelationship, nspLabels, ls[0])
	return nd.Add(maskedCrossEntropy(op, prediction, mlmLabels, 0), maskedCrossEntropy(op, seqRelationship, nspLabels, 0))
}

// checkNSP panics with ErrShape unless logits are [b, 2] and labels
// integer [b] (b < 0: any batch).
func checkNSP(op string, logits, labels *nd.NDArray, b int) {
	ls, ys := logits.Shape(), labels.Shape()
	if b < 0 && len(ls) > 0 {
		b = ls[0]
	}
	if len(ls) != 2 || ls[0] != b || ls[1] != 2 || len(ys) != 1 || ys[0] != b || labels.DType().IsFloat() {
		nd.Panicf(op, nd.ErrShape, "next-sentence logits %v and labels %v of %v: want [%d, 2] and integer [%d]",
			ls, ys, labels.DType(), b, b)
	}
}

// BertForNextSentencePrediction is BERT with the next-sentence head alone
// (Hugging Face's BertForNextSentencePrediction): the encoder with its
// pooler and cls.seq_relationship, a dense layer from the pooled output
// to two logits (index 0: the second segment follows the first; 1: it
// is a random one). Its parameters are the encoder's under "bert." and
// cls.seq_relationship.weight [2, HiddenSize] and .bias; a pre-training
// checkpoint loads with BertLoadOpts.Partial (its cls.predictions.* are
// skipped).
//
// Logits maps (ids, token types, attention mask) to logits [B, 2];
// ForwardMulti takes the same inputs, Forward the ids alone. Loss is the
// next-sentence loss.
type BertForNextSentencePrediction struct {
	gluon.BlockMeta
	cfg  BertConfig
	bert *Bert
	rel  *nn.Dense
}

// NewBertForNextSentencePrediction returns a next-sentence classifier of
// configuration cfg, to be initialised as NewBert says or loaded by
// LoadBert. An invalid configuration panics with ErrArgument.
func NewBertForNextSentencePrediction(cfg BertConfig) *BertForNextSentencePrediction {
	b := newBert("text.NewBertForNextSentencePrediction", cfg, true)
	cfg = b.cfg
	m := &BertForNextSentencePrediction{BlockMeta: gluon.NewBlockMeta("bertfornextsentenceprediction"), cfg: cfg}
	m.bert = named(&m.BlockMeta, "bert", b)
	cls := named(&m.BlockMeta, "cls", &group{gluon.NewBlockMeta("cls")})
	m.rel = named(&cls.BlockMeta, "seq_relationship", bertDense(cfg.HiddenSize, 2, cfg.InitializerRange))
	return m
}

// Config returns the model's configuration, defaults filled in.
func (m *BertForNextSentencePrediction) Config() BertConfig { return m.cfg }

// Bert returns the model's encoder (the child "bert").
func (m *BertForNextSentencePrediction) Bert() *Bert { return m.bert }

// Logits returns the next-sentence logits [B, 2] of token ids [B, T] (a
// pair: [CLS] A [SEP] B [SEP]), with token types and an attention mask
// [B, T] that may be nil (see Bert.Run).
func (m *BertForNextSentencePrediction) Logits(ids, tokenTypes, mask *nd.NDArray) *nd.NDArray {
	_, pooled := m.bert.run("text.BertForNextSentencePrediction.Logits", ids, tokenTypes, mask)
	return m.rel.Forward(pooled)
}

// ForwardMulti takes (ids, token types, attention mask), the last two
// optional, and returns (logits); see Logits.
func (m *BertForNextSentencePrediction) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	ids, tt, mask := bertInputs("text.BertForNextSentencePrediction.ForwardMulti", inputs)
	return []*nd.NDArray{m.Logits(ids, tt, mask)}
}

// Forward returns the logits of token ids alone (segment 0, no padding).
func (m *BertForNextSentencePrediction) Forward(ids *nd.NDArray) *nd.NDArray {
	return m.Logits(ids, nil, nil)
}

// Loss returns the next-sentence loss of logits [B, 2] for labels [B]
// (0: the second segment follows the first; 1: random), as
// BertForNextSentencePrediction computes it with labels: the
// cross-entropy averaged over the labels that are not −100. Shapes that
// do not fit panic with ErrShape; a label outside [0, 2) other than −100
// panics with ErrArgument (see BertForMaskedLM.Loss for traces).
func (m *BertForNextSentencePrediction) Loss(logits, labels *nd.NDArray) *nd.NDArray {
	const op = "text.BertForNextSentencePrediction.Loss"
	checkNSP(op, logits, labels, -1)
	return maskedCrossEntropy(op, logits, labels, 0)
}
