package onnx

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/internal/atomicfile"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// freeChecks is how many sizes beyond the example's Export checks a free
// axis at.
const freeChecks = 3

// ExportOpset is the default-domain opset that Export writes.
const ExportOpset = 17

// ExportOpts configures Export.
type ExportOpts struct {
	// FixedBatch keeps the input's batch dimension at its example size;
	// by default it is a named, free dimension ("N"), so that the model
	// takes any batch size.
	FixedBatch bool
	// BatchAxis is the input's and the output's batch axis: 0 (the
	// default), or 1 for sequence models in TNC layout (MultiHeadAttention
	// and the Transformer layers' default), whose axis 0 is the sequence.
	BatchAxis int
	// Name is the graph's name (default: the network's name, else its
	// kind).
	Name string
	// FreeAxes are input axes besides the batch axis whose size is free
	// too (a sequence length): they are named "L<axis>" in the input, and
	// the output's axes whose size follows them are left unnamed. Export
	// runs the network and the written graph at three more sizes of each
	// (one, two and three longer) and fails when they disagree or the form
	// fixes the size. (A pooling in ceil mode with a stride above 4 along
	// a free axis can agree at those sizes and not at all.)
	FreeAxes []int
	// InputDType is the input's element type: Float32 (the default),
	// which means a floating-point input of the network's type (float16
	// for a network cast to float16), another floating-point type (for a
	// network without weights, whose type is its input's), or Int64
	// (token ids, for networks that start with an Embedding).
	InputDType nd.DType
	// OutputNames names ExportMulti's outputs (default "output0",
	// "output1", ...); when set, only that many of the network's first
	// outputs are written. Export's one output is "output".
	OutputNames []string
}

// Export writes net's inference form (predict mode: no dropout, batch
// normalisation with the running statistics) as an ONNX model of opset
// ExportOpset, with one input "input" of inputShape and one output
// "output". A network cast to float16 or float64 (gluon.Cast) exports in
// that type: weights, input, output and the data path's constants
// (BatchNorm's weights may stay float32, as opset 15 allows); so do
// bfloat16 networks, the ops without a bfloat16 form in opset 17
// (convolutions, pooling, the recurrent layers) running in float32
// between Casts, as the network computes them. The network runs once in predict mode on
// an example input of that shape (seeded normal values;
// zeros for int64), on its parameters' first context, which settles
// deferred shapes and gives the output's shape; the written graph is then
// run on the same input and must give the same output (1e-4 relative), so
// a block whose form does not match its Forward (a type that embeds an
// exportable block and overrides Forward, say) is an error, not a wrong
// file. Every block must implement
// gluon.ONNXExporter (the nn layers, containers and the model zoo's
// networks do); the error names the first that does not. Parameters become
// initializers under their names, in their own types; their values are
// read from the first context.
func Export(net gluon.Block, inputShape []int, opts ExportOpts) (*onnxpb.ModelProto, error) {
	params := gluon.CollectParams(net).List()
	inDType := opts.InputDType
	var inType onnxpb.TensorProto_DataType
	switch inDType {
	case nd.Float32:
		// A float input takes the network's type (float16 for a network
		// cast to float16).
		inDType = netDType(params)
		var err error
		if inType, err = onnxType(inDType); err != nil {
			return nil, fmt.Errorf("onnx: export: %w", err)
		}
	case nd.Int64:
		inType = onnxpb.TensorProto_INT64
	case nd.Float16, nd.BFloat16, nd.Float64:
		// A network without weights has no type of its own: the input's.
		inType, _ = onnxType(inDType)
	default:
		return nil, fmt.Errorf("onnx: export: input dtype %v: want a floating-point type or int64", opts.InputDType)
	}
	dev := ctx.CPU(0)
	for _, p := range params {
		if cs := p.Contexts(); len(cs) > 0 {
			dev = cs[0]
			break
		}
	}
	for _, a := range opts.FreeAxes {
		if a < 0 || a >= len(inputShape) || a == opts.BatchAxis {
			return nil, fmt.Errorf("onnx: export: free axis %d: want an input axis (of %v) other than the batch axis %d", a, inputShape, opts.BatchAxis)
		}
	}
	// The example, and with free axes inputs longer on each by 1, 2, ...
	// freeChecks: a form that fixes a size may agree with the network
	// every stride-th size (a pooling in ceil mode).
	shapes := [][]int{inputShape}
	if len(opts.FreeAxes) > 0 {
		for d := 1; d <= freeChecks; d++ {
			s2 := slices.Clone(inputShape)
			for _, a := range opts.FreeAxes {
				s2[a] += d
			}
			shapes = append(shapes, s2)
		}
	}
	outShapes := make([][]int, len(shapes))
	examples := make([][]float32, len(shapes))
	wants := make([][]float32, len(shapes))
	if err := nd.Catch(func() {
		s := autograd.NewSession("onnx-export")
		s.PredictMode(func() {
			sc := s.NewScope()
			defer sc.Close()
			for i, shape := range shapes {
				x := s.Zeros(dev, inDType, shape...)
				if inDType.IsFloat() {
					x = s.RandomNormal(dev, nd.Float32, 0, 1, shape...)
					examples[i] = x.Float32s()
					x = x.AsType(inDType)
				}
				y := net.Forward(x)
				outShapes[i], wants[i] = y.Shape(), y.AsType(nd.Float32).Float32s()
			}
		})
	}); err != nil {
		var ne *nd.Error
		if errors.As(err, &ne) && ne.Kind == nd.ErrDType && opts.InputDType == nd.Float32 {
			return nil, fmt.Errorf("onnx: export: the example forward pass on a %v input failed (for token ids set ExportOpts.InputDType to nd.Int64): %w", inDType, err)
		}
		return nil, fmt.Errorf("onnx: export: the example forward pass failed: %w", err)
	}
	outShape, example := outShapes[0], examples[0]
	freeOut := map[int]bool{}
	for _, os := range outShapes[1:] {
		if len(os) != len(outShape) {
			return nil, fmt.Errorf("onnx: export: the output's rank changes with the free axes (%v, then %v)", outShape, os)
		}
		for i := range outShape {
			if os[i] != outShape[i] {
				freeOut[i] = true
			}
		}
	}
	e := &exporter{dev: dev, params: map[*gluon.Parameter]string{}, used: map[string]bool{"input": true, "output": true},
		ins: []graphInput{{name: "input", t: inType, dt: inDType, shape: inputShape, example: widen(example)}}}
	out, err := e.Block(net, "input")
	if err != nil {
		return nil, fmt.Errorf("onnx: export: %w", err)
	}
	if e.err != nil {
		return nil, fmt.Errorf("onnx: export: %w", e.err)
	}
	if out == "input" || e.isInitializer(out) {
		out = e.Op("Identity", []string{out}, nil, 1)[0]
	}
	// The last node writes "output" directly.
	for _, n := range e.graph.Node {
		for i, o := range n.Output {
			if o == out {
				n.Output[i] = "output"
			}
		}
		for i, in := range n.Input {
			if in == out {
				n.Input[i] = "output"
			}
		}
	}
	prune(&e.graph, "output")
	outTypes, err := e.retype("output")
	if err != nil {
		return nil, fmt.Errorf("onnx: export: %w", err)
	}
	outType := outTypes[0]
	batch := "N"
	if opts.FixedBatch {
		batch = ""
	}
	if opts.BatchAxis < 0 || opts.BatchAxis >= len(inputShape) || opts.BatchAxis >= len(outShape) {
		return nil, fmt.Errorf("onnx: export: batch axis %d outside the input's shape %v or the output's %v", opts.BatchAxis, inputShape, outShape)
	}
	name := opts.Name
	if name == "" {
		name = net.Meta().Name()
	}
	if name == "" {
		name = net.Meta().Kind()
	}
	if name == "" {
		name = "goluon"
	}
	g := &e.graph
	g.Name = proto.String(name)
	in, outVI := valueInfo("input", inType, inputShape, batch, opts.BatchAxis), valueInfo("output", outType, outShape, batch, opts.BatchAxis)
	for _, a := range opts.FreeAxes {
		in.Type.GetTensorType().Shape.Dim[a] = &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: fmt.Sprintf("L%d", a)}}
	}
	for a := range freeOut {
		if a != opts.BatchAxis || batch == "" {
			outVI.Type.GetTensorType().Shape.Dim[a] = &onnxpb.TensorShapeProto_Dimension{} // unknown
		}
	}
	g.Input = []*onnxpb.ValueInfoProto{in}
	g.Output = []*onnxpb.ValueInfoProto{outVI}
	mp := &onnxpb.ModelProto{
		IrVersion:       proto.Int64(8),
		ProducerName:    proto.String("goluon"),
		ProducerVersion: proto.String("1"),
		OpsetImport:     []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(ExportOpset)}},
		Graph:           g,
	}
	for i, shape := range shapes {
		if err := verify(mp, dev, inDType, netDType(params), shape, examples[i], wants[i]); err != nil {
			if i > 0 {
				return nil, fmt.Errorf("onnx: export: with the free axes %d longer, %v: %w (a block's form fixes that size)", i, shape, err)
			}
			return nil, fmt.Errorf("onnx: export: %w", err)
		}
	}
	return mp, nil
}

// verify runs the exported graph on the example input and compares its
// output with the network's (want).
func verify(mp *onnxpb.ModelProto, dev ctx.Context, dt, netDT nd.DType, shape []int, example, want []float32) error {
	m, err := fromProto(mp, []ctx.Context{dev})
	if err != nil {
		return fmt.Errorf("the written graph does not load back: %w", err)
	}
	var got []float32
	if err := nd.Catch(func() {
		s := autograd.NewSession("onnx-export-check")
		s.PredictMode(func() {
			sc := s.NewScope()
			defer sc.Close()
			x := s.Zeros(dev, dt, shape...)
			if example != nil {
				x = s.FromSlice(dev, example, shape...).AsType(dt)
			}
			got = m.Forward(x).AsType(nd.Float32).Float32s()
		})
	}); err != nil {
		return fmt.Errorf("the written graph fails on the example input: %w", err)
	}
	if len(got) != len(want) {
		return fmt.Errorf("the written graph gives %d outputs, the network %d", len(got), len(want))
	}
	tol := checkTolerance(netDT)
	if rel := numcmp.RelL2NaN(got, want); rel > tol || rel != rel {
		return fmt.Errorf("the written graph computes something else than the network (relative difference %.3g on the example input): a block's ExportONNX does not match its Forward", rel)
	}
	return nil
}

// widen converts an example to float64 (nil stays nil).
func widen(v []float32) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// Save exports net (see Export) and writes the model to path atomically:
// a failure leaves an existing file as it was.
func Save(path string, net gluon.Block, inputShape []int, opts ExportOpts) error {
	mp, err := Export(net, inputShape, opts)
	return writeModel(path, mp, err)
}

// writeModel writes an exported model (unless its export failed, err) to
// path atomically.
func writeModel(path string, mp *onnxpb.ModelProto, err error) error {
	if err != nil {
		return err
	}
	data, err := proto.Marshal(mp)
	if err != nil {
		return fmt.Errorf("onnx: encoding the model: %w", err)
	}
	if err := atomicfile.WriteBytes(path, data); err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	return nil
}

// valueInfo describes a tensor of element type et; a non-empty batch names
// the first dimension instead of fixing it.
func valueInfo(name string, et onnxpb.TensorProto_DataType, shape []int, batch string, axis int) *onnxpb.ValueInfoProto {
	dims := make([]*onnxpb.TensorShapeProto_Dimension, len(shape))
	for i, d := range shape {
		if i == axis && batch != "" {
			dims[i] = &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: batch}}
			continue
		}
		dims[i] = &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}}
	}
	return &onnxpb.ValueInfoProto{
		Name: proto.String(name),
		Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: proto.Int32(int32(et)),
			Shape:    &onnxpb.TensorShapeProto{Dim: dims},
		}}},
	}
}
