package onnx

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
)

// A network cast to float16, bfloat16 or float64 exports in that type: its
// weights are initializers of their own type, the input and output take
// it, and the float32 constants the blocks' forms write on the data path
// (a GELU's √2, an attention's scale) are converted to it. Values on a
// shape path (a Cast of a Shape to float for a resize) keep float32.

// onnxType is dtypeOf's inverse for the floating-point types.
func onnxType(dt nd.DType) (onnxpb.TensorProto_DataType, error) {
	switch dt {
	case nd.Float32:
		return onnxpb.TensorProto_FLOAT, nil
	case nd.Float64:
		return onnxpb.TensorProto_DOUBLE, nil
	case nd.Float16:
		return onnxpb.TensorProto_FLOAT16, nil
	case nd.BFloat16:
		return onnxpb.TensorProto_BFLOAT16, nil
	}
	return 0, fmt.Errorf("dtype %v has no ONNX floating-point type", dt)
}

// netDType is the dtype of net's weights: that of its first floating-point
// parameter not kept in float32 (BatchNorm's stay float32 in a half
// network), float32 when it has none.
func netDType(params []*gluon.Parameter) nd.DType {
	for _, p := range params {
		if p.DType().IsFloat() && !p.KeepFloat32 {
			return p.DType()
		}
	}
	for _, p := range params {
		if p.DType().IsFloat() {
			return p.DType()
		}
	}
	return nd.Float32
}

// floatTensorOf encodes vals as a raw initializer of floating-point type t.
func floatTensorOf(name string, vals []float64, shape []int, t onnxpb.TensorProto_DataType) *onnxpb.TensorProto {
	var raw []byte
	switch t {
	case onnxpb.TensorProto_DOUBLE:
		raw = make([]byte, 8*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(v))
		}
	case onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16:
		raw = make([]byte, 2*len(vals))
		for i, v := range vals {
			var bits uint16
			if t == onnxpb.TensorProto_FLOAT16 {
				bits = uint16(nd.F16From(float32(v)))
			} else {
				bits = uint16(nd.BF16From(float32(v)))
			}
			binary.LittleEndian.PutUint16(raw[2*i:], bits)
		}
	default:
		raw = make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(v)))
		}
	}
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(t)), Dims: dims64(shape), RawData: raw}
}

// isFloatType reports whether t is a floating-point element type.
func isFloatType(t onnxpb.TensorProto_DataType) bool {
	switch t {
	case onnxpb.TensorProto_FLOAT, onnxpb.TensorProto_DOUBLE, onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16:
		return true
	}
	return false
}

// keepsOwnType lists the inputs whose type an op does not tie to its
// data input's: Resize's roi and scales; BatchNormalization's scale, bias,
// mean and variance (opset 15 allows float32 statistics for half data).
func keepsOwnType(op string, i int) bool {
	switch op {
	case "Resize":
		return i == 1 || i == 2
	case "BatchNormalization":
		return i > 0
	}
	return false
}

// retype gives the graph's data path the network's type (see the comment
// at the top of this file), walking the nodes in order: a node's type is
// that of its first non-constant floating-point input; float32 constants
// on its other inputs are converted to it, and float32 initializers (a
// weight kept in float32) reach it through a Cast. It returns the output's
// types, one per output.
func (e *exporter) retype(outs ...string) ([]onnxpb.TensorProto_DataType, error) {
	types, err := retypeGraph(&e.graph, e.inTypes(), e.fresh)
	if err != nil {
		return nil, err
	}
	widenBFloat16(&e.graph, types, e.fresh)
	ts := make([]onnxpb.TensorProto_DataType, len(outs))
	for i, out := range outs {
		ts[i] = types[out]
		if !isFloatType(ts[i]) {
			return nil, fmt.Errorf("the output %s is of type %v, not floating-point", out, ts[i])
		}
	}
	return ts, nil
}

// widenBFloat16 runs the ops that have no bfloat16 form in float32: a
// Cast of each bfloat16 input to float32 before the node and of each
// output back after it. That is what the network computes too (half ops
// compute in float32 and round their result), so the file agrees with it.
func widenBFloat16(g *onnxpb.GraphProto, types map[string]onnxpb.TensorProto_DataType, fresh func(string) string) {
	cast := func(in, out string, to onnxpb.TensorProto_DataType) *onnxpb.NodeProto {
		return &onnxpb.NodeProto{OpType: proto.String("Cast"), Name: proto.String(out), Input: []string{in}, Output: []string{out},
			Attribute: []*onnxpb.AttributeProto{{Name: proto.String("to"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(int64(to))}}}
	}
	var nodes []*onnxpb.NodeProto
	for _, n := range g.Node {
		if !noBFloat16[n.GetOpType()] || !slices.ContainsFunc(n.Input, func(in string) bool { return types[in] == onnxpb.TensorProto_BFLOAT16 }) {
			nodes = append(nodes, n)
			continue
		}
		for i, in := range n.Input {
			if in != "" && types[in] == onnxpb.TensorProto_BFLOAT16 {
				c := fresh("Cast")
				nodes = append(nodes, cast(in, c, onnxpb.TensorProto_FLOAT))
				types[c] = onnxpb.TensorProto_FLOAT
				n.Input[i] = c
			}
		}
		nodes = append(nodes, n)
		for j, out := range n.Output {
			if out == "" || types[out] != onnxpb.TensorProto_BFLOAT16 {
				continue
			}
			f := fresh(n.GetOpType())
			types[f] = onnxpb.TensorProto_FLOAT
			n.Output[j] = f
			c := cast(f, out, onnxpb.TensorProto_BFLOAT16)
			c.Name = proto.String(fresh("Cast")) // node names are unique; the value keeps its name
			nodes = append(nodes, c)
		}
	}
	g.Node = nodes
}

// noBFloat16 lists the ops the blocks write whose opset-17 forms take no
// bfloat16 data.
var noBFloat16 = map[string]bool{
	"Conv": true, "ConvTranspose": true, "AveragePool": true, "MaxPool": true,
	"GlobalAveragePool": true, "GlobalMaxPool": true, "Elu": true, "HardSigmoid": true, "Softplus": true,
	"HardSwish": true, "Selu": true, "Softsign": true,
	"InstanceNormalization": true, "LSTM": true, "GRU": true, "RNN": true,
}

// retypeGraph is retype on g, whose inputs have the types inTypes (by
// name); fresh names the Casts it adds. It returns every value's type.
func retypeGraph(g *onnxpb.GraphProto, inTypes map[string]onnxpb.TensorProto_DataType, fresh func(string) string) (map[string]onnxpb.TensorProto_DataType, error) {
	types := maps.Clone(inTypes)
	consts := map[string]*onnxpb.TensorProto{}
	for _, t := range g.Initializer {
		types[t.GetName()] = onnxpb.TensorProto_DataType(t.GetDataType())
	}
	var nodes []*onnxpb.NodeProto
	for _, n := range g.Node {
		op := n.GetOpType()
		switch op {
		case "Constant":
			for _, a := range n.GetAttribute() {
				if a.GetName() == "value" {
					consts[n.Output[0]] = a.GetT()
					types[n.Output[0]] = onnxpb.TensorProto_DataType(a.GetT().GetDataType())
				}
			}
			nodes = append(nodes, n)
			continue
		case "Cast":
			for _, a := range n.GetAttribute() {
				if a.GetName() == "to" {
					types[n.Output[0]] = onnxpb.TensorProto_DataType(a.GetI())
				}
			}
			nodes = append(nodes, n)
			continue
		case "ConstantOfShape":
			types[n.Output[0]] = onnxpb.TensorProto_FLOAT
			for _, a := range n.GetAttribute() {
				if a.GetName() == "value" {
					types[n.Output[0]] = onnxpb.TensorProto_DataType(a.GetT().GetDataType())
				}
			}
			nodes = append(nodes, n)
			continue
		}
		var t onnxpb.TensorProto_DataType
		found := false
		for _, in := range n.Input {
			if _, c := consts[in]; !c && in != "" && isFloatType(types[in]) {
				t, found = types[in], true
				break
			}
		}
		if !found && len(n.Input) > 0 {
			t = types[n.Input[0]]
		}
		if op == "BatchNormalization" && len(n.Input) == 5 {
			// Scale and bias share a type (T1), mean and variance another
			// (T2): a constant takes its partner weight's.
			for _, pair := range [][2]int{{1, 2}, {3, 4}} {
				for k := range 2 {
					c, ok := consts[n.Input[pair[k]]]
					partner := n.Input[pair[1-k]]
					if _, pc := consts[partner]; ok && !pc && types[partner] != types[n.Input[pair[k]]] {
						if err := convertConst(c, types[partner]); err != nil {
							return nil, err
						}
						types[n.Input[pair[k]]] = types[partner]
					}
				}
			}
		}
		if found {
			for i, in := range n.Input {
				have := types[in]
				if in == "" || !isFloatType(have) || have == t || keepsOwnType(op, i) {
					continue
				}
				if c, ok := consts[in]; ok {
					if err := convertConst(c, t); err != nil {
						return nil, err
					}
					types[in] = t
					continue
				}
				cast := fresh("Cast")
				nodes = append(nodes, &onnxpb.NodeProto{OpType: proto.String("Cast"), Name: proto.String(cast), Input: []string{in}, Output: []string{cast},
					Attribute: []*onnxpb.AttributeProto{{Name: proto.String("to"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(int64(t))}}})
				types[cast] = t
				n.Input[i] = cast
			}
		}
		for _, o := range n.Output {
			types[o] = outType(op, t)
		}
		nodes = append(nodes, n)
	}
	g.Node = nodes
	return types, nil
}

// convertConst rewrites a float32 constant as type t.
func convertConst(c *onnxpb.TensorProto, t onnxpb.TensorProto_DataType) error {
	vals, shape, err := hostTensor(c)
	if err != nil {
		return err
	}
	f, ok := vals.([]float32)
	if !ok {
		return fmt.Errorf("constant %s is %v, not float32", c.GetName(), onnxpb.TensorProto_DataType(c.GetDataType()))
	}
	v := make([]float64, len(f))
	for j, x := range f {
		v[j] = float64(x)
	}
	*c = *floatTensorOf(c.GetName(), v, shape, t)
	return nil
}

// prune drops the nodes and initializers nothing reaches the output
// through (a block's form may write a constant it then does not use).
func prune(g *onnxpb.GraphProto, outs ...string) {
	need := map[string]bool{}
	for _, o := range outs {
		need[o] = true
	}
	keep := make([]bool, len(g.Node))
	for i := len(g.Node) - 1; i >= 0; i-- {
		n := g.Node[i]
		for _, o := range n.Output {
			if need[o] {
				keep[i] = true
			}
		}
		if keep[i] {
			for _, in := range n.Input {
				need[in] = true
			}
		}
	}
	nodes := g.Node[:0]
	for i, n := range g.Node {
		if keep[i] {
			nodes = append(nodes, n)
		}
	}
	g.Node = nodes
	inits := g.Initializer[:0]
	for _, t := range g.Initializer {
		if need[t.GetName()] {
			inits = append(inits, t)
		}
	}
	g.Initializer = inits
}

// outType is the element type of an op's outputs given its data type.
func outType(op string, t onnxpb.TensorProto_DataType) onnxpb.TensorProto_DataType {
	switch {
	case slices.Contains([]string{"Shape", "Size", "ArgMax", "ArgMin", "NonZero"}, op):
		return onnxpb.TensorProto_INT64
	case slices.Contains([]string{"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf"}, op):
		return onnxpb.TensorProto_BOOL
	}
	return t
}
