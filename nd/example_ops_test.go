package nd_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// Einsum writes products and reductions by their subscripts: a batched
// matrix product, a trace, an outer product.
func ExampleEinsum() {
	dev := ctx.CPU(0)
	a := nd.FromSlice(dev, []float32{1, 2, 3, 4}, 1, 2, 2)
	b := nd.FromSlice(dev, []float32{1, 0, 0, 1}, 1, 2, 2)
	fmt.Println(nd.Einsum("bij,bjk->bik", a, b))
	fmt.Println(nd.Einsum("ii", nd.Reshape(a, 2, 2)))
	fmt.Println(nd.Einsum("i,j->ij", nd.FromSlice(dev, []float32{1, 2}, 2), nd.FromSlice(dev, []float32{3, 4}, 2)))
	// Output:
	// NDArray[1 2 2] float32 @cpu(0) [1 2 3 4]
	// NDArray[] float32 @cpu(0) [5]
	// NDArray[2 2] float32 @cpu(0) [3 4 6 8]
}

// GridSample reads an image at normalised positions: here the corners and
// the centre of a 2×2 image, with the corners at the pixels' centres.
func ExampleGridSample() {
	dev := ctx.CPU(0)
	img := nd.FromSlice(dev, []float32{1, 2, 3, 4}, 1, 1, 2, 2)
	grid := nd.FromSlice(dev, []float32{-1, -1, 0, 0, 1, 1}, 1, 1, 3, 2) // (x, y) pairs
	fmt.Println(nd.GridSample(img, grid, nd.GridSampleOpts{AlignCorners: true}))
	// Output:
	// NDArray[1 1 1 3] float32 @cpu(0) [1 2.5 4]
}

// Conv3D convolves clips or volumes [N, C, D, H, W]: a 2×2×2 box filter
// over a 2×2×2 volume of ones sums its eight elements.
func ExampleConv3D() {
	dev := ctx.CPU(0)
	x := nd.Ones(dev, nd.Float32, 1, 1, 2, 2, 2)
	w := nd.Ones(dev, nd.Float32, 1, 1, 2, 2, 2)
	fmt.Println(nd.Conv3D(x, w, nil, nd.Conv3DOpts{}))
	// Output:
	// NDArray[1 1 1 1 1] float32 @cpu(0) [8]
}
