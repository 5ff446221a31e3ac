package transforms

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"testing"

	"github.com/goluon/goluon/gluon/data"
)

// colorGoldens is testdata/color_goldens.json (make_goldens_color.py):
// torchvision 0.14's functional ops on CHW tensors with fixed parameters.
// Float values are written in the shortest form that reads back as the
// same float32, so they are decoded as float32.
type colorGoldens struct {
	Torch, Torchvision string
	Images             []struct {
		Dtype string
		Shape []int // CHW
		X     []float32
	}
	Cases []goldenCase
}

type goldenCase struct {
	Op       string
	Image    int
	Shape    []int // CHW
	Y        []float32
	Factor   float64
	Channels int
	// rotate and affine
	Angle     float64
	Interp    string
	Expand    bool
	Center    []float64
	Fill      []float64
	Translate []float64
	Scale     float64
	Shear     []float64
	// blur
	Kernel []int
	Sigma  []float64
	// erase
	Top, Left, H, W int
	Value           []float64
	// linear
	Matrix, Mean []float32
}

func loadColorGoldens(t *testing.T) colorGoldens {
	t.Helper()
	b, err := os.ReadFile("testdata/color_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g colorGoldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no cases in color_goldens.json")
	}
	return g
}

func f32s(v []float64) []float32 {
	if v == nil {
		return nil
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// goldenInput returns a golden image in this package's layout: uint8 CHW
// becomes HWC.
func goldenInput(dtype string, shape []int, x []float32) data.Tensor {
	if dtype == "float32" {
		return f32(slices.Clone(shape), slices.Clone(x)...)
	}
	c, h, w := shape[0], shape[1], shape[2]
	out := make([]uint8, len(x))
	for ch := range c {
		for p := range h * w {
			out[p*c+ch] = uint8(x[ch*h*w+p])
		}
	}
	return u8([]int{h, w, c}, out...)
}

// chwValues returns y's values in CHW order with its CHW shape.
func chwValues(y data.Tensor) ([]int, []float64) {
	if y.F32 != nil {
		shape := slices.Clone(y.Shape)
		if len(shape) == 2 {
			shape = append([]int{1}, shape...)
		}
		out := make([]float64, len(y.F32))
		for i, v := range y.F32 {
			out[i] = float64(v)
		}
		return shape, out
	}
	h, w, c := y.Shape[0], y.Shape[1], 1
	if len(y.Shape) == 3 {
		c = y.Shape[2]
	}
	out := make([]float64, len(y.U8))
	for ch := range c {
		for p := range h * w {
			out[ch*h*w+p] = float64(y.U8[p*c+ch])
		}
	}
	return []int{c, h, w}, out
}

// goldenTransform builds the transform a golden case applied.
func goldenTransform(t *testing.T, c goldenCase) data.Transform {
	opts := RotateOpts{Expand: c.Expand, Fill: f32s(c.Fill)}
	if c.Interp == "nearest" {
		opts.Interp = InterpNearest
	}
	if c.Center != nil {
		opts.Center = &[2]float64{c.Center[0], c.Center[1]}
	}
	switch c.Op {
	case "brightness":
		return AdjustBrightness(c.Factor)
	case "contrast":
		return AdjustContrast(c.Factor)
	case "saturation":
		return AdjustSaturation(c.Factor)
	case "hue":
		return AdjustHue(c.Factor)
	case "grayscale":
		return Grayscale(c.Channels)
	case "blur":
		return Blur([2]int{c.Kernel[1], c.Kernel[0]}, [2]float64{c.Sigma[1], c.Sigma[0]}) // torchvision's (x, y)
	case "rotate":
		return Rotate(c.Angle, opts)
	case "affine":
		return Affine(c.Angle, [2]float64{c.Translate[0], c.Translate[1]}, c.Scale, [2]float64{c.Shear[0], c.Shear[1]}, opts)
	case "erase":
		return Erase(c.Top, c.Left, c.H, c.W, f32s(c.Value)...)
	case "linear":
		return LinearTransformation(c.Matrix, c.Mean)
	}
	t.Fatalf("unknown golden op %q", c.Op)
	return nil
}

// goldenTolerance is the largest difference allowed from torchvision. The
// colour, grayscale, rotation, affine and erasing results are exact; the
// blur, computed separably in float64 where torch convolves in float32,
// is within float32 rounding and can round a uint8 half the other way;
// the linear transformation's sums are accumulated in another order.
func goldenTolerance(op, dtype string) float64 {
	switch {
	case op == "blur" && dtype == "uint8":
		return 1
	case op == "blur" || op == "linear":
		return 1e-6
	}
	return 0
}

// TestColorGoldens compares the colour, grayscale, rotation, affine,
// blur, erasing and linear transforms with torchvision's functional ops on
// the same images and parameters, and logs the largest difference of
// each op and element type.
func TestColorGoldens(t *testing.T) {
	g := loadColorGoldens(t)
	worst := map[string]float64{}
	for i, c := range g.Cases {
		img := g.Images[c.Image]
		x := goldenInput(img.Dtype, img.Shape, img.X)
		key := c.Op + "/" + img.Dtype
		name := fmt.Sprintf("%d/%s%v", i, key, img.Shape)
		t.Run(name, func(t *testing.T) {
			y := mustRun(t, goldenTransform(t, c), x, nil)
			if (y.U8 != nil) != (img.Dtype == "uint8") {
				t.Fatalf("%s input gave %s output", img.Dtype, dtype(y))
			}
			shape, got := chwValues(y)
			if !slices.Equal(shape, c.Shape) || len(got) != len(c.Y) {
				t.Fatalf("shape %v (CHW), torchvision %v", shape, c.Shape)
			}
			tol := goldenTolerance(c.Op, img.Dtype)
			var m float64
			for j, v := range got {
				d := math.Abs(v - float64(c.Y[j]))
				if !(d <= tol) {
					t.Fatalf("value %d: %v, torchvision %v (difference %.3g, tolerance %g)", j, v, c.Y[j], d, tol)
				}
				m = max(m, d)
			}
			worst[key] = max(worst[key], m)
			// A one-channel image gives the same values as HW.
			if img.Shape[0] == 1 && c.Op != "linear" {
				hw := x
				hw.Shape = []int{img.Shape[1], img.Shape[2]}
				_, again := chwValues(mustRun(t, goldenTransform(t, c), hw, nil))
				if !slices.Equal(again, got) {
					t.Errorf("HW image gives other values than the 1-channel image")
				}
			}
		})
	}
	keys := make([]string, 0, len(worst))
	for k := range worst {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-20s max |Goluon - torchvision| = %.3g", k, worst[k])
	}
}
