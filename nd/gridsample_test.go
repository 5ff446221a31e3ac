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

// gridSampleCase is one case of testdata/golden/goldens_gridsample.json.
type gridSampleCase struct {
	Mode, Padding                string
	AlignCorners                 bool `json:"align_corners"`
	X, Grid, Theta, Y, GX, GGrid []float64
	GTheta                       []float64
	Size                         []int
}

func (c gridSampleCase) opts() nd.GridSampleOpts {
	pads := map[string]nd.GridPadding{"zeros": nd.GridZeros, "border": nd.GridBorder, "reflection": nd.GridReflection}
	return nd.GridSampleOpts{Nearest: c.Mode == "nearest", Padding: pads[c.Padding], AlignCorners: c.AlignCorners}
}

// readGridSampleGoldens reads the bound and affine cases of
// testdata/golden/goldens_gridsample.json.
func readGridSampleGoldens(t *testing.T) (bounds, affine []gridSampleCase) {
	t.Helper()
	b, err := os.ReadFile("testdata/golden/goldens_gridsample.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct{ Bounds, Affine []gridSampleCase }
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Bounds) == 0 || len(g.Affine) == 0 {
		t.Fatal("no bound or affine cases in goldens_gridsample.json")
	}
	return g.Bounds, g.Affine
}

// compareGolden fails at the first element of got farther than 1e-12
// from torch's want.
func compareGolden(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, torch %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("%s %d: %v, torch %v", what, i, got[i], want[i])
		}
	}
}

// TestGridSampleBoundGoldens compares GridSample with torch at positions
// exactly on the clipping bounds (edge pixels' centres, outer edges,
// points that reflect onto an edge), where torch's border and reflection
// paddings give the grid no gradient.
func TestGridSampleBoundGoldens(t *testing.T) {
	bounds, _ := readGridSampleGoldens(t)
	dev := ctx.CPU(0)
	for _, c := range bounds {
		t.Run(fmt.Sprintf("%s/%s/ac=%v", c.Mode, c.Padding, c.AlignCorners), func(t *testing.T) {
			x, grid := nd.FromSlice(dev, c.X, 1, 2, 4, 8), nd.FromSlice(dev, c.Grid, 1, 9, 11, 2)
			x.AttachGrad(nd.GradWrite)
			grid.AttachGrad(nd.GradWrite)
			var y *nd.NDArray
			autograd.Record(func() {
				y = nd.GridSample(x, grid, c.opts())
				head := nd.Reshape(nd.FromSlice(dev, linspace(-1, 1, y.Size()), y.Size()), y.Shape()...)
				autograd.Backward(nd.Sum(nd.Mul(y, head)))
			})
			compareGolden(t, "value", y.Float64s(), c.Y)
			compareGolden(t, "input gradient", x.Grad().Float64s(), c.GX)
			compareGolden(t, "grid gradient", grid.Grad().Float64s(), c.GGrid)
		})
	}
}

// TestAffineGridSampleGoldens compares AffineGrid then GridSample (the
// spatial transformer) with torch, values and theta's gradient, for the
// identity theta (whose edge pixels lie on the bounds), a doubled and a
// shifted one, every mode and padding.
func TestAffineGridSampleGoldens(t *testing.T) {
	_, affine := readGridSampleGoldens(t)
	dev := ctx.CPU(0)
	for i, c := range affine {
		t.Run(fmt.Sprintf("%s/%s/ac=%v/%d", c.Mode, c.Padding, c.AlignCorners, i%3), func(t *testing.T) {
			x, theta := nd.FromSlice(dev, c.X, c.Size...), nd.FromSlice(dev, c.Theta, 1, 2, 3)
			if c.Mode == "nearest" {
				// Nearest sampling does not depend on theta: torch's
				// gradient is 0, and GridSample records no path to theta.
				compareGolden(t, "value", nd.GridSample(x, nd.AffineGrid(theta, c.Size, c.AlignCorners), c.opts()).Float64s(), c.Y)
				compareGolden(t, "theta gradient", make([]float64, 6), c.GTheta)
				return
			}
			theta.AttachGrad(nd.GradWrite)
			var y *nd.NDArray
			autograd.Record(func() {
				y = nd.GridSample(x, nd.AffineGrid(theta, c.Size, c.AlignCorners), c.opts())
				head := nd.Reshape(nd.FromSlice(dev, linspace(-1, 1, y.Size()), y.Size()), y.Shape()...)
				autograd.Backward(nd.Sum(nd.Mul(y, head)))
			})
			compareGolden(t, "value", y.Float64s(), c.Y)
			compareGolden(t, "theta gradient", theta.Grad().Float64s(), c.GTheta)
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
