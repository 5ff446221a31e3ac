package nd_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestTrainingIsBitwiseReproducible trains the small conv net of the
// memory test twice from the same seed (dropout included) and requires
// identical parameters, bit for bit.
func TestTrainingIsBitwiseReproducible(t *testing.T) {
	train := func() [][]float32 {
		dev := ctx.CPU(8)
		nd.Seed(99)
		x := nd.RandomNormal(dev, nd.Float32, 0, 1, 16, 2, 8, 8)
		labels := nd.FromSlice(dev, []float32{0, 1, 2, 3, 0, 1, 2, 3, 3, 2, 1, 0, 3, 2, 1, 0}, 16)
		params := []*nd.NDArray{
			nd.RandomNormal(dev, nd.Float32, 0, 0.1, 4, 2, 3, 3), nd.Zeros(dev, nd.Float32, 4),
			nd.RandomNormal(dev, nd.Float32, 0, 0.1, 4, 64), nd.Zeros(dev, nd.Float32, 4),
		}
		for _, p := range params {
			p.AttachGrad(nd.GradWrite)
		}
		for range 20 {
			trainStep(x, labels, params)
		}
		out := make([][]float32, len(params))
		for i, p := range params {
			out[i] = p.Float32s()
		}
		return out
	}
	a, b := train(), train()
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("parameter %d differs between two identical runs", i)
		}
	}
}
