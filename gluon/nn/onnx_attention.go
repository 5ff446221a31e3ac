package nn

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
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
// padding or attention mask); see ExportONNXMulti.
func (a *MultiHeadAttention) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	outs, err := a.ExportONNXMulti(g, []string{x})
	if err != nil {
		return "", err
	}
	return outs[0], nil
}

// ExportONNXMulti writes attention on query, key and value (key and value
// "": self-attention) with the optional key-padding and attention masks
// (a Bool mask as −inf where true, a floating one added to the scores):
// the projections, the heads' scaled dot products and softmax, and the
// output projection; the second output is the weights averaged over the
// heads. The batch is free, and the sequence lengths too: a causal mask
// is built from the scores' shape.
func (a *MultiHeadAttention) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	if len(inputs) < 1 || len(inputs) > 5 || inputs[0] == "" {
		return nil, fmt.Errorf("takes query, key, value, key-padding mask and attention mask (the first required); got %d inputs", len(inputs))
	}
	in := make([]string, 5)
	copy(in, inputs)
	q, k, v, pad, mask := in[0], in[1], in[2], in[3], in[4]
	self := k == "" && v == ""
	if k == "" {
		k = q
	}
	if v == "" {
		v = k
	}
	e, h := a.EmbedDim, a.NumHeads
	d := e / h
	tnc := a.opts.Layout == "TNC"
	swap := func(v string) string {
		return g.Op("Transpose", []string{v}, map[string]any{"perm": []int{1, 0, 2}}, 1)[0]
	}
	if tnc {
		q, k, v = swap(q), swap(k), swap(v)
	}
	i64 := func(v ...int64) string { return g.Const(v, len(v)) }
	wt := g.Op("Transpose", []string{g.Param(a.InProjWeight)}, map[string]any{"perm": []int{1, 0}}, 1)[0] // [E, 3E]
	var p []string
	if self {
		qkv := g.Op("MatMul", []string{q, wt}, nil, 1)[0]
		if a.InProjBias != nil {
			qkv = g.Op("Add", []string{qkv, g.Param(a.InProjBias)}, nil, 1)[0]
		}
		p = g.Op("Split", []string{qkv, i64(int64(e), int64(e), int64(e))}, map[string]any{"axis": 2}, 3)
	} else {
		ws := g.Op("Split", []string{wt, i64(int64(e), int64(e), int64(e))}, map[string]any{"axis": 1}, 3)
		var bs []string
		if a.InProjBias != nil {
			bs = g.Op("Split", []string{g.Param(a.InProjBias), i64(int64(e), int64(e), int64(e))}, map[string]any{"axis": 0}, 3)
		}
		for i, x := range []string{q, k, v} {
			y := g.Op("MatMul", []string{x, ws[i]}, nil, 1)[0]
			if bs != nil {
				y = g.Op("Add", []string{y, bs[i]}, nil, 1)[0]
			}
			p = append(p, y)
		}
	}
	headShape := i64(0, 0, int64(h), int64(d))
	heads := func(v string) string { // [N, L, E] → [N, h, L, d]
		r := g.Op("Reshape", []string{v, headShape}, nil, 1)[0]
		return g.Op("Transpose", []string{r}, map[string]any{"perm": []int{0, 2, 1, 3}}, 1)[0]
	}
	qs := g.Op("Mul", []string{p[0], g.Const([]float32{float32(1 / math.Sqrt(float64(d)))})}, nil, 1)[0]
	kt := g.Op("Transpose", []string{heads(p[1])}, map[string]any{"perm": []int{0, 1, 3, 2}}, 1)[0]
	scores := g.Op("MatMul", []string{heads(qs), kt}, nil, 1)[0] // [N, h, T, S]
	if a.opts.Causal {
		// −inf where the key position is after the query's (the diagonal
		// aligned to the end when S > T), built from the scores' shape so
		// that the lengths stay free: Trilu keeps the upper triangle above
		// diagonal 1 + S − T of a −inf matrix and zeroes the rest.
		ts := g.Op("Slice", []string{g.Op("Shape", []string{scores}, nil, 1)[0], i64(2), i64(4)}, nil, 1)[0]
		tt := g.Op("Slice", []string{ts, i64(0), i64(1)}, nil, 1)[0]
		ss := g.Op("Slice", []string{ts, i64(1), i64(2)}, nil, 1)[0]
		diag := g.Op("Add", []string{g.Op("Sub", []string{ss, tt}, nil, 1)[0], i64(1)}, nil, 1)[0]
		diag = g.Op("Squeeze", []string{diag, i64(0)}, nil, 1)[0]
		inf := g.Op("ConstantOfShape", []string{ts}, map[string]any{"value": float32(math.Inf(-1))}, 1)[0]
		cm := g.Op("Trilu", []string{inf, diag}, map[string]any{"upper": 1}, 1)[0]
		scores = g.Op("Add", []string{scores, cm}, nil, 1)[0]
	}
	var err error
	if pad != "" { // [N, S] → [N, 1, 1, S]
		pad4 := g.Op("Unsqueeze", []string{pad, i64(1, 2)}, nil, 1)[0]
		if scores, err = onnxMask(g, scores, pad, pad4); err != nil {
			return nil, err
		}
	}
	if mask != "" {
		if scores, err = onnxMask(g, scores, mask, mask); err != nil {
			return nil, err
		}
	}
	w := g.Op("Softmax", []string{scores}, map[string]any{"axis": -1}, 1)[0]
	out := g.Op("MatMul", []string{w, heads(p[2])}, nil, 1)[0] // [N, h, T, d]
	out = g.Op("Transpose", []string{out}, map[string]any{"perm": []int{0, 2, 1, 3}}, 1)[0]
	out = g.Op("Reshape", []string{out, i64(0, 0, int64(e))}, nil, 1)[0]
	if out, err = a.OutProj.ExportONNX(g, out); err != nil {
		return nil, err
	}
	if tnc {
		out = swap(out)
	}
	avg := g.Op("ReduceMean", []string{w}, map[string]any{"axes": []int{1}, "keepdims": 0}, 1)[0]
	return []string{out, avg}, nil
}

// onnxMask applies a mask (the value mask, broadcast as shaped) to the
// scores: a Bool one as −inf where true, a floating one added.
func onnxMask(g gluon.ONNXGraph, scores, mask, shaped string) (string, error) {
	types, ok := g.(gluon.ONNXTypes)
	if !ok {
		return "", fmt.Errorf("a mask's form depends on its type, and this graph cannot tell it")
	}
	dt, err := types.DType(mask)
	if err != nil {
		return "", err
	}
	if dt == nd.Bool {
		inf := g.Const([]float32{float32(math.Inf(-1))})
		return g.Op("Where", []string{shaped, inf, scores}, nil, 1)[0], nil
	}
	return g.Op("Add", []string{scores, shaped}, nil, 1)[0], nil
}

// ExportONNX writes the encoder layer without masks; see ExportONNXMulti.
func (l *TransformerEncoderLayer) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	outs, err := l.ExportONNXMulti(g, []string{x})
	if err != nil {
		return "", err
	}
	return outs[0], nil
}

// ExportONNXMulti writes the encoder layer's self-attention (with the
// optional key-padding and attention masks) and feed-forward sub-layers,
// with their residual connections and norms.
func (l *TransformerEncoderLayer) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	if len(inputs) < 1 || len(inputs) > 3 || inputs[0] == "" {
		return nil, fmt.Errorf("takes src, key-padding mask and attention mask (the first required); got %d inputs", len(inputs))
	}
	in := make([]string, 3)
	copy(in, inputs)
	x := l.onnxToNTC(g, in[0])
	x, err := l.onnxResidual(g, x, l.Norms[0], func(y string) (string, error) {
		return l.onnxAttend(g, l.SelfAttn, y, "", in[1], in[2])
	})
	if err != nil {
		return nil, err
	}
	if x, err = l.onnxResidual(g, x, l.Norms[1], func(y string) (string, error) { return l.onnxFeedForward(g, y) }); err != nil {
		return nil, err
	}
	return []string{l.onnxToNTC(g, x)}, nil
}

// ExportONNXMulti writes the decoder layer: self-attention on tgt (with
// the target masks), attention over memory (with the memory masks) and
// the feed-forward network, with their residual connections and norms.
// Inputs are ForwardMulti's: tgt, memory, tgt mask, memory mask, tgt
// key-padding mask, memory key-padding mask.
func (l *TransformerDecoderLayer) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	if len(inputs) < 2 || len(inputs) > 6 || inputs[0] == "" || inputs[1] == "" {
		return nil, fmt.Errorf("takes tgt, memory (both required) and four optional masks; got %d inputs", len(inputs))
	}
	in := make([]string, 6)
	copy(in, inputs)
	x, mem := l.onnxToNTC(g, in[0]), l.onnxToNTC(g, in[1])
	x, err := l.onnxResidual(g, x, l.Norms[0], func(y string) (string, error) {
		return l.onnxAttend(g, l.SelfAttn, y, "", in[4], in[2])
	})
	if err != nil {
		return nil, err
	}
	if x, err = l.onnxResidual(g, x, l.Norms[1], func(y string) (string, error) {
		return l.onnxAttend(g, l.MultiheadAttn, y, mem, in[5], in[3])
	}); err != nil {
		return nil, err
	}
	if x, err = l.onnxResidual(g, x, l.Norms[2], func(y string) (string, error) { return l.onnxFeedForward(g, y) }); err != nil {
		return nil, err
	}
	return []string{l.onnxToNTC(g, x)}, nil
}

// onnxToNTC is toNTC's (and fromNTC's) form.
func (s *sublayers) onnxToNTC(g gluon.ONNXGraph, x string) string {
	if s.opts.Layout == "TNC" {
		return g.Op("Transpose", []string{x}, map[string]any{"perm": []int{1, 0, 2}}, 1)[0]
	}
	return x
}

// onnxAttend writes attention a (batch first) of y over kv ("": self)
// with the masks.
func (s *sublayers) onnxAttend(g gluon.ONNXGraph, a *MultiHeadAttention, y, kv, pad, mask string) (string, error) {
	outs, err := a.ExportONNXMulti(g, []string{y, kv, kv, pad, mask})
	if err != nil {
		return "", err
	}
	return outs[0], nil
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
