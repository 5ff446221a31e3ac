package onnx_test

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
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

// TestSliceReversesThroughZero: a Slice with a negative step ending
// before index 0 (ONNX's INT64_MIN, or -dim-1; torch.onnx writes it for
// torch.flip) reverses the axis; it failed at run time.
func TestSliceReversesThroughZero(t *testing.T) {
	str := proto.String
	i64 := int32(onnxpb.TensorProto_INT64)
	ints := func(name string, v ...int64) *onnxpb.TensorProto {
		return &onnxpb.TensorProto{Name: str(name), DataType: &i64, Dims: []int64{int64(len(v))}, Int64Data: v}
	}
	for _, end := range []int64{math.MinInt64 + 1, math.MinInt64, -6} {
		m := &onnxpb.ModelProto{
			OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(13)}},
			Graph: &onnxpb.GraphProto{Name: str("g"), Input: []*onnxpb.ValueInfoProto{{Name: str("x")}},
				Output:      []*onnxpb.ValueInfoProto{{Name: str("y")}},
				Initializer: []*onnxpb.TensorProto{ints("starts", -1), ints("ends", end), ints("axes", 0), ints("steps", -1)},
				Node:        []*onnxpb.NodeProto{{OpType: str("Slice"), Input: []string{"x", "starts", "ends", "axes", "steps"}, Output: []string{"y"}}}},
		}
		model, err := onnx.Load(writeModel(t, m))
		if err != nil {
			t.Fatal(err)
		}
		var got []float32
		if err := nd.Catch(func() { got = model.Forward(nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, 4, 5}, 5)).Float32s() }); err != nil {
			t.Fatalf("end %d: %v", end, err)
		}
		if !slices.Equal(got, []float32{5, 4, 3, 2, 1}) {
			t.Errorf("end %d: %v, want [5 4 3 2 1]", end, got)
		}
	}
}

// TestLoadedModelTrainsOnlyWeights: an exported network loads with its
// weights as trainable parameters, BatchNorm's running statistics as
// statistics (no gradient) and its constants (a causal mask) as constants;
// a Trainer step used to train them all, turning the mask's -inf to NaN.
func TestLoadedModelTrainsOnlyWeights(t *testing.T) {
	dev := ctx.CPU(0)
	net := nn.NewSequential(nn.NewMultiHeadAttention(8, 2, nn.AttentionOpts{Layout: "NTC", Causal: true}), nn.NewBatchNorm(nn.BatchNormOpts{}))
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := onnx.Save(path, net, []int{2, 5, 8}, onnx.ExportOpts{FixedBatch: true}); err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	params := gluon.CollectParams(m)
	for _, p := range params.List() {
		stat := strings.Contains(p.Name(), "running")
		if stat != (p.GradReq() == nd.GradNull) || strings.HasPrefix(p.Name(), "const") {
			t.Errorf("%s: GradReq %v, statistic %v", p.Name(), p.GradReq(), p.Statistic)
		}
	}
	opt := optimizer.NewSGD(0.1)
	opt.WD = 1e-4
	tr, err := gluon.NewTrainer(params, opt, "device", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 5, 8)
	autograd.Record(func() { autograd.Backward(nd.Sum(nd.Square(m.Forward(x)))) })
	if err := tr.Step(2); err != nil {
		t.Fatal(err)
	}
	var y []float32
	autograd.PredictMode(func() { y = m.Forward(x).Float32s() })
	for i, v := range y {
		if math.IsNaN(float64(v)) {
			t.Fatalf("output %d is NaN after a training step", i)
		}
	}
}
