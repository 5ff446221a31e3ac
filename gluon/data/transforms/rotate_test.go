package transforms

import (
	"math"
	"math/big"
	"slices"
	"testing"

	"github.com/goluon/goluon/gluon/data"
)

// TestRotateExact checks rotations that move whole pixels, by multiples
// of 90 degrees counter-clockwise, with both filters, on uint8 and float32
// images, and torchvision's expand on a non-square image, which adds the
// input's half size to the rotated corners and so grows an axis of
// half-integer extent by one (torch gives the same 4x3 output).
func TestRotateExact(t *testing.T) {
	img := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	cases := []struct {
		name   string
		angle  float64
		expand bool
		in     []int
		shape  []int
		want   []float32
	}{
		{"0", 0, false, []int{3, 3}, []int{3, 3}, img},
		{"90", 90, false, []int{3, 3}, []int{3, 3}, []float32{3, 6, 9, 2, 5, 8, 1, 4, 7}},
		{"90 expanded", 90, true, []int{3, 3}, []int{3, 3}, []float32{3, 6, 9, 2, 5, 8, 1, 4, 7}},
		{"180", 180, false, []int{3, 3}, []int{3, 3}, []float32{9, 8, 7, 6, 5, 4, 3, 2, 1}},
		{"-90", -90, false, []int{3, 3}, []int{3, 3}, []float32{7, 4, 1, 8, 5, 2, 9, 6, 3}},
		{"270", 270, false, []int{3, 3}, []int{3, 3}, []float32{7, 4, 1, 8, 5, 2, 9, 6, 3}},
		{"360", 360, false, []int{3, 3}, []int{3, 3}, img},
		{"180 of 2x3", 180, false, []int{2, 3}, []int{2, 3}, []float32{6, 5, 4, 3, 2, 1}},
		{"90 of 2x3 keeps the size", 90, false, []int{2, 3}, []int{2, 3}, []float32{3, 3, 0, 1, 1, 0}},
		{"90 of 2x3 expanded is 4x3", 90, true, []int{2, 3}, []int{4, 3}, []float32{3, 3, 0, 3, 3, 0, 1, 1, 0, 1, 1, 0}},
	}
	for _, c := range cases {
		n := c.in[0] * c.in[1]
		interps := []Interp{InterpNearest, InterpBilinear}
		if c.in[0] != c.in[1] && c.angle == 90 {
			interps = interps[:1] // bilinear blends the half-pixel offsets
		}
		for _, interp := range interps {
			opts := RotateOpts{Interp: interp, Expand: c.expand}
			y := mustRun(t, Rotate(c.angle, opts), f32(c.in, img[:n]...), nil)
			if !slices.Equal(y.Shape, c.shape) || !equalFloats(y.F32, c.want) {
				t.Errorf("%s %v float32: %v %v, want %v %v", c.name, interp, y.Shape, y.F32, c.shape, c.want)
			}
			in := u8(append(slices.Clone(c.in), 1))
			for _, v := range img[:n] {
				in.U8 = append(in.U8, uint8(v))
			}
			yu := mustRun(t, Rotate(c.angle, opts), in, nil)
			if want := append(slices.Clone(c.shape), 1); !slices.Equal(yu.Shape, want) {
				t.Errorf("%s %v uint8: shape %v, want %v", c.name, interp, yu.Shape, want)
			}
			for i, v := range yu.U8 {
				if float32(v) != c.want[i] {
					t.Errorf("%s %v uint8: %v, want %v", c.name, interp, yu.U8, c.want)
					break
				}
			}
		}
	}
}

// TestRotateFill checks that corners rotated in from outside take the
// fill, per channel, and that Fill nil leaves zeros.
func TestRotateFill(t *testing.T) {
	x := f32([]int{2, 5, 5}, slices.Repeat([]float32{0.5}, 50)...)
	for _, c := range []struct {
		fill   []float32
		corner [2]float32
	}{{nil, [2]float32{0, 0}}, {[]float32{0.25}, [2]float32{0.25, 0.25}}, {[]float32{0.25, 1}, [2]float32{0.25, 1}}} {
		y := mustRun(t, Rotate(45, RotateOpts{Interp: InterpNearest, Fill: c.fill}), x, nil)
		for ch := range 2 {
			if got := y.F32[ch*25]; got != c.corner[ch] {
				t.Errorf("fill %v: channel %d corner %v, want %v", c.fill, ch, got, c.corner[ch])
			}
			if got := y.F32[ch*25+12]; got != 0.5 {
				t.Errorf("fill %v: channel %d centre %v, want 0.5", c.fill, ch, got)
			}
		}
	}
	// Bilinear with a fill blends it in by the coverage m after the
	// sampling has already weighted the image by m, so a constant image
	// filled with its own value v darkens at the border to
	// v·m² + (1−m)·v, as torchvision's does (torch's first row:
	// 0.40192378, 0.41089839, 0.5, 0.5, 0.40192369).
	y := mustRun(t, Rotate(30, RotateOpts{Fill: []float32{0.5}}), x, nil)
	want := []float32{0.40192378, 0.41089839, 0.5, 0.5, 0.40192369}
	for i, v := range want {
		if math.Abs(float64(y.F32[i]-v)) > 1e-7 {
			t.Errorf("constant image filled with its own value: first row %v, torchvision %v", y.F32[:5], want)
			break
		}
	}
	if y.F32[12] != 0.5 {
		t.Errorf("centre %v, want 0.5", y.F32[12])
	}
}

// TestRandomRotationReplay checks that RandomRotation is one uniform
// angle draw followed by Rotate with fill {0}, and that the angles cover
// the range.
func TestRandomRotationReplay(t *testing.T) {
	x := cifarImage(5)
	degrees := [2]float64{-40, 25}
	opts := RotateOpts{Interp: InterpNearest}
	tr := RandomRotation(degrees, opts)
	lo, hi := math.Inf(1), math.Inf(-1)
	for seed := range uint64(300) {
		angle := uniform(seeded(seed), degrees)
		lo, hi = min(lo, angle), max(hi, angle)
		want := mustRun(t, Rotate(angle, RotateOpts{Interp: InterpNearest, Fill: []float32{0}}), x, nil)
		if got := mustRun(t, tr, x, seeded(seed)); !equal(got, want) {
			t.Fatalf("seed %d: RandomRotation differs from Rotate(%v)", seed, angle)
		}
	}
	if lo < degrees[0] || hi > degrees[1] || lo > -38 || hi < 23 {
		t.Errorf("angles span [%v, %v], want about %v", lo, hi, degrees)
	}
}

// TestRandomAffineParams checks RandomAffine's draws: ranges, whole-pixel
// translations, and the replay through Affine.
func TestRandomAffineParams(t *testing.T) {
	r := AffineRanges{Degrees: [2]float64{-10, 20}, Translate: [2]float64{0.1, 0.2}, Scale: [2]float64{0.8, 1.2}, Shear: [4]float64{-5, 5, 0, 3}}
	x := ramp([]int{3, 10, 20}, true)
	tr := RandomAffine(r, RotateOpts{})
	for seed := range uint64(500) {
		angle, tt, s, sh := drawAffine(seeded(seed), r, 20, 10)
		switch {
		case angle < -10 || angle > 20:
			t.Fatalf("angle %v", angle)
		case tt[0] != math.Trunc(tt[0]) || math.Abs(tt[0]) > 2 || math.Abs(tt[1]) > 2:
			t.Fatalf("translation %v, want whole pixels within ±2", tt)
		case s < 0.8 || s > 1.2:
			t.Fatalf("scale %v", s)
		case sh[0] < -5 || sh[0] > 5 || sh[1] < 0 || sh[1] > 3:
			t.Fatalf("shear %v", sh)
		}
		if seed < 20 {
			want := mustRun(t, Affine(angle, tt, s, sh, RotateOpts{Fill: []float32{0}}), x, nil)
			if got := mustRun(t, tr, x, seeded(seed)); !equal(got, want) {
				t.Fatalf("seed %d: RandomAffine differs from its replay", seed)
			}
		}
	}
	// Only the angle is drawn when the other ranges are zero.
	a, tt, s, sh := drawAffine(seeded(1), AffineRanges{Degrees: [2]float64{5, 5}}, 20, 10)
	if a != 5 || tt != [2]float64{} || s != 1 || sh != [2]float64{} {
		t.Errorf("degrees-only draw gave %v %v %v %v", a, tt, s, sh)
	}
}

// TestAffineIsRotate checks that Affine with only an angle is Rotate the
// other way, and that a whole-pixel translation shifts.
func TestAffineIsRotate(t *testing.T) {
	x := ramp([]int{2, 7, 8}, true)
	for _, angle := range []float64{17, -63.5, 90} {
		a := mustRun(t, Affine(angle, [2]float64{}, 1, [2]float64{}, RotateOpts{}), x, nil)
		r := mustRun(t, Rotate(-angle, RotateOpts{}), x, nil)
		if !equal(a, r) {
			t.Errorf("Affine(%v) differs from Rotate(%v)", angle, -angle)
		}
	}
	y := mustRun(t, Affine(0, [2]float64{1, 2}, 1, [2]float64{}, RotateOpts{Interp: InterpNearest}), x, nil)
	want := mustRun(t, Shift(2, 1, Constant, 0), x, nil)
	if !equal(y, want) {
		t.Errorf("Affine translation (1, 2) = %v, want Shift(2, 1) %v", y.F32[:16], want.F32[:16])
	}
}

func TestExpandedSize(t *testing.T) {
	for _, c := range []struct {
		w, h   int
		angle  float64
		ow, oh int
	}{
		// torch's sizes for the same rotations.
		{9, 7, 90, 7, 9}, {9, 7, 0, 9, 7}, {10, 10, 45, 16, 16}, {9, 7, 30, 13, 11}, {3, 2, 90, 3, 4},
	} {
		m := inverseAffine([2]float64{}, -c.angle, [2]float64{}, 1, [2]float64{})
		if ow, oh := expandedSize(m, c.w, c.h); ow != c.ow || oh != c.oh {
			t.Errorf("%dx%d by %v: %dx%d, want %dx%d", c.w, c.h, c.angle, ow, oh, c.ow, c.oh)
		}
	}
}

// TestFMA32 compares fma32 with a·b+c computed exactly by math/big and
// rounded once, on random operands and on sums that fall just beside a
// float32 tie, where rounding through float64 first would go wrong.
func TestFMA32(t *testing.T) {
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetFloat64(float64(c)))
		f, _ := x.Float32()
		return f
	}
	check := func(a, b, c float32) {
		t.Helper()
		if got, want := fma32(a, b, c), exact(a, b, c); got != want {
			t.Fatalf("fma32(%v, %v, %v) = %v, want %v", a, b, c, got, want)
		}
	}
	rng := seeded(9)
	for range 100000 {
		a := float32(rng.NormFloat64())
		b := float32(rng.NormFloat64())
		c := float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(60)-30)))
		check(a, b, c)
	}
	// a·a = 1 + 2^-11 + 2^-24 is halfway between two float32s. Adding
	// ±2^-80 moves the exact sum off the tie, but its float64 rounding
	// lands back on it, where a conversion would round to even.
	a := float32(1 + 1.0/(1<<12))
	tiny := float32(math.Ldexp(1, -80))
	check(a, a, 0)
	check(a, a, -tiny)
	check(a, a, tiny)
	// The even neighbour is below the tie, so only +2^-80 needs the care.
	if naive := float32(float64(a)*float64(a) + float64(tiny)); naive == exact(a, a, tiny) {
		t.Error("rounding through float64 is right here; the tie case is void")
	}
}

func TestRotateErrors(t *testing.T) {
	img := ramp([]int{3, 4, 4}, true)
	cases := []struct {
		op string
		tr data.Transform
		x  data.Tensor
	}{
		{"Rotate", Rotate(math.NaN(), RotateOpts{}), img},
		{"Rotate", Rotate(10, RotateOpts{Interp: Interp(5)}), img},
		{"Rotate", Rotate(10, RotateOpts{Center: &[2]float64{math.Inf(1), 0}}), img},
		{"Rotate", Rotate(10, RotateOpts{Fill: []float32{1, 2}}), img},
		{"RandomRotation", RandomRotation([2]float64{10, -10}, RotateOpts{}), img},
		{"RandomRotation", RandomRotation([2]float64{0, math.Inf(1)}, RotateOpts{}), img},
		{"RandomRotation", RandomRotation([2]float64{-10, 10}, RotateOpts{Fill: []float32{1, 2, 3, 4}}), img},
		{"Affine", Affine(10, [2]float64{}, 0, [2]float64{}, RotateOpts{}), img},
		{"Affine", Affine(10, [2]float64{}, 1, [2]float64{}, RotateOpts{Expand: true}), img},
		{"Affine", Affine(10, [2]float64{math.NaN(), 0}, 1, [2]float64{}, RotateOpts{}), img},
		{"RandomAffine", RandomAffine(AffineRanges{Degrees: [2]float64{1, 0}}, RotateOpts{}), img},
		{"RandomAffine", RandomAffine(AffineRanges{Translate: [2]float64{1.5, 0}}, RotateOpts{}), img},
		{"RandomAffine", RandomAffine(AffineRanges{Scale: [2]float64{0, 1}}, RotateOpts{}), img},
		{"RandomAffine", RandomAffine(AffineRanges{Shear: [4]float64{0, 0, 3, 2}}, RotateOpts{}), img},
		{"RandomAffine", RandomAffine(AffineRanges{}, RotateOpts{Expand: true}), img},
	}
	for _, c := range cases {
		_, err := c.tr(c.x, seeded(1))
		wantError(t, err, c.op)
	}
	for op, tr := range map[string]data.Transform{
		"RandomRotation": RandomRotation([2]float64{-1, 1}, RotateOpts{}), "RandomAffine": RandomAffine(AffineRanges{}, RotateOpts{}),
	} {
		_, err := tr(img, nil)
		wantError(t, err, op)
	}
	for name, x := range badInputs {
		for op, tr := range map[string]data.Transform{
			"Rotate": Rotate(10, RotateOpts{}), "RandomRotation": RandomRotation([2]float64{-1, 1}, RotateOpts{}),
			"Affine": Affine(1, [2]float64{}, 1, [2]float64{}, RotateOpts{}), "RandomAffine": RandomAffine(AffineRanges{}, RotateOpts{}),
		} {
			if _, err := tr(x, seeded(1)); err == nil {
				t.Errorf("%s accepted %s input", op, name)
			}
		}
	}
}

// TestRotateCopiesOptions checks that changing the caller's Fill and
// Center after construction does not change the transform.
func TestRotateCopiesOptions(t *testing.T) {
	x := ramp([]int{1, 5, 5}, true)
	fill, center := []float32{7}, &[2]float64{1, 1}
	trs := []data.Transform{
		Rotate(30, RotateOpts{Fill: fill, Center: center}),
		RandomRotation([2]float64{30, 30}, RotateOpts{Fill: fill, Center: center}),
		Affine(30, [2]float64{}, 1, [2]float64{}, RotateOpts{Fill: fill, Center: center}),
		RandomAffine(AffineRanges{Degrees: [2]float64{30, 30}}, RotateOpts{Fill: fill, Center: center}),
	}
	var before []data.Tensor
	for _, tr := range trs {
		before = append(before, mustRun(t, tr, x, seeded(1)))
	}
	fill[0], center[0] = 100, 3
	for i, tr := range trs {
		if !equal(mustRun(t, tr, x, seeded(1)), before[i]) {
			t.Errorf("transform %d used the caller's options after construction", i)
		}
	}
}
