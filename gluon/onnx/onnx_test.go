package onnx_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// TestTorchExports: models exported by torch.onnx.export (testdata/
// make_onnx.py: torchvision's ResNet-18, MobileNetV2, a small ViT, and a
// decoder of nn.Upsample layers)
// import and give torchvision's outputs within 1e-4 relative.
func TestTorchExports(t *testing.T) {
	for _, name := range []string{"resnet18", "mobilenetv2", "vit", "upsample"} {
		t.Run(name, func(t *testing.T) {
			m, err := onnx.Load(filepath.Join("testdata", name+".onnx"))
			if err != nil {
				t.Fatal(err)
			}
			f, err := safetensors.ReadFile(filepath.Join("testdata", name+"_io.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			in, _ := f.Tensors["input"].Float32s()
			want, _ := f.Tensors["output"].Float32s()
			x := nd.FromSlice(ctx.CPU(0), in, f.Tensors["input"].Shape...)
			var got []float32
			if err := nd.Catch(func() { autograd.PredictMode(func() { got = m.Forward(x).Float32s() }) }); err != nil {
				t.Fatal(err)
			}
			var d, s float64
			for i := range want {
				d = max(d, math.Abs(float64(got[i]-want[i])))
				s = max(s, math.Abs(float64(want[i])))
			}
			if d/s > 1e-4 {
				t.Errorf("relative error %.3g", d/s)
			}
			t.Logf("%s: opset %d, relative error %.3g", name, m.Opset, d/s)
		})
	}
}

// writeModel marshals a model proto to a file in t's temporary directory.
func writeModel(t *testing.T, m *onnxpb.ModelProto) string {
	t.Helper()
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadErrors(t *testing.T) {
	str := proto.String
	graph := func(ops ...string) *onnxpb.ModelProto {
		g := &onnxpb.GraphProto{Name: str("g"), Input: []*onnxpb.ValueInfoProto{{Name: str("x")}}, Output: []*onnxpb.ValueInfoProto{{Name: str("y")}}}
		prev := "x"
		for i, op := range ops {
			out := fmt.Sprintf("t%d", i)
			if i == len(ops)-1 {
				out = "y"
			}
			g.Node = append(g.Node, &onnxpb.NodeProto{OpType: str(op), Input: []string{prev}, Output: []string{out}})
			prev = out
		}
		return &onnxpb.ModelProto{Graph: g, OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(13)}}}
	}
	t.Run("every unsupported op is listed", func(t *testing.T) {
		_, err := onnx.Load(writeModel(t, graph("Relu", "Frobnicate", "Relu", "Mystery", "Frobnicate")))
		if err == nil || !strings.Contains(err.Error(), "2 unsupported op types: Frobnicate, Mystery") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a supported graph runs", func(t *testing.T) {
		m, err := onnx.Load(writeModel(t, graph("Relu", "Neg", "Exp")))
		if err != nil {
			t.Fatal(err)
		}
		y := m.Forward(nd.FromSlice(ctx.CPU(0), []float32{-1, 0, 2}, 3)).Float32s()
		if want := float32(math.Exp(-2)); y[0] != 1 || y[1] != 1 || math.Abs(float64(y[2]-want)) > 1e-7 {
			t.Fatalf("exp(-relu(x)) = %v", y)
		}
	})
	t.Run("not a model", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "junk.onnx")
		if err := os.WriteFile(path, []byte("\xff\xff\xff\xffnot protobuf"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := onnx.Load(path); err == nil || !strings.Contains(err.Error(), "not an ONNX model") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		if _, err := onnx.Load(filepath.Join(t.TempDir(), "none.onnx")); err == nil {
			t.Fatal("loading a missing file succeeded")
		}
	})
}

// TestFineTune: an imported model's initializers are Parameters that a
// Trainer updates; the loss goes down.
func TestFineTune(t *testing.T) {
	m, err := onnx.Load(filepath.Join("testdata", "resnet18.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	params := gluon.CollectParams(m)
	if params.Len() < 20 {
		t.Fatalf("%d parameters", params.Len())
	}
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.05), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := safetensors.ReadFile(filepath.Join("testdata", "resnet18_io.safetensors"))
	in, _ := f.Tensors["input"].Float32s()
	x := nd.FromSlice(ctx.CPU(0), in, f.Tensors["input"].Shape...)
	y := nd.FromSlice(ctx.CPU(0), []float32{3, 7})
	lossFn := loss.NewSoftmaxCrossEntropy()
	var first, last float64
	for i := range 5 {
		var l *nd.NDArray
		autograd.Record(func() {
			l = nd.Mean(lossFn.Forward(m.Forward(x), y))
			autograd.Backward(l)
		})
		if err := tr.Step(2); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = l.Scalar()
		}
		last = l.Scalar()
	}
	if !(last < first) {
		t.Fatalf("loss %g -> %g", first, last)
	}
}
