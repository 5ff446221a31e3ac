// Command autograd-basics is Goluon's first demo: linear regression from
// scratch with NDArrays and autograd, as in the opening chapter of the
// Gluon tutorials. It fits y = 2·x₁ − 3.4·x₂ + 4.2 + noise by minibatch SGD
// and prints the loss per epoch and the learned parameters.
//
//	go run ./tutorials/autograd-basics -context cpu:0 -epochs 5
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

func main() {
	devFlag := flag.String("context", "cpu:0", "context to run on (cpu:N)")
	epochs := flag.Int("epochs", 5, "passes over the data")
	batch := flag.Int("batch", 10, "minibatch size")
	lr := flag.Float64("lr", 0.03, "learning rate")
	seed := flag.Uint64("seed", 42, "random seed")
	flag.Parse()
	if _, err := run(*devFlag, *epochs, *batch, *lr, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "autograd-basics:", err)
		os.Exit(1)
	}
}

// fit is what a run learned.
type fit struct {
	W    [2]float32
	B    float64
	Loss float64 // mean squared error / 2 over the data set after the last epoch
}

func run(devFlag string, epochs, batch int, lr float64, seed uint64) (fit, error) {
	devs, err := ctx.Parse(devFlag)
	if err != nil {
		return fit{}, err
	}
	if err := ctx.Check(devs...); err != nil {
		return fit{}, err
	}
	dev := devs[0]
	nd.Seed(seed)

	// Synthetic data set: 1000 samples, two features.
	const n = 1000
	trueW := nd.FromSlice(dev, []float32{2, -3.4}, 2, 1)
	features := nd.RandomNormal(dev, nd.Float32, 0, 1, n, 2)
	labels := nd.AddScalar(nd.MatMul(features, trueW), 4.2)
	labels = nd.Add(labels, nd.RandomNormal(dev, nd.Float32, 0, 0.01, n, 1))

	// Parameters with gradient buffers.
	w := nd.RandomNormal(dev, nd.Float32, 0, 0.01, 2, 1)
	b := nd.Zeros(dev, nd.Float32, 1)
	w.AttachGrad(nd.GradWrite)
	b.AttachGrad(nd.GradWrite)

	var loss float64
	for epoch := 1; epoch <= epochs; epoch++ {
		for start := 0; start+batch <= n; start += batch {
			s := nd.NewScope() // every temporary of this step is released at Close
			x := nd.SliceAxis(features, start, start+batch, 0)
			y := nd.SliceAxis(labels, start, start+batch, 0)
			autograd.Record(func() {
				pred := nd.Add(nd.MatMul(x, w), b)
				loss := nd.Mean(nd.MulScalar(nd.Square(nd.Sub(pred, y)), 0.5))
				autograd.Backward(loss)
			})
			// SGD: p -= lr * grad (the gradient is already a batch mean).
			nd.AddTo(w, nd.MulScalar(w.Grad(), -lr))
			nd.AddTo(b, nd.MulScalar(b.Grad(), -lr))
			s.Close()
		}
		autograd.Pause(func() {
			pred := nd.Add(nd.MatMul(features, w), b)
			loss = nd.Mean(nd.MulScalar(nd.Square(nd.Sub(pred, labels)), 0.5)).Scalar()
		})
		fmt.Printf("epoch %d, loss %.6f\n", epoch, loss)
	}
	wv := w.Float32s()
	fmt.Printf("learned w = [%.4f %.4f] (true [2 -3.4]), b = %.4f (true 4.2) on %v\n", wv[0], wv[1], b.Scalar(), dev)
	return fit{W: [2]float32{wv[0], wv[1]}, B: b.Scalar(), Loss: loss}, nil
}
