package nd_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// Integer arrays hold labels and indices; comparisons return Bool arrays,
// and the sum of a Bool array counts its true elements.
func ExampleNDArray_AsType() {
	dev := ctx.CPU(0)
	scores := nd.FromSlice(dev, []float32{0.1, 0.7, 0.2, 0.6, 0.3, 0.1}, 2, 3)
	labels := nd.FromSlice(dev, []int{1, 2})
	pred := nd.ArgMax(scores, 1)
	hits := nd.Equal(pred, labels)
	fmt.Println(pred)
	fmt.Println(hits)
	fmt.Println(nd.Sum(hits))
	fmt.Println(nd.FromSlice(dev, []float64{-1.7, 2.9, 300}).AsType(nd.Uint8))
	// Output:
	// NDArray[2] int64 @cpu(0) [1 0]
	// NDArray[2] bool @cpu(0) [true false]
	// NDArray[] int64 @cpu(0) [1]
	// NDArray[3] uint8 @cpu(0) [0 2 255]
}

// Take gathers rows by index (an embedding lookup); its gradient adds the
// output gradient back into the rows it read.
func ExampleTake() {
	dev := ctx.CPU(0)
	table := nd.FromSlice(dev, []float32{0, 0, 1, 1, 2, 2}, 3, 2)
	ids := nd.FromSlice(dev, []int{2, 0, 2}, 1, 3)
	fmt.Println(nd.Take(table, ids, 0, nd.TakeClip))
	// Output:
	// NDArray[1 3 2] float32 @cpu(0) [2 2 0 0 2 2]
}

// Where and MaskedFill select elementwise with a Bool mask, as attention
// masks do.
func ExampleMaskedFill() {
	dev := ctx.CPU(0)
	scores := nd.FromSlice(dev, []float32{1, 2, 3, 4}, 2, 2)
	future := nd.FromSlice(dev, []bool{false, true, false, false}, 2, 2)
	fmt.Println(nd.MaskedFill(scores, future, -1e9))
	fmt.Println(nd.Where(future, nd.Zeros(dev, nd.Float32, 1), scores))
	// Output:
	// NDArray[2 2] float32 @cpu(0) [1 -1e+09 3 4]
	// NDArray[2 2] float32 @cpu(0) [1 0 3 4]
}

// Slice takes Python-style ranges on each axis, negative steps included.
func ExampleSlice() {
	x := nd.Arange(ctx.CPU(0), nd.Float32, 0, 12, 1)
	m := nd.Reshape(x, 3, 4)
	fmt.Println(nd.Slice(m, nd.From(1), nd.Every(-2)))
	// Output:
	// NDArray[2 2] float32 @cpu(0) [7 5 11 9]
}

// TopK returns the largest values and their Int64 positions; Cumsum is a
// running sum.
func ExampleTopK() {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{3, 1, 4, 1, 5, 9, 2, 6}, 2, 4)
	v, i := nd.TopK(x, 2, 1, true)
	fmt.Println(v)
	fmt.Println(i)
	fmt.Println(nd.Cumsum(x, 1))
	// Output:
	// NDArray[2 2] float32 @cpu(0) [4 3 9 6]
	// NDArray[2 2] int64 @cpu(0) [2 0 1 3]
	// NDArray[2 4] float32 @cpu(0) [3 4 8 9 5 14 16 22]
}

// Categorical samples class indices from logits, the last step of text
// generation; the same seed draws the same classes.
func ExampleCategorical() {
	dev := ctx.CPU(0)
	logits := nd.FromSlice(dev, []float32{0, 0, 50, 50, 0, 0}, 2, 3)
	nd.Seed(1)
	fmt.Println(nd.Categorical(logits, 4, true))
	// Output:
	// NDArray[2 4] int64 @cpu(0) [2 2 2 2 0 0 0 0]
}

// Norm, LogSumExp and the elementary functions reduce or map float arrays
// with their gradients.
func ExampleNorm() {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float64{3, 4, 0, 0}, 2, 2)
	fmt.Println(nd.Norm(x, 2, 1))
	fmt.Println(nd.LogSumExp(nd.FromSlice(dev, []float64{1000, 1000})))
	fmt.Println(nd.Erf(nd.FromSlice(dev, []float64{0, 1})))
	// Output:
	// NDArray[2] float64 @cpu(0) [5 0]
	// NDArray[] float64 @cpu(0) [1000.69]
	// NDArray[2] float64 @cpu(0) [0 0.842701]
}
