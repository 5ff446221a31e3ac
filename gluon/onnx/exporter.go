package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
)

// exporter implements gluon.ONNXGraph over a GraphProto.
type exporter struct {
	graph  onnxpb.GraphProto
	dev    ctx.Context
	params map[*gluon.Parameter]string
	used   map[string]bool
	n      int
	err    error // the first failure inside Param or Const

	// The graph's inputs with their example values, for Shape and DType.
	ins []graphInput
}

// graphInput is one input of the exported graph and its example value.
type graphInput struct {
	name    string
	t       onnxpb.TensorProto_DataType
	dt      nd.DType
	shape   []int
	example []float64 // nil: zeros
}

// array makes the example value of in, in session s on dev.
func (in graphInput) array(s *nd.Session, dev ctx.Context) *nd.NDArray {
	if in.example != nil {
		return s.FromSlice(dev, in.example, in.shape...).AsType(in.dt)
	}
	return s.Zeros(dev, in.dt, in.shape...)
}

// inTypes maps the graph's input names to their types.
func (e *exporter) inTypes() map[string]onnxpb.TensorProto_DataType {
	m := map[string]onnxpb.TensorProto_DataType{}
	for _, in := range e.ins {
		m[in.name] = in.t
	}
	return m
}

// Shape implements gluon.ONNXShapes: it runs the graph written so far on
// the example inputs and returns the value's shape.
func (e *exporter) Shape(value string) ([]int, error) {
	a, err := e.probe(value)
	if err != nil {
		return nil, err
	}
	return a.shape, nil
}

// DType implements gluon.ONNXTypes: the element type of a value on the
// example inputs (a mask's Bool, say).
func (e *exporter) DType(value string) (nd.DType, error) {
	a, err := e.probe(value)
	if err != nil {
		return 0, err
	}
	return a.dt, nil
}

// probed is what probe learns of a value.
type probed struct {
	shape []int
	dt    nd.DType
}

// probe runs the graph written so far on the example inputs and returns
// value's shape and dtype.
func (e *exporter) probe(value string) (probed, error) {
	for _, in := range e.ins {
		if in.name == value {
			return probed{slices.Clone(in.shape), in.dt}, nil
		}
	}
	g := proto.Clone(&e.graph).(*onnxpb.GraphProto)
	g.Name = proto.String("shape")
	g.Input = nil
	for _, in := range e.ins {
		g.Input = append(g.Input, valueInfo(in.name, in.t, in.shape, "", 0))
	}
	g.Output = []*onnxpb.ValueInfoProto{{Name: proto.String(value)}}
	if _, err := retypeGraph(g, e.inTypes(), e.fresh); err != nil {
		return probed{}, fmt.Errorf("the shape of %s: %w", value, err)
	}
	mp := &onnxpb.ModelProto{IrVersion: proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(ExportOpset)}}, Graph: g}
	m, err := fromProto(mp, []ctx.Context{e.dev})
	if err != nil {
		return probed{}, fmt.Errorf("the shape of %s: %w", value, err)
	}
	var p probed
	err = nd.Catch(func() {
		s := autograd.NewSession("onnx-export-shape")
		s.PredictMode(func() {
			sc := s.NewScope()
			defer sc.Close()
			xs := make([]*nd.NDArray, len(e.ins))
			for i, in := range e.ins {
				xs[i] = in.array(s, e.dev)
			}
			y := m.ForwardMulti(xs...)[0]
			p = probed{y.Shape(), y.DType()}
		})
	})
	if err != nil {
		return probed{}, fmt.Errorf("the shape of %s: %w", value, err)
	}
	return p, nil
}

// fresh returns an unused value name starting with hint.
func (e *exporter) fresh(hint string) string {
	for {
		e.n++
		name := fmt.Sprintf("%s_%d", hint, e.n)
		if !e.used[name] {
			e.used[name] = true
			return name
		}
	}
}

func (e *exporter) isInitializer(name string) bool {
	return slices.ContainsFunc(e.graph.Initializer, func(t *onnxpb.TensorProto) bool { return t.GetName() == name })
}

// Param implements gluon.ONNXGraph.
func (e *exporter) Param(p *gluon.Parameter) string {
	if name, ok := e.params[p]; ok {
		return name
	}
	name := p.Name()
	if e.used[name] {
		name = e.fresh(name)
	}
	e.used[name] = true
	e.params[p] = name
	var a *nd.NDArray
	var vals []float64
	if err := nd.Catch(func() { a = p.Data(e.dev); vals = a.Float64s() }); err != nil {
		if e.err == nil {
			e.err = fmt.Errorf("parameter %s: %w", p.Name(), err)
		}
		return name
	}
	// The value's dtype and shape: a derived weight's are those of the
	// parameters it is computed from.
	t, err := onnxType(a.DType())
	if err != nil {
		if e.err == nil {
			e.err = fmt.Errorf("parameter %s: %w", p.Name(), err)
		}
		return name
	}
	e.graph.Initializer = append(e.graph.Initializer, floatTensorOf(name, vals, a.Shape(), t))
	return name
}

// Const implements gluon.ONNXGraph.
func (e *exporter) Const(data any, shape ...int) string {
	name := e.fresh("const")
	var t *onnxpb.TensorProto
	switch v := data.(type) {
	case []float32:
		t = floatTensor(name, v, shape)
	case []int64:
		t = &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Dims: dims64(shape), Int64Data: slices.Clone(v)}
	default:
		if e.err == nil {
			e.err = fmt.Errorf("constant of %T: want []float32 or []int64", data)
		}
		return name
	}
	// A Constant node, not an initializer: Load (and other importers)
	// makes initializers trainable parameters, and a causal mask or a
	// resize's scales must not train.
	e.graph.Node = append(e.graph.Node, &onnxpb.NodeProto{
		OpType: proto.String("Constant"), Name: proto.String(name), Output: []string{name},
		Attribute: []*onnxpb.AttributeProto{{Name: proto.String("value"), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: t}},
	})
	return name
}

// Op implements gluon.ONNXGraph.
func (e *exporter) Op(opType string, inputs []string, attrs map[string]any, nOut int) []string {
	outs := make([]string, nOut)
	for i := range outs {
		outs[i] = e.fresh(opType)
	}
	n := &onnxpb.NodeProto{OpType: proto.String(opType), Name: proto.String(outs[0]), Input: slices.Clone(inputs), Output: outs}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a, err := attribute(k, attrs[k])
		if err != nil {
			if e.err == nil {
				e.err = fmt.Errorf("%s: %w", opType, err)
			}
			continue
		}
		n.Attribute = append(n.Attribute, a)
	}
	e.graph.Node = append(e.graph.Node, n)
	return outs
}

// Block implements gluon.ONNXGraph.
func (e *exporter) Block(b gluon.Component, input string) (string, error) {
	ex, ok := b.(gluon.ONNXExporter)
	if !ok {
		return "", fmt.Errorf("block %s (%T) has no ONNX form: implement gluon.ONNXExporter", b.Meta().Name(), b)
	}
	out, err := ex.ExportONNX(e, input)
	if err != nil {
		name := b.Meta().Name()
		if name == "" {
			name = b.Meta().Kind()
		}
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// BlockMulti implements gluon.ONNXGraph.
func (e *exporter) BlockMulti(b gluon.Component, inputs []string) ([]string, error) {
	name := b.Meta().Name()
	if name == "" {
		name = b.Meta().Kind()
	}
	if ex, ok := b.(gluon.ONNXMultiExporter); ok {
		outs, err := ex.ExportONNXMulti(e, inputs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return outs, nil
	}
	if _, ok := b.(gluon.Block); ok && len(inputs) == 1 {
		out, err := e.Block(b, inputs[0])
		return []string{out}, err
	}
	return nil, fmt.Errorf("block %s (%T) has no ONNX form for %d inputs: implement gluon.ONNXMultiExporter", name, b, len(inputs))
}

// attribute encodes one node attribute.
func attribute(name string, v any) (*onnxpb.AttributeProto, error) {
	a := &onnxpb.AttributeProto{Name: proto.String(name)}
	set := func(t onnxpb.AttributeProto_AttributeType) { a.Type = t.Enum() }
	switch v := v.(type) {
	case int:
		set(onnxpb.AttributeProto_INT)
		a.I = proto.Int64(int64(v))
	case float64:
		set(onnxpb.AttributeProto_FLOAT)
		a.F = proto.Float32(float32(v))
	case string:
		set(onnxpb.AttributeProto_STRING)
		a.S = []byte(v)
	case []int:
		set(onnxpb.AttributeProto_INTS)
		for _, x := range v {
			a.Ints = append(a.Ints, int64(x))
		}
	case []float64:
		set(onnxpb.AttributeProto_FLOATS)
		for _, x := range v {
			a.Floats = append(a.Floats, float32(x))
		}
	case float32: // a one-element tensor: ConstantOfShape's value
		set(onnxpb.AttributeProto_TENSOR)
		a.T = floatTensor("", []float32{v}, []int{1})
	case []string:
		set(onnxpb.AttributeProto_STRINGS)
		for _, x := range v {
			a.Strings = append(a.Strings, []byte(x))
		}
	default:
		return nil, fmt.Errorf("attribute %s of %T: want int, float64, float32 (a one-element tensor), string, []int, []float64 or []string", name, v)
	}
	return a, nil
}

// floatTensor is a float32 initializer in raw little-endian form.
func floatTensor(name string, vals []float32, shape []int) *onnxpb.TensorProto {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: dims64(shape), RawData: raw}
}

func dims64(shape []int) []int64 {
	out := make([]int64, len(shape))
	for i, d := range shape {
		out[i] = int64(d)
	}
	return out
}
