package vision_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// TestExportONNX exports every model of the zoo (small configurations,
// the running statistics moved by training passes), loads the file back
// with gluon/onnx and compares the outputs with the model's own in
// predict mode (1e-5 relative), for the example's batch and another (the
// batch is free). gluon/onnx's round trip covers ResNet-18 and 50,
// MobileNetV2, VGG-11 and ViT too; with GOLUON_ONNX_EXPORT_DIR set the
// files stay there, for tools/onnx_check.py and tools/onnx_ort_check.js.
func TestExportONNX(t *testing.T) {
	dev := ctx.CPU(0)
	for _, m := range zoo {
		t.Run(m.name, func(t *testing.T) {
			nd.Seed(5)
			net := m.build()
			params := gluon.CollectParams(net)
			if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			s := inputSize(m.name)
			shape := []int{2, 3, s, s}
			autograd.Record(func() {
				for range 2 {
					net.Forward(nd.RandomNormal(dev, nd.Float32, 0.5, 2, shape...))
				}
			})
			perturbZeros(params)
			other := slices.Clone(shape)
			other[0] = 3
			onnxtest.RoundTrip(t, "vision-"+m.name, net, shape, onnx.ExportOpts{},
				nd.RandomNormal(dev, nd.Float32, 0, 1, shape...), nd.RandomNormal(dev, nd.Float32, 0, 1, other...))
		})
	}
}

// perturbZeros gives weights that start at zero (a ViT's head and class
// token) random values, so that the comparison sees every part of the
// network.
func perturbZeros(params *gluon.ParamDict) {
	for _, p := range params.List() {
		if !p.Initialized() || p.Statistic {
			continue
		}
		w := p.ListData()[0]
		if slices.ContainsFunc(w.Float64s(), func(v float64) bool { return v != 0 }) {
			continue
		}
		p.SetData(nd.RandomNormal(w.Context(), w.DType(), 0, 0.1, w.Shape()...))
	}
}
