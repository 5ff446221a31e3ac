package quantization_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/quantization"
	"github.com/goluon/goluon/nd"
)

// A trained float32 MLP quantized for inference, as PyTorch's
// quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8) does: the Dense
// layers become int8 layers, the rest stays.
func ExampleQuantizeDynamic() {
	dev := ctx.CPU(0)
	net := nn.NewSequential(
		nn.NewDense(64, nn.DenseOpts{InUnits: 32, Act: "relu"}),
		nn.NewDropout(0.1),
		nn.NewDense(10, nn.DenseOpts{InUnits: 64}),
	)
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		panic(err)
	}
	x := nd.RandomUniform(dev, nd.Float32, -1, 1, 8, 32)
	want := net.Forward(x) // predict mode: dropout is the identity

	paths, err := quantization.QuantizeDynamic(net, quantization.Opts{})
	if err != nil {
		panic(err)
	}
	y := net.Forward(x)
	diff := nd.Max(nd.Abs(nd.Sub(y, want))).Scalar() / nd.Max(nd.Abs(want)).Scalar()
	fmt.Println("quantized:", paths)
	fmt.Println("output:", y.Shape(), "close to float32:", diff < 0.05)
	q := net.Children()[0].(*quantization.Dense)
	w, scales := q.Weight()
	fmt.Println("first layer:", len(w), "int8 weights,", len(scales), "scale")
	// Output:
	// quantized: [dense0 dense1]
	// output: [8 10] close to float32: true
	// first layer: 2048 int8 weights, 1 scale
}
