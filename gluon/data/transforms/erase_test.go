package transforms

import (
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/gluon/data"
)

func TestGaussKernel(t *testing.T) {
	if k := gaussKernel(1, 0.3); !slices.Equal(k, []float32{1}) {
		t.Errorf("size-1 kernel %v, want [1]", k)
	}
	for _, c := range []struct {
		k     int
		sigma float64
	}{{3, 1}, {5, 0.7}, {23, 2}, {9, 0.1}} {
		k := gaussKernel(c.k, c.sigma)
		var sum float64
		for i, v := range k {
			sum += float64(v)
			if v != k[len(k)-1-i] {
				t.Errorf("kernel %d σ=%v not symmetric: %v", c.k, c.sigma, k)
				break
			}
			if i > 0 && i <= c.k/2 && v < k[i-1] {
				t.Errorf("kernel %d σ=%v not rising to its centre: %v", c.k, c.sigma, k)
				break
			}
		}
		if math.Abs(sum-1) > 1e-6 {
			t.Errorf("kernel %d σ=%v sums to %v", c.k, c.sigma, sum)
		}
		// The ratio of neighbours is the Gaussian's.
		if c.k > 1 {
			h := c.k / 2
			want := math.Exp(-0.5 / (c.sigma * c.sigma))
			if got := float64(k[h+1] / k[h]); math.Abs(got-want) > 1e-5*max(want, 1e-30) && want > 1e-30 {
				t.Errorf("kernel %d σ=%v: neighbour ratio %v, want %v", c.k, c.sigma, got, want)
			}
		}
	}
}

func TestBlur(t *testing.T) {
	// A constant image stays constant; reflection keeps edges unbiased.
	x := f32([]int{2, 6, 7}, slices.Repeat([]float32{0.25}, 84)...)
	for _, k := range [][2]int{{3, 3}, {1, 5}, {11, 13}} {
		y := mustRun(t, Blur(k, [2]float64{1.5, 0.8}), x, nil)
		for i, v := range y.F32 {
			if math.Abs(float64(v)-0.25) > 1e-6 {
				t.Fatalf("kernel %v: value %d is %v, want 0.25", k, i, v)
			}
		}
	}
	// An impulse spreads into the kernel's outer product: (rows, columns)
	// order.
	imp := f32([]int{7, 9}, make([]float32, 63)...)
	imp.F32[3*9+4] = 1
	y := mustRun(t, Blur([2]int{3, 5}, [2]float64{0.5, 1}), imp, nil)
	kx, ky := gaussKernel(5, 1), gaussKernel(3, 0.5)
	for r := range 7 {
		for c := range 9 {
			var want float64
			if dr, dc := r-3, c-4; dr >= -1 && dr <= 1 && dc >= -2 && dc <= 2 {
				want = float64(ky[dr+1]) * float64(kx[dc+2])
			}
			if math.Abs(float64(y.F32[r*9+c])-want) > 1e-7 {
				t.Fatalf("impulse response at (%d, %d) = %v, want %v", r, c, y.F32[r*9+c], want)
			}
		}
	}
	// uint8 images are blurred and rounded in HWC.
	u := u8([]int{3, 3, 2}, 0, 200, 0, 200, 0, 200, 0, 200, 90, 0, 0, 200, 0, 200, 0, 200, 0, 200)
	yu := mustRun(t, Blur([2]int{3, 3}, [2]float64{1, 1}), u, nil)
	yf := mustRun(t, Blur([2]int{3, 3}, [2]float64{1, 1}), chw(u), nil)
	for i, v := range chw(yu).F32 {
		if want := float32(math.RoundToEven(float64(yf.F32[i]))); v != want {
			t.Fatalf("uint8 value %d is %v, want the rounded float %v", i, v, yf.F32[i])
		}
	}
}

// TestGaussianBlurReplay checks that GaussianBlur draws one sigma
// uniformly from its range per call and applies Blur with it.
func TestGaussianBlurReplay(t *testing.T) {
	x := cifarImage(6)
	sigma := [2]float64{0.1, 2}
	tr := GaussianBlur([2]int{5, 5}, sigma)
	for seed := range uint64(30) {
		s := uniform(seeded(seed), sigma)
		if s < sigma[0] || s > sigma[1] {
			t.Fatalf("sigma %v", s)
		}
		want := mustRun(t, Blur([2]int{5, 5}, [2]float64{s, s}), x, nil)
		if got := mustRun(t, tr, x, seeded(seed)); !equal(got, want) {
			t.Fatalf("seed %d: GaussianBlur differs from Blur(σ=%v)", seed, s)
		}
	}
}

// erased returns the bounding box (top, left, h, w) of the pixels of
// channel 0 that differ from x, checking that every pixel inside it does
// in every channel.
func erased(t *testing.T, x, y data.Tensor) (top, left, h, w int) {
	t.Helper()
	c, H, W := x.Shape[0], x.Shape[1], x.Shape[2]
	top, left, bottom, right := H, W, -1, -1
	for r := range H {
		for col := range W {
			if y.F32[r*W+col] != x.F32[r*W+col] {
				top, left, bottom, right = min(top, r), min(left, col), max(bottom, r), max(right, col)
			}
		}
	}
	if bottom < 0 {
		return 0, 0, 0, 0
	}
	for ch := range c {
		for r := top; r <= bottom; r++ {
			for col := left; col <= right; col++ {
				if i := (ch*H+r)*W + col; y.F32[i] == x.F32[i] {
					t.Fatalf("pixel (%d, %d, %d) inside the erased box kept its value", ch, r, col)
				}
			}
		}
	}
	return top, left, bottom - top + 1, right - left + 1
}

func TestRandomErasing(t *testing.T) {
	const n = 2000
	x := mustRun(t, data.Compose(ToTensor(), Normalize([]float32{0.5}, []float32{0.25})), cifarImage(7), nil)
	for i := range x.F32 {
		x.F32[i] = 3 + x.F32[i]/100 // away from the erasing values
	}
	scale, ratio := [2]float64{0.02, 0.33}, [2]float64{0.3, 3.3}
	tr := RandomErasing(0.5, scale, ratio, 0.1, -0.2, 0.3)
	hits := 0
	for seed := range uint64(n) {
		y := mustRun(t, tr, x, seeded(seed))
		top, left, h, w := erased(t, x, y)
		if h == 0 {
			if &y.F32[0] != &x.F32[0] {
				t.Fatal("an image left unerased was copied")
			}
			continue
		}
		hits++
		area := float64(h*w) / (32 * 32)
		if area < scale[0]*0.7 || area > scale[1]*1.3 || float64(h)/float64(w) < ratio[0]*0.6 || float64(h)/float64(w) > ratio[1]*1.6 {
			t.Fatalf("seed %d: box %dx%d (area %.3f) outside scale %v ratio %v", seed, h, w, area, scale, ratio)
		}
		if h >= 32 || w >= 32 {
			t.Fatalf("seed %d: box %dx%d not smaller than the image", seed, h, w)
		}
		for ch, v := range []float32{0.1, -0.2, 0.3} {
			if got := y.F32[(ch*32+top)*32+left]; got != v {
				t.Fatalf("seed %d: channel %d erased to %v, want %v", seed, ch, got, v)
			}
		}
	}
	if sigma := math.Sqrt(n * 0.25); math.Abs(float64(hits)-n*0.5) > 4*sigma {
		t.Errorf("%d of %d images erased with p=0.5", hits, n)
	}
	// Noise: standard normal values.
	noise := RandomErasingNoise(1, [2]float64{0.3, 0.33}, [2]float64{1, 1})
	var sum, sq float64
	cnt := 0
	for seed := range uint64(50) {
		y := mustRun(t, noise, x, seeded(seed))
		for i, v := range y.F32 {
			if v != x.F32[i] {
				sum += float64(v)
				sq += float64(v) * float64(v)
				cnt++
			}
		}
	}
	if mean, std := sum/float64(cnt), math.Sqrt(sq/float64(cnt)-(sum/float64(cnt))*(sum/float64(cnt))); cnt < 10000 || math.Abs(mean) > 0.05 || math.Abs(std-1) > 0.05 {
		t.Errorf("noise over %d values: mean %v std %v, want 0 and 1", cnt, mean, std)
	}
	// When no rectangle fits (the whole image), the input comes back.
	if y := mustRun(t, RandomErasing(1, [2]float64{1, 1}, [2]float64{1, 1}), x, seeded(1)); &y.F32[0] != &x.F32[0] {
		t.Error("an erasing that cannot fit changed the image")
	}
}

func TestErase(t *testing.T) {
	x := ramp([]int{2, 3, 4}, true)
	y := mustRun(t, Erase(1, 1, 2, 2, 0.5, -1), x, nil)
	want := []float32{1, 2, 3, 4, 5, 0.5, 0.5, 8, 9, 0.5, 0.5, 12, 13, 14, 15, 16, 17, -1, -1, 20, 21, -1, -1, 24}
	if !slices.Equal(y.F32, want) {
		t.Errorf("Erase = %v, want %v", y.F32, want)
	}
	if y := mustRun(t, Erase(0, 0, 1, 4), x, nil); !slices.Equal(y.F32[:4], []float32{0, 0, 0, 0}) || y.F32[12] != 0 {
		t.Errorf("Erase without a value = %v, want zeros", y.F32)
	}
}

func TestLinearTransformation(t *testing.T) {
	x := ramp([]int{1, 2, 2}, true) // 1 2 3 4
	id := []float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}
	if y := mustRun(t, LinearTransformation(id, []float32{1, 1, 1, 1}), x, nil); !slices.Equal(y.F32, []float32{0, 1, 2, 3}) || !slices.Equal(y.Shape, x.Shape) {
		t.Errorf("identity minus 1: %v %v", y.Shape, y.F32)
	}
	// A row vector times the matrix: output j is sum_i x_i·m[i][j].
	m := []float32{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0}
	if y := mustRun(t, LinearTransformation(m, make([]float32, 4)), x, nil); !slices.Equal(y.F32, []float32{8, 0, 0, 1}) {
		t.Errorf("(x)·m = %v, want [8 0 0 1] (x3·m30, x0·m03)", y.F32)
	}
}

func TestEraseBlurLinearErrors(t *testing.T) {
	img := ramp([]int{3, 4, 4}, true)
	cases := []struct {
		op string
		tr data.Transform
		x  data.Tensor
	}{
		{"Blur", Blur([2]int{4, 3}, [2]float64{1, 1}), img},
		{"Blur", Blur([2]int{3, -3}, [2]float64{1, 1}), img},
		{"Blur", Blur([2]int{3, 3}, [2]float64{0, 1}), img},
		{"Blur", Blur([2]int{3, 3}, [2]float64{1, math.Inf(1)}), img},
		{"Blur", Blur([2]int{9, 3}, [2]float64{1, 1}), img}, // half 4 >= width 4
		{"Blur", Blur([2]int{3, 3}, [2]float64{1, 1}), badInputs["rank4"]},
		{"GaussianBlur", GaussianBlur([2]int{3, 3}, [2]float64{2, 1}), img},
		{"GaussianBlur", GaussianBlur([2]int{2, 3}, [2]float64{1, 2}), img},
		{"GaussianBlur", GaussianBlur([2]int{3, 3}, [2]float64{0, 1}), img},
		{"Erase", Erase(-1, 0, 1, 1), img},
		{"Erase", Erase(3, 3, 2, 1), img},
		{"Erase", Erase(0, 0, 1, 1, 1, 2), img},
		{"Erase", Erase(0, 0, 1, 1), cifarImage(1)},
		{"RandomErasing", RandomErasing(1.5, [2]float64{0.1, 0.2}, [2]float64{1, 1}), img},
		{"RandomErasing", RandomErasing(0.5, [2]float64{0.3, 0.2}, [2]float64{1, 1}), img},
		{"RandomErasing", RandomErasing(0.5, [2]float64{0.1, 1.2}, [2]float64{1, 1}), img},
		{"RandomErasing", RandomErasing(0.5, [2]float64{0.1, 0.2}, [2]float64{0, 1}), img},
		{"RandomErasing", RandomErasing(0.5, [2]float64{0.1, 0.2}, [2]float64{1, 1}, 1, 2), img},
		{"RandomErasing", RandomErasing(0.5, [2]float64{0.1, 0.2}, [2]float64{1, 1}), cifarImage(1)},
		{"RandomErasingNoise", RandomErasingNoise(0.5, [2]float64{0.1, 0.2}, [2]float64{2, 1}), img},
		{"LinearTransformation", LinearTransformation(make([]float32, 3), make([]float32, 2)), img},
		{"LinearTransformation", LinearTransformation(nil, nil), img},
		{"LinearTransformation", LinearTransformation(make([]float32, 4), make([]float32, 2)), img},
		{"LinearTransformation", LinearTransformation(make([]float32, 4), make([]float32, 2)), u8([]int{1, 2}, 1, 2)},
	}
	for _, c := range cases {
		_, err := c.tr(c.x, seeded(1))
		wantError(t, err, c.op)
	}
	for op, tr := range map[string]data.Transform{
		"GaussianBlur":  GaussianBlur([2]int{3, 3}, [2]float64{1, 2}),
		"RandomErasing": RandomErasing(0.5, [2]float64{0.1, 0.2}, [2]float64{1, 1}),
	} {
		_, err := tr(img, nil)
		wantError(t, err, op)
	}
}
