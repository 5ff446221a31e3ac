package onnx_test

import (
	"fmt"
	"os"
	"path/filepath"
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
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// TestExportRoundTripDTypes: networks cast to float16, bfloat16 and
// float64 export in that type (initializers, input and output; BatchNorm's
// float32 weights stay float32), load back with weights of that type, and
// give the network's output (float64 within 1e-6, the blocks' constants
// being float32 values; half within 1e-2). make onnx-check runs ONNX's
// checker, with its type checks, on the files.
func TestExportRoundTripDTypes(t *testing.T) {
	dev := ctx.CPU(0)
	nets := map[string]bool{"lenet": true, "inception-like": true, "upsampling": true, "resnet18": true, "transformer-causal": true, "conv1d-norms": true, "transposed-decoder": true, "recurrent-ntc": true, "mlp": true, "transformer-ntc": true, "volumes": true, "seq-pools-activations": true, "pads-pixelshuffle": true}
	for _, tc := range exportNets() {
		if !nets[tc.name] {
			continue
		}
		for _, dt := range []nd.DType{nd.Float16, nd.BFloat16, nd.Float64} {
			t.Run(fmt.Sprintf("%s/%v", tc.name, dt), func(t *testing.T) {
				nd.Seed(5)
				net := tc.net()
				if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
					t.Fatal(err)
				}
				autograd.PredictMode(func() { net.Forward(nd.Zeros(dev, nd.Float32, tc.shape...)) }) // settle deferred shapes
				perturbZeros(gluon.CollectParams(net))
				if err := gluon.Cast(net, dt); err != nil {
					t.Fatal(err)
				}
				dir := os.Getenv(onnxtest.ExportDirEnv)
				if dir == "" {
					dir = t.TempDir()
				}
				path := filepath.Join(dir, fmt.Sprintf("%s-%v.onnx", tc.name, dt))
				err := onnx.Save(path, net, tc.shape, onnx.ExportOpts{FixedBatch: tc.fixed, BatchAxis: tc.axis})
				if err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var mp onnxpb.ModelProto
				if err := proto.Unmarshal(data, &mp); err != nil {
					t.Fatal(err)
				}
				want := map[nd.DType]onnxpb.TensorProto_DataType{nd.Float16: onnxpb.TensorProto_FLOAT16, nd.BFloat16: onnxpb.TensorProto_BFLOAT16, nd.Float64: onnxpb.TensorProto_DOUBLE}[dt]
				for _, v := range []*onnxpb.ValueInfoProto{mp.Graph.Input[0], mp.Graph.Output[0]} {
					if got := onnxpb.TensorProto_DataType(v.GetType().GetTensorType().GetElemType()); got != want {
						t.Errorf("%s is %v, want %v", v.GetName(), got, want)
					}
				}
				m, err := onnx.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := gluon.CollectParams(m).Len(), len(mp.Graph.Initializer); got != want {
					t.Errorf("%d of the %d initializers loaded as weights", got, want)
				}
				for _, p := range gluon.CollectParams(m).List() {
					if p.DType() != dt && p.DType() != nd.Float32 {
						t.Errorf("loaded weight %s is %v", p.Name(), p.DType())
					}
				}
				x := nd.RandomNormal(dev, nd.Float32, 0, 1, tc.shape...).AsType(dt)
				var got, ref []float32
				var y *nd.NDArray
				autograd.PredictMode(func() {
					y = net.Forward(x)
					ref = y.AsType(nd.Float32).Float32s()
					got = m.Forward(x).AsType(nd.Float32).Float32s()
				})
				if os.Getenv(onnxtest.ExportDirEnv) != "" && dt != nd.BFloat16 {
					if err := onnxtest.WriteIO(strings.TrimSuffix(path, ".onnx")+".io.json", x, y); err != nil {
						t.Fatal(err)
					}
				}
				tol := 1e-6
				if dt.IsHalf() {
					tol = 1e-2
				}
				if rel := numcmp.RelL2(got, ref); rel > tol || rel != rel {
					t.Errorf("relative L2 difference %.3g", rel)
				}
			})
		}
	}
}

// TestExportEmbeddingHalf: a float16 network on int64 token ids exports
// (its check used the input's type, int64, to pick the float32
// tolerance, and refused the file).
func TestExportEmbeddingHalf(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(9)
	net := nn.NewSequential(nn.NewEmbedding(10, 4), nn.NewDense(3, nn.DenseOpts{NoFlatten: true}), nn.NewLayerNorm(-1, nn.NormOpts{}))
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	ids := nd.FromSlice(dev, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 0}, 2, 5)
	autograd.PredictMode(func() { net.Forward(ids) })
	if err := gluon.Cast(net, nd.Float16); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "emb.onnx")
	if err := onnx.Save(path, net, []int{2, 5}, onnx.ExportOpts{InputDType: nd.Int64}); err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []float32
	autograd.PredictMode(func() {
		want = net.Forward(ids).AsType(nd.Float32).Float32s()
		got = m.Forward(ids).AsType(nd.Float32).Float32s()
	})
	if rel := numcmp.RelL2(got, want); rel > 1e-2 {
		t.Fatalf("relative L2 difference %.3g", rel)
	}
}

// TestExportWeightlessHalf: a network without weights takes its type from
// ExportOpts.InputDType (it used to export a float32 input whatever the
// type meant).
func TestExportWeightlessHalf(t *testing.T) {
	net := nn.NewSequential(nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{2, 2}}), nn.NewActivation("relu"))
	mp, err := onnx.Export(net, []int{1, 2, 3, 3}, onnx.ExportOpts{InputDType: nd.Float16})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []*onnxpb.ValueInfoProto{mp.Graph.Input[0], mp.Graph.Output[0]} {
		if got := onnxpb.TensorProto_DataType(v.GetType().GetTensorType().GetElemType()); got != onnxpb.TensorProto_FLOAT16 {
			t.Errorf("%s is %v, want FLOAT16", v.GetName(), got)
		}
	}
}

// TestExportTokenIdsHint: exporting an embedding network with the default
// float input says to set InputDType.
func TestExportTokenIdsHint(t *testing.T) {
	net := nn.NewSequential(nn.NewEmbedding(10, 4))
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	_, err := onnx.Export(net, []int{2, 5}, onnx.ExportOpts{})
	if err == nil || !strings.Contains(err.Error(), "InputDType") {
		t.Fatalf("got %v", err)
	}
}
