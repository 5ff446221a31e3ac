package nn_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// ExampleRMSNorm divides each row by its root mean square, √7.5 here
// (the scale is one, as initialised).
func ExampleRMSNorm() {
	show(nn.NewRMSNorm([]int{4}, nn.RMSNormOpts{}), row(1, 2, 3, 4))
	// Output:
	// [1 4] [0.365 0.730 1.095 1.461]
}

// ExampleGLU gates the first half of the last axis by the sigmoid of the
// second: σ(0) = 0.5, σ(100) ≈ 1.
func ExampleGLU() {
	show(nn.NewGLU(-1), row(1, 2, 0, 100))
	// Output:
	// [1 2] [0.500 2.000]
}

// ExampleChannelShuffle interleaves six channels from two groups: the
// channels 0 1 2 | 3 4 5 become 0 3 1 4 2 5.
func ExampleChannelShuffle() {
	x := nd.FromSlice(ctx.CPU(0), []float32{0, 1, 2, 3, 4, 5}, 1, 6, 1)
	show(nn.NewChannelShuffle(2), x)
	// Output:
	// [1 6 1] [0.000 3.000 1.000 4.000 2.000 5.000]
}

// ExampleEmbeddingBag averages bags of rows given as a flat index list
// and the offsets where each bag starts: the bags {0, 2}, {} and {1, 1,
// 3}. Row i of the weight is set to i, 10·i here.
func ExampleEmbeddingBag() {
	dev := ctx.CPU(0)
	bag := nn.NewEmbeddingBag(4, 2, "mean")
	if err := gluon.Initialize(bag, initializer.Xavier{}, dev); err != nil {
		fmt.Println(err)
		return
	}
	bag.Weight.SetData(nd.FromSlice(dev, []float32{0, 0, 1, 10, 2, 20, 3, 30}, 4, 2))
	ids := nd.FromSlice(dev, []int64{0, 2, 1, 1, 3}, 5)
	offsets := nd.FromSlice(dev, []int64{0, 2, 2}, 3)
	y := bag.ForwardMulti(ids, offsets, nil)[0]
	fmt.Printf("%v %.3f\n", y.Shape(), y.Float32s())
	// Output:
	// [3 2] [1.000 10.000 0.000 0.000 1.667 16.667]
}

// ExamplePairwiseDistance measures the Euclidean distance between the
// rows of two batches (PyTorch adds eps, 1e-6 by default, to each
// difference; 0 here).
func ExamplePairwiseDistance() {
	dev := ctx.CPU(0)
	a := nd.FromSlice(dev, []float32{0, 0, 1, 1}, 2, 2)
	b := nd.FromSlice(dev, []float32{3, 4, 1, 2}, 2, 2)
	y := gluon.Call(nn.NewPairwiseDistance(2, 0, false), a, b)[0]
	fmt.Printf("%v %.3f\n", y.Shape(), y.Float32s())
	// Output:
	// [2] [5.000 1.000]
}
