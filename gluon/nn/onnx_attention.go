package nn

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/gluon"
)

// The ONNX forms of the normalisation and attention layers (predict mode).

// ExportONNX writes LayerNormalization over the last axis (another axis
// is moved last and back); a missing scale or shift is a constant.
func (l *LayerNorm) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	var c int
	switch {
	case l.Axis == -1 && l.Gamma != nil:
		c = l.Gamma.Shape()[0]
	case l.Axis == -1 && l.Beta != nil:
		c = l.Beta.Shape()[0]
	default:
		shape, err := shapeOf(g, x, "LayerNorm")
		if err != nil {
			return "", err
		}
		ax := l.Axis
		if ax < 0 {
			ax += len(shape)
		}
		if ax < 0 || ax >= len(shape) {
			return "", fmt.Errorf("LayerNorm over axis %d of an input of shape %v", l.Axis, shape)
		}
		if ax != len(shape)-1 {
			// LayerNormalization normalises the last axes: move this one
			// last and back.
			perm := moveAxisPerm(len(shape), ax, len(shape)-1)
			y := g.Op("Transpose", []string{x}, map[string]any{"perm": perm}, 1)[0]
			last := *l
			last.Axis = -1
			y, err := last.ExportONNX(g, y)
			if err != nil {
				return "", err
			}
			return g.Op("Transpose", []string{y}, map[string]any{"perm": inversePerm(perm)}, 1)[0], nil
		}
		c = shape[ax]
	}
	scale, shift := g.Const(filled(c, 1), c), g.Const(filled(c, 0), c)
	if l.Gamma != nil {
		scale = g.Param(l.Gamma)
	}
	if l.Beta != nil {
		shift = g.Param(l.Beta)
	}
	attrs := map[string]any{"axis": -1, "epsilon": l.opts.eps()}
	return g.Op("LayerNormalization", []string{x, scale, shift}, attrs, 1)[0], nil
}

// ExportONNX writes self-attention on x (query, key and value all x, no
// padding or attention mask): the projections, the heads' scaled dot
// products and softmax, and the output projection. The batch is free, and
// the sequence length too (ExportOpts.FreeAxes): a causal mask is built
// from the scores' shape.
func (a *MultiHeadAttention) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	e, h := a.EmbedDim, a.NumHeads
	d := e / h
	tnc := a.opts.Layout == "TNC"
	swap := func(v string) string {
		return g.Op("Transpose", []string{v}, map[string]any{"perm": []int{1, 0, 2}}, 1)[0]
	}
	if tnc {
		x = swap(x)
	}
	wt := g.Op("Transpose", []string{g.Param(a.InProjWeight)}, map[string]any{"perm": []int{1, 0}}, 1)[0]
	qkv := g.Op("MatMul", []string{x, wt}, nil, 1)[0]
	if a.InProjBias != nil {
		qkv = g.Op("Add", []string{qkv, g.Param(a.InProjBias)}, nil, 1)[0]
	}
	p := g.Op("Split", []string{qkv, g.Const([]int64{int64(e), int64(e), int64(e)}, 3)}, map[string]any{"axis": 2}, 3)
	headShape := g.Const([]int64{0, 0, int64(h), int64(d)}, 4)
	heads := func(v string) string { // [N, L, E] → [N, h, L, d]
		r := g.Op("Reshape", []string{v, headShape}, nil, 1)[0]
		return g.Op("Transpose", []string{r}, map[string]any{"perm": []int{0, 2, 1, 3}}, 1)[0]
	}
	q := g.Op("Mul", []string{p[0], g.Const([]float32{float32(1 / math.Sqrt(float64(d)))})}, nil, 1)[0]
	kt := g.Op("Transpose", []string{heads(p[1])}, map[string]any{"perm": []int{0, 1, 3, 2}}, 1)[0]
	scores := g.Op("MatMul", []string{heads(q), kt}, nil, 1)[0] // [N, h, T, S]
	if a.opts.Causal {
		// −inf above the diagonal of [T, S] (T = S: self-attention), built
		// from the scores' shape, so the sequence length stays free:
		// Trilu keeps the strict upper triangle of a −inf matrix and
		// zeroes the rest.
		i64 := func(v ...int64) string { return g.Const(v, len(v)) }
		ts := g.Op("Slice", []string{g.Op("Shape", []string{scores}, nil, 1)[0], i64(2), i64(4)}, nil, 1)[0]
		inf := g.Op("ConstantOfShape", []string{ts}, map[string]any{"value": float32(math.Inf(-1))}, 1)[0]
		mask := g.Op("Trilu", []string{inf, i64(1)}, map[string]any{"upper": 1}, 1)[0]
		scores = g.Op("Add", []string{scores, mask}, nil, 1)[0]
	}
	w := g.Op("Softmax", []string{scores}, map[string]any{"axis": -1}, 1)[0]
	out := g.Op("MatMul", []string{w, heads(p[2])}, nil, 1)[0] // [N, h, T, d]
	out = g.Op("Transpose", []string{out}, map[string]any{"perm": []int{0, 2, 1, 3}}, 1)[0]
	out = g.Op("Reshape", []string{out, g.Const([]int64{0, 0, int64(e)}, 3)}, nil, 1)[0]
	out, err := a.OutProj.ExportONNX(g, out)
	if err != nil {
		return "", err
	}
	if tnc {
		out = swap(out)
	}
	return out, nil
}

// ExportONNX writes the encoder layer's self-attention and feed-forward
// sub-layers with their residual connections and norms (no masks).
func (l *TransformerEncoderLayer) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	tnc := l.opts.Layout == "TNC"
	swap := func(v string) string {
		return g.Op("Transpose", []string{v}, map[string]any{"perm": []int{1, 0, 2}}, 1)[0]
	}
	if tnc {
		x = swap(x)
	}
	x, err := l.onnxResidual(g, x, l.Norms[0], func(y string) (string, error) { return l.SelfAttn.ExportONNX(g, y) })
	if err != nil {
		return "", err
	}
	if x, err = l.onnxResidual(g, x, l.Norms[1], func(y string) (string, error) { return l.onnxFeedForward(g, y) }); err != nil {
		return "", err
	}
	if tnc {
		x = swap(x)
	}
	return x, nil
}

// onnxResidual is residual's ONNX form.
func (s *sublayers) onnxResidual(g gluon.ONNXGraph, x string, norm *LayerNorm, f func(string) (string, error)) (string, error) {
	if s.opts.NormFirst {
		n, err := norm.ExportONNX(g, x)
		if err != nil {
			return "", err
		}
		y, err := f(n)
		if err != nil {
			return "", err
		}
		return g.Op("Add", []string{x, y}, nil, 1)[0], nil
	}
	y, err := f(x)
	if err != nil {
		return "", err
	}
	return norm.ExportONNX(g, g.Op("Add", []string{x, y}, nil, 1)[0])
}

// onnxFeedForward is feedForward's ONNX form.
func (s *sublayers) onnxFeedForward(g gluon.ONNXGraph, x string) (string, error) {
	h, err := s.Linear1.ExportONNX(g, x)
	if err != nil {
		return "", err
	}
	act := "relu"
	if s.opts.Activation == "gelu" {
		act = "gelu"
	}
	if h, err = onnxAct(g, act, h); err != nil {
		return "", err
	}
	return s.Linear2.ExportONNX(g, h)
}
