package linalg_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/linalg"
)

// Solve a 2×2 system, and take the log-determinant of a covariance through
// its Cholesky factor, as a Gaussian's log-likelihood does.
func Example() {
	dev := ctx.CPU(0)
	a := nd.FromSlice(dev, []float64{3, 1, 1, 2}, 2, 2)
	x := linalg.Solve(a, nd.FromSlice(dev, []float64{9, 8}, 2))
	fmt.Println(x.Float64s())

	l := linalg.Cholesky(a)
	logDet := nd.MulScalar(nd.Sum(nd.Log(nd.Diagonal(l, 0))), 2)
	_, want := linalg.Slogdet(a)
	fmt.Printf("%.6f %.6f\n", logDet.Scalar(), want.Scalar())
	// Output:
	// [2 3]
	// 1.609438 1.609438
}
