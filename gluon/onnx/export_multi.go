package onnx

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// ExportInput describes one input of a network exported with ExportMulti.
type ExportInput struct {
	// Name is the graph input's name ("" means "input<i>").
	Name string
	// Shape is the example's shape.
	Shape []int
	// DType is the input's element type, as ExportOpts.InputDType (Float32
	// means the network's floating-point type), or nd.Bool for a mask.
	DType nd.DType
	// Example holds the example's values (optional; it must have Shape).
	// By default a floating input is seeded normal values, an integer one
	// zeros and a Bool one false: set it where the values matter (a
	// causal mask, token ids within a vocabulary).
	Example *nd.NDArray
	// BatchAxis is the axis that is the batch (free, named "N", unless
	// ExportOpts.FixedBatch); NoBatch says the input has none (an
	// attention mask [T, S]).
	BatchAxis int
	NoBatch   bool
	// FreeAxes are further axes whose size is free (a sequence length),
	// named "<name>_L<axis>". ExportMulti runs the network at three more
	// sizes of each (1, 2 and 3 longer, on every input at once, as
	// ExportOpts.FreeAxes) and fails when the written graph fixes one.
	FreeAxes []int
	// Omitted is an optional input left out: the block gets nil for it
	// and the graph has no such input.
	Omitted bool
}

// ExportMulti is Export for a network of several inputs and outputs: a
// MultiBlock (its ExportONNXMulti form, gluon.ONNXMultiExporter) or a
// Block. The graph's inputs are those of inputs not Omitted, in order; its
// outputs are the block's outputs, named by ExportOpts.OutputNames
// ("output<i>" by default; when set, only that many outputs are written).
// ExportOpts.InputDType, FreeAxes and BatchAxis are not used: each
// ExportInput says its own. An output axis whose size follows the batch
// (checked by running the network at a batch one larger, unless
// FixedBatch) is named "N"; one that follows a free axis is left unnamed.
// As Export, the written graph is run on the example inputs (and the
// larger ones) and must give the network's outputs.
func ExportMulti(net gluon.Component, inputs []ExportInput, opts ExportOpts) (*onnxpb.ModelProto, error) {
	params := gluon.CollectParams(net).List()
	netDT := netDType(params)
	dev := ctx.CPU(0)
	for _, p := range params {
		if cs := p.Contexts(); len(cs) > 0 {
			dev = cs[0]
			break
		}
	}
	ins, err := resolveInputs(inputs, netDT)
	if err != nil {
		return nil, fmt.Errorf("onnx: export: %w", err)
	}
	if _, multi := net.(gluon.MultiBlock); !multi && (len(inputs) != 1 || inputs[0].Omitted) {
		return nil, fmt.Errorf("onnx: export: %s is a single-input Block: give it exactly one input, not omitted", graphName(net, ExportOpts{}))
	}
	seenOut := map[string]bool{}
	for _, n := range opts.OutputNames {
		if n == "" || seenOut[n] {
			return nil, fmt.Errorf("onnx: export: output names %q: each must be non-empty and distinct", opts.OutputNames)
		}
		seenOut[n] = true
	}
	// The runs: the example, the free axes one longer, the batch one
	// larger.
	runs := [][][]int{runShapes(ins, nil, 0)}
	var freeRuns []int
	batchRun := -1
	if slices.ContainsFunc(inputs, func(in ExportInput) bool { return len(in.FreeAxes) > 0 && !in.Omitted }) {
		for d := 1; d <= freeChecks; d++ {
			freeRuns = append(freeRuns, len(runs))
			runs = append(runs, runShapes(ins, func(in *multiIn) []int { return in.free }, d))
		}
	}
	if !opts.FixedBatch && slices.ContainsFunc(ins, func(in *multiIn) bool { return !in.omitted && in.batch >= 0 }) {
		batchRun = len(runs)
		runs = append(runs, runShapes(ins, func(in *multiIn) []int {
			if in.batch < 0 {
				return nil
			}
			return []int{in.batch}
		}, 1))
	}
	isFree := func(r int) bool { return slices.Contains(freeRuns, r) }
	examples := make([][][]float64, len(runs)) // [run][input]
	wants := make([][][]float32, len(runs))    // [run][output]
	outShapes := make([][][]int, len(runs))
	for r, shapes := range runs {
		if err := nd.Catch(func() {
			s := autograd.NewSession("onnx-export")
			s.PredictMode(func() {
				sc := s.NewScope()
				defer sc.Close()
				xs := make([]*nd.NDArray, len(ins))
				examples[r] = make([][]float64, len(ins))
				for i, in := range ins {
					if in.omitted {
						continue
					}
					x := in.generate(s, dev, shapes[i], r == 0)
					xs[i] = x
					examples[r][i] = x.AsType(nd.Float64).Float64s()
				}
				ys := gluon.Call(net, xs...)
				for _, y := range ys {
					outShapes[r] = append(outShapes[r], y.Shape())
					wants[r] = append(wants[r], y.AsType(nd.Float32).Float32s())
				}
			})
		}); err != nil {
			switch {
			case isFree(r):
				return nil, fmt.Errorf("onnx: export: the forward pass with the free axes longer (shapes %v) failed: %w (list every axis of that length in FreeAxes, on every input that has it)", shapes, err)
			case r == batchRun:
				return nil, fmt.Errorf("onnx: export: the forward pass with a batch one larger (shapes %v) failed: %w (set NoBatch on an input without a batch axis, such as an attention mask, or ExportOpts.FixedBatch)", shapes, err)
			}
			return nil, fmt.Errorf("onnx: export: the example forward pass failed: %w", err)
		}
		if r > 0 {
			for j := range outShapes[r] {
				if len(outShapes[r][j]) != len(outShapes[0][j]) {
					return nil, fmt.Errorf("onnx: export: output %d's rank changes with the input sizes (%v, then %v)", j, outShapes[0][j], outShapes[r][j])
				}
			}
		}
	}
	nOut := len(outShapes[0])
	if k := len(opts.OutputNames); k > 0 {
		if k > nOut {
			return nil, fmt.Errorf("onnx: export: %d output names for a network of %d outputs", k, nOut)
		}
		nOut = k
	}
	outNames := make([]string, nOut)
	used := map[string]bool{}
	for i := range outNames {
		outNames[i] = fmt.Sprintf("output%d", i)
		if len(opts.OutputNames) > 0 {
			outNames[i] = opts.OutputNames[i]
		}
		used[outNames[i]] = true
	}
	e := &exporter{dev: dev, params: map[*gluon.Parameter]string{}, used: used}
	names := make([]string, len(ins))
	for i, in := range ins {
		if in.omitted {
			continue
		}
		if used[in.name] {
			return nil, fmt.Errorf("onnx: export: two inputs or outputs are named %q", in.name)
		}
		used[in.name] = true
		names[i] = in.name
		e.ins = append(e.ins, graphInput{name: in.name, t: in.t, dt: in.dt, shape: runs[0][i], example: examples[0][i]})
	}
	outs, err := e.BlockMulti(net, names)
	if err == nil && e.err != nil {
		err = e.err
	}
	if err == nil && len(outs) < nOut {
		err = fmt.Errorf("the form writes %d outputs, the network has %d", len(outs), nOut)
	}
	if err != nil {
		return nil, fmt.Errorf("onnx: export: %w", err)
	}
	e.nameOutputs(outs[:nOut], outNames)
	prune(&e.graph, outNames...)
	outTypes, err := e.retype(outNames...)
	if err != nil {
		return nil, fmt.Errorf("onnx: export: %w", err)
	}
	g := &e.graph
	g.Name = proto.String(graphName(net, opts))
	for i, in := range ins {
		if !in.omitted {
			g.Input = append(g.Input, in.valueInfo(runs[0][i], opts.FixedBatch))
		}
	}
	batch := -1 // the example's batch size
	for i, in := range ins {
		if !in.omitted && in.batch >= 0 {
			batch = runs[0][i][in.batch]
			break
		}
	}
	for j, name := range outNames {
		vi := valueInfo(name, outTypes[j], outShapes[0][j], "", 0)
		dims := vi.Type.GetTensorType().Shape.Dim
		for a := range dims {
			d0 := outShapes[0][j][a]
			switch {
			case slices.ContainsFunc(freeRuns, func(r int) bool { return outShapes[r][j][a] != d0 }):
				dims[a] = &onnxpb.TensorShapeProto_Dimension{} // unknown
			case batchRun >= 0 && outShapes[batchRun][j][a] != d0:
				// The batch itself, or a size that follows it otherwise
				// (two batches concatenated): unnamed.
				dims[a] = &onnxpb.TensorShapeProto_Dimension{}
				if d0 == batch && outShapes[batchRun][j][a] == batch+1 {
					dims[a].Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "N"}
				}
			}
		}
		g.Output = append(g.Output, vi)
	}
	mp := &onnxpb.ModelProto{
		IrVersion:       proto.Int64(8),
		ProducerName:    proto.String("goluon"),
		ProducerVersion: proto.String("1"),
		OpsetImport:     []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(ExportOpset)}},
		Graph:           g,
	}
	for r, shapes := range runs {
		if err := verifyMulti(mp, dev, ins, shapes, examples[r], wants[r][:nOut], outShapes[r][:nOut], netDT); err != nil {
			switch {
			case isFree(r):
				return nil, fmt.Errorf("onnx: export: with the free axes longer, shapes %v: %w (a block's form fixes that size)", shapes, err)
			case r == batchRun:
				return nil, fmt.Errorf("onnx: export: with a batch one larger: %w (a block's form fixes the batch size: set ExportOpts.FixedBatch, or NoBatch on an input without one)", err)
			}
			return nil, fmt.Errorf("onnx: export: %w", err)
		}
	}
	return mp, nil
}

// SaveMulti exports net (see ExportMulti) and writes the model to path
// atomically: a failure leaves an existing file as it was.
func SaveMulti(path string, net gluon.Component, inputs []ExportInput, opts ExportOpts) error {
	mp, err := ExportMulti(net, inputs, opts)
	return writeModel(path, mp, err)
}

// multiIn is an ExportInput resolved.
type multiIn struct {
	name    string
	omitted bool
	t       onnxpb.TensorProto_DataType
	dt      nd.DType
	shape   []int
	example *nd.NDArray
	batch   int // −1: none
	free    []int
}

func resolveInputs(inputs []ExportInput, netDT nd.DType) ([]*multiIn, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("no inputs")
	}
	ins := make([]*multiIn, len(inputs))
	for i, x := range inputs {
		in := &multiIn{name: x.Name, omitted: x.Omitted, shape: slices.Clone(x.Shape), example: x.Example, batch: x.BatchAxis, free: x.FreeAxes}
		ins[i] = in
		if in.name == "" {
			in.name = fmt.Sprintf("input%d", i)
		}
		if x.Omitted {
			continue
		}
		if x.NoBatch {
			in.batch = -1
		} else if x.BatchAxis < 0 {
			return nil, fmt.Errorf("input %s: batch axis %d: want an axis, or NoBatch for an input without one", in.name, x.BatchAxis)
		}
		if e := x.Example; e != nil && (e.DType() == nd.Bool || e.DType().IsInt()) {
			// An example of ids or a mask says the input's type; a
			// floating one may be converted.
			want := nd.Int64
			if e.DType() == nd.Bool {
				want = nd.Bool
			}
			switch x.DType {
			case nd.Float32: // unset
				x.DType = want
			case want:
			default:
				return nil, fmt.Errorf("input %s: a %v example for an input of dtype %v", in.name, e.DType(), x.DType)
			}
		}
		in.dt = x.DType
		switch x.DType {
		case nd.Float32:
			in.dt = netDT
			in.t, _ = onnxType(netDT)
		case nd.Float16, nd.BFloat16, nd.Float64:
			in.t, _ = onnxType(x.DType)
		case nd.Int64:
			in.t = onnxpb.TensorProto_INT64
		case nd.Bool:
			in.t = onnxpb.TensorProto_BOOL
		default:
			return nil, fmt.Errorf("input %s: dtype %v: want a floating-point type, int64 or bool", in.name, x.DType)
		}
		if x.Example != nil {
			if in.shape == nil {
				in.shape = x.Example.Shape()
			}
			if !slices.Equal(x.Example.Shape(), in.shape) {
				return nil, fmt.Errorf("input %s: example of shape %v, want %v", in.name, x.Example.Shape(), in.shape)
			}
		}
		if in.batch >= len(in.shape) || in.batch < -1 {
			return nil, fmt.Errorf("input %s: batch axis %d outside its shape %v", in.name, x.BatchAxis, in.shape)
		}
		for _, a := range in.free {
			if a < 0 || a >= len(in.shape) || a == in.batch {
				return nil, fmt.Errorf("input %s: free axis %d: want an axis of %v other than the batch axis", in.name, a, in.shape)
			}
		}
	}
	return ins, nil
}

// runShapes returns each input's shape with the axes grow picks by
// longer (grow nil: the example shapes).
func runShapes(ins []*multiIn, grow func(*multiIn) []int, by int) [][]int {
	out := make([][]int, len(ins))
	for i, in := range ins {
		out[i] = slices.Clone(in.shape)
		if grow != nil && !in.omitted {
			for _, a := range grow(in) {
				out[i][a] += by
			}
		}
	}
	return out
}

// generate makes an input of the given shape: the user's example for the
// first run, else seeded normal values (floating), zeros or false.
func (in *multiIn) generate(s *nd.Session, dev ctx.Context, shape []int, first bool) *nd.NDArray {
	if first && in.example != nil {
		return in.example.CopyTo(dev).AsType(in.dt)
	}
	if in.dt.IsFloat() {
		return s.RandomNormal(dev, nd.Float32, 0, 1, shape...).AsType(in.dt)
	}
	return s.Zeros(dev, in.dt, shape...)
}

// valueInfo describes the input in the graph, its batch axis named "N"
// unless fixed and its free axes named after it.
func (in *multiIn) valueInfo(shape []int, fixed bool) *onnxpb.ValueInfoProto {
	batch, axis := "N", in.batch
	if fixed || axis < 0 {
		batch, axis = "", 0
	}
	vi := valueInfo(in.name, in.t, shape, batch, axis)
	for _, a := range in.free {
		vi.Type.GetTensorType().Shape.Dim[a] = &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: fmt.Sprintf("%s_L%d", in.name, a)}}
	}
	return vi
}

// nameOutputs makes the graph write value outs[i] under names[i]: the
// node that writes it is renamed, or an Identity is added where the value
// is an input, an initializer or another output too.
func (e *exporter) nameOutputs(outs, names []string) {
	seen := map[string]bool{}
	for i, out := range outs {
		isInput := slices.ContainsFunc(e.ins, func(in graphInput) bool { return in.name == out })
		if out == "" || isInput || e.isInitializer(out) || seen[out] {
			outs[i] = e.Op("Identity", []string{out}, nil, 1)[0]
		}
		seen[outs[i]] = true
	}
	rename := map[string]string{}
	for i, out := range outs {
		rename[out] = names[i]
	}
	for _, n := range e.graph.Node {
		for i, o := range n.Output {
			if r, ok := rename[o]; ok {
				n.Output[i] = r
			}
		}
		for i, o := range n.Input {
			if r, ok := rename[o]; ok {
				n.Input[i] = r
			}
		}
	}
}

// graphName is opts.Name, else the network's name or kind.
func graphName(net gluon.Component, opts ExportOpts) string {
	for _, n := range []string{opts.Name, net.Meta().Name(), net.Meta().Kind()} {
		if n != "" {
			return n
		}
	}
	return "goluon"
}

// verifyMulti runs the written graph on one run's inputs and compares its
// outputs with the network's.
func verifyMulti(mp *onnxpb.ModelProto, dev ctx.Context, ins []*multiIn, shapes [][]int, examples [][]float64, want [][]float32, wantShapes [][]int, netDT nd.DType) error {
	m, err := fromProto(mp, []ctx.Context{dev})
	if err != nil {
		return fmt.Errorf("the written graph does not load back: %w", err)
	}
	var got [][]float32
	var gotShapes [][]int
	if err := nd.Catch(func() {
		s := autograd.NewSession("onnx-export-check")
		s.PredictMode(func() {
			sc := s.NewScope()
			defer sc.Close()
			var xs []*nd.NDArray
			for i, in := range ins {
				if !in.omitted {
					xs = append(xs, s.FromSlice(dev, examples[i], shapes[i]...).AsType(in.dt))
				}
			}
			for _, y := range m.ForwardMulti(xs...) {
				got = append(got, y.AsType(nd.Float32).Float32s())
				gotShapes = append(gotShapes, y.Shape())
			}
		})
	}); err != nil {
		return fmt.Errorf("the written graph fails on the example inputs: %w", err)
	}
	tol := checkTolerance(netDT)
	for j := range want {
		if !slices.Equal(gotShapes[j], wantShapes[j]) {
			return fmt.Errorf("output %d: the written graph gives shape %v, the network %v", j, gotShapes[j], wantShapes[j])
		}
		if rel := numcmp.RelL2NaN(got[j], want[j]); rel > tol || rel != rel {
			return fmt.Errorf("output %d: the written graph computes something else than the network (relative difference %.3g): a block's form does not match its forward pass", j, rel)
		}
	}
	return nil
}

// checkTolerance is the relative L2 difference allowed between the written
// graph and the network: the graph's ops round in other places than the
// network's in half precision (bfloat16 keeps 8 bits).
func checkTolerance(dt nd.DType) float64 {
	switch dt {
	case nd.BFloat16:
		return 3e-2
	case nd.Float16:
		return 1e-2
	}
	return 1e-4
}
