package transforms

import (
	"math"
	"testing"

	"github.com/goluon/goluon/gluon/data"
)

func TestJitterRanges(t *testing.T) {
	for _, c := range []struct {
		k    int
		v    float64
		want [2]float64
	}{
		{jitterBrightness, 0.4, [2]float64{0.6, 1.4}},
		{jitterContrast, 1.5, [2]float64{0, 2.5}}, // clipped at 0, as torchvision
		{jitterSaturation, 0, [2]float64{1, 1}},
		{jitterHue, 0.2, [2]float64{-0.2, 0.2}},
		{jitterHue, 0.5, [2]float64{-0.5, 0.5}},
	} {
		got, msg := around(c.k, c.v)
		if msg != "" || math.Abs(got[0]-c.want[0]) > 1e-15 || math.Abs(got[1]-c.want[1]) > 1e-15 {
			t.Errorf("%s %v: range %v (%q), want %v", jitterNames[c.k], c.v, got, msg, c.want)
		}
	}
}

// replayJitter applies ColorJitter's draws from a generator seeded like
// the transform's: the order, then the enabled factors, each checked to
// lie in its range.
func replayJitter(t *testing.T, x data.Tensor, seed uint64, r [4][2]float64) data.Tensor {
	t.Helper()
	rng := seeded(seed)
	order := rng.Perm(4)
	var f [4]float64
	for k := range f {
		if r[k] != [2]float64{jitterCentre[k], jitterCentre[k]} {
			f[k] = r[k][0] + (r[k][1]-r[k][0])*rng.Float64()
			if f[k] < r[k][0] || f[k] > r[k][1] {
				t.Fatalf("%s factor %v outside %v", jitterNames[k], f[k], r[k])
			}
		} else {
			f[k] = math.NaN()
		}
	}
	for _, k := range order {
		if math.IsNaN(f[k]) {
			continue
		}
		var tr data.Transform
		switch k {
		case jitterBrightness:
			tr = AdjustBrightness(f[k])
		case jitterContrast:
			tr = AdjustContrast(f[k])
		case jitterSaturation:
			tr = AdjustSaturation(f[k])
		default:
			tr = AdjustHue(f[k])
		}
		x = mustRun(t, tr, x, nil)
	}
	return x
}

// TestColorJitterReplay checks that ColorJitter is its documented draws
// followed by the Adjust transforms in the drawn order, on uint8 and
// float32 images, and that the order matters.
func TestColorJitterReplay(t *testing.T) {
	cases := []struct {
		name string
		tr   data.Transform
		r    [4][2]float64
	}{
		{"all four", ColorJitter(0.4, 0.4, 0.4, 0.1), [4][2]float64{{0.6, 1.4}, {0.6, 1.4}, {0.6, 1.4}, {-0.1, 0.1}}},
		{"brightness and hue", ColorJitter(0.8, 0, 0, 0.5), [4][2]float64{{0.2, 1.8}, {1, 1}, {1, 1}, {-0.5, 0.5}}},
		{"explicit ranges", ColorJitterRange([2]float64{0.5, 0.9}, [2]float64{1, 1}, [2]float64{0, 3}, [2]float64{0.1, 0.2}),
			[4][2]float64{{0.5, 0.9}, {1, 1}, {0, 3}, {0.1, 0.2}}},
	}
	x := cifarImage(4)
	x.Shape = []int{16, 64, 3}
	xf := mustRun(t, ToTensor(), x, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			distinct := map[string]bool{}
			for seed := range uint64(60) {
				for _, in := range []data.Tensor{x, xf} {
					got := mustRun(t, c.tr, in, seeded(seed))
					if want := replayJitter(t, in, seed, c.r); !equal(got, want) {
						t.Fatalf("seed %d: ColorJitter differs from its replay on %s input", seed, dtype(in))
					}
				}
				distinct[string(mustRun(t, c.tr, x, seeded(seed)).U8)] = true
			}
			if len(distinct) < 50 {
				t.Errorf("60 seeds gave %d distinct images", len(distinct))
			}
		})
	}
	// The order matters: brightness then contrast differs from contrast
	// then brightness when brightness clips.
	a := mustRun(t, AdjustContrast(0.5), mustRun(t, AdjustBrightness(1.8), x, nil), nil)
	b := mustRun(t, AdjustBrightness(1.8), mustRun(t, AdjustContrast(0.5), x, nil), nil)
	if equal(a, b) {
		t.Error("brightness and contrast commute on a clipping image; the order test is void")
	}
}

// TestRandomAdjustFactors recovers the drawn factor of each Gluon-style
// wrapper from its output and checks its range and mean over many seeds.
func TestRandomAdjustFactors(t *testing.T) {
	const n = 3000
	// One float32 RGB pixel of hue 0.5 (cyan-ish) next to a dark gray one.
	x := f32([]int{3, 1, 2}, 0.1, 0.2, 0.4, 0.2, 0.4, 0.2)
	cases := []struct {
		name   string
		tr     data.Transform
		lo, hi float64
		factor func(y data.Tensor) float64
	}{
		{"RandomBrightness", RandomBrightness(0.5), 0.5, 1.5, func(y data.Tensor) float64 {
			return float64(y.F32[2]) / 0.4
		}},
		{"RandomContrast", RandomContrast(0.3), 0.7, 1.3, func(y data.Tensor) float64 {
			// Both pixels move away from the gray mean by the factor.
			return float64(y.F32[2]-y.F32[3]) / float64(x.F32[2]-x.F32[3])
		}},
		{"RandomSaturation", RandomSaturation(1.5), 0, 2.5, func(y data.Tensor) float64 {
			g := mustRun(t, Grayscale(1), x, nil).F32[0]
			return float64(y.F32[2]-g) / float64(x.F32[2]-g) // green: no clipping
		}},
		{"RandomHue", RandomHue(0.2), -0.2, 0.2, func(y data.Tensor) float64 {
			h0, _, _ := rgbToHSV(x.F32[0], x.F32[2], x.F32[4])
			h1, _, _ := rgbToHSV(y.F32[0], y.F32[2], y.F32[4])
			return math.Remainder(float64(h1-h0), 1)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var sum float64
			lo, hi := math.Inf(1), math.Inf(-1)
			for seed := range uint64(n) {
				f := c.factor(mustRun(t, c.tr, x, seeded(seed)))
				if f < c.lo-1e-5 || f > c.hi+1e-5 {
					t.Fatalf("seed %d: factor %v outside [%v, %v]", seed, f, c.lo, c.hi)
				}
				sum += f
				lo, hi = min(lo, f), max(hi, f)
				again := mustRun(t, c.tr, x, seeded(seed))
				if c.factor(again) != f {
					t.Fatalf("seed %d: a second call with the same seed drew another factor", seed)
				}
			}
			// Uniform: mean within 4 standard errors of the centre, and
			// the extremes near the bounds.
			w := c.hi - c.lo
			if se := w / math.Sqrt(12*n); math.Abs(sum/n-(c.lo+c.hi)/2) > 4*se {
				t.Errorf("mean factor %v, want about %v", sum/n, (c.lo+c.hi)/2)
			}
			if lo > c.lo+0.01*w || hi < c.hi-0.01*w {
				t.Errorf("factors span [%v, %v], want about [%v, %v]", lo, hi, c.lo, c.hi)
			}
		})
	}
}

// TestRandomAdjustDisabled checks that a zero amount returns the input
// itself without drawing.
func TestRandomAdjustDisabled(t *testing.T) {
	x := rgbU8
	for name, tr := range map[string]data.Transform{
		"RandomBrightness": RandomBrightness(0), "RandomContrast": RandomContrast(0),
		"RandomSaturation": RandomSaturation(0), "RandomHue": RandomHue(0),
		"ColorJitter":      ColorJitter(0, 0, 0, 0),
		"ColorJitterRange": ColorJitterRange([2]float64{1, 1}, [2]float64{1, 1}, [2]float64{1, 1}, [2]float64{}),
	} {
		if got := mustRun(t, tr, x, seeded(3)); &got.U8[0] != &x.U8[0] {
			t.Errorf("%s with nothing to jitter copied the image", name)
		}
	}
}
