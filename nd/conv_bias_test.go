package nd_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestConvBiasFusedMatchesComposed runs Conv2D and Conv1D with a bias
// through the backend's fused Conv2DBias (the direct kernel's in-register
// add, and the add after the im2col and Winograd algorithms) and through
// Conv2D followed by Binary's Add, and requires the same outputs and
// gradients bit for bit.
func TestConvBiasFusedMatchesComposed(t *testing.T) {
	defer nd.SetFusedKernels(true)
	dev := ctx.CPU(0)
	for _, c := range []struct {
		name  string
		x, w  []int
		o     nd.ConvOpts
		conv1 bool
	}{
		{"direct lenet2", []int{5, 6, 12, 12}, []int{16, 6, 3, 3}, nd.ConvOpts{}, false},
		{"direct padded 6 filters", []int{3, 3, 11, 9}, []int{6, 3, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}, false},
		{"winograd", []int{2, 16, 9, 9}, []int{16, 16, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}, false},
		{"im2col strided", []int{2, 3, 9, 9}, []int{8, 3, 3, 3}, nd.ConvOpts{Stride: [2]int{2, 2}}, false},
		{"conv1d", []int{3, 4, 20}, []int{8, 4, 3}, nd.ConvOpts{}, true},
	} {
		for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				run := func(fused bool) [][]float64 {
					nd.SetFusedKernels(fused)
					nd.Seed(3)
					x := nd.RandomUniform(dev, dt, -1, 1, c.x...)
					w := nd.RandomUniform(dev, dt, -1, 1, c.w...)
					b := nd.RandomUniform(dev, dt, -1, 1, c.w[0])
					for _, a := range []*nd.NDArray{x, w, b} {
						a.AttachGrad(nd.GradWrite)
					}
					var y *nd.NDArray
					autograd.Record(func() {
						if c.conv1 {
							y = nd.Conv1D(x, w, b, nd.Conv1DOpts{})
						} else {
							y = nd.Conv2D(x, w, b, c.o)
						}
						nd.Backward([]*nd.NDArray{nd.Sum(nd.Square(y))}, nil, false)
					})
					return [][]float64{y.Float64s(), x.Grad().Float64s(), w.Grad().Float64s(), b.Grad().Float64s()}
				}
				fused, composed := run(true), run(false)
				for k := range composed {
					for i := range composed[k] {
						if math.Float64bits(fused[k][i]) != math.Float64bits(composed[k][i]) {
							t.Fatalf("array %d (y, dx, dw, db) element %d: fused %v, composed %v", k, i, fused[k][i], composed[k][i])
						}
					}
				}
			})
		}
	}
}
