package transforms

import (
	"math"
	"testing"

	"github.com/goluon/goluon/gluon/data"
)

// img34 is a 3x4 one-channel image:
//
//	1  2  3  4
//	5  6  7  8
//	9 10 11 12
var img34 = []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

func TestShiftExact(t *testing.T) {
	cases := []struct {
		name   string
		dy, dx int
		fill   FillMode
		cval   float32
		want   []float32
	}{
		{"right 1 nearest", 0, 1, Nearest, 0, []float32{1, 1, 2, 3, 5, 5, 6, 7, 9, 9, 10, 11}},
		{"right 1 constant", 0, 1, Constant, -1, []float32{-1, 1, 2, 3, -1, 5, 6, 7, -1, 9, 10, 11}},
		{"left 2 nearest", 0, -2, Nearest, 0, []float32{3, 4, 4, 4, 7, 8, 8, 8, 11, 12, 12, 12}},
		{"left 2 constant", 0, -2, Constant, 0, []float32{3, 4, 0, 0, 7, 8, 0, 0, 11, 12, 0, 0}},
		{"down 1 nearest", 1, 0, Nearest, 0, []float32{1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"down 1 constant", 1, 0, Constant, 9, []float32{9, 9, 9, 9, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"up 1 right 1 nearest", -1, 1, Nearest, 0, []float32{5, 5, 6, 7, 9, 9, 10, 11, 9, 9, 10, 11}},
		{"up 1 left 1 constant", -1, -1, Constant, 0, []float32{6, 7, 8, 0, 10, 11, 12, 0, 0, 0, 0, 0}},
		{"right past the width nearest", 0, 9, Nearest, 0, []float32{1, 1, 1, 1, 5, 5, 5, 5, 9, 9, 9, 9}},
		{"left past the width nearest", 0, -9, Nearest, 0, []float32{4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12}},
		{"down past the height constant", 5, 0, Constant, 3, []float32{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}},
		{"zero", 0, 0, Nearest, 0, img34},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The same image as HW float32, CHW float32 (two equal planes)
			// and HWC uint8 (two equal channels) must shift alike.
			tr := Shift(c.dy, c.dx, c.fill, c.cval)
			hw := mustRun(t, tr, f32([]int{3, 4}, img34...), nil)
			if want := f32([]int{3, 4}, c.want...); !equal(hw, want) {
				t.Errorf("HW: got %v, want %v", hw.F32, c.want)
			}
			chw := mustRun(t, tr, f32([]int{2, 3, 4}, append(append([]float32{}, img34...), img34...)...), nil)
			if want := f32([]int{2, 3, 4}, append(append([]float32{}, c.want...), c.want...)...); !equal(chw, want) {
				t.Errorf("CHW: got %v, want %v", chw.F32, want.F32)
			}
			in, want := u8([]int{3, 4, 2}), u8([]int{3, 4, 2})
			for i := range img34 {
				in.U8 = append(in.U8, uint8(img34[i]), uint8(img34[i]))
				w := uint8(max(c.want[i], 0))
				want.U8 = append(want.U8, w, w)
			}
			if hwc := mustRun(t, tr, in, nil); !equal(hwc, want) {
				t.Errorf("HWC: got %v, want %v", hwc.U8, want.U8)
			}
		})
	}
}

func TestShiftUint8Cval(t *testing.T) {
	for _, c := range []struct {
		cval float32
		want uint8
	}{{-5, 0}, {0.4, 0}, {127.5, 128}, {300, 255}} {
		got := mustRun(t, Shift(0, 1, Constant, c.cval), u8([]int{1, 2}, 7, 9), nil)
		if got.U8[0] != c.want || got.U8[1] != 7 {
			t.Errorf("cval %v: got %v, want [%d 7]", c.cval, got.U8, c.want)
		}
	}
}

// reference is the plain per-pixel definition of window: pixel (y, x) of the
// oh x ow output reads input pixel (y+sy0, x+sx0), clamped or filled.
func reference(x data.Tensor, g geom, oh, ow, sy0, sx0 int, fill FillMode, cval float32) []float32 {
	var out []float32
	at := func(c, y, x_ int) float32 {
		if g.hwc {
			return float32(x.U8[(y*g.w+x_)*g.c+c])
		}
		return x.F32[(c*g.h+y)*g.w+x_]
	}
	emit := func(c, y, xx int) float32 {
		sy, sx := y+sy0, xx+sx0
		if sy < 0 || sy >= g.h || sx < 0 || sx >= g.w {
			if fill == Constant {
				return cval
			}
			sy, sx = min(max(sy, 0), g.h-1), min(max(sx, 0), g.w-1)
		}
		return at(c, sy, sx)
	}
	if g.hwc {
		for y := range oh {
			for xx := range ow {
				for c := range g.c {
					out = append(out, emit(c, y, xx))
				}
			}
		}
		return out
	}
	for c := range g.c {
		for y := range oh {
			for xx := range ow {
				out = append(out, emit(c, y, xx))
			}
		}
	}
	return out
}

func TestWindowMatchesReference(t *testing.T) {
	rng := seeded(1)
	for trial := range 2000 {
		h, w, c := 1+rng.IntN(6), 1+rng.IntN(6), 1+rng.IntN(4)
		oh, ow := 1+rng.IntN(8), 1+rng.IntN(8)
		sy0, sx0 := rng.IntN(21)-10, rng.IntN(21)-10
		fill := FillMode(rng.IntN(2))
		hwc := rng.IntN(2) == 0
		var x data.Tensor
		if hwc {
			x = ramp([]int{h, w, c}, false)
		} else {
			x = ramp([]int{c, h, w}, true)
		}
		g, err := geometry("test", x)
		if err != nil {
			t.Fatal(err)
		}
		got := window(x, g, oh, ow, sy0, sx0, fill, 200, nil).Float32s()
		want := reference(x, g, oh, ow, sy0, sx0, fill, 200)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("trial %d (h=%d w=%d c=%d hwc=%v out %dx%d origin (%d,%d) %v): value %d = %v, want %v",
					trial, h, w, c, hwc, oh, ow, sy0, sx0, fill, i, got[i], want[i])
			}
		}
	}
}

// shiftOf recovers (dy, dx) from a shifted ramp image (values 1+y*w+x,
// constant fill 0).
func shiftOf(t *testing.T, y data.Tensor, w int) (int, int) {
	t.Helper()
	for i, v := range y.F32 {
		if v != 0 {
			src := int(v) - 1
			return i/w - src/w, i%w - src%w
		}
	}
	t.Fatal("no input pixel left in the shifted image")
	return 0, 0
}

func TestRandomShiftRange(t *testing.T) {
	// Keras draws t uniformly from [-R, R), R = r*size for r < 1 and R = r
	// pixels otherwise; rounding gives k with positive probability exactly
	// when |k| < R+0.5, and never beyond round(R) (only t = -R itself can
	// reach -round(R) when R ends in .5).
	cases := []struct {
		wFrac, hFrac float64
		h, w         int
	}{
		{0.1, 0.1, 32, 32}, // R = 3.2: -3..3, as the CIFAR pipeline uses
		{0.25, 0, 8, 10},   // R = 2.5 wide, 0 high: -2..2 wide
		{0.5, 0.2, 9, 7},   // R = 3.5 wide: -3..3; R = 1.8 high: -2..2
		{2.0, 1.0, 10, 10}, // ranges >= 1 are pixels: -2..2 wide, -1..1 high
		{0.04, 0.04, 10, 10},
	}
	for _, c := range cases {
		ry, rx := c.hFrac, c.wFrac
		if ry < 1 {
			ry *= float64(c.h)
		}
		if rx < 1 {
			rx *= float64(c.w)
		}
		tr := RandomShift(c.wFrac, c.hFrac, Constant, 0)
		rng := seeded(3)
		seen := map[[2]int]int{}
		x := ramp([]int{c.h, c.w}, true)
		for range 5000 {
			dy, dx := shiftOf(t, mustRun(t, tr, x, rng), c.w)
			if float64(abs(dy)) > math.Round(ry) || float64(abs(dx)) > math.Round(rx) {
				t.Fatalf("ranges (%v, %v) on %dx%d: shift (%d, %d) out of bounds", c.wFrac, c.hFrac, c.h, c.w, dy, dx)
			}
			seen[[2]int{dy, dx}]++
		}
		want := 0
		for dy := -c.h; dy <= c.h; dy++ {
			for dx := -c.w; dx <= c.w; dx++ {
				if float64(abs(dy)) < ry+0.5 && float64(abs(dx)) < rx+0.5 {
					want++
					if seen[[2]int{dy, dx}] == 0 {
						t.Errorf("ranges (%v, %v) on %dx%d: shift (%d, %d) never drawn", c.wFrac, c.hFrac, c.h, c.w, dy, dx)
					}
				}
			}
		}
		if len(seen) != want {
			t.Errorf("ranges (%v, %v): drew %d distinct shifts, want %d", c.wFrac, c.hFrac, len(seen), want)
		}
	}
}

func TestRandomShiftSymmetric(t *testing.T) {
	// Keras draws uniform(-r, r): shifts of +k and -k are equally likely.
	tr := RandomShift(0.1, 0, Constant, 0)
	rng := seeded(4)
	x := ramp([]int{1, 32}, true)
	var count [7]int
	const n = 20000
	for range n {
		_, dx := shiftOf(t, mustRun(t, tr, x, rng), 32)
		count[dx+3]++
	}
	// Bins: |dx| <= 2 have width 1/6.4 of the range, |dx| = 3 width 0.7/6.4.
	for dx := -3; dx <= 3; dx++ {
		p := 1 / 6.4
		if abs(dx) == 3 {
			p = 0.7 / 6.4
		}
		sigma := math.Sqrt(n * p * (1 - p))
		if got := float64(count[dx+3]); math.Abs(got-n*p) > 5*sigma {
			t.Errorf("dx=%d drawn %v times, want about %.0f", dx, got, n*p)
		}
	}
}

func TestRandomCrop(t *testing.T) {
	const h, w, pad = 5, 6, 2
	for _, layout := range []string{"HWC", "CHW", "HW"} {
		var x data.Tensor
		switch layout {
		case "HWC":
			x = ramp([]int{h, w, 3}, false)
		case "CHW":
			x = ramp([]int{3, h, w}, true)
		default:
			x = ramp([]int{h, w}, true)
		}
		g, _ := geometry("test", x)
		for _, fill := range []FillMode{Constant, Nearest} {
			tr := RandomCrop([2]int{4, 5}, pad, fill, 0)
			rng := seeded(5)
			seen := map[[2]int]bool{}
			for range 2000 {
				y := mustRun(t, tr, x, rng)
				if want := g.shape(4, 5); !equal(data.Tensor{Shape: y.Shape}, data.Tensor{Shape: want}) {
					t.Fatalf("%s: shape %v, want %v", layout, y.Shape, want)
				}
				// Find which offset produced y by comparing with the reference.
				found := false
				for oy := 0; oy <= h+2*pad-4 && !found; oy++ {
					for ox := 0; ox <= w+2*pad-5 && !found; ox++ {
						ref := reference(x, g, 4, 5, oy-pad, ox-pad, fill, 0)
						if equalFloats(y.Float32s(), ref) {
							found, seen[[2]int{oy, ox}] = true, true
						}
					}
				}
				if !found {
					t.Fatalf("%s %v: crop %v is no window of the padded image", layout, fill, y)
				}
			}
			if want := (h + 2*pad - 4 + 1) * (w + 2*pad - 5 + 1); len(seen) != want {
				t.Errorf("%s %v: %d distinct offsets drawn, want all %d", layout, fill, len(seen), want)
			}
		}
	}
}

func TestRandomCropSameSizeNoPad(t *testing.T) {
	x := ramp([]int{3, 4, 2}, false)
	if y := mustRun(t, RandomCrop([2]int{3, 4}, 0, Constant, 0), x, seeded(1)); !equal(x, y) {
		t.Fatalf("full-size crop without padding changed the image: %v", y)
	}
}

func TestShiftAndCropErrors(t *testing.T) {
	img := ramp([]int{4, 4, 3}, false)
	cases := map[string]struct {
		tr data.Transform
		op string
		x  data.Tensor
	}{
		"negative range":   {RandomShift(-0.1, 0, Nearest, 0), "RandomShift", img},
		"NaN range":        {RandomShift(0, math.NaN(), Nearest, 0), "RandomShift", img},
		"Inf range":        {RandomShift(math.Inf(1), 0, Nearest, 0), "RandomShift", img},
		"bad fill shift":   {RandomShift(0.1, 0.1, FillMode(7), 0), "RandomShift", img},
		"bad fill fixed":   {Shift(1, 1, FillMode(-1), 0), "Shift", img},
		"bad fill crop":    {RandomCrop([2]int{2, 2}, 0, FillMode(2), 0), "RandomCrop", img},
		"zero crop":        {RandomCrop([2]int{0, 2}, 0, Constant, 0), "RandomCrop", img},
		"negative pad":     {RandomCrop([2]int{2, 2}, -1, Constant, 0), "RandomCrop", img},
		"crop too big":     {RandomCrop([2]int{9, 2}, 2, Constant, 0), "RandomCrop", img},
		"nil rng shift":    {RandomShift(0.1, 0.1, Nearest, 0), "RandomShift", img},
		"rank 1 fixed":     {Shift(1, 0, Nearest, 0), "Shift", badInputs["rank1"]},
		"rank 4 random":    {RandomShift(0.1, 0.1, Nearest, 0), "RandomShift", badInputs["rank4"]},
		"short crop input": {RandomCrop([2]int{1, 1}, 0, Nearest, 0), "RandomCrop", badInputs["short"]},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var rng = seeded(1)
			if name == "nil rng shift" {
				rng = nil
			}
			_, err := c.tr(c.x, rng)
			wantError(t, err, c.op)
			t.Log(err)
		})
	}
}

func TestFillModeString(t *testing.T) {
	if Nearest.String() != "nearest" || Constant.String() != "constant" || FillMode(9).String() != "FillMode(invalid)" {
		t.Fatal("FillMode.String")
	}
}

func abs(v int) int { return max(v, -v) }

func equalFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPad(t *testing.T) {
	x := data.Tensor{Shape: []int{2, 2, 1}, U8: []uint8{1, 2, 3, 4}} // HWC
	for _, c := range []struct {
		name string
		fill FillMode
		cval float32
		want []uint8
	}{
		{"constant", Constant, 7, []uint8{7, 7, 7, 7, 7, 1, 2, 7, 7, 3, 4, 7, 7, 7, 7, 7}},
		{"nearest", Nearest, 0, []uint8{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}},
	} {
		y, err := Pad(1, c.fill, c.cval)(x, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(y.Shape) != 3 || y.Shape[0] != 4 || y.Shape[1] != 4 || y.Shape[2] != 1 {
			t.Fatalf("%s: shape %v, want [4 4 1]", c.name, y.Shape)
		}
		for i, v := range c.want {
			if y.U8[i] != v {
				t.Fatalf("%s: %v, want %v", c.name, y.U8, c.want)
			}
		}
	}
	if _, err := Pad(-1, Constant, 0)(x, nil); err == nil {
		t.Error("a negative pad gave no error")
	}
}
