package onnx_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
)

func attrInt(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

// oneNodeModel: a one-node model whose named inputs are graph inputs, nout outputs.
func oneNodeModel(t *testing.T, op string, opset int, inputs []string, nout int, attrs ...*onnxpb.AttributeProto) *onnx.Model {
	t.Helper()
	var outs []string
	for i := range nout {
		outs = append(outs, fmt.Sprintf("y%d", i))
	}
	g := &onnxpb.GraphProto{Name: proto.String("g"),
		Node: []*onnxpb.NodeProto{{OpType: proto.String(op), Name: proto.String("n"), Input: inputs, Output: outs, Attribute: attrs}}}
	for _, o := range outs {
		g.Output = append(g.Output, &onnxpb.ValueInfoProto{Name: proto.String(o)})
	}
	for _, in := range inputs {
		if in != "" {
			g.Input = append(g.Input, &onnxpb.ValueInfoProto{Name: proto.String(in)})
		}
	}
	data, err := proto.Marshal(&onnxpb.ModelProto{Graph: g, OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(int64(opset))}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func runCaught(m *onnx.Model, in ...*nd.NDArray) (out []*nd.NDArray, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Go panic: %v", r)
		}
	}()
	err = nd.Catch(func() { out = m.ForwardMulti(in...) })
	return out, err
}

var nmsBoxes = []float32{0, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1, 2, 0.5, 0.5, 1.5, 1.5, 2, 2, 2, 3, 2, 2, 2, 3, 0, 0, 0.9, 1}
var nmsScores = []float32{0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.9}

// TestImportNMSMaxOutputInt64Max: exporters (torchvision, tf2onnx) often
// write INT64_MAX as max_output_boxes_per_class; onnxruntime 1.19.2 keeps
// every box that survives suppression ([0 0 0] [0 0 2] [0 0 3] [0 0 4] [0 0 5]).
// The expected values in this file are onnxruntime 1.19.2's.
func TestImportNMSMaxOutputInt64Max(t *testing.T) {
	dev := ctx.CPU(0)
	m := oneNodeModel(t, "NonMaxSuppression", 11, []string{"b", "s", "m", "i"}, 1)
	out, err := runCaught(m, nd.FromSlice(dev, nmsBoxes, 1, 7, 4), nd.FromSlice(dev, nmsScores, 1, 1, 7),
		nd.FromSlice(dev, []int64{math.MaxInt64}, 1), nd.FromSlice(dev, []float32{0.5}, 1))
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{0, 0, 0, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0, 0, 5}
	if got := out[0].Int64s(); !slices.Equal(got, want) {
		t.Errorf("NMS with max_output_boxes_per_class = INT64_MAX: got %v (shape %v), onnxruntime %v", got, out[0].Shape(), want)
	}
}

// TestImportNMSEdges: cases that agree with onnxruntime 1.19.2 (kept as a
// record) and a negative iou_threshold, which onnxruntime rejects.
func TestImportNMSEdges(t *testing.T) {
	dev := ctx.CPU(0)
	b, s := nd.FromSlice(dev, nmsBoxes, 1, 7, 4), nd.FromSlice(dev, nmsScores, 1, 1, 7)
	i64 := func(v int64) *nd.NDArray { return nd.FromSlice(dev, []int64{v}, 1) }
	f32 := func(v float32) *nd.NDArray { return nd.FromSlice(dev, []float32{v}, 1) }
	cases := []struct {
		name   string
		inputs []string
		args   []*nd.NDArray
		centre bool
		want   []int64
	}{
		{"iou 0", []string{"b", "s", "m", "i"}, []*nd.NDArray{b, s, i64(10), f32(0)}, false, []int64{0, 0, 0, 0, 0, 2, 0, 0, 4, 0, 0, 5}},
		{"threshold 0.6", []string{"b", "s", "m", "i", "t"}, []*nd.NDArray{b, s, i64(10), f32(0.5), f32(0.6)}, false, []int64{0, 0, 0, 0, 0, 2, 0, 0, 3}},
		{"no threshold", []string{"b", "s", "m", "i"}, []*nd.NDArray{b, s, i64(10), f32(0.5)}, false, []int64{0, 0, 0, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0, 0, 5}},
		{"max 0", []string{"b", "s", "m", "i"}, []*nd.NDArray{b, s, i64(0), f32(0.5)}, false, []int64{}},
		{"max -1", []string{"b", "s", "m", "i"}, []*nd.NDArray{b, s, i64(-1), f32(0.5)}, false, []int64{}},
		{"no max", []string{"b", "s"}, []*nd.NDArray{b, s}, false, []int64{}},
		{"centre", []string{"b", "s", "m", "i"}, []*nd.NDArray{b, s, i64(10), f32(0.3)}, true, []int64{0, 0, 0, 0, 0, 2, 0, 0, 3, 0, 0, 4}},
		{"empty", []string{"b", "s", "m", "i"}, []*nd.NDArray{nd.Zeros(dev, nd.Float32, 1, 0, 4), nd.Zeros(dev, nd.Float32, 1, 2, 0), i64(3), f32(0.5)}, false, []int64{}},
	}
	for _, c := range cases {
		var attrs []*onnxpb.AttributeProto
		if c.centre {
			attrs = append(attrs, attrInt("center_point_box", 1))
		}
		m := oneNodeModel(t, "NonMaxSuppression", 11, c.inputs, 1, attrs...)
		out, err := runCaught(m, c.args...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := out[0].Int64s(); !slices.Equal(got, c.want) || out[0].Shape()[1] != 3 {
			t.Errorf("%s: got %v %v, onnxruntime %v", c.name, got, out[0].Shape(), c.want)
		}
	}
}

// TestImportUniqueInt64Precision: int64 values above 2^53 stay distinct
// (compared as float64 they merged); onnxruntime keeps three values
// [5, 2^53, 2^53+1] with counts [1 1 2] and inverse [1 2 0 2].
func TestImportUniqueInt64Precision(t *testing.T) {
	dev := ctx.CPU(0)
	m := oneNodeModel(t, "Unique", 11, []string{"x"}, 4)
	out, err := runCaught(m, nd.FromSlice(dev, []int64{1 << 53, 1<<53 + 1, 5, 1<<53 + 1}, 4))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out[0].Int64s(), []int64{5, 1 << 53, 1<<53 + 1}; !slices.Equal(got, want) {
		t.Errorf("values %v, onnxruntime %v", got, want)
	}
	if got, want := out[3].Int64s(), []int64{1, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("counts %v, onnxruntime %v", got, want)
	}
	if got, want := out[2].Int64s(), []int64{1, 2, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("inverse %v, onnxruntime %v", got, want)
	}
}

// TestImportUniqueEdges: empty, negative axis, float16, scalar; onnxruntime's.
func TestImportUniqueEdges(t *testing.T) {
	dev := ctx.CPU(0)
	x2 := nd.FromSlice(dev, []float32{1, 0, 1, 2, 3, 2, 1, 0, 1}, 3, 3)
	cases := []struct {
		name          string
		attrs         []*onnxpb.AttributeProto
		x             *nd.NDArray
		vals          []float64
		vshape        []int
		idx, inv, cnt []int64
	}{
		{"empty", nil, nd.Zeros(dev, nd.Float32, 0), []float64{}, []int{0}, []int64{}, []int64{}, []int64{}},
		{"empty axis 0", []*onnxpb.AttributeProto{attrInt("axis", 0)}, nd.Zeros(dev, nd.Float32, 0, 3), []float64{}, []int{0, 3}, []int64{}, []int64{}, []int64{}},
		{"axis -1", []*onnxpb.AttributeProto{attrInt("axis", -1)}, x2, []float64{0, 1, 3, 2, 0, 1}, []int{3, 2}, []int64{1, 0}, []int64{1, 0, 1}, []int64{1, 2}},
		{"axis -1 unsorted", []*onnxpb.AttributeProto{attrInt("axis", -1), attrInt("sorted", 0)}, x2, []float64{1, 0, 2, 3, 1, 0}, []int{3, 2}, []int64{0, 1}, []int64{0, 1, 0}, []int64{2, 1}},
		{"float16 unsorted", []*onnxpb.AttributeProto{attrInt("sorted", 0)}, nd.FromSlice(dev, []float32{3, 1, 2, 1, 3}, 5).AsType(nd.Float16), []float64{3, 1, 2}, []int{3}, []int64{0, 1, 2}, []int64{0, 1, 2, 1, 0}, []int64{2, 2, 1}},
		{"scalar", nil, nd.Reshape(nd.FromSlice(dev, []float32{4}, 1)), []float64{4}, []int{1}, []int64{0}, []int64{0}, []int64{1}},
	}
	for _, c := range cases {
		m := oneNodeModel(t, "Unique", 11, []string{"x"}, 4, c.attrs...)
		out, err := runCaught(m, c.x)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if out[0].DType() != c.x.DType() || !slices.Equal(out[0].Shape(), c.vshape) || !slices.Equal(out[0].AsType(nd.Float64).Float64s(), c.vals) {
			t.Errorf("%s: values %v %v %v, onnxruntime %v %v", c.name, out[0].DType(), out[0].Shape(), out[0].AsType(nd.Float64).Float64s(), c.vshape, c.vals)
		}
		for k, w := range [][]int64{c.idx, c.inv, c.cnt} {
			if got := out[k+1].Int64s(); !slices.Equal(got, w) {
				t.Errorf("%s: output %d %v, onnxruntime %v", c.name, k+1, got, w)
			}
		}
	}
}

// TestImportWindowsDet: output_datatype float16/double, int32 size; Det of float16 and empty batches.
func TestImportWindowsDet(t *testing.T) {
	dev := ctx.CPU(0)
	for _, c := range []struct {
		op   string
		want []float64
	}{
		{"HannWindow", []float64{0, 0.5, 1, 0.5, 0}},
		{"HammingWindow", []float64{0.0869565, 0.5434783, 1, 0.5434783, 0.0869565}},
		{"BlackmanWindow", []float64{0, 0.34, 1, 0.34, 0}},
	} {
		m := oneNodeModel(t, c.op, 17, []string{"n"}, 1, attrInt("output_datatype", 11), attrInt("periodic", 0))
		out, err := runCaught(m, nd.Reshape(nd.FromSlice(dev, []int32{5}, 1)))
		if err != nil {
			t.Errorf("%s: %v", c.op, err)
			continue
		}
		got := out[0].Float64s()
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-6 {
				t.Errorf("%s: %v, want %v", c.op, got, c.want)
				break
			}
		}
		m = oneNodeModel(t, c.op, 17, []string{"n"}, 1, attrInt("output_datatype", 10))
		out, err = runCaught(m, nd.Reshape(nd.FromSlice(dev, []int64{4}, 1)))
		if err != nil || out[0].DType() != nd.Float16 {
			t.Errorf("%s float16: %v", c.op, err)
		}
	}
	m := oneNodeModel(t, "Det", 11, []string{"x"}, 1)
	out, err := runCaught(m, nd.FromSlice(dev, []float32{1, 2, 3, 4}, 2, 2).AsType(nd.Float16))
	if err != nil {
		t.Errorf("Det float16: %v (onnxruntime: -2)", err)
	} else if v := out[0].AsType(nd.Float64).Float64s(); len(v) != 1 || math.Abs(v[0]+2) > 1e-2 {
		t.Errorf("Det float16: %v, onnxruntime -2", v)
	}
	out, err = runCaught(m, nd.Zeros(dev, nd.Float32, 0, 2, 2))
	if err != nil {
		t.Errorf("Det of an empty batch: %v (onnxruntime: shape [0])", err)
	} else if !slices.Equal(out[0].Shape(), []int{0}) {
		t.Errorf("Det of an empty batch: shape %v, onnxruntime [0]", out[0].Shape())
	}
}

// TestImportNMSMultiBatchClass: 2 batches (the second with flipped
// corners), 3 classes, tied scores, per-class limits; onnxruntime 1.19.2's.
func TestImportNMSMultiBatchClass(t *testing.T) {
	dev := ctx.CPU(0)
	b := nd.FromSlice(dev, []float32{2.2031915187835693, 2.8325912952423096, 3.0162312984466553, 3.7704718112945557, 1.1636189222335815, 2.0433104038238525, 1.7020900249481201, 2.6268959045410156, 3.5717878341674805, 3.585172414779663, 4.487160682678223, 5.306240081787109, 0.5023412704467773, 0.8289715051651001, 1.67484712600708, 1.3959472179412842, 0.20586881041526794, 1.7632393836975098, 0.7618237733840942, 2.672483444213867, 0.11950484663248062, 1.827332854270935, 0.5303255319595337, 2.230090379714966, 2.59657621383667, 1.113949179649353, 3.6246461868286133, 1.2884079217910767, 2.70501971244812, 2.3634512424468994, 3.6721906661987305, 3.087803602218628, 0.09592752903699875, 2.2354164123535156, 1.5113006830215454, 3.7289090156555176, 1.037009835243225, 1.6604048013687134, 2.4191956520080566, 3.0387656688690186, 1.8813005685806274, 2.7725517749786377, 1.134100317955017, 4.108821392059326, 2.441512107849121, 0.6274709701538086, 1.761814832687378, 1.7730586528778076, 2.8302102088928223, 3.1212589740753174, 2.178596019744873, 4.01154899597168, 1.3485119342803955, 0.8878315091133118, 1.2254540920257568, 1.3731822967529297, 3.4950902462005615, 3.745534658432007, 1.5518850088119507, 4.206703186035156, 5.2869367599487305, 2.6895346641540527, 3.9039816856384277, 3.9904885292053223, 5.0592145919799805, 3.3830034732818604, 3.6113364696502686, 4.3331804275512695, 2.70530366897583, 0.36886802315711975, 1.5119761228561401, 0.5028069019317627, 2.75876784324646, 2.23136305809021, 2.6136436462402344, 2.629315137863159, 1.7499810457229614, 0.9002180099487305, 1.4462590217590332, 1.1004266738891602}, 2, 10, 4)
	s := nd.FromSlice(dev, []float32{0.10000000149011612, 0.6000000238418579, 0.20000000298023224, 1.0, 0.699999988079071, 0.5, 0.699999988079071, 0.30000001192092896, 0.8999999761581421, 0.800000011920929, 0.699999988079071, 0.5, 0.800000011920929, 0.699999988079071, 0.699999988079071, 0.8999999761581421, 0.6000000238418579, 0.4000000059604645, 0.6000000238418579, 0.20000000298023224, 0.20000000298023224, 0.699999988079071, 0.800000011920929, 1.0, 0.8999999761581421, 0.5, 0.10000000149011612, 0.5, 0.8999999761581421, 0.800000011920929, 0.5, 0.5, 0.20000000298023224, 0.20000000298023224, 0.10000000149011612, 0.8999999761581421, 0.6000000238418579, 0.10000000149011612, 0.4000000059604645, 0.0, 0.20000000298023224, 0.699999988079071, 0.699999988079071, 0.5, 0.30000001192092896, 0.699999988079071, 1.0, 0.4000000059604645, 0.10000000149011612, 0.10000000149011612, 0.10000000149011612, 1.0, 0.5, 0.800000011920929, 0.20000000298023224, 0.30000001192092896, 0.699999988079071, 0.8999999761581421, 0.30000001192092896, 0.10000000149011612}, 2, 3, 10)
	for _, c := range []struct {
		centre bool
		args   []*nd.NDArray
		inputs []string
		want   []int64
	}{
		{false, []*nd.NDArray{b, s, nd.FromSlice(dev, []int64{3}, 1), nd.FromSlice(dev, []float32{0.3}, 1), nd.FromSlice(dev, []float32{0.2}, 1)}, []string{"b", "s", "m", "i", "t"},
			[]int64{0, 0, 3, 0, 0, 8, 0, 0, 9, 0, 1, 5, 0, 1, 2, 0, 1, 0, 0, 2, 3, 0, 2, 4, 0, 2, 8, 1, 0, 5, 1, 0, 6, 1, 0, 0, 1, 1, 6, 1, 1, 1, 1, 1, 2, 1, 2, 1, 1, 2, 7, 1, 2, 3}},
		{true, []*nd.NDArray{b, s, nd.FromSlice(dev, []int64{4}, 1), nd.FromSlice(dev, []float32{0.4}, 1)}, []string{"b", "s", "m", "i"},
			[]int64{0, 0, 3, 0, 0, 8, 0, 0, 9, 0, 0, 4, 0, 1, 5, 0, 1, 2, 0, 1, 0, 0, 1, 3, 0, 2, 3, 0, 2, 4, 0, 2, 8, 0, 2, 2, 1, 0, 5, 1, 0, 0, 1, 0, 1, 1, 0, 8, 1, 1, 6, 1, 1, 1, 1, 1, 2, 1, 1, 3, 1, 2, 1, 1, 2, 7, 1, 2, 3, 1, 2, 6}},
	} {
		var attrs []*onnxpb.AttributeProto
		if c.centre {
			attrs = append(attrs, attrInt("center_point_box", 1))
		}
		out, err := runCaught(oneNodeModel(t, "NonMaxSuppression", 11, c.inputs, 1, attrs...), c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if got := out[0].Int64s(); !slices.Equal(got, c.want) {
			t.Errorf("centre %v: %v\n onnxruntime %v", c.centre, got, c.want)
		}
	}
}

// TestImportUniqueAxisLexOrder: slices along the last axis of a 3-D input
// are compared in the other axes' row-major order (SwapAxes put d1 before
// d0); onnxruntime sorts x[:, :, 1] before
// x[:, :, 0] here: values [0 0 0 1 1 0 0 0], indices [1 0], inverse [1 0].
func TestImportUniqueAxisLexOrder(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{0, 0, 1, 0, 0, 1, 0, 0}, 2, 2, 2)
	out, err := runCaught(oneNodeModel(t, "Unique", 11, []string{"x"}, 4, attrInt("axis", 2)), x)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out[0].AsType(nd.Float64).Float64s(), []float64{0, 0, 0, 1, 1, 0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("values %v, onnxruntime %v", got, want)
	}
	if got, want := out[1].Int64s(), []int64{1, 0}; !slices.Equal(got, want) {
		t.Errorf("indices %v, onnxruntime %v", got, want)
	}
	if got, want := out[2].Int64s(), []int64{1, 0}; !slices.Equal(got, want) {
		t.Errorf("inverse %v, onnxruntime %v", got, want)
	}
}
