package onnx_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
)

// TestLoadRefusesMalformedGraphs: initializers whose sizes do not add
// up, duplicate names and values nothing defines are refused at Load,
// naming what is wrong, instead of loading (or panicking) and failing
// later.
func TestLoadRefusesMalformedGraphs(t *testing.T) {
	str := proto.String
	float := int32(onnxpb.TensorProto_FLOAT)
	init := func(name string, dims []int64, raw []byte, v ...float32) *onnxpb.TensorProto {
		return &onnxpb.TensorProto{Name: str(name), DataType: &float, Dims: dims, RawData: raw, FloatData: v}
	}
	// y = x + w, with w and the graph given by each case.
	model := func(inits []*onnxpb.TensorProto, nodes []*onnxpb.NodeProto, output string) *onnxpb.ModelProto {
		if nodes == nil {
			nodes = []*onnxpb.NodeProto{{OpType: str("Add"), Input: []string{"x", "w"}, Output: []string{"y"}}}
		}
		return &onnxpb.ModelProto{
			OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(13)}},
			Graph: &onnxpb.GraphProto{Name: str("g"), Input: []*onnxpb.ValueInfoProto{{Name: str("x")}},
				Output: []*onnxpb.ValueInfoProto{{Name: str(output)}}, Initializer: inits, Node: nodes},
		}
	}
	one := []*onnxpb.TensorProto{init("w", []int64{1}, nil, 1)}
	for _, c := range []struct {
		name string
		m    *onnxpb.ModelProto
		want string
	}{
		{"dimensions overflow", model([]*onnxpb.TensorProto{init("w", []int64{1 << 32, 1 << 32}, nil)}, nil, "y"), "more than 2^31 elements"},
		{"raw data too long", model([]*onnxpb.TensorProto{init("w", []int64{1}, []byte{0, 0, 0x80, 0x3f, 0xaa, 0xbb, 0xcc})}, nil, "y"), "7 bytes of raw data"},
		{"raw data too short", model([]*onnxpb.TensorProto{init("w", []int64{2}, []byte{0, 0, 0x80, 0x3f})}, nil, "y"), "4 bytes of raw data"},
		{"duplicate initializers", model(append(one, init("w", []int64{1}, nil, 5)), nil, "y"), `two initializers are named "w"`},
		{"output never produced", model(one, []*onnxpb.NodeProto{{OpType: str("Relu"), Input: []string{"x"}, Output: []string{"z"}}}, "y"), `graph output "y"`},
		{"input never defined", model(one, []*onnxpb.NodeProto{{OpType: str("Add"), Input: []string{"x", "v"}, Output: []string{"y"}}}, "y"), `reads "v"`},
		{"read before written", model(one, []*onnxpb.NodeProto{
			{OpType: str("Relu"), Input: []string{"z"}, Output: []string{"y"}},
			{OpType: str("Neg"), Input: []string{"x"}, Output: []string{"z"}},
		}, "y"), `reads "z"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := onnx.Load(writeModel(t, c.m))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
	if _, err := onnx.Load(writeModel(t, model(one, nil, "y"))); err != nil {
		t.Fatalf("the well-formed model: %v", err)
	}
}
