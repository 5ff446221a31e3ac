package text

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/gluon"
)

// ExportONNX writes the model's inference form (no dropout, no cache)
// into an ONNX graph (gluon.ONNXExporter; see gluon/onnx.Export, with
// InputDType nd.Int64): token ids [B, T] to logits [B, T, VocabSize].
// Batch and sequence length may both be free (ExportOpts.FreeAxes 1):
// the position embedding is sliced and the causal mask built from the
// input's shape.
func (m *GPT2) ExportONNX(g gluon.ONNXGraph, ids string) (string, error) {
	b := m.body
	i64 := func(v ...int64) string { return g.Const(v, len(v)) }
	op := func(typ string, attrs map[string]any, in ...string) string { return g.Op(typ, in, attrs, 1)[0] }
	tok, err := g.Block(b.wte, ids)
	if err != nil {
		return "", err
	}
	t := op("Slice", nil, op("Shape", nil, ids), i64(1), i64(2)) // [T]
	pos := op("Slice", nil, g.Param(b.wpe.Weight), i64(0), t, i64(0))
	x := op("Add", nil, tok, pos)
	// −inf above the diagonal, 0 elsewhere: [T, T]
	inf := g.Op("ConstantOfShape", []string{op("Concat", map[string]any{"axis": 0}, t, t)},
		map[string]any{"value": float32(math.Inf(-1))}, 1)[0]
	mask := op("Trilu", map[string]any{"upper": 1}, inf, i64(1))
	for i, blk := range b.blocks {
		if x, err = blk.exportONNX(g, x, mask); err != nil {
			return "", fmt.Errorf("block %d: %w", i, err)
		}
	}
	if x, err = g.Block(b.lnF, x); err != nil {
		return "", err
	}
	wt := op("Transpose", map[string]any{"perm": []int{1, 0}}, g.Param(b.wte.Weight))
	return op("MatMul", nil, x, wt), nil
}

// exportONNX writes the block on x [B, T, E] with the additive causal
// mask [T, T].
func (b *block) exportONNX(g gluon.ONNXGraph, x, mask string) (string, error) {
	op := func(typ string, attrs map[string]any, in ...string) string { return g.Op(typ, in, attrs, 1)[0] }
	h, err := g.Block(b.ln1, x)
	if err != nil {
		return "", err
	}
	x = op("Add", nil, x, b.attn.exportONNX(g, h, mask))
	if h, err = g.Block(b.ln2, x); err != nil {
		return "", err
	}
	m := b.mlp
	if h, err = onnxActivation(g, m.act, m.cFc.exportONNX(g, h)); err != nil {
		return "", err
	}
	return op("Add", nil, x, m.cProj.exportONNX(g, h)), nil
}

// exportONNX writes the attention on h [B, T, E].
func (a *attention) exportONNX(g gluon.ONNXGraph, h, mask string) string {
	op := func(typ string, attrs map[string]any, in ...string) string { return g.Op(typ, in, attrs, 1)[0] }
	e, d := int64(a.width), int64(a.headDim)
	qkv := g.Op("Split", []string{a.cAttn.exportONNX(g, h), g.Const([]int64{e, e, e}, 3)}, map[string]any{"axis": 2}, 3)
	heads := func(z string, perm []int) string { // [B, T, E] → [B, h, T, d] (perm)
		r := op("Reshape", nil, z, g.Const([]int64{0, 0, int64(a.heads), d}, 4))
		return op("Transpose", map[string]any{"perm": perm}, r)
	}
	q := heads(qkv[0], []int{0, 2, 1, 3})
	kt := heads(qkv[1], []int{0, 2, 3, 1}) // [B, h, d, T]
	v := heads(qkv[2], []int{0, 2, 1, 3})
	s := op("MatMul", nil, q, kt)
	if a.scale != 1 {
		s = op("Mul", nil, s, g.Const([]float32{float32(a.scale)}))
	}
	w := op("Softmax", map[string]any{"axis": -1}, op("Add", nil, s, mask))
	o := op("Transpose", map[string]any{"perm": []int{0, 2, 1, 3}}, op("MatMul", nil, w, v))
	o = op("Reshape", nil, o, g.Const([]int64{0, 0, e}, 3))
	return a.cProj.exportONNX(g, o)
}

// exportONNX writes x·W + b.
func (c *conv1D) exportONNX(g gluon.ONNXGraph, x string) string {
	y := g.Op("MatMul", []string{x, g.Param(c.Weight)}, nil, 1)[0]
	return g.Op("Add", []string{y, g.Param(c.Bias)}, nil, 1)[0]
}
