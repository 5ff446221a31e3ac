package nn_test

import (
	"fmt"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// ApplyWeightNorm splits a Dense layer's weight into a magnitude per
// output unit (weight_g) and a direction (weight_v): the layer computes
// what it did, and the optimizer now trains g and v. Remove bakes the
// weight back in.
func ExampleApplyWeightNorm() {
	dev := ctx.CPU(0)
	d := nn.NewDense(2, nn.DenseOpts{InUnits: 2, NoBias: true})
	_ = gluon.Initialize(d, initializer.Zero(), dev)
	d.Weight.SetData(nd.FromSlice(dev, []float32{3, 4, 0, -2}, 2, 2))
	x := nd.FromSlice(dev, []float32{1, 1}, 1, 2)

	wn := nn.ApplyWeightNorm(d, nn.WeightNormOpts{})
	fmt.Println(gluon.CollectParams(d).Names())
	fmt.Println(wn.G.Data(dev))
	fmt.Println(d.Forward(x))

	wn.G.SetData(nd.FromSlice(dev, []float32{1, 1}, 2, 1)) // unit rows
	fmt.Println(d.Forward(x))
	_ = wn.Remove()
	fmt.Println(gluon.CollectParams(d).Names(), d.Weight.Data(dev))
	// Output:
	// [weight_v weight_g]
	// NDArray[2 1] float32 @cpu(0) [5 2]
	// NDArray[1 2] float32 @cpu(0) [7 -2]
	// NDArray[1 2] float32 @cpu(0) [1.4 -1]
	// [weight] NDArray[2 2] float32 @cpu(0) [0.6 0.8 0 -1]
}

// ApplySpectralNorm divides a layer's weight by its largest singular
// value, estimated by the power method: each training-mode pass runs one
// iteration and updates the layer's weight_u and weight_v, predict-mode
// passes use them as they are.
func ExampleApplySpectralNorm() {
	dev := ctx.CPU(0)
	d := nn.NewDense(2, nn.DenseOpts{InUnits: 2, NoBias: true})
	_ = gluon.Initialize(d, initializer.Zero(), dev)
	d.Weight.SetData(nd.FromSlice(dev, []float32{3, 0, 0, 1}, 2, 2))

	sn := nn.ApplySpectralNorm(d, nn.SpectralNormOpts{})
	fmt.Println(gluon.CollectParams(d).Names())
	autograd.TrainMode(func() { d.Forward(nd.Ones(dev, nd.Float32, 1, 2)) })
	fmt.Printf("sigma %.4f\n", sn.Sigma(dev))
	fmt.Println(d.Forward(nd.FromSlice(dev, []float32{3, 3}, 1, 2)))
	// Output:
	// [weight_orig weight_u weight_v]
	// sigma 3.0000
	// NDArray[1 2] float32 @cpu(0) [3 1]
}

// LocalResponseNorm divides each channel by the squared activity of its
// neighbours at the same position: here channel 1 of three, with a
// window of three channels, alpha 3 (so alpha/size is 1), beta 1 and k 1.
func ExampleNewLocalResponseNorm() {
	dev := ctx.CPU(0)
	l := nn.NewLocalResponseNorm(3, nn.LocalResponseNormOpts{Alpha: new(3.0), Beta: new(1.0)})
	x := nd.FromSlice(dev, []float32{1, 2, 0}, 1, 3, 1)
	fmt.Println(l.Forward(x))
	// Output:
	// NDArray[1 3 1] float32 @cpu(0) [0.166667 0.333333 0]
}
