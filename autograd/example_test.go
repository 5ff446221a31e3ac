package autograd_test

import (
	"fmt"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// Fit y = 2x with one weight: the gradient of the squared error at w = 0.
func Example() {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{1, 2, 3}, 3, 1)
	y := nd.FromSlice(dev, []float32{2, 4, 6}, 3, 1)
	w := nd.Zeros(dev, nd.Float32, 1, 1)
	w.AttachGrad(nd.GradWrite)
	autograd.Record(func() {
		loss := nd.Sum(nd.Square(nd.Sub(nd.MatMul(x, w), y)))
		autograd.Backward(loss)
	})
	fmt.Println(w.Grad())
	// Output: NDArray[1 1] float32 @cpu(0) [-56]
}

func ExamplePause() {
	x := nd.FromSlice(ctx.CPU(0), []float64{3})
	x.AttachGrad(nd.GradWrite)
	autograd.Record(func() {
		var k *nd.NDArray
		autograd.Pause(func() { k = nd.Square(x) }) // treated as a constant
		autograd.Backward(nd.Mul(k, x))
	})
	fmt.Println(x.Grad().Scalar())
	// Output: 9
}

// Two goroutine trees with their own state: the learner records with
// dropout active while the server, in its own session, predicts with
// dropout off — at the same time, without seeing each other's mode.
func ExampleNewSession() {
	dev := ctx.CPU(0)
	w := nd.PersistentSession().FromSlice(dev, []float32{1, 1, 1, 1}) // shared and neutral
	w.AttachGrad(nd.GradWrite)

	learner := autograd.NewSession("learner")
	server := autograd.NewSession("server")
	done := make(chan []float32)
	go func() {
		x := server.Ones(dev, nd.Float32, 4)
		var y []float32
		server.PredictMode(func() { y = nd.Dropout(nd.Mul(x, w), 0.5).Float32s() })
		done <- y
	}()
	x := learner.Ones(dev, nd.Float32, 4)
	learner.Record(func() {
		y := nd.Dropout(nd.Mul(x, w), 0.5) // training mode: about half zeroed, the rest doubled
		fmt.Println(y.Session().Name(), "recorded:", y.Size() == 4)
		autograd.Backward(nd.Sum(y))
	})
	fmt.Println("server:", <-done)
	fmt.Println("mixing:", nd.Catch(func() { nd.Add(learner.Ones(dev, nd.Float32, 4), server.Ones(dev, nd.Float32, 4)) }) != nil)
	// Output:
	// learner recorded: true
	// server: [1 1 1 1]
	// mixing: true
}
