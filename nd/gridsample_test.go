package nd_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestGridSampleGoldens compares GridSample with torch's grid_sample
// (testdata/golden/make_goldens_gridsample.py): both modes, the three
// paddings, aligned corners or not, values and the gradients of the input
// and the grid, in float64.
func TestGridSampleGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/goldens_gridsample.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Mode, Padding         string
			AlignCorners          bool `json:"align_corners"`
			X, Grid, Y, GX, GGrid []float64
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	dev := ctx.CPU(0)
	pads := map[string]nd.GridPadding{"zeros": nd.GridZeros, "border": nd.GridBorder, "reflection": nd.GridReflection}
	for _, c := range g.Cases {
		t.Run(fmt.Sprintf("%s/%s/ac=%v", c.Mode, c.Padding, c.AlignCorners), func(t *testing.T) {
			x, grid := nd.FromSlice(dev, c.X, 2, 3, 4, 5), nd.FromSlice(dev, c.Grid, 2, 3, 6, 2)
			x.AttachGrad(nd.GradWrite)
			grid.AttachGrad(nd.GradWrite)
			o := nd.GridSampleOpts{Nearest: c.Mode == "nearest", Padding: pads[c.Padding], AlignCorners: c.AlignCorners}
			var y *nd.NDArray
			autograd.Record(func() {
				y = nd.GridSample(x, grid, o)
				head := nd.Reshape(nd.FromSlice(dev, linspace(-1, 1, y.Size()), y.Size()), y.Shape()...)
				autograd.Backward(nd.Sum(nd.Mul(y, head)))
			})
			for _, v := range []struct {
				what      string
				got, want []float64
			}{{"value", y.Float64s(), c.Y}, {"input gradient", x.Grad().Float64s(), c.GX}, {"grid gradient", grid.Grad().Float64s(), c.GGrid}} {
				for i := range v.want {
					if math.Abs(v.got[i]-v.want[i]) > 1e-12 {
						t.Fatalf("%s %d: %v, torch %v", v.what, i, v.got[i], v.want[i])
					}
				}
			}
		})
	}
}

// TestGridSampleGrad checks GridSample's gradients numerically.
func TestGridSampleGrad(t *testing.T) {
	dev := ctx.CPU(0)
	for _, o := range []nd.GridSampleOpts{{}, {Padding: nd.GridBorder, AlignCorners: true}, {Padding: nd.GridReflection}} {
		x := nd.RandomUniform(dev, nd.Float64, -1, 1, 1, 2, 3, 4)
		grid := nd.RandomUniform(dev, nd.Float64, -1.3, 1.3, 1, 2, 3, 2)
		ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray { return nd.GridSample(in[0], in[1], o) }, []*nd.NDArray{x, grid}, ndtest.GradTol{})
	}
}
