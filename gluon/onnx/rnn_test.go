package onnx_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
)

// recurrentModel builds a one-node model of op (LSTM, GRU or RNN) in the
// given direction with random weights; its inputs are X and, when lens is
// set, sequence_lens.
func recurrentModel(t *testing.T, op, dir string, in, hidden int, lens bool) *onnx.Model {
	t.Helper()
	gates := map[string]int{"LSTM": 4, "GRU": 3, "RNN": 1}[op]
	dirs := 1
	if dir == "bidirectional" {
		dirs = 2
	}
	r := rand.New(rand.NewPCG(1, 2))
	tensor := func(name string, shape ...int) *onnxpb.TensorProto {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.Float64() - 0.5)
		}
		dims := make([]int64, len(shape))
		for i, d := range shape {
			dims[i] = int64(d)
		}
		return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: dims, FloatData: v}
	}
	inputs := []string{"x", "W", "R", "B", ""}
	graphIn := []*onnxpb.ValueInfoProto{{Name: proto.String("x")}}
	if lens {
		inputs[4] = "lens"
		graphIn = append(graphIn, &onnxpb.ValueInfoProto{Name: proto.String("lens")})
	}
	outs := []string{"y", "yh"}
	if op == "LSTM" {
		outs = append(outs, "yc")
	}
	node := &onnxpb.NodeProto{OpType: proto.String(op), Input: inputs, Output: outs, Attribute: []*onnxpb.AttributeProto{
		{Name: proto.String("direction"), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(dir)},
		{Name: proto.String("hidden_size"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(int64(hidden))},
	}}
	var graphOut []*onnxpb.ValueInfoProto
	for _, o := range outs {
		graphOut = append(graphOut, &onnxpb.ValueInfoProto{Name: proto.String(o)})
	}
	g := &onnxpb.GraphProto{Name: proto.String("g"), Input: graphIn, Output: graphOut, Node: []*onnxpb.NodeProto{node},
		Initializer: []*onnxpb.TensorProto{
			tensor("W", dirs, gates*hidden, in), tensor("R", dirs, gates*hidden, hidden), tensor("B", dirs, 2*gates*hidden)}}
	m, err := onnx.Load(writeModel(t, &onnxpb.ModelProto{Graph: g, OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(14)}}}))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRecurrentSequenceLengths: with sequence_lens, each batch entry's
// outputs equal a run on that entry alone cut to its length (the reverse
// direction starting from its last valid step), its outputs past the
// length are zero, and its final states are those of its last valid step.
func TestRecurrentSequenceLengths(t *testing.T) {
	const T, in, hidden = 5, 3, 4
	lens := []int32{3, 5, 1}
	for _, op := range []string{"LSTM", "GRU", "RNN"} {
		for _, dir := range []string{"forward", "reverse", "bidirectional"} {
			t.Run(fmt.Sprintf("%s/%s", op, dir), func(t *testing.T) {
				batched := recurrentModel(t, op, dir, in, hidden, true)
				alone := recurrentModel(t, op, dir, in, hidden, false)
				N := len(lens)
				xs := make([]float32, T*N*in)
				for i := range xs {
					xs[i] = float32(math.Sin(float64(i)))
				}
				x := nd.FromSlice(ctx.CPU(0), xs, T, N, in)
				outs := batched.ForwardMulti(x, nd.FromSlice(ctx.CPU(0), lens, N))
				y := outs[0] // [T, D, N, H]
				D := y.Shape()[1]
				for b, l := range lens {
					xb := nd.SliceAxis(nd.SliceAxis(x, b, b+1, 1), 0, int(l), 0)
					ref := alone.ForwardMulti(xb)
					yb := nd.SliceAxis(y, b, b+1, 2)
					if d := maxDiff(nd.SliceAxis(yb, 0, int(l), 0), ref[0]); d > 1e-6 {
						t.Errorf("entry %d: Y differs from its run alone by %g", b, d)
					}
					if l < T {
						if d := maxDiff(nd.SliceAxis(yb, int(l), T, 0), nd.Zeros(ctx.CPU(0), nd.Float32, T-int(l), D, 1, hidden)); d != 0 {
							t.Errorf("entry %d: Y past its length is not zero", b)
						}
					}
					for k := 1; k < len(outs); k++ {
						if d := maxDiff(nd.SliceAxis(outs[k], b, b+1, 1), ref[k]); d > 1e-6 {
							t.Errorf("entry %d: final state %d differs from its run alone by %g", b, k, d)
						}
					}
				}
			})
		}
	}
}

func maxDiff(a, b *nd.NDArray) float64 {
	x, y := a.Float32s(), b.Float32s()
	if len(x) != len(y) {
		return math.Inf(1)
	}
	var d float64
	for i := range x {
		d = max(d, math.Abs(float64(x[i]-y[i])))
	}
	return d
}
