package loss_test

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/nd"
)

// ExampleSoftmaxCrossEntropy computes the per-sample cross-entropy of two
// samples over three classes and its gradient with respect to the scores.
func ExampleSoftmaxCrossEntropy() {
	dev := ctx.CPU(0)
	scores := nd.FromSlice(dev, []float32{2, 0, 0, 0, 0, 0}, 2, 3)
	labels := nd.FromSlice(dev, []float32{0, 2}, 2) // class indices
	scores.AttachGrad(nd.GradWrite)

	var l *nd.NDArray
	autograd.Record(func() {
		l = loss.NewSoftmaxCrossEntropy().Forward(scores, labels)
	})
	autograd.Backward(l)

	fmt.Printf("loss %.4f\n", l.Float32s())
	fmt.Printf("grad %.4f\n", scores.Grad().Float32s())
	// Output:
	// loss [0.2395 1.0986]
	// grad [-0.2130 0.1065 0.1065 0.3333 0.3333 -0.6667]
}

// ExampleCTC scores a target "0" against three steps of uniform scores
// over the classes {0, 1, blank}: six of the 27 paths collapse to it, so
// the loss is −log(6/27).
func ExampleCTC() {
	dev := ctx.CPU(0)
	scores := nd.Zeros(dev, nd.Float64, 1, 3, 3)        // [N, T, C], the blank last
	target := nd.FromSlice(dev, []float64{0, -1}, 1, 2) // padded with −1

	l := loss.NewCTC().Forward(scores, target, nil, nil)
	fmt.Printf("loss %.6f, -log(6/27) %.6f\n", l.Float64s()[0], -math.Log(6.0/27))
	// Output:
	// loss 1.504077, -log(6/27) 1.504077
}
