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

// A trained float32 CNN quantized for inference after calibration, as
// PyTorch's prepare, calibrate and convert (and MXNet's quantize_net with
// calib_mode="naive") do: the convolutions and the Dense layer become int8
// layers whose inputs are quantized with the ranges the calibration
// batches showed.
func ExampleQuantizeStatic() {
	dev := ctx.CPU(0)
	net := nn.NewSequential(
		nn.NewConv2D(8, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: 3, Act: "relu"}),
		nn.NewMaxPool2D(2, nn.PoolOpts{}),
		nn.NewConv2D(16, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, Groups: 2, Act: "relu"}),
		nn.NewDense(10, nn.DenseOpts{}),
	)
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		panic(err)
	}
	x := nd.RandomUniform(dev, nd.Float32, -1, 1, 4, 3, 16, 16)
	want := net.Forward(x) // also infers the input sizes

	var calib []*nd.NDArray // a few batches like the data the network will see
	for range 3 {
		calib = append(calib, nd.RandomUniform(dev, nd.Float32, -1, 1, 8, 3, 16, 16))
	}
	paths, err := quantization.QuantizeStatic(net, quantization.StaticOpts{}, calib...)
	if err != nil {
		panic(err)
	}
	y := net.Forward(x)
	diff := nd.Max(nd.Abs(nd.Sub(y, want))).Scalar() / nd.Max(nd.Abs(want)).Scalar()
	fmt.Println("quantized:", paths)
	fmt.Println("output:", y.Shape(), "close to float32:", diff < 0.05)
	c := net.Children()[0].(*quantization.Conv2D)
	w, scales := c.Weight()
	fmt.Printf("first layer: %d int8 weights, %d scales, inputs quantized in steps of %.3f\n", len(w), len(scales), c.Input().Scale)
	// Output:
	// quantized: [conv0 conv1 dense0]
	// output: [4 10] close to float32: true
	// first layer: 216 int8 weights, 8 scales, inputs quantized in steps of 0.016
}
