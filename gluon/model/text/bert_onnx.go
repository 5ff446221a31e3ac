package text

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
)

// The BERT models export their inference form (no dropout) to ONNX:
// ExportONNX for token ids alone (gluon/onnx.Export with InputDType
// nd.Int64), ExportONNXMulti for (input_ids, token_type_ids,
// attention_mask), either of the last two omitted
// (gluon/onnx.ExportMulti). Batch and sequence length may be free: the
// position embedding is sliced to the input's length.

// onnxOp appends a one-output node.
func onnxOp(g gluon.ONNXGraph, typ string, attrs map[string]any, in ...string) string {
	return g.Op(typ, in, attrs, 1)[0]
}

// onnxActivation writes activations[name] on x.
func onnxActivation(g gluon.ONNXGraph, name, x string) (string, error) {
	if name == "relu" {
		return onnxOp(g, "Relu", nil, x), nil
	}
	return nn.NewGELU(name != "gelu").ExportONNX(g, x)
}

// ExportONNX writes the sequence output of token ids (Forward).
func (m *Bert) ExportONNX(g gluon.ONNXGraph, ids string) (string, error) {
	seq, _, err := m.exportONNX(g, ids, "", "")
	return seq, err
}

// ExportONNXMulti writes the sequence and pooled outputs of (ids, token
// types, attention mask), "" for an omitted one (ForwardMulti).
func (m *Bert) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	ids, tt, mask, err := onnxInputs(inputs)
	if err != nil {
		return nil, err
	}
	seq, pooled, err := m.exportONNX(g, ids, tt, mask)
	if err != nil || pooled == "" {
		return []string{seq}, err
	}
	return []string{seq, pooled}, nil
}

// ExportONNX writes the logits of token ids (Forward).
func (m *BertForSequenceClassification) ExportONNX(g gluon.ONNXGraph, ids string) (string, error) {
	return m.exportONNX(g, ids, "", "")
}

// ExportONNXMulti writes the logits of (ids, token types, attention
// mask), "" for an omitted one (ForwardMulti).
func (m *BertForSequenceClassification) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	ids, tt, mask, err := onnxInputs(inputs)
	if err != nil {
		return nil, err
	}
	y, err := m.exportONNX(g, ids, tt, mask)
	return []string{y}, err
}

func (m *BertForSequenceClassification) exportONNX(g gluon.ONNXGraph, ids, tt, mask string) (string, error) {
	_, pooled, err := m.bert.exportONNX(g, ids, tt, mask)
	if err != nil {
		return "", err
	}
	return g.Block(m.classifier, pooled)
}

// ExportONNX writes the logits of token ids (Forward).
func (m *BertForMaskedLM) ExportONNX(g gluon.ONNXGraph, ids string) (string, error) {
	return m.exportONNX(g, ids, "", "")
}

// ExportONNXMulti writes the logits of (ids, token types, attention
// mask), "" for an omitted one (ForwardMulti).
func (m *BertForMaskedLM) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	ids, tt, mask, err := onnxInputs(inputs)
	if err != nil {
		return nil, err
	}
	y, err := m.exportONNX(g, ids, tt, mask)
	return []string{y}, err
}

func (m *BertForMaskedLM) exportONNX(g gluon.ONNXGraph, ids, tt, mask string) (string, error) {
	seq, _, err := m.bert.exportONNX(g, ids, tt, mask)
	if err != nil {
		return "", err
	}
	return m.pred.exportONNX(g, seq, m.bert.emb.word.Weight)
}

// exportONNX writes the token logits of the sequence output seq, the
// output layer tied to the word embedding word.
func (p *bertLMPrediction) exportONNX(g gluon.ONNXGraph, seq string, word *gluon.Parameter) (string, error) {
	tr := p.transform
	h, err := g.Block(tr.dense, seq)
	if err != nil {
		return "", err
	}
	if h, err = onnxActivation(g, tr.act, h); err != nil {
		return "", err
	}
	if h, err = g.Block(tr.ln, h); err != nil {
		return "", err
	}
	wt := onnxOp(g, "Transpose", map[string]any{"perm": []int{1, 0}}, g.Param(word))
	return onnxOp(g, "Add", nil, onnxOp(g, "MatMul", nil, h, wt), g.Param(p.bias)), nil
}

// onnxInputs unpacks ExportONNXMulti's (ids, token types, mask).
func onnxInputs(inputs []string) (ids, tt, mask string, err error) {
	if len(inputs) < 1 || len(inputs) > 3 || inputs[0] == "" {
		return "", "", "", fmt.Errorf("text: BERT export: inputs %q: want token ids, then optionally token types and an attention mask", inputs)
	}
	ids = inputs[0]
	if len(inputs) > 1 {
		tt = inputs[1]
	}
	if len(inputs) > 2 {
		mask = inputs[2]
	}
	return ids, tt, mask, nil
}

// exportONNX writes the encoder on ids [B, T] with token types and an
// attention mask ("" for none) and returns the sequence output and the
// pooled output ("" without a pooler).
func (m *Bert) exportONNX(g gluon.ONNXGraph, ids, tt, mask string) (seq, pooled string, err error) {
	i64 := func(v ...int64) string { return g.Const(v, len(v)) }
	e := m.emb
	x, err := g.Block(e.word, ids)
	if err != nil {
		return "", "", err
	}
	t := onnxOp(g, "Slice", nil, onnxOp(g, "Shape", nil, ids), i64(1), i64(2)) // [T]
	x = onnxOp(g, "Add", nil, x, onnxOp(g, "Slice", nil, g.Param(e.position.Weight), i64(0), t, i64(0)))
	var types string
	if tt == "" {
		types = onnxOp(g, "Slice", nil, g.Param(e.tokenType.Weight), i64(0), i64(1), i64(0)) // row 0, broadcast
	} else if types, err = g.Block(e.tokenType, tt); err != nil {
		return "", "", err
	}
	if x, err = g.Block(e.ln, onnxOp(g, "Add", nil, x, types)); err != nil {
		return "", "", err
	}
	ext := ""
	if mask != "" { // (1 − mask)·lowest, [B, 1, 1, T]
		f := onnxOp(g, "Cast", map[string]any{"to": 1}, mask) // FLOAT
		ext = onnxOp(g, "Mul", nil, onnxOp(g, "Sub", nil, g.Const([]float32{1}), f), g.Const([]float32{-math.MaxFloat32}))
		ext = onnxOp(g, "Reshape", nil, ext, i64(0, 1, 1, -1))
	}
	for i, l := range m.layers {
		if x, err = l.exportONNX(g, x, ext); err != nil {
			return "", "", fmt.Errorf("layer %d: %w", i, err)
		}
	}
	if m.pooler == nil {
		return x, "", nil
	}
	first := g.Op("Gather", []string{x, g.Const([]int64{0})}, map[string]any{"axis": 1}, 1)[0] // [B, H]
	p, err := g.Block(m.pooler.dense, first)
	if err != nil {
		return "", "", err
	}
	return x, onnxOp(g, "Tanh", nil, p), nil
}

// exportONNX writes the layer on x [B, T, H] with the additive mask ext
// ("" for none).
func (l *bertLayer) exportONNX(g gluon.ONNXGraph, x, ext string) (string, error) {
	sa := l.attention.self
	d := int64(sa.headDim)
	heads := func(d2 *nn.Dense, perm []int) (string, error) { // [B, T, H] → [B, h, T, d] (perm)
		z, err := g.Block(d2, x)
		if err != nil {
			return "", err
		}
		r := onnxOp(g, "Reshape", nil, z, g.Const([]int64{0, 0, int64(sa.heads), d}, 4))
		return onnxOp(g, "Transpose", map[string]any{"perm": perm}, r), nil
	}
	q, err := heads(sa.query, []int{0, 2, 1, 3})
	if err != nil {
		return "", err
	}
	kt, err := heads(sa.key, []int{0, 2, 3, 1}) // [B, h, d, T]
	if err != nil {
		return "", err
	}
	v, err := heads(sa.value, []int{0, 2, 1, 3})
	if err != nil {
		return "", err
	}
	s := onnxOp(g, "Mul", nil, onnxOp(g, "MatMul", nil, q, kt), g.Const([]float32{float32(1 / math.Sqrt(float64(d)))}))
	if ext != "" {
		s = onnxOp(g, "Add", nil, s, ext)
	}
	o := onnxOp(g, "MatMul", nil, onnxOp(g, "Softmax", map[string]any{"axis": -1}, s), v)
	o = onnxOp(g, "Transpose", map[string]any{"perm": []int{0, 2, 1, 3}}, o)
	o = onnxOp(g, "Reshape", nil, o, g.Const([]int64{0, 0, int64(sa.heads) * d}, 3))
	a, err := l.attention.output.exportONNX(g, o, x)
	if err != nil {
		return "", err
	}
	h, err := g.Block(l.intermediate.dense, a)
	if err != nil {
		return "", err
	}
	if h, err = onnxActivation(g, l.intermediate.act, h); err != nil {
		return "", err
	}
	return l.output.exportONNX(g, h, a)
}

// exportONNX writes LayerNorm(dense(x) + residual).
func (o *bertOutput) exportONNX(g gluon.ONNXGraph, x, residual string) (string, error) {
	y, err := g.Block(o.dense, x)
	if err != nil {
		return "", err
	}
	return g.Block(o.ln, onnxOp(g, "Add", nil, y, residual))
}
