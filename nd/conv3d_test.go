package nd_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestConv3DPool3DGoldens compares Conv3D, Conv3DTranspose and Pool3D with
// torch's conv3d, conv_transpose3d, max_pool3d and avg_pool3d (testdata/golden/make_goldens_conv3d.py):
// strides, padding, dilation, groups, ceil mode and both padding rules of
// the average, values and gradients, in float64.
func TestConv3DPool3DGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/goldens_conv3d.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Convs []struct {
			XShape              []int `json:"x_shape"`
			X                   []float64
			WShape              []int `json:"w_shape"`
			W, B                []float64
			Stride, Pad, Dilate []int
			Groups              int
			YShape              []int `json:"y_shape"`
			Y, GX, GW, GB       []float64
		}
		Transposed []struct {
			XShape              []int `json:"x_shape"`
			X                   []float64
			WShape              []int `json:"w_shape"`
			W, B                []float64
			Stride, Pad, Dilate []int
			OutputPad           []int `json:"output_pad"`
			Groups              int
			YShape              []int `json:"y_shape"`
			Y, GX, GW, GB       []float64
		}
		Pools []struct {
			Kind                string
			XShape              []int `json:"x_shape"`
			X                   []float64
			Kernel, Stride, Pad []int
			Ceil                bool
			IncludePad          bool  `json:"include_pad"`
			YShape              []int `json:"y_shape"`
			Y, GX               []float64
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	dev := ctx.CPU(0)
	three := func(v []int) [3]int { return [3]int{v[0], v[1], v[2]} }
	check := func(t *testing.T, what string, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-10 {
				t.Fatalf("%s %d: %v, torch %v", what, i, got[i], want[i])
			}
		}
	}
	run := func(t *testing.T, y func() *nd.NDArray, yShape []int, want []float64) *nd.NDArray {
		t.Helper()
		var out *nd.NDArray
		autograd.Record(func() {
			out = y()
			head := nd.Reshape(nd.FromSlice(dev, linspace(-1, 1, out.Size()), out.Size()), out.Shape()...)
			autograd.Backward(nd.Sum(nd.Mul(out, head)))
		})
		if !slices.Equal(out.Shape(), yShape) {
			t.Fatalf("shape %v, torch %v", out.Shape(), yShape)
		}
		check(t, "value", out.Float64s(), want)
		return out
	}
	for i, c := range g.Convs {
		t.Run(fmt.Sprintf("conv%d", i), func(t *testing.T) {
			x, w := nd.FromSlice(dev, c.X, c.XShape...), nd.FromSlice(dev, c.W, c.WShape...)
			x.AttachGrad(nd.GradWrite)
			w.AttachGrad(nd.GradWrite)
			var bias *nd.NDArray
			if c.B != nil {
				bias = nd.FromSlice(dev, c.B, len(c.B))
				bias.AttachGrad(nd.GradWrite)
			}
			o := nd.Conv3DOpts{Stride: three(c.Stride), Pad: three(c.Pad), Dilate: three(c.Dilate), Groups: c.Groups}
			run(t, func() *nd.NDArray { return nd.Conv3D(x, w, bias, o) }, c.YShape, c.Y)
			check(t, "grad x", x.Grad().Float64s(), c.GX)
			check(t, "grad w", w.Grad().Float64s(), c.GW)
			if bias != nil {
				check(t, "grad bias", bias.Grad().Float64s(), c.GB)
			}
		})
	}
	for i, c := range g.Transposed {
		t.Run(fmt.Sprintf("transposed%d", i), func(t *testing.T) {
			x, w := nd.FromSlice(dev, c.X, c.XShape...), nd.FromSlice(dev, c.W, c.WShape...)
			x.AttachGrad(nd.GradWrite)
			w.AttachGrad(nd.GradWrite)
			var bias *nd.NDArray
			if c.B != nil {
				bias = nd.FromSlice(dev, c.B, len(c.B))
				bias.AttachGrad(nd.GradWrite)
			}
			o := nd.Conv3DTransposeOpts{Stride: three(c.Stride), Pad: three(c.Pad), OutputPad: three(c.OutputPad), Dilate: three(c.Dilate), Groups: c.Groups}
			run(t, func() *nd.NDArray { return nd.Conv3DTranspose(x, w, bias, o) }, c.YShape, c.Y)
			check(t, "grad x", x.Grad().Float64s(), c.GX)
			check(t, "grad w", w.Grad().Float64s(), c.GW)
			if bias != nil {
				check(t, "grad bias", bias.Grad().Float64s(), c.GB)
			}
		})
	}
	for i, c := range g.Pools {
		t.Run(fmt.Sprintf("%s-pool%d", c.Kind, i), func(t *testing.T) {
			x := nd.FromSlice(dev, c.X, c.XShape...)
			x.AttachGrad(nd.GradWrite)
			o := nd.Pool3DOpts{Type: nd.PoolAvg, Kernel: three(c.Kernel), Stride: three(c.Stride), Pad: three(c.Pad), CeilMode: c.Ceil, ExcludePad: !c.IncludePad}
			if c.Kind == "max" {
				o.Type = nd.PoolMax
			}
			run(t, func() *nd.NDArray { return nd.Pool3D(x, o) }, c.YShape, c.Y)
			check(t, "grad x", x.Grad().Float64s(), c.GX)
		})
	}
}

// TestConv3DGrad checks Conv3D's gradients numerically with strides,
// padding, dilation and groups.
func TestConv3DGrad(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.RandomUniform(dev, nd.Float64, -1, 1, 1, 4, 4, 3, 3)
	w := nd.RandomUniform(dev, nd.Float64, -1, 1, 2, 2, 2, 2, 2)
	b := nd.RandomUniform(dev, nd.Float64, -1, 1, 2)
	o := nd.Conv3DOpts{Stride: [3]int{2, 1, 1}, Pad: [3]int{1, 0, 1}, Dilate: [3]int{1, 2, 1}, Groups: 2}
	ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray { return nd.Conv3D(in[0], in[1], in[2], o) }, []*nd.NDArray{x, w, b}, ndtest.GradTol{})
}

// TestConv3DPool3DEdges: a tied global maximum's gradient goes to its
// first position (as PyTorch's and Pool2D's); bad sizes and dtypes are
// errors naming the 3-D op; autocast mixes half inputs and float32
// weights as for Conv2D.
func TestConv3DPool3DEdges(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float64{1, 3, 3, 2, 3, 0, 1, 3}, 1, 1, 2, 2, 2)
	x.AttachGrad(nd.GradWrite)
	autograd.Record(func() {
		autograd.Backward(nd.Sum(nd.Pool3D(x, nd.Pool3DOpts{Type: nd.PoolMax, Global: true})))
	})
	if got := x.Grad().Float64s(); !slices.Equal(got, []float64{0, 1, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("global max gradient %v, want all on the first maximum", got)
	}
	for name, c := range map[string]struct {
		f    func()
		want string
	}{
		"zero kernel depth": {func() {
			nd.Conv3D(nd.Ones(dev, nd.Float32, 1, 2, 3, 3, 3), nd.Ones(dev, nd.Float32, 2, 2, 0, 3, 3), nil, nd.Conv3DOpts{})
		}, "nd.Conv3D"},
		"zero kernel width": {func() {
			nd.Conv3D(nd.Ones(dev, nd.Float32, 1, 2, 3, 3, 3), nd.Ones(dev, nd.Float32, 2, 2, 2, 2, 0), nil, nd.Conv3DOpts{})
		}, "nd.Conv3D"},
		"dtypes": {func() {
			nd.Conv3D(nd.Ones(dev, nd.Float64, 1, 2, 3, 3, 3), nd.Ones(dev, nd.Float32, 2, 2, 1, 1, 1), nil, nd.Conv3DOpts{})
		}, "nd.Conv3D"},
		"pool kernel": {func() {
			nd.Pool3D(nd.Ones(dev, nd.Float32, 1, 2, 3, 3, 3), nd.Pool3DOpts{Kernel: [3]int{2, 0, 2}})
		}, "nd.Pool3D"},
		"pool ints": {func() {
			nd.Pool3D(nd.Ones(dev, nd.Int64, 1, 2, 3, 3, 3), nd.Pool3DOpts{Kernel: [3]int{2, 2, 2}})
		}, "nd.Pool3D"},
		"taps size": {func() { nd.InterpolateTaps([]int{1, 1, 4, 4}, 0, nd.InterpolateOpts{Size: [2]int{-1, 2}}, nd.Float32) }, "must be positive"},
		"taps both": {func() {
			nd.InterpolateTaps([]int{1, 1, 4, 4}, 0, nd.InterpolateOpts{Size: [2]int{2, 2}, Scale: [2]float64{2, 2}}, nd.Float32)
		}, "exactly one"},
	} {
		err := nd.Catch(c.f)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", name, err, c.want)
		}
	}
	var y *nd.NDArray
	err := nd.Catch(func() {
		nd.Autocast(nd.Float16, func() {
			y = nd.Conv3D(nd.Ones(dev, nd.Float16, 1, 2, 3, 3, 3), nd.Ones(dev, nd.Float32, 2, 2, 1, 1, 1), nil, nd.Conv3DOpts{})
		})
	})
	if err != nil || y.DType() != nd.Float16 {
		t.Errorf("autocast: %v", err)
	}
}
