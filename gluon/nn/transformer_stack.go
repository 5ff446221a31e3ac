package nn

import (
	"fmt"
	"strconv"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// The stacks of transformer layers and the whole encoder–decoder model,
// PyTorch's nn.TransformerEncoder, nn.TransformerDecoder and
// nn.Transformer, with their parameter names (layers.<i>.…, norm, and
// encoder./decoder. for the model), so that their state_dicts load.

// layerList holds a stack's layers as children "0", "1", … of a child
// named "layers", as PyTorch's ModuleList does.
type layerList struct{ gluon.BlockMeta }

func newLayerList(parent *gluon.BlockMeta, layers []gluon.Component) {
	l := &layerList{gluon.NewBlockMeta("layers")}
	l.SetName("layers")
	for i, c := range layers {
		c.Meta().SetName(strconv.Itoa(i))
		l.AddChild(c)
	}
	parent.AddChild(l)
}

// finalNorm adds the stack's closing LayerNorm, named "norm".
func finalNorm(parent *gluon.BlockMeta, dModel int, o TransformerOpts) *LayerNorm {
	n := NewLayerNorm(-1, NormOpts{Epsilon: o.Epsilon, InChannels: dModel})
	n.SetName("norm")
	parent.AddChild(n)
	return n
}

// callLayer runs a stack's layer, checkpointed or not, and returns its
// output.
func callLayer(l gluon.MultiBlock, checkpoint bool, inputs ...*nd.NDArray) *nd.NDArray {
	if checkpoint {
		return gluon.Checkpoint(l).ForwardMulti(inputs...)[0]
	}
	return l.ForwardMulti(inputs...)[0]
}

func checkLayers(op string, n int) {
	if n < 1 {
		nd.Panicf(op, nd.ErrArgument, "%d layers: want at least 1", n)
	}
}

// TransformerEncoder is numLayers TransformerEncoderLayers one after the
// other, with an optional LayerNorm at the end (PyTorch's
// nn.TransformerEncoder; PyTorch's nn.Transformer has the norm).
// ForwardMulti takes the layers' inputs (src, key-padding mask, attention
// mask) and gives every layer the masks; Forward takes src alone.
type TransformerEncoder struct {
	gluon.BlockMeta
	Layers []*TransformerEncoderLayer
	Norm   *LayerNorm // nil without a final norm
	// Checkpoint recomputes each layer in the backward pass instead of
	// keeping its intermediates (gluon.Checkpoint): less memory, one more
	// forward pass of compute.
	Checkpoint bool
}

// NewTransformerEncoder returns numLayers encoder layers of width dModel
// with heads heads each, configured by o, and a final LayerNorm when
// withNorm.
func NewTransformerEncoder(numLayers, dModel, heads int, o TransformerOpts, withNorm bool) *TransformerEncoder {
	checkLayers("nn.NewTransformerEncoder", numLayers)
	e := &TransformerEncoder{BlockMeta: gluon.NewBlockMeta("transformerencoder")}
	cs := make([]gluon.Component, numLayers)
	for i := range cs {
		e.Layers = append(e.Layers, NewTransformerEncoderLayer(dModel, heads, o))
		cs[i] = e.Layers[i]
	}
	newLayerList(&e.BlockMeta, cs)
	if withNorm {
		e.Norm = finalNorm(&e.BlockMeta, dModel, o)
	}
	return e
}

// Forward runs the stack on src without masks.
func (e *TransformerEncoder) Forward(src *nd.NDArray) *nd.NDArray { return e.ForwardMulti(src)[0] }

// ForwardMulti runs the stack on src, key-padding mask and attention mask.
func (e *TransformerEncoder) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	in := takeInputs("nn.TransformerEncoder", inputs, 3, "src, key-padding mask, attention mask")
	x := in[0]
	for _, l := range e.Layers {
		x = callLayer(l, e.Checkpoint, x, in[1], in[2])
	}
	if e.Norm != nil {
		x = e.Norm.Forward(x)
	}
	return []*nd.NDArray{x}
}

// ExportONNX writes the stack without masks.
func (e *TransformerEncoder) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	outs, err := e.ExportONNXMulti(g, []string{x})
	if err != nil {
		return "", err
	}
	return outs[0], nil
}

// ExportONNXMulti writes each layer's form with the masks, then the norm.
func (e *TransformerEncoder) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	if len(inputs) < 1 || len(inputs) > 3 || inputs[0] == "" {
		return nil, fmt.Errorf("takes src, key-padding mask and attention mask (the first required); got %d inputs", len(inputs))
	}
	in := make([]string, 3)
	copy(in, inputs)
	x := in[0]
	for i, l := range e.Layers {
		outs, err := l.ExportONNXMulti(g, []string{x, in[1], in[2]})
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		x = outs[0]
	}
	if e.Norm != nil {
		var err error
		if x, err = e.Norm.ExportONNX(g, x); err != nil {
			return nil, err
		}
	}
	return []string{x}, nil
}

// TransformerDecoder is numLayers TransformerDecoderLayers one after the
// other, each attending to the same memory, with an optional LayerNorm at
// the end (PyTorch's nn.TransformerDecoder). ForwardMulti takes the
// layers' inputs: tgt, memory, tgt mask, memory mask, tgt key-padding mask
// and memory key-padding mask.
type TransformerDecoder struct {
	gluon.BlockMeta
	Layers []*TransformerDecoderLayer
	Norm   *LayerNorm // nil without a final norm
	// Checkpoint recomputes each layer in the backward pass (see
	// TransformerEncoder.Checkpoint).
	Checkpoint bool
}

// NewTransformerDecoder returns numLayers decoder layers of width dModel
// with heads heads each, configured by o, and a final LayerNorm when
// withNorm.
func NewTransformerDecoder(numLayers, dModel, heads int, o TransformerOpts, withNorm bool) *TransformerDecoder {
	checkLayers("nn.NewTransformerDecoder", numLayers)
	d := &TransformerDecoder{BlockMeta: gluon.NewBlockMeta("transformerdecoder")}
	cs := make([]gluon.Component, numLayers)
	for i := range cs {
		d.Layers = append(d.Layers, NewTransformerDecoderLayer(dModel, heads, o))
		cs[i] = d.Layers[i]
	}
	newLayerList(&d.BlockMeta, cs)
	if withNorm {
		d.Norm = finalNorm(&d.BlockMeta, dModel, o)
	}
	return d
}

// ForwardMulti runs the stack; see TransformerDecoder for the inputs.
func (d *TransformerDecoder) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	const op = "nn.TransformerDecoder"
	in := takeInputs(op, inputs, 6, "tgt, memory, tgt mask, memory mask, tgt key-padding mask, memory key-padding mask")
	if in[1] == nil {
		nd.Panicf(op, nd.ErrArgument, "memory (the second input) is required")
	}
	x := in[0]
	for _, l := range d.Layers {
		x = callLayer(l, d.Checkpoint, x, in[1], in[2], in[3], in[4], in[5])
	}
	if d.Norm != nil {
		x = d.Norm.Forward(x)
	}
	return []*nd.NDArray{x}
}

// ExportONNXMulti writes each layer's form with the memory and masks, then
// the norm.
func (d *TransformerDecoder) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	if len(inputs) < 2 || len(inputs) > 6 || inputs[0] == "" || inputs[1] == "" {
		return nil, fmt.Errorf("takes tgt, memory (both required) and four optional masks; got %d inputs", len(inputs))
	}
	in := make([]string, 6)
	copy(in, inputs)
	x := in[0]
	for i, l := range d.Layers {
		outs, err := l.ExportONNXMulti(g, []string{x, in[1], in[2], in[3], in[4], in[5]})
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		x = outs[0]
	}
	if d.Norm != nil {
		var err error
		if x, err = d.Norm.ExportONNX(g, x); err != nil {
			return nil, err
		}
	}
	return []string{x}, nil
}

// Transformer is the encoder–decoder model of "Attention Is All You Need"
// (PyTorch's nn.Transformer): an encoder stack and a decoder stack, each
// with its final LayerNorm, the decoder attending to the encoder's output.
// ForwardMulti takes PyTorch's inputs in PyTorch's order: src, tgt, src
// mask, tgt mask, memory mask, src key-padding mask, tgt key-padding mask
// and memory key-padding mask (all but src and tgt may be nil or left
// out). TransformerOpts.Causal makes the decoder's self-attention causal
// (the square subsequent mask PyTorch users pass as tgt mask); the encoder
// is never causal.
type Transformer struct {
	gluon.BlockMeta
	Encoder *TransformerEncoder
	Decoder *TransformerDecoder
}

// NewTransformer returns the model with encoderLayers and decoderLayers
// layers of width dModel and heads heads (PyTorch's defaults are 512, 8,
// 6 and 6).
func NewTransformer(dModel, heads, encoderLayers, decoderLayers int, o TransformerOpts) *Transformer {
	t := &Transformer{BlockMeta: gluon.NewBlockMeta("transformer")}
	enc := o
	enc.Causal = false
	t.Encoder = NewTransformerEncoder(encoderLayers, dModel, heads, enc, true)
	t.Encoder.SetName("encoder")
	t.AddChild(t.Encoder)
	t.Decoder = NewTransformerDecoder(decoderLayers, dModel, heads, o, true)
	t.Decoder.SetName("decoder")
	t.AddChild(t.Decoder)
	return t
}

// ForwardMulti runs the model; see Transformer for the inputs.
func (t *Transformer) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	const op = "nn.Transformer"
	if len(inputs) < 2 || len(inputs) > 8 || inputs[0] == nil || inputs[1] == nil {
		nd.Panicf(op, nd.ErrArgument, "takes src, tgt (both required), src mask, tgt mask, memory mask, src, tgt and memory key-padding masks; got %d inputs", len(inputs))
	}
	in := make([]*nd.NDArray, 8)
	copy(in, inputs)
	mem := t.Encoder.ForwardMulti(in[0], in[5], in[2])[0]
	return t.Decoder.ForwardMulti(in[1], mem, in[3], in[4], in[6], in[7])
}

// ExportONNXMulti writes the encoder's form, then the decoder's on it.
func (t *Transformer) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	if len(inputs) < 2 || len(inputs) > 8 || inputs[0] == "" || inputs[1] == "" {
		return nil, fmt.Errorf("takes src, tgt (both required) and six optional masks; got %d inputs", len(inputs))
	}
	in := make([]string, 8)
	copy(in, inputs)
	mem, err := t.Encoder.ExportONNXMulti(g, []string{in[0], in[5], in[2]})
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	outs, err := t.Decoder.ExportONNXMulti(g, []string{in[1], mem[0], in[3], in[4], in[6], in[7]})
	if err != nil {
		return nil, fmt.Errorf("decoder: %w", err)
	}
	return outs, nil
}
