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

// ExampleConv1D convolves a batch of 2 sequences of 8 channels and 20
// steps with 16 filters of width 3; padding 1 keeps the length.
func ExampleConv1D() {
	conv := nn.NewConv1D(16, 3, nn.Conv1DOpts{Pad: 1, Act: "relu"})
	if err := gluon.Initialize(conv, initializer.Xavier{}, ctx.CPU(0)); err != nil {
		fmt.Println(err)
		return
	}
	y := conv.Forward(nd.Ones(ctx.CPU(0), nd.Float32, 2, 8, 20))
	fmt.Println(y.Shape(), conv.Weight.Shape())
	// Output:
	// [2 16 20] [16 8 3]
}

// ExampleConv2DTranspose doubles the resolution of a feature map, the
// upsampling step of a decoder: kernel 4, stride 2, padding 1.
func ExampleConv2DTranspose() {
	up := nn.NewConv2DTranspose(8, 4, nn.Conv2DTransposeOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}})
	if err := gluon.Initialize(up, initializer.Xavier{}, ctx.CPU(0)); err != nil {
		fmt.Println(err)
		return
	}
	y := up.Forward(nd.Ones(ctx.CPU(0), nd.Float32, 1, 16, 7, 7))
	fmt.Println(y.Shape(), up.Weight.Shape())
	// Output:
	// [1 8 14 14] [16 8 4 4]
}

// ExampleDropout shares the mask along the time axis of a [T, N, C]
// sequence (variational dropout): in training mode a feature is dropped
// at every step or at none.
func ExampleDropout() {
	drop := nn.NewDropout(0.5, 0)
	x := nd.Ones(ctx.CPU(0), nd.Float32, 4, 1, 6)
	var y *nd.NDArray
	autograd.Record(func() { y = drop.Forward(x) })
	v := y.Float32s()
	same := true
	for t := 1; t < 4; t++ {
		for c := range 6 {
			same = same && v[t*6+c] == v[c]
		}
	}
	fmt.Println("same mask at every step:", same)
	autograd.PredictMode(func() { y = drop.Forward(x) })
	fmt.Println("predict mode:", y.Float32s()[:3])
	// Output:
	// same mask at every step: true
	// predict mode: [1 1 1]
}
