package onnx_test

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/onnx"
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
