package nd_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

func Example() {
	a := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := nd.FromSlice(ctx.CPU(0), []float32{10, 20, 30}, 3)
	fmt.Println(nd.Add(a, b)) // b broadcasts over the rows
	fmt.Println(nd.Sum(a, 1)) // row sums
	fmt.Println(nd.MatMul(a, nd.Transpose(a)))
	// Output:
	// NDArray[2 3] float32 @cpu(0) [11 22 33 14 25 36]
	// NDArray[2] float32 @cpu(0) [6 15]
	// NDArray[2 2] float32 @cpu(0) [14 32 32 77]
}

func Example_contexts() {
	a := nd.Ones(ctx.CPU(0), nd.Float32, 2)
	b := nd.Ones(ctx.CPU(1), nd.Float32, 2)
	err := nd.Catch(func() { nd.Add(a, b) })
	fmt.Println(err)
	fmt.Println(nd.Add(a, b.AsIn(ctx.CPU(0))))
	// Output:
	// nd.Add: context mismatch: cpu(0) vs cpu(1) (shapes [2] and [2]); copy one input with CopyTo or AsIn first
	// NDArray[2] float32 @cpu(0) [2 2]
}

func ExampleScope() {
	dev := ctx.CPU(0)
	x := nd.Ones(dev, nd.Float32, 1000)
	s := nd.NewScope()
	y := nd.Exp(nd.Neg(x)) // Neg's output is a temporary
	total := nd.Sum(y)
	s.Keep(total)
	s.Close() // y and the temporary go back to the pool now
	fmt.Printf("%.3f %v\n", total.Scalar(), y.Released())
	// Output: 367.879 true
}

func ExampleBiasRelu() {
	dev := ctx.CPU(0)
	// Two images of two channels of 2 values each, as a convolution
	// without bias would produce them.
	y := nd.FromSlice(dev, []float32{-1, 2, 0.5, -3, 4, -5, 1, 1}, 2, 2, 2)
	bias := nd.FromSlice(dev, []float32{0.5, -1}, 2)
	fmt.Println(nd.BiasRelu(y, bias, 1)) // max(y + bias[channel], 0)
	// Output:
	// NDArray[2 2 2] float32 @cpu(0) [0 2.5 0 0 4.5 0 0 0]
}

func ExampleOptimizerUpdate() {
	dev := ctx.CPU(0)
	w := nd.FromSlice(dev, []float32{1, 2, 3, 4}, 4)
	g := nd.FromSlice(dev, []float32{10, 20, 30, 40}, 4) // summed over a batch of 10
	mom := nd.ZerosLike(w)
	// One SGD step with momentum on the mean gradient: m = 0.9·m − 0.5·g/10; w += m.
	p := nd.OptimizerParams{LR: 0.5, RescaleGrad: 0.1, Momentum: 0.9}
	nd.OptimizerUpdate(nd.SGDProgram(p, true), w, g, mom)
	fmt.Println(w)
	fmt.Println(mom)
	// Output:
	// NDArray[4] float32 @cpu(0) [0.5 1 1.5 2]
	// NDArray[4] float32 @cpu(0) [-0.5 -1 -1.5 -2]
}

// SoftmaxCrossEntropy is the classifier's loss per sample, −log of the
// softmax probability of the label; its gradient is softmax − one-hot.
func ExampleSoftmaxCrossEntropy() {
	logits := nd.FromSlice(ctx.CPU(0), []float64{2, 0, 0, 0, 0, 0}, 2, 3)
	labels := nd.FromSlice(ctx.CPU(0), []int64{0, 2}, 2)
	logits.AttachGrad(nd.GradWrite)
	exit := nd.EnterRecording(true)
	loss := nd.SoftmaxCrossEntropy(logits, labels, -1)
	exit()
	nd.Backward([]*nd.NDArray{loss}, nil, false)
	fmt.Printf("%.4f\n", loss.Float64s())
	fmt.Printf("%.4f\n", logits.Grad().Float64s())
	// Output:
	// [0.2395 1.0986]
	// [-0.2130 0.1065 0.1065 0.3333 0.3333 -0.6667]
}

// A gradient hook sees each leaf's gradient as soon as it is final: the
// leaf nearest the loss first, while backward goes on with the others.
func ExampleNDArray_AddGradHook() {
	w1 := nd.FromSlice(ctx.CPU(0), []float32{1, 2}, 2, 1)
	w2 := nd.FromSlice(ctx.CPU(0), []float32{3}, 1, 1)
	for _, w := range []*nd.NDArray{w1, w2} {
		w.AttachGrad(nd.GradWrite)
	}
	w1.AddGradHook(nd.GradHook{Ready: func(a *nd.NDArray) { fmt.Println("w1 final:", a.Grad()) }})
	w2.AddGradHook(nd.GradHook{Ready: func(a *nd.NDArray) { fmt.Println("w2 final:", a.Grad()) }})
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 1}, 1, 2)
	nd.DefaultSession().Record(func() {
		y := nd.Sum(nd.MatMul(nd.MatMul(x, w1), w2)) // x·w1 first, then ·w2
		nd.Backward([]*nd.NDArray{y}, nil, false)
	})
	// Output:
	// w2 final: NDArray[1 1] float32 @cpu(0) [3]
	// w1 final: NDArray[2 1] float32 @cpu(0) [3 3]
}
