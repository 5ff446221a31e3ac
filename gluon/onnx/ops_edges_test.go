package onnx_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
)

// attr makes a node attribute of an int, float64, string or []int64.
func attr(name string, v any) *onnxpb.AttributeProto {
	a := &onnxpb.AttributeProto{Name: proto.String(name)}
	switch v := v.(type) {
	case int:
		a.Type, a.I = onnxpb.AttributeProto_INT.Enum(), proto.Int64(int64(v))
	case float64:
		a.Type, a.F = onnxpb.AttributeProto_FLOAT.Enum(), proto.Float32(float32(v))
	case string:
		a.Type, a.S = onnxpb.AttributeProto_STRING.Enum(), []byte(v)
	case []int64:
		a.Type, a.Ints = onnxpb.AttributeProto_INTS.Enum(), v
	}
	return a
}

// nodeModel loads a one-node model of op at opset whose inputs (named,
// "" for an omitted one) are the graph's inputs, with one output.
func nodeModel(t *testing.T, op string, opset int, inputs []string, attrs ...*onnxpb.AttributeProto) (*onnx.Model, error) {
	t.Helper()
	g := &onnxpb.GraphProto{Name: proto.String("g"), Output: []*onnxpb.ValueInfoProto{{Name: proto.String("y")}},
		Node: []*onnxpb.NodeProto{{OpType: proto.String(op), Name: proto.String("n"), Input: inputs, Output: []string{"y"}, Attribute: attrs}}}
	for _, in := range inputs {
		if in != "" {
			g.Input = append(g.Input, &onnxpb.ValueInfoProto{Name: proto.String(in)})
		}
	}
	return onnx.Load(writeModel(t, &onnxpb.ModelProto{Graph: g, OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(int64(opset))}}}))
}

// run runs m, turning panics into errors.
func run(m *onnx.Model, in ...*nd.NDArray) (out *nd.NDArray, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Go panic: %v", r)
		}
	}()
	err = nd.Catch(func() { out = m.ForwardMulti(in...)[0] })
	return out, err
}

// TestOpEdgeCases: spec cases the backend tests do not cover (found by a
// review): results and shapes, and malformed inputs that must give an
// error naming the problem rather than a Go panic or a silent answer.
func TestOpEdgeCases(t *testing.T) {
	dev := ctx.CPU(0)
	f32 := func(v []float32, shape ...int) *nd.NDArray { return nd.FromSlice(dev, v, shape...) }
	i64 := func(v []int64, shape ...int) *nd.NDArray { return nd.FromSlice(dev, v, shape...) }
	scalar := func(v float32) *nd.NDArray { return nd.Reshape(f32([]float32{v}, 1)) }
	cases := []struct {
		name    string
		op      string
		opset   int
		inputs  []string
		attrs   []*onnxpb.AttributeProto
		args    []*nd.NDArray
		want    []float64 // nil: an error is wanted
		shape   []int
		errWant string
	}{
		{"TopK k attribute before opset 10", "TopK", 9, []string{"x"}, []*onnxpb.AttributeProto{attr("k", 2), attr("axis", 1)},
			[]*nd.NDArray{f32([]float32{3, 1, 2}, 1, 3)}, []float64{3, 2}, []int{1, 2}, ""},
		{"Range empty, int64", "Range", 13, []string{"a", "b", "c"}, nil,
			[]*nd.NDArray{i64([]int64{5}, 1), i64([]int64{1}, 1), i64([]int64{1}, 1)}, []float64{}, []int{0}, ""},
		{"Range empty, float", "Range", 13, []string{"a", "b", "c"}, nil,
			[]*nd.NDArray{scalar(1), scalar(5), scalar(-1)}, []float64{}, []int{0}, ""},
		{"Range beyond 2^53", "Range", 13, []string{"a", "b", "c"}, nil,
			[]*nd.NDArray{i64([]int64{1<<60 + 1}, 1), i64([]int64{1<<60 + 6}, 1), i64([]int64{2}, 1)}, nil, []int{3}, ""},
		{"ReduceMean of int32", "ReduceMean", 13, []string{"x"}, []*onnxpb.AttributeProto{attr("axes", []int64{1})},
			[]*nd.NDArray{nd.FromSlice(dev, []int32{1, 2, 3, 4}, 2, 2)}, []float64{1, 3}, []int{2, 1}, ""},
		{"GatherElements with shorter indices", "GatherElements", 13, []string{"x", "i"}, []*onnxpb.AttributeProto{attr("axis", 1)},
			[]*nd.NDArray{f32([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 3, 4), i64([]int64{3, 0}, 1, 2)}, []float64{3, 0}, []int{1, 2}, ""},
		{"PRelu of a 0-d input", "PRelu", 13, []string{"x", "s"}, nil, []*nd.NDArray{scalar(-2), scalar(0.5)}, []float64{-1}, []int{}, ""},
		{"ThresholdedRelu of a 0-d input", "ThresholdedRelu", 13, []string{"x"}, nil, []*nd.NDArray{scalar(2)}, []float64{2}, []int{}, ""},
		{"OneHot of a 0-d index", "OneHot", 13, []string{"i", "d", "v"}, nil,
			[]*nd.NDArray{nd.Reshape(i64([]int64{2}, 1)), i64([]int64{4}, 1), f32([]float32{0, 1}, 2)}, []float64{0, 0, 1, 0}, []int{4}, ""},
		{"OneHot float depth", "OneHot", 13, []string{"i", "d", "v"}, nil,
			[]*nd.NDArray{i64([]int64{3}, 1), f32([]float32{4.7}, 1), f32([]float32{0, 1}, 2)}, []float64{0, 0, 0, 1}, []int{1, 4}, ""},
		{"OneHot negative index before opset 11", "OneHot", 10, []string{"i", "d", "v"}, nil,
			[]*nd.NDArray{i64([]int64{-1}, 1), i64([]int64{3}, 1), f32([]float32{0, 1}, 2)}, []float64{0, 0, 0}, []int{1, 3}, ""},
		{"Softmax before opset 13 on an empty batch", "Softmax", 11, []string{"x"}, nil,
			[]*nd.NDArray{nd.Zeros(dev, nd.Float32, 0, 3)}, []float64{}, []int{0, 3}, ""},
		{"ArgMax axis below -rank", "ArgMax", 13, []string{"x"}, []*onnxpb.AttributeProto{attr("axis", -3)},
			[]*nd.NDArray{f32([]float32{1, 2, 3, 4}, 2, 2)}, nil, nil, "out of range"},
		{"Softmax axis beyond rank before opset 13", "Softmax", 11, []string{"x"}, []*onnxpb.AttributeProto{attr("axis", 3)},
			[]*nd.NDArray{f32([]float32{1, 2, 3, 4}, 2, 2)}, nil, nil, "out of range"},
		{"GatherElements index out of range", "GatherElements", 13, []string{"x", "i"}, nil,
			[]*nd.NDArray{f32([]float32{1, 2}, 2), i64([]int64{2}, 1)}, nil, nil, "out of range"},
		{"NegativeLogLikelihoodLoss target out of range", "NegativeLogLikelihoodLoss", 13, []string{"x", "t"}, nil,
			[]*nd.NDArray{f32([]float32{-1, -2, -3, -4}, 2, 2), i64([]int64{0, 2}, 2)}, nil, nil, "out of range"},
		{"Tile with too few repeats", "Tile", 13, []string{"x", "r"}, nil,
			[]*nd.NDArray{f32([]float32{1, 2, 3, 4}, 2, 2), i64([]int64{2}, 1)}, nil, nil, "repeats"},
		{"Pad cropping more than the axis", "Pad", 13, []string{"x", "p"}, nil,
			[]*nd.NDArray{f32([]float32{1, 2, 3}, 3), i64([]int64{-2, -2}, 2)}, nil, nil, "crop"},
		{"Upsample by a float32 scale out/in keeps out", "Upsample", 9, []string{"x", "s"}, nil,
			[]*nd.NDArray{f32([]float32{0, 1, 2, 3, 4, 5}, 1, 1, 3, 2), f32([]float32{1, 1, float32(7.0 / 3), 1}, 4)},
			[]float64{0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5}, []int{1, 1, 7, 2}, ""},
		{"ScatterElements with shorter indices", "ScatterElements", 13, []string{"x", "i", "u"}, nil,
			[]*nd.NDArray{nd.Zeros(dev, nd.Float32, 3, 4), i64([]int64{1, 0, 2}, 1, 3), f32([]float32{7, 8, 9}, 1, 3)},
			[]float64{0, 8, 0, 0, 7, 0, 0, 0, 0, 0, 9, 0}, []int{3, 4}, ""},
		{"MaxPool ceil mode with asymmetric pads", "MaxPool", 13, []string{"x"},
			[]*onnxpb.AttributeProto{attr("kernel_shape", []int64{1, 2}), attr("strides", []int64{1, 2}), attr("pads", []int64{0, 0, 0, 1}), attr("ceil_mode", 1)},
			[]*nd.NDArray{f32([]float32{1, 2}, 1, 1, 1, 2)}, []float64{2}, []int{1, 1, 1, 1}, ""},
		{"ScatterND updates of the wrong shape", "ScatterND", 13, []string{"x", "i", "u"}, nil,
			[]*nd.NDArray{nd.Zeros(dev, nd.Float32, 4, 3), i64([]int64{0, 2}, 2, 1), nd.Ones(dev, nd.Float32, 3, 2)}, nil, nil, "want [2 3]"},
		{"Conv with a zero stride", "Conv", 13, []string{"x", "w"}, []*onnxpb.AttributeProto{attr("strides", []int64{0, 1})},
			[]*nd.NDArray{nd.Ones(dev, nd.Float32, 1, 1, 3, 3), nd.Ones(dev, nd.Float32, 1, 1, 2, 2)}, nil, nil, "positive kernels, strides"},
		{"TopK with an empty K", "TopK", 13, []string{"x", "k"}, nil,
			[]*nd.NDArray{f32([]float32{1, 2}, 2), i64(nil, 0)}, nil, nil, "one value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := nodeModel(t, c.op, c.opset, c.inputs, c.attrs...)
			if err != nil {
				t.Fatal(err)
			}
			y, err := run(m, c.args...)
			if c.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), c.errWant) || strings.Contains(err.Error(), "Go panic") {
					t.Fatalf("got %v, want an error mentioning %q", err, c.errWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(y.Shape(), c.shape) {
				t.Fatalf("shape %v, want %v", y.Shape(), c.shape)
			}
			if c.want != nil && !slices.Equal(y.Float64s(), c.want) {
				t.Fatalf("values %v, want %v", y.Float64s(), c.want)
			}
		})
	}
	t.Run("Range beyond 2^53 is exact", func(t *testing.T) {
		m, _ := nodeModel(t, "Range", 13, []string{"a", "b", "c"})
		y, err := run(m, i64([]int64{1<<60 + 1}, 1), i64([]int64{1<<60 + 6}, 1), i64([]int64{2}, 1))
		if err != nil {
			t.Fatal(err)
		}
		if got := y.Int64s(); !slices.Equal(got, []int64{1<<60 + 1, 1<<60 + 3, 1<<60 + 5}) {
			t.Fatalf("%v", got)
		}
	})
	t.Run("a required input omitted fails at load", func(t *testing.T) {
		if _, err := nodeModel(t, "CumSum", 13, []string{"x", ""}); err == nil || !strings.Contains(err.Error(), "needs at least 2") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("ReduceProd's gradient with a zero", func(t *testing.T) {
		m, err := nodeModel(t, "ReduceProd", 13, []string{"x"}, attr("keepdims", 0))
		if err != nil {
			t.Fatal(err)
		}
		x := f32([]float32{2, 0, 3, 1, 4}, 5)
		x.AttachGrad(nd.GradWrite)
		var y *nd.NDArray
		autograd.Record(func() {
			y = m.ForwardMulti(x)[0]
			autograd.Backward(y)
		})
		if got := x.Grad().Float64s(); y.Scalar() != 0 || !slices.Equal(got, []float64{0, 24, 0, 0, 0}) {
			t.Fatalf("product %v, gradient %v; want 0 and [0 24 0 0 0]", y.Scalar(), got)
		}
	})
	t.Run("backward through a resize of two axes", func(t *testing.T) {
		// The first axis's result was released while the second's
		// backward read it.
		m, err := nodeModel(t, "Upsample", 9, []string{"x", "s"}, attr("mode", "linear"))
		if err != nil {
			t.Fatal(err)
		}
		x := nd.RandomNormal(dev, nd.Float32, 0, 1, 1, 2, 3, 2)
		x.AttachGrad(nd.GradWrite)
		err = nd.Catch(func() {
			autograd.Record(func() {
				autograd.Backward(nd.Sum(m.ForwardMulti(x, f32([]float32{1, 1, 2, 2}, 4))[0]))
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		// Each output is a convex combination of inputs: the gradients of
		// the sum add up to the number of outputs, 2·6·4.
		total := 0.0
		for _, v := range x.Grad().Float64s() {
			total += v
		}
		if math.Abs(total-48) > 1e-4 {
			t.Fatalf("gradients sum to %v, want 48", total)
		}
	})
}
