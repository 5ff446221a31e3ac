package rnn

import (
	"fmt"

	"github.com/goluon/goluon/gluon"
)

// onnxGateOrder maps ONNX's gate blocks to the layer's (PyTorch's): ONNX
// orders an LSTM's gates i, o, f, c where PyTorch has i, f, g, o, and a
// GRU's z, r, h where PyTorch has r, z, n.
func onnxGateOrder(m Mode) []int {
	switch m {
	case LSTM:
		return []int{0, 3, 1, 2}
	case GRU:
		return []int{1, 0, 2}
	}
	return []int{0}
}

// ExportONNX writes one ONNX LSTM, GRU or RNN node per layer (both
// directions in one node), as torch.onnx does: the weights stay the
// layer's parameters, their gate blocks reordered into ONNX's order by
// Slice and Concat nodes; the states start at zero; a GRU is written with
// linear_before_reset (PyTorch's form); NTC inputs are transposed. The
// output is the last layer's, directions concatenated.
func (l *Layer) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	if l.Mode != LSTM && l.Mode != GRU && l.Mode != RNNTanh && l.Mode != RNNReLU {
		return "", fmt.Errorf("recurrent mode %v has no ONNX form", l.Mode)
	}
	op := map[Mode]string{LSTM: "LSTM", GRU: "GRU", RNNTanh: "RNN", RNNReLU: "RNN"}[l.Mode]
	h := l.HiddenSize
	order := onnxGateOrder(l.Mode)
	i64 := func(v ...int64) string { return g.Const(v, len(v)) }
	// reorder gives p's gate blocks (rows of h) in ONNX's order.
	reorder := func(p *gluon.Parameter) string {
		name := g.Param(p)
		if len(order) == 1 {
			return name
		}
		parts := make([]string, len(order))
		for k, b := range order {
			parts[k] = g.Op("Slice", []string{name, i64(int64(b * h)), i64(int64((b + 1) * h)), i64(0)}, nil, 1)[0]
		}
		return g.Op("Concat", parts, map[string]any{"axis": 0}, 1)[0]
	}
	// stack stacks one array per direction on a new axis 0.
	stack := func(per []string) string {
		for i, v := range per {
			per[i] = g.Op("Unsqueeze", []string{v, i64(0)}, nil, 1)[0]
		}
		if len(per) == 1 {
			return per[0]
		}
		return g.Op("Concat", per, map[string]any{"axis": 0}, 1)[0]
	}
	if l.opts.Layout == "NTC" {
		x = g.Op("Transpose", []string{x}, map[string]any{"perm": []int{1, 0, 2}}, 1)[0]
	}
	attrs := map[string]any{"hidden_size": h}
	if l.directions() == 2 {
		attrs["direction"] = "bidirectional"
	}
	switch l.Mode {
	case GRU:
		attrs["linear_before_reset"] = 1
	case RNNReLU:
		attrs["activations"] = []string{"Relu", "Relu"}[:l.directions()]
	}
	for _, ws := range l.w {
		var w, r, b []string
		for _, d := range ws {
			w = append(w, reorder(d.ih))
			r = append(r, reorder(d.hh))
			b = append(b, g.Op("Concat", []string{reorder(d.bih), reorder(d.bhh)}, map[string]any{"axis": 0}, 1)[0])
		}
		y := g.Op(op, []string{x, stack(w), stack(r), stack(b)}, attrs, 1)[0] // [T, D, N, H]
		y = g.Op("Transpose", []string{y}, map[string]any{"perm": []int{0, 2, 1, 3}}, 1)[0]
		x = g.Op("Reshape", []string{y, i64(0, 0, -1)}, nil, 1)[0] // [T, N, D·H]
	}
	if l.opts.Layout == "NTC" {
		x = g.Op("Transpose", []string{x}, map[string]any{"perm": []int{1, 0, 2}}, 1)[0]
	}
	return x, nil
}
