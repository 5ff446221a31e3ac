package text

import (
	"github.com/goluon/goluon/gluon"
)

// The ONNX forms of the heads of bert_token.go, bert_pretraining.go and
// bert_choice.go: as the other BERT models', ExportONNX on token ids
// alone (Forward) and ExportONNXMulti on (input_ids, token_type_ids,
// attention_mask), either of the last two "" (ForwardMulti).

// ExportONNX writes the logits of token ids (Forward).
func (m *BertForTokenClassification) ExportONNX(g gluon.ONNXGraph, ids string) (string, error) {
	return m.exportONNX(g, ids, "", "")
}

// ExportONNXMulti writes the logits of (ids, token types, attention
// mask), "" for an omitted one (ForwardMulti).
func (m *BertForTokenClassification) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	ids, tt, mask, err := onnxInputs(inputs)
	if err != nil {
		return nil, err
	}
	y, err := m.exportONNX(g, ids, tt, mask)
	return []string{y}, err
}

func (m *BertForTokenClassification) exportONNX(g gluon.ONNXGraph, ids, tt, mask string) (string, error) {
	seq, _, err := m.bert.exportONNX(g, ids, tt, mask)
	if err != nil {
		return "", err
	}
	return g.Block(m.classifier, seq)
}

// ExportONNX writes qa_outputs' logits [B, T, 2] of token ids (Forward).
func (m *BertForQuestionAnswering) ExportONNX(g gluon.ONNXGraph, ids string) (string, error) {
	return m.exportONNX(g, ids, "", "")
}

// ExportONNXMulti writes the start and end logits [B, T] of (ids, token
// types, attention mask), "" for an omitted one (ForwardMulti).
func (m *BertForQuestionAnswering) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	ids, tt, mask, err := onnxInputs(inputs)
	if err != nil {
		return nil, err
	}
	y, err := m.exportONNX(g, ids, tt, mask)
	if err != nil {
		return nil, err
	}
	pick := func(i int64) string { // y[:, :, i]
		return g.Op("Gather", []string{y, g.Const([]int64{i})}, map[string]any{"axis": 2}, 1)[0]
	}
	return []string{pick(0), pick(1)}, nil
}

func (m *BertForQuestionAnswering) exportONNX(g gluon.ONNXGraph, ids, tt, mask string) (string, error) {
	seq, _, err := m.bert.exportONNX(g, ids, tt, mask)
	if err != nil {
		return "", err
	}
	return g.Block(m.qa, seq)
}

// ExportONNX writes the token logits of token ids (Forward).
func (m *BertForPreTraining) ExportONNX(g gluon.ONNXGraph, ids string) (string, error) {
	pred, _, err := m.exportONNX(g, ids, "", "")
	return pred, err
}

// ExportONNXMulti writes the token logits and the next-sentence logits of
// (ids, token types, attention mask), "" for an omitted one
// (ForwardMulti).
func (m *BertForPreTraining) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	ids, tt, mask, err := onnxInputs(inputs)
	if err != nil {
		return nil, err
	}
	pred, rel, err := m.exportONNX(g, ids, tt, mask)
	if err != nil {
		return nil, err
	}
	return []string{pred, rel}, nil
}

func (m *BertForPreTraining) exportONNX(g gluon.ONNXGraph, ids, tt, mask string) (pred, rel string, err error) {
	seq, pooled, err := m.bert.exportONNX(g, ids, tt, mask)
	if err != nil {
		return "", "", err
	}
	if pred, err = m.pred.exportONNX(g, seq, m.bert.emb.word.Weight); err != nil {
		return "", "", err
	}
	if rel, err = g.Block(m.rel, pooled); err != nil {
		return "", "", err
	}
	return pred, rel, nil
}

// ExportONNX writes the logits of token ids (Forward).
func (m *BertForNextSentencePrediction) ExportONNX(g gluon.ONNXGraph, ids string) (string, error) {
	return m.exportONNX(g, ids, "", "")
}

// ExportONNXMulti writes the logits of (ids, token types, attention
// mask), "" for an omitted one (ForwardMulti).
func (m *BertForNextSentencePrediction) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	ids, tt, mask, err := onnxInputs(inputs)
	if err != nil {
		return nil, err
	}
	y, err := m.exportONNX(g, ids, tt, mask)
	return []string{y}, err
}

func (m *BertForNextSentencePrediction) exportONNX(g gluon.ONNXGraph, ids, tt, mask string) (string, error) {
	_, pooled, err := m.bert.exportONNX(g, ids, tt, mask)
	if err != nil {
		return "", err
	}
	return g.Block(m.rel, pooled)
}

// ExportONNX writes the logits [B, C] of token ids [B, C, T] (Forward).
func (m *BertForMultipleChoice) ExportONNX(g gluon.ONNXGraph, ids string) (string, error) {
	return m.exportONNX(g, ids, "", "")
}

// ExportONNXMulti writes the logits [B, C] of (ids, token types,
// attention mask) [B, C, T], "" for an omitted one (ForwardMulti).
func (m *BertForMultipleChoice) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	ids, tt, mask, err := onnxInputs(inputs)
	if err != nil {
		return nil, err
	}
	y, err := m.exportONNX(g, ids, tt, mask)
	return []string{y}, err
}

// exportONNX flattens the choices ([B, C, T] → [B·C, T], the sizes read
// from the ids' shape, so that all three may be free), scores them and
// reshapes the scores to [B, C].
func (m *BertForMultipleChoice) exportONNX(g gluon.ONNXGraph, ids, tt, mask string) (string, error) {
	i64 := func(v ...int64) string { return g.Const(v, len(v)) }
	shape := onnxOp(g, "Shape", nil, ids)
	flatShape := onnxOp(g, "Concat", map[string]any{"axis": 0}, i64(-1), onnxOp(g, "Slice", nil, shape, i64(2), i64(3)))
	flat := func(x string) string {
		if x == "" {
			return ""
		}
		return onnxOp(g, "Reshape", nil, x, flatShape)
	}
	_, pooled, err := m.bert.exportONNX(g, flat(ids), flat(tt), flat(mask))
	if err != nil {
		return "", err
	}
	y, err := g.Block(m.classifier, pooled) // [B·C, 1]
	if err != nil {
		return "", err
	}
	return onnxOp(g, "Reshape", nil, y, onnxOp(g, "Slice", nil, shape, i64(0), i64(2))), nil
}
