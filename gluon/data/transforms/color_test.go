package transforms

import (
	"math"
	"testing"

	"github.com/goluon/goluon/gluon/data"
)

// rgb is a 1x4 RGB image (red, a green-blue, a gray, white) as HWC uint8
// and as CHW float32 in [0, 1].
var (
	rgbU8  = u8([]int{1, 4, 3}, 255, 0, 0, 20, 140, 200, 90, 90, 90, 255, 255, 255)
	rgbF32 = f32([]int{3, 1, 4}, 1, 0.08, 0.35, 1, 0, 0.55, 0.35, 1, 0, 0.78, 0.35, 1)
)

func TestAdjustSpecialFactors(t *testing.T) {
	gray1 := mustRun(t, Grayscale(3), rgbF32, nil)
	mean := float32(0)
	for _, v := range mustRun(t, Grayscale(1), rgbF32, nil).F32 {
		mean += v
	}
	mean /= 4
	cases := []struct {
		name string
		tr   data.Transform
		in   data.Tensor
		want data.Tensor
	}{
		{"brightness 1 is the identity (uint8)", AdjustBrightness(1), rgbU8, rgbU8},
		{"brightness 1 is the identity (float32)", AdjustBrightness(1), rgbF32, rgbF32},
		{"brightness 0 is black", AdjustBrightness(0), rgbU8, u8([]int{1, 4, 3}, make([]uint8, 12)...)},
		{"brightness 2 doubles and clamps (uint8)", AdjustBrightness(2), u8([]int{1, 2}, 100, 200), u8([]int{1, 2}, 200, 255)},
		{"brightness 2 doubles and clamps (float32)", AdjustBrightness(2), f32([]int{1, 2}, 0.25, 0.75), f32([]int{1, 2}, 0.5, 1)},
		{"brightness truncates uint8", AdjustBrightness(0.5), u8([]int{1, 3}, 1, 3, 255), u8([]int{1, 3}, 0, 1, 127)},
		{"contrast 1 is the identity", AdjustContrast(1), rgbF32, rgbF32},
		{"contrast 0 is the gray mean", AdjustContrast(0), rgbF32, f32([]int{3, 1, 4}, mean, mean, mean, mean, mean, mean, mean, mean, mean, mean, mean, mean)},
		{"contrast of one channel uses its mean", AdjustContrast(0), u8([]int{1, 2}, 10, 31), u8([]int{1, 2}, 20, 20)},
		{"saturation 1 is the identity", AdjustSaturation(1), rgbU8, rgbU8},
		{"saturation 0 is the grayscale image", AdjustSaturation(0), rgbF32, gray1},
		{"white uint8 grays to 254, as torchvision", Grayscale(1), u8([]int{1, 1, 3}, 255, 255, 255), u8([]int{1, 1, 1}, 254)},
		{"grayscale weights", Grayscale(1), f32([]int{3, 1, 1}, 1, 0, 0), f32([]int{1, 1, 1}, float32(grayWeights[0]))},
		{"grayscale of HW to 3 channels is CHW", Grayscale(3), f32([]int{1, 2}, 0.5, 1), f32([]int{3, 1, 2}, 0.5, 1, 0.5, 1, 0.5, 1)},
		{"grayscale of HW uint8 to 3 channels is HWC", Grayscale(3), u8([]int{1, 2}, 7, 9), u8([]int{1, 2, 3}, 7, 7, 7, 9, 9, 9)},
		{"hue ±0.5 swaps red for cyan", AdjustHue(0.5), f32([]int{3, 1, 1}, 1, 0, 0), f32([]int{3, 1, 1}, 0, 1, 1)},
		{"hue 1/3 turns red to green", AdjustHue(1.0 / 3), u8([]int{1, 1, 3}, 255, 0, 0), u8([]int{1, 1, 3}, 0, 255, 0)},
		{"hue keeps grays", AdjustHue(0.3), f32([]int{3, 1, 1}, 0.5, 0.5, 0.5), f32([]int{3, 1, 1}, 0.5, 0.5, 0.5)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mustRun(t, c.tr, c.in, nil); !equal(got, c.want) {
				t.Errorf("got %v %v%v, want %v%v", got.Shape, got.U8, got.F32, c.want.U8, c.want.F32)
			}
		})
	}
}

// TestOneChannelUnchanged checks that saturation, hue and grayscale
// return a one-channel image itself, as torchvision returns it.
func TestOneChannelUnchanged(t *testing.T) {
	x := f32([]int{1, 2, 2}, 0.1, 0.2, 0.3, 0.4)
	hw := u8([]int{2, 2}, 1, 2, 3, 4)
	for name, tr := range map[string]data.Transform{
		"AdjustSaturation": AdjustSaturation(0.3), "AdjustHue": AdjustHue(0.2), "Grayscale(1)": Grayscale(1),
		"RandomGrayscale(1)": RandomGrayscale(1), "RandomSaturation": RandomSaturation(0.9), "RandomHue": RandomHue(0.4),
		"ColorJitter(saturation, hue)": ColorJitter(0, 0, 0.5, 0.5),
	} {
		for _, in := range []data.Tensor{x, hw} {
			got := mustRun(t, tr, in, seeded(1))
			if !equal(got, in) || (in.F32 != nil && &got.F32[0] != &in.F32[0]) || (in.U8 != nil && &got.U8[0] != &in.U8[0]) {
				t.Errorf("%s changed or copied a one-channel %v image", name, in.Shape)
			}
		}
	}
}

func TestHSVRoundTrip(t *testing.T) {
	// HSV and back is the identity within float32 rounding, and the hue
	// of the primaries is a third of a turn apart.
	rng := seeded(5)
	for range 2000 {
		r, g, b := rng.Float32(), rng.Float32(), rng.Float32()
		h, s, v := rgbToHSV(r, g, b)
		if h < 0 || h >= 1 || s < 0 || s > 1 || v != max(r, g, b) {
			t.Fatalf("rgbToHSV(%v, %v, %v) = %v, %v, %v", r, g, b, h, s, v)
		}
		r2, g2, b2 := hsvToRGB(h, s, v)
		if math.Abs(float64(r2-r)) > 1e-6 || math.Abs(float64(g2-g)) > 1e-6 || math.Abs(float64(b2-b)) > 1e-6 {
			t.Fatalf("(%v, %v, %v) -> HSV -> (%v, %v, %v)", r, g, b, r2, g2, b2)
		}
	}
	for _, c := range []struct{ r, g, b, h float32 }{{1, 0, 0, 0}, {0, 1, 0, 1.0 / 3}, {0, 0, 1, 2.0 / 3}, {1, 1, 0, 1.0 / 6}} {
		if h, _, _ := rgbToHSV(c.r, c.g, c.b); math.Abs(float64(h-c.h)) > 1e-7 {
			t.Errorf("hue of (%v, %v, %v) = %v, want %v", c.r, c.g, c.b, h, c.h)
		}
	}
}

func TestRandomGrayscaleProbability(t *testing.T) {
	const n = 4000
	for _, p := range []float64{0, 0.1, 0.5, 1} {
		tr := RandomGrayscale(p)
		gray := 0
		for seed := range uint64(n) {
			y := mustRun(t, tr, rgbU8, seeded(seed))
			switch {
			case equal(y, rgbU8):
			case equal(y, mustRun(t, Grayscale(3), rgbU8, nil)):
				gray++
			default:
				t.Fatalf("p=%v: output %v is neither the input nor its grayscale", p, y.U8)
			}
		}
		if sigma := math.Sqrt(n * p * (1 - p)); math.Abs(float64(gray)-n*p) > 4*sigma+0.5 {
			t.Errorf("p=%v: %d of %d images gray, want about %.0f", p, gray, n, n*p)
		}
	}
}

func TestColorErrors(t *testing.T) {
	two := u8([]int{1, 1, 2}, 1, 2)
	four := f32([]int{4, 1, 1}, 1, 2, 3, 4)
	img := rgbF32
	cases := []struct {
		op string
		tr data.Transform
		x  data.Tensor
	}{
		{"AdjustBrightness", AdjustBrightness(-0.1), img},
		{"AdjustBrightness", AdjustBrightness(math.Inf(1)), img},
		{"AdjustContrast", AdjustContrast(math.NaN()), img},
		{"AdjustSaturation", AdjustSaturation(-1), img},
		{"AdjustHue", AdjustHue(0.51), img},
		{"AdjustHue", AdjustHue(math.NaN()), img},
		{"AdjustBrightness", AdjustBrightness(1), two},
		{"AdjustContrast", AdjustContrast(1), four},
		{"AdjustSaturation", AdjustSaturation(1), two},
		{"AdjustHue", AdjustHue(0), four},
		{"Grayscale", Grayscale(2), img},
		{"Grayscale", Grayscale(1), four},
		{"RandomGrayscale", RandomGrayscale(1.1), img},
		{"RandomGrayscale", RandomGrayscale(0), two},
		{"ColorJitter", ColorJitter(-0.1, 0, 0, 0), img},
		{"ColorJitter", ColorJitter(0, 0, 0, 0.6), img},
		{"ColorJitter", ColorJitter(0, math.Inf(1), 0, 0), img},
		{"ColorJitter", ColorJitter(0.2, 0.2, 0.2, 0.1), four},
		{"ColorJitterRange", ColorJitterRange([2]float64{1.2, 0.8}, [2]float64{1, 1}, [2]float64{1, 1}, [2]float64{}), img},
		{"ColorJitterRange", ColorJitterRange([2]float64{-1, 1}, [2]float64{1, 1}, [2]float64{1, 1}, [2]float64{}), img},
		{"ColorJitterRange", ColorJitterRange([2]float64{1, 1}, [2]float64{1, 1}, [2]float64{1, 1}, [2]float64{-0.6, 0}), img},
		{"RandomBrightness", RandomBrightness(-1), img},
		{"RandomContrast", RandomContrast(0.5), two},
		{"RandomSaturation", RandomSaturation(math.NaN()), img},
		{"RandomHue", RandomHue(0.7), img},
	}
	for _, c := range cases {
		_, err := c.tr(c.x, seeded(1))
		wantError(t, err, c.op)
	}
	for op, tr := range map[string]data.Transform{
		"RandomGrayscale": RandomGrayscale(0.5), "ColorJitter": ColorJitter(0.1, 0, 0, 0),
		"RandomBrightness": RandomBrightness(0.1),
	} {
		_, err := tr(img, nil)
		wantError(t, err, op)
	}
	for name, x := range badInputs {
		for op, tr := range map[string]data.Transform{
			"AdjustBrightness": AdjustBrightness(1), "AdjustContrast": AdjustContrast(1),
			"AdjustSaturation": AdjustSaturation(1), "AdjustHue": AdjustHue(0), "Grayscale": Grayscale(1),
			"RandomGrayscale": RandomGrayscale(1), "ColorJitter": ColorJitter(0.1, 0.1, 0.1, 0.1),
			"RandomHue": RandomHue(0.1),
		} {
			if _, err := tr(x, seeded(1)); err == nil {
				t.Errorf("%s accepted %s input", op, name)
			}
		}
	}
}
