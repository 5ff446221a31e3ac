package nd_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// Kron multiplies every element of a by the whole of b, block by block.
func ExampleKron() {
	dev := ctx.CPU(0)
	a := nd.FromSlice(dev, []float32{1, 2}, 2)
	b := nd.FromSlice(dev, []float32{1, -1, 2, 0}, 2, 2)
	fmt.Println(nd.Kron(a, b))
	// Output:
	// NDArray[2 4] float32 @cpu(0) [1 -1 2 -2 2 0 4 0]
}

// TrapezoidX integrates sampled values by the trapezoidal rule: y = x² at
// x = 0, 1, 2, 3 (whose integral is 9) gives 9.5; CumulativeTrapezoidX
// gives the running integral, and Trapezoid the same rule for evenly
// spaced samples.
func ExampleTrapezoidX() {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float64{0, 1, 2, 3}, 4)
	y := nd.Mul(x, x)
	fmt.Println(nd.TrapezoidX(y, x, 0))
	fmt.Println(nd.CumulativeTrapezoidX(y, x, 0))
	fmt.Println(nd.Trapezoid(y, 1, 0))
	// Output:
	// NDArray[] float64 @cpu(0) [9.5]
	// NDArray[3] float64 @cpu(0) [0.5 3 9.5]
	// NDArray[] float64 @cpu(0) [9.5]
}

// Cov and Corrcoef take variables in rows and observations in columns.
func ExampleCov() {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float64{0, 1, 2, 2, 1, 3}, 2, 3)
	fmt.Println(nd.Cov(x, 1, nil, nil))
	fmt.Println(nd.Corrcoef(x))
	// Output:
	// NDArray[2 2] float64 @cpu(0) [1 0.5 0.5 1]
	// NDArray[2 2] float64 @cpu(0) [1 0.5 0.5 1]
}

// Pdist lists the distances between the rows of a matrix, pairs (0, 1),
// (0, 2), (1, 2).
func ExamplePdist() {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{0, 0, 3, 4, 6, 8}, 3, 2)
	fmt.Println(nd.Pdist(x, 2))
	fmt.Println(nd.Pdist(x, 1))
	// Output:
	// NDArray[3] float32 @cpu(0) [5 10 5]
	// NDArray[3] float32 @cpu(0) [7 14 7]
}

// AffineGrid makes GridSample's sampling positions from affine maps: the
// identity reads an image back unchanged, and a horizontal flip mirrors
// it.
func ExampleAffineGrid() {
	dev := ctx.CPU(0)
	img := nd.FromSlice(dev, []float32{1, 2, 3, 4, 5, 6}, 1, 1, 2, 3)
	flip := nd.FromSlice(dev, []float32{-1, 0, 0, 0, 1, 0}, 1, 2, 3)
	grid := nd.AffineGrid(flip, []int{1, 1, 2, 3}, false)
	fmt.Println(nd.GridSample(img, grid, nd.GridSampleOpts{}))
	// Output:
	// NDArray[1 1 2 3] float32 @cpu(0) [3 2 1 6 5 4]
}

// Gcd and Lcm work on integer arrays, broadcasting.
func ExampleGcd() {
	dev := ctx.CPU(0)
	a := nd.FromSlice(dev, []int64{12, -18, 0, 7}, 4)
	b := nd.FromSlice(dev, []int64{8}, 1)
	fmt.Println(nd.Gcd(a, b))
	fmt.Println(nd.Lcm(a, b))
	// Output:
	// NDArray[4] int64 @cpu(0) [4 2 8 1]
	// NDArray[4] int64 @cpu(0) [24 72 0 56]
}
