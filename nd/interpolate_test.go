package nd_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// interpolateGoldens is testdata/golden/goldens_interpolate.json
// (make_goldens_interpolate.py).
type interpolateGoldens struct {
	Inputs []struct {
		DType string
		Shape []int
		X     []float64
	}
	Cases []struct {
		Input        int
		Mode         string
		AlignCorners bool `json:"align_corners"`
		Antialias    bool
		Size         []int
		Scale        []float64
		YShape       []int `json:"y_shape"`
		Y            []float64
		Grad         []float64
	}
}

// TestInterpolateGoldens compares Interpolate's values and gradients with
// torch.nn.functional.interpolate in float32 and float64.
func TestInterpolateGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/goldens_interpolate.json")
	if err != nil {
		t.Fatal(err)
	}
	var g interpolateGoldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no cases")
	}
	dev := ctx.CPU(0)
	for i, c := range g.Cases {
		in := g.Inputs[c.Input]
		o := nd.InterpolateOpts{AlignCorners: c.AlignCorners, Antialias: c.Antialias}
		if c.Mode == "bilinear" {
			o.Mode = nd.InterpBilinear
		}
		if c.Size != nil {
			o.Size = [2]int{c.Size[0], c.Size[1]}
		} else {
			o.Scale = [2]float64{c.Scale[0], c.Scale[1]}
		}
		dt, tol := nd.Float32, 2e-6
		if in.DType == "float64" {
			dt, tol = nd.Float64, 1e-12
		}
		name := fmt.Sprintf("%d/%s/%s%v/ac=%v/aa=%v/size=%v/scale=%v", i, in.DType, c.Mode, in.Shape, c.AlignCorners, c.Antialias, c.Size, c.Scale)
		t.Run(name, func(t *testing.T) {
			x := nd.FromSlice(dev, in.X, in.Shape...).AsType(dt)
			x.AttachGrad(nd.GradWrite)
			var y *nd.NDArray
			autograd.Record(func() {
				y = nd.Interpolate(x, o)
				head := nd.FromSlice(dev, linspace(-1, 1, len(c.Y)), c.YShape...).AsType(dt)
				autograd.Backward(nd.Sum(nd.Mul(y, head)))
			})
			if !slices.Equal(y.Shape(), c.YShape) {
				t.Fatalf("shape %v, PyTorch %v", y.Shape(), c.YShape)
			}
			compare := func(what string, got, want []float64) {
				t.Helper()
				for j := range want {
					if d := math.Abs(got[j] - want[j]); d > tol*math.Max(1, math.Abs(want[j])) {
						t.Fatalf("%s %d: %v, PyTorch %v (difference %.3g)", what, j, got[j], want[j], d)
					}
				}
			}
			compare("value", y.AsType(nd.Float64).Float64s(), c.Y)
			if c.Mode == "nearest" && c.Scale != nil && in.Shape[1] > 1 && int(float64(in.Shape[2])*c.Scale[0]) == in.Shape[2] {
				// PyTorch 1.13's nearest backward copies an axis that keeps
				// its size, where its forward (of several channels)
				// resamples it: its autograd gradient disagrees with its own
				// numerical one there. TestInterpolateGrad checks ours.
				return
			}
			compare("gradient", x.Grad().AsType(nd.Float64).Float64s(), c.Grad)
		})
	}
}

// linspace is torch.linspace(lo, hi, n).
func linspace(lo, hi float64, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		if n == 1 {
			v[i] = lo
			continue
		}
		v[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return v
}

// TestInterpolateGrad checks the gradient numerically in float64 for each
// mode, on a 3-D array (a batch of single-channel images without N).
func TestInterpolateGrad(t *testing.T) {
	dev := ctx.CPU(0)
	for _, o := range []nd.InterpolateOpts{
		{Size: [2]int{5, 3}},
		{Size: [2]int{5, 3}, Mode: nd.InterpBilinear},
		{Size: [2]int{7, 9}, Mode: nd.InterpBilinear, AlignCorners: true},
		{Size: [2]int{2, 3}, Mode: nd.InterpBilinear, Antialias: true},
		{Scale: [2]float64{1.5, 0.5}, Mode: nd.InterpBilinear},
		{Scale: [2]float64{1.1, 1.7}},                          // nearest: rows keep their count but resample
		{Scale: [2]float64{1.1, 1.7}, Mode: nd.InterpBilinear}, // bilinear: rows copied
	} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			x := nd.RandomUniform(dev, nd.Float64, -1, 1, 2, 4, 6)
			ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray { return nd.Interpolate(in[0], o) }, []*nd.NDArray{x}, ndtest.GradTol{})
		})
	}
}

// TestInterpolateDTypes: nearest copies every dtype's values; bilinear on
// half precision equals the float32 result rounded once.
func TestInterpolateDTypes(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []int64{1, 2, 3, 4, 5, 6}, 1, 2, 3)
	for _, dt := range []nd.DType{nd.Int64, nd.Int32, nd.Uint8, nd.Float32} {
		y := nd.Interpolate(x.AsType(dt), nd.InterpolateOpts{Scale: [2]float64{2, 1}})
		if got := y.AsType(nd.Int64).Int64s(); !slices.Equal(got, []int64{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}) || y.DType() != dt {
			t.Errorf("%v: nearest ×2 rows gave %v %v", dt, y.DType(), got)
		}
	}
	f := nd.RandomUniform(dev, nd.Float32, 0, 1, 1, 1, 6, 5)
	o := nd.InterpolateOpts{Size: [2]int{4, 7}, Mode: nd.InterpBilinear, Antialias: true}
	want := nd.Interpolate(f, o).AsType(nd.BFloat16).AsType(nd.Float32).Float32s()
	got := nd.Interpolate(f.AsType(nd.BFloat16), o)
	if got.DType() != nd.BFloat16 {
		t.Fatalf("bfloat16 input gave %v", got.DType())
	}
	// The bfloat16 input itself is rounded, so compare within its precision.
	for i, v := range got.AsType(nd.Float32).Float32s() {
		if math.Abs(float64(v-want[i])) > 0.02 {
			t.Fatalf("bfloat16 value %d: %v, float32 %v", i, v, want[i])
		}
	}
}

func TestInterpolateErrors(t *testing.T) {
	dev := ctx.CPU(0)
	img := nd.Zeros(dev, nd.Float32, 1, 1, 4, 4)
	for _, c := range []struct {
		name string
		x    *nd.NDArray
		o    nd.InterpolateOpts
		kind nd.ErrorKind
	}{
		{"neither size nor scale", img, nd.InterpolateOpts{}, nd.ErrArgument},
		{"both", img, nd.InterpolateOpts{Size: [2]int{2, 2}, Scale: [2]float64{2, 2}}, nd.ErrArgument},
		{"zero size", img, nd.InterpolateOpts{Size: [2]int{0, 2}}, nd.ErrArgument},
		{"negative scale", img, nd.InterpolateOpts{Scale: [2]float64{-1, 2}}, nd.ErrArgument},
		{"infinite scale", img, nd.InterpolateOpts{Scale: [2]float64{math.Inf(1), 2}}, nd.ErrArgument},
		{"scale to nothing", img, nd.InterpolateOpts{Scale: [2]float64{0.1, 1}}, nd.ErrArgument},
		{"unknown mode", img, nd.InterpolateOpts{Size: [2]int{2, 2}, Mode: 9}, nd.ErrArgument},
		{"nearest align corners", img, nd.InterpolateOpts{Size: [2]int{2, 2}, AlignCorners: true}, nd.ErrArgument},
		{"align corners and antialias", img, nd.InterpolateOpts{Size: [2]int{2, 2}, Mode: nd.InterpBilinear, AlignCorners: true, Antialias: true}, nd.ErrArgument},
		{"1-D", nd.Zeros(dev, nd.Float32, 4), nd.InterpolateOpts{Size: [2]int{2, 2}}, nd.ErrShape},
		{"empty image", nd.Zeros(dev, nd.Float32, 1, 0, 4), nd.InterpolateOpts{Size: [2]int{2, 2}}, nd.ErrShape},
		{"bilinear integers", nd.Zeros(dev, nd.Int32, 4, 4), nd.InterpolateOpts{Size: [2]int{2, 2}, Mode: nd.InterpBilinear}, nd.ErrDType},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := nd.Catch(func() { nd.Interpolate(c.x, c.o) })
			if !errors.Is(err, &nd.Error{Kind: c.kind}) {
				t.Fatalf("got %v, want a %v error", err, c.kind)
			}
		})
	}
}

func TestResampleAxisErrors(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.Zeros(dev, nd.Float32, 3, 4)
	for _, c := range []struct {
		name string
		x    *nd.NDArray
		idx  [][]int64
		w    [][]float64
		kind nd.ErrorKind
	}{
		{"no taps", x, nil, nil, nd.ErrArgument},
		{"ragged taps", x, [][]int64{{0, 1}, {0}}, [][]float64{{1, 1}, {1}}, nd.ErrArgument},
		{"weights for other taps", x, [][]int64{{0}}, [][]float64{{1}, {1}}, nd.ErrArgument},
		{"two taps without weights", x, [][]int64{{0}, {1}}, nil, nd.ErrArgument},
		{"weighted integers", nd.Zeros(dev, nd.Int64, 3), [][]int64{{0}}, [][]float64{{1}}, nd.ErrDType},
		{"empty axis", nd.Zeros(dev, nd.Float32, 0, 2), [][]int64{{0}}, nil, nd.ErrShape},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := nd.Catch(func() { nd.ResampleAxis(c.x, 0, c.idx, c.w) })
			if !errors.Is(err, &nd.Error{Kind: c.kind}) {
				t.Fatalf("got %v, want a %v error", err, c.kind)
			}
		})
	}
}

// TestNearestIndexGoldens compares the nearest source index of every
// output position with PyTorch's over a sweep of sizes, scales, channel
// counts and dtypes (testdata/golden/make_goldens_nearest.py).
func TestNearestIndexGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/goldens_nearest.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			DType    string
			Channels int
			In       int
			Scale    float64
			Size     int
			Idx      []int64
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, c := range g.Cases {
		o := nd.InterpolateOpts{Scale: [2]float64{c.Scale, 1}}
		if c.Size != 0 {
			o = nd.InterpolateOpts{Size: [2]int{c.Size, 1}}
		}
		dt := nd.Float32
		if c.DType == "float64" {
			dt = nd.Float64
		}
		idx, _ := nd.InterpolateTaps([]int{1, c.Channels, c.In, 1}, 0, o, dt)
		if !slices.Equal(idx[0], c.Idx) {
			if bad++; bad <= 5 {
				t.Errorf("%s, %d channels, %d → scale %g size %d: %v, PyTorch %v", c.DType, c.Channels, c.In, c.Scale, c.Size, idx[0], c.Idx)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d cases differ", bad, len(g.Cases))
	}
}
