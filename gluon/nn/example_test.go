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

// Example builds LeNet, lets the first forward pass infer the input sizes
// of its layers, and prints every parameter's full name and shape.
func Example() {
	net := nn.NewSequential(
		nn.NewConv2D(6, 5, nn.Conv2DOpts{Act: "relu"}),
		nn.NewMaxPool2D(2, nn.PoolOpts{}),
		nn.NewConv2D(16, 3, nn.Conv2DOpts{Act: "relu"}),
		nn.NewMaxPool2D(2, nn.PoolOpts{}),
		nn.NewFlatten(),
		nn.NewDense(120, nn.DenseOpts{Act: "relu"}),
		nn.NewDense(84, nn.DenseOpts{Act: "relu"}),
		nn.NewDense(10, nn.DenseOpts{}),
	)
	dev := ctx.CPU(0)
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		fmt.Println(err)
		return
	}
	x := nd.Zeros(dev, nd.Float32, 1, 1, 28, 28)
	var y *nd.NDArray
	autograd.Pause(func() { y = net.Forward(x) })

	params := gluon.CollectParams(net)
	for _, name := range params.Names() {
		fmt.Println(name, params.Get(name).Shape())
	}
	fmt.Println("output", y.Shape())
	// Output:
	// conv0.weight [6 1 5 5]
	// conv0.bias [6]
	// conv1.weight [16 6 3 3]
	// conv1.bias [16]
	// dense0.weight [120 400]
	// dense0.bias [120]
	// dense1.weight [84 120]
	// dense1.bias [84]
	// dense2.weight [10 84]
	// dense2.bias [10]
	// output [1 10]
}

// ExampleConcurrent joins the branches of an Inception-style module along
// the channel axis.
func ExampleConcurrent() {
	block := nn.NewConcurrent(
		nn.NewConv2D(8, 1, nn.Conv2DOpts{Act: "relu"}),
		nn.NewConv2D(4, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, Act: "relu"}),
		nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{1, 1}, Pad: [2]int{1, 1}}),
	)
	dev := ctx.CPU(0)
	if err := gluon.Initialize(block, initializer.Xavier{}, dev); err != nil {
		fmt.Println(err)
		return
	}
	y := block.Forward(nd.Zeros(dev, nd.Float32, 2, 3, 16, 16))
	fmt.Println(y.Shape())
	fmt.Println(gluon.CollectParams(block).Names())
	// Output:
	// [2 15 16 16]
	// [conv0.weight conv0.bias conv1.weight conv1.bias]
}

// SyncBatchNorm on two contexts normalises each context's half with the
// statistics of the whole batch, so the replicas' running statistics agree.
func ExampleSyncBatchNorm() {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	bn := nn.NewSyncBatchNorm(nn.BatchNormOpts{InChannels: 1, Momentum: new(0.5)})
	_ = gluon.CollectParams(bn).Initialize(initializer.Zero(), devs, false)
	halves := [][]float32{{1, 2}, {3, 6}} // mean 3, variance 3.5 over all four
	outs := make([]*nd.NDArray, 2)
	autograd.TrainMode(func() {
		_ = gluon.ForEachDevice(devs, func(i int, d ctx.Context) error {
			outs[i] = bn.Forward(nd.FromSlice(d, halves[i], 2, 1))
			return nil
		})
	})
	fmt.Printf("%.3f %.3f\n", outs[0].Float32s(), outs[1].Float32s())
	fmt.Println(bn.RunningMean.Data(devs[0]), bn.RunningMean.Data(devs[1]))
	// Output:
	// [-1.069 -0.535] [0.000 1.604]
	// NDArray[1] float32 @cpu(0) [1.5] NDArray[1] float32 @cpu(1) [1.5]
}
