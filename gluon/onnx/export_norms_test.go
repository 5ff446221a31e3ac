package onnx_test

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// TestExportONNXNorms exports gluon/nn's weight- and spectrally normalised
// layers (their weights as computed, in predict mode) and
// LocalResponseNorm (ONNX's LRN for odd sizes, on 3-, 4- and 5-D inputs;
// the pooled composition for even sizes), loads them back and compares.
// With GOLUON_ONNX_EXPORT_DIR set the files stay there for
// tools/onnx_check.py and tools/onnx_ort_check.js (make onnx-check), which
// run them in ONNX Runtime.
func TestExportONNXNorms(t *testing.T) {
	dev := ctx.CPU(0)
	lrn := func(size int) *nn.LocalResponseNorm {
		return nn.NewLocalResponseNorm(size, nn.LocalResponseNormOpts{Alpha: new(0.8), Beta: new(0.7), K: new(1.5)})
	}
	for _, tc := range []struct {
		name  string
		net   func() gluon.Block
		shape []int
	}{
		{"norms-convnet", func() gluon.Block {
			conv := nn.NewConv2D(5, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, Act: "relu"})
			deconv := nn.NewConv2DTranspose(4, 2, nn.Conv2DTransposeOpts{Stride: [2]int{2, 2}})
			dense := nn.NewDense(3, nn.DenseOpts{})
			nn.ApplyWeightNorm(conv, nn.WeightNormOpts{})
			nn.ApplySpectralNorm(deconv, nn.SpectralNormOpts{})
			nn.ApplySpectralNorm(dense, nn.SpectralNormOpts{})
			return nn.NewSequential(conv, lrn(5), deconv, nn.NewMaxPool2D(2, nn.PoolOpts{}), nn.NewFlatten(), dense)
		}, []int{2, 3, 6, 6}},
		{"norms-weightnorm-whole", func() gluon.Block {
			dense := nn.NewDense(4, nn.DenseOpts{Act: "tanh"})
			nn.ApplyWeightNorm(dense, nn.WeightNormOpts{Dim: -1})
			return nn.NewSequential(dense)
		}, []int{3, 5}},
		{"lrn-3d-size3", func() gluon.Block { return lrn(3) }, []int{2, 6, 5}},
		{"lrn-3d-size4", func() gluon.Block { return lrn(4) }, []int{2, 6, 5}},
		{"lrn-4d-size2", func() gluon.Block { return lrn(2) }, []int{2, 7, 3, 4}},
		{"lrn-4d-size5", func() gluon.Block { return lrn(5) }, []int{2, 7, 3, 4}},
		{"lrn-5d-size3", func() gluon.Block { return lrn(3) }, []int{2, 5, 2, 3, 3}},
		{"lrn-5d-size4", func() gluon.Block { return lrn(4) }, []int{2, 5, 2, 3, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nd.Seed(8)
			net := tc.net()
			if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			autograd.Record(func() { // training passes move the spectral norms' u and v
				for range 2 {
					net.Forward(nd.RandomNormal(dev, nd.Float32, 0, 1, tc.shape...))
				}
			})
			x := nd.RandomNormal(dev, nd.Float32, 0, 2, tc.shape...)
			bigger := append([]int{tc.shape[0] + 2}, tc.shape[1:]...)
			onnxtest.RoundTrip(t, tc.name, net, tc.shape, onnx.ExportOpts{}, x, nd.RandomNormal(dev, nd.Float32, 0, 2, bigger...))
		})
	}
}

// TestExportONNXNormsCast: a network cast after its weights were
// reparameterised exports in its new type, its derived weights under
// their full names. The derived weight's dtype was only refreshed when a
// layer inferred its shape, which an Embedding never asks for: after
// gluon.Cast its weight was written as a float32 initializer, the graph
// was cast down to float32 to meet it, and it was named "weight" (or
// "weight_4") instead of "embedding0.weight".
func TestExportONNXNormsCast(t *testing.T) {
	dev := ctx.CPU(0)
	for _, dt := range []nd.DType{nd.Float64, nd.Float16} {
		for _, c := range []struct {
			name    string
			net     func() gluon.Block
			shape   []int
			opts    onnx.ExportOpts
			in      func() *nd.NDArray
			derived []string // the derived weights' full names
		}{
			{"dense", func() gluon.Block {
				d := nn.NewDense(3, nn.DenseOpts{InUnits: 4})
				nn.ApplyWeightNorm(d, nn.WeightNormOpts{})
				return nn.NewSequential(d)
			}, []int{2, 4}, onnx.ExportOpts{}, func() *nd.NDArray { return nd.RandomNormal(dev, dt, 0, 1, 2, 4) }, []string{"dense0.weight"}},
			{"embedding", func() gluon.Block {
				e := nn.NewEmbedding(10, 4)
				nn.ApplyWeightNorm(e, nn.WeightNormOpts{})
				d := nn.NewDense(3, nn.DenseOpts{InUnits: 8})
				nn.ApplySpectralNorm(d, nn.SpectralNormOpts{})
				return nn.NewSequential(e, nn.NewFlatten(), d)
			}, []int{2, 2}, onnx.ExportOpts{InputDType: nd.Int64}, func() *nd.NDArray { return nd.FromSlice(dev, []int64{1, 2, 3, 9}, 2, 2) }, []string{"embedding0.weight", "dense0.weight"}},
		} {
			t.Run(c.name+"-"+dt.String(), func(t *testing.T) {
				nd.Seed(5)
				net := c.net()
				if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
					t.Fatal(err)
				}
				x := c.in()
				autograd.PredictMode(func() { // the layers read their weights once in float32
					if x.DType().IsFloat() {
						net.Forward(x.AsType(nd.Float32))
					} else {
						net.Forward(x)
					}
				})
				if err := gluon.Cast(net, dt); err != nil {
					t.Fatal(err)
				}
				m, err := onnx.Export(net, c.shape, c.opts)
				if err != nil {
					t.Fatal(err)
				}
				want := map[nd.DType]int32{nd.Float64: int32(onnxpb.TensorProto_DOUBLE), nd.Float16: int32(onnxpb.TensorProto_FLOAT16)}[dt]
				names := map[string]bool{}
				for _, n := range gluon.CollectParams(net).Names() {
					names[n] = true
				}
				for _, n := range c.derived {
					names[n] = true
				}
				found := map[string]bool{}
				for _, init := range m.GetGraph().GetInitializer() {
					if init.GetDataType() != want {
						t.Errorf("initializer %s has ONNX type %d, want %d (the network is %v)", init.GetName(), init.GetDataType(), want, dt)
					}
					if !names[init.GetName()] {
						t.Errorf("initializer %s is not named as a parameter of the network (%v)", init.GetName(), names)
					}
					found[init.GetName()] = true
				}
				for _, n := range c.derived {
					if !found[n] {
						t.Errorf("no initializer %s for the derived weight", n)
					}
				}
			})
		}
	}
}
