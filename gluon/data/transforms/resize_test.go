package transforms

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/gluon/data"
)

// resizeGoldens is testdata/resize_goldens.json (make_goldens_resize.py).
type resizeGoldens struct {
	Images []struct {
		Shape []int
		X     []float32
	}
	Cases []struct {
		Kind      string
		Mode      string
		Antialias bool
		Image     int
		Size      [2]int
		Y         []float32
	}
}

func loadResizeGoldens(t *testing.T) resizeGoldens {
	t.Helper()
	b, err := os.ReadFile("testdata/resize_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g resizeGoldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no cases in resize_goldens.json")
	}
	return g
}

// TestResizeGoldens compares Resize (bilinear with and without
// antialiasing, nearest) and CenterCrop on float32 CHW images with
// PyTorch's interpolate and torchvision's CenterCrop.
func TestResizeGoldens(t *testing.T) {
	g := loadResizeGoldens(t)
	for i, c := range g.Cases {
		img := g.Images[c.Image]
		x := f32(img.Shape, img.X...)
		var tr data.Transform
		name := fmt.Sprintf("%d/%s%v->%v", i, c.Kind, img.Shape, c.Size)
		switch c.Kind {
		case "resize":
			opts := ResizeOpts{Antialias: c.Antialias}
			if c.Mode == "nearest" {
				opts.Interp = InterpNearest
			}
			name += fmt.Sprintf("/%v/aa=%v", opts.Interp, c.Antialias)
			tr = Resize(c.Size, opts)
		case "centercrop":
			tr = CenterCrop(c.Size)
		default:
			t.Fatalf("unknown case kind %q", c.Kind)
		}
		t.Run(name, func(t *testing.T) {
			y := mustRun(t, tr, x, nil)
			want := []int{img.Shape[0], c.Size[0], c.Size[1]}
			if !slices.Equal(y.Shape, want) || len(y.F32) != len(c.Y) {
				t.Fatalf("shape %v (%d values), want %v (%d values)", y.Shape, len(y.F32), want, len(c.Y))
			}
			for j, v := range y.F32 {
				if d := math.Abs(float64(v - c.Y[j])); d > 1e-6 {
					t.Fatalf("value %d: %v, PyTorch %v (difference %.3g)", j, v, c.Y[j], d)
				}
			}
		})
	}
}

// hwc returns the uint8 HWC image of a CHW float image of values in
// [0, 1] scaled to [0, 255] and rounded, and chw the reverse layout
// change of a uint8 HWC image, as float32 values.
func hwc(x data.Tensor) data.Tensor {
	c, h, w := x.Shape[0], x.Shape[1], x.Shape[2]
	out := make([]uint8, len(x.F32))
	for ch := range c {
		for p := range h * w {
			out[p*c+ch] = uint8(math.Round(float64(x.F32[ch*h*w+p]) * 255))
		}
	}
	return u8([]int{h, w, c}, out...)
}

func chw(x data.Tensor) data.Tensor {
	h, w, c := x.Shape[0], x.Shape[1], x.Shape[2]
	out := make([]float32, len(x.U8))
	for ch := range c {
		for p := range h * w {
			out[ch*h*w+p] = float32(x.U8[p*c+ch])
		}
	}
	return f32([]int{c, h, w}, out...)
}

// TestResizeUint8 checks that a uint8 HWC image resizes to the rounded
// float32 CHW result of the same values, for every filter and transform.
func TestResizeUint8(t *testing.T) {
	g := loadResizeGoldens(t)
	img := g.Images[0]
	x := f32(img.Shape, img.X...)
	u := hwc(x)
	xf := chw(u)
	for _, tc := range []struct {
		name string
		tr   data.Transform
	}{
		{"bilinear", Resize([2]int{5, 7}, ResizeOpts{})},
		{"antialias", Resize([2]int{4, 3}, ResizeOpts{Antialias: true})},
		{"enlarge", Resize([2]int{20, 23}, ResizeOpts{Antialias: true})},
		{"nearest", Resize([2]int{6, 9}, ResizeOpts{Interp: InterpNearest})},
		{"shorter", ResizeShorter(8, ResizeOpts{Antialias: true})},
		{"centercrop", CenterCrop([2]int{6, 15})},
		{"randomresizedcrop", RandomResizedCrop([2]int{7, 7}, [2]float64{0.08, 1}, [2]float64{3. / 4, 4. / 3}, ResizeOpts{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yu := mustRun(t, tc.tr, u, seeded(3))
			yf := mustRun(t, tc.tr, xf, seeded(3))
			if yu.U8 == nil || len(yu.Shape) != 3 || yu.Shape[2] != 3 {
				t.Fatalf("uint8 input gave %s %v, want uint8 HWC", dtype(yu), yu.Shape)
			}
			got := chw(yu)
			if !slices.Equal(got.Shape, yf.Shape) {
				t.Fatalf("uint8 gives %v, float32 %v", got.Shape, yf.Shape)
			}
			for i, v := range yf.F32 {
				if want := float32(math.RoundToEven(float64(v))); got.F32[i] != want {
					t.Fatalf("value %d: uint8 %v, rounded float32 %v (%v)", i, got.F32[i], want, v)
				}
			}
		})
	}
}

// TestResizeShorterSizes checks torchvision's Resize(int) output sizes:
// the shorter side becomes n, the longer one n·long/short truncated.
func TestResizeShorterSizes(t *testing.T) {
	for _, c := range []struct {
		h, w, n    int
		wantH, wnt int
	}{
		{480, 640, 256, 256, 341},
		{640, 480, 256, 341, 256},
		{300, 300, 224, 224, 224},
		{7, 5, 3, 4, 3},
		{32, 32, 32, 32, 32},
	} {
		x := ramp([]int{c.h, c.w}, true)
		y := mustRun(t, ResizeShorter(c.n, ResizeOpts{}), x, nil)
		if !slices.Equal(y.Shape, []int{c.wantH, c.wnt}) {
			t.Errorf("%dx%d shorter side %d: %v, want [%d %d]", c.h, c.w, c.n, y.Shape, c.wantH, c.wnt)
		}
		if c.h == c.wantH && c.w == c.wnt && &y.F32[0] != &x.F32[0] {
			t.Errorf("%dx%d: an image already of the size was copied", c.h, c.w)
		}
	}
}

// TestResizeConstant checks that every filter keeps a constant image
// constant, including shrinking by large factors.
func TestResizeConstant(t *testing.T) {
	x := f32([]int{1, 40, 50}, slices.Repeat([]float32{0.25}, 2000)...)
	for _, opts := range []ResizeOpts{{}, {Antialias: true}, {Interp: InterpNearest}} {
		for _, size := range [][2]int{{3, 4}, {40, 7}, {81, 99}, {1, 1}} {
			y := mustRun(t, Resize(size, opts), x, nil)
			for i, v := range y.F32 {
				if math.Abs(float64(v-0.25)) > 1e-6 {
					t.Fatalf("%+v to %v: value %d is %v, want 0.25", opts, size, i, v)
				}
			}
		}
	}
}

// TestRandomResizedCrop checks the windows' distribution bounds, that
// the same generator state gives the same output, and the fallback to a
// centred window when no draw fits.
func TestRandomResizedCrop(t *testing.T) {
	scale, ratio := [2]float64{0.08, 1}, [2]float64{3. / 4, 4. / 3}
	fits := 0
	for i := range 2000 {
		w := cropWindow(seeded(uint64(i)), 60, 90, scale, ratio)
		if w.y < 0 || w.x < 0 || w.h < 1 || w.w < 1 || w.y+w.h > 60 || w.x+w.w > 90 {
			t.Fatalf("window %+v outside the 60x90 image", w)
		}
		area := float64(w.h*w.w) / (60 * 90)
		r := float64(w.w) / float64(w.h)
		// Rounding the sides moves the area and ratio a little.
		if area >= 0.07 && area <= 1.01 && r >= 0.7 && r <= 1.42 {
			fits++
		}
	}
	if fits != 2000 {
		t.Errorf("%d of 2000 windows within the scale and ratio bounds", fits)
	}
	// No window of ratio 10 to 20 fits a square image: the largest centred
	// one of ratio 10 does.
	w := cropWindow(seeded(1), 50, 50, [2]float64{0.5, 1}, [2]float64{10, 20})
	if w != (window2{y: 22, x: 0, h: 5, w: 50}) {
		t.Errorf("fallback window %+v, want {y:22 x:0 h:5 w:50}", w)
	}
	x := ramp([]int{20, 30, 3}, false)
	tr := RandomResizedCrop([2]int{8, 8}, scale, ratio, ResizeOpts{Antialias: true})
	a, b := mustRun(t, tr, x, seeded(9)), mustRun(t, tr, x, seeded(9))
	if !equal(a, b) || !slices.Equal(a.Shape, []int{8, 8, 3}) {
		t.Errorf("same seed: %v and %v, want equal [8 8 3] images", a.Shape, b.Shape)
	}
}

// TestCenterCropRounding checks the window's origin against
// torchvision's round((h−n)/2), which rounds halves to even.
func TestCenterCropRounding(t *testing.T) {
	for _, c := range []struct{ size, n, want int }{
		{5, 2, 2}, // 1.5 rounds to 2
		{7, 2, 2}, // 2.5 rounds to 2
		{9, 2, 4}, // 3.5 rounds to 4
		{6, 2, 2},
		{4, 7, -1}, // padded: 1 before, 2 after
		{4, 8, -2},
	} {
		if got := centre(c.size, c.n); got != c.want {
			t.Errorf("centre(%d, %d) = %d, want %d", c.size, c.n, got, c.want)
		}
	}
}

func TestResizeErrors(t *testing.T) {
	img := ramp([]int{4, 4, 3}, false)
	for _, c := range []struct {
		op string
		tr data.Transform
		x  data.Tensor
	}{
		{"Resize", Resize([2]int{0, 3}, ResizeOpts{}), img},
		{"Resize", Resize([2]int{3, 3}, ResizeOpts{Interp: Interp(7)}), img},
		{"Resize", Resize([2]int{3, 3}, ResizeOpts{}), ramp([]int{2, 2, 2, 2}, true)},
		{"ResizeShorter", ResizeShorter(-1, ResizeOpts{}), img},
		{"ResizeShorter", ResizeShorter(1, ResizeOpts{}), ramp([]int{1, 5, 2, 2}, true)},
		{"CenterCrop", CenterCrop([2]int{2, -2}), img},
		{"CenterCrop", CenterCrop([2]int{2, 2}), data.Tensor{Shape: []int{2, 2}}},
		{"RandomResizedCrop", RandomResizedCrop([2]int{2, 2}, [2]float64{0.5, 0.1}, [2]float64{1, 1}, ResizeOpts{}), img},
		{"RandomResizedCrop", RandomResizedCrop([2]int{2, 2}, [2]float64{0.5, 1}, [2]float64{0, 1}, ResizeOpts{}), img},
	} {
		_, err := c.tr(c.x, seeded(1))
		wantError(t, err, c.op)
	}
	_, err := RandomResizedCrop([2]int{2, 2}, [2]float64{0.5, 1}, [2]float64{1, 1}, ResizeOpts{})(img, nil)
	wantError(t, err, "RandomResizedCrop")
}

// TestResizeIdentity checks that a transform that would not change the
// image returns it as is.
func TestResizeIdentity(t *testing.T) {
	x := ramp([]int{3, 6, 5}, true)
	for _, tr := range []data.Transform{Resize([2]int{6, 5}, ResizeOpts{Antialias: true}), CenterCrop([2]int{6, 5})} {
		y := mustRun(t, tr, x, nil)
		if &y.F32[0] != &x.F32[0] {
			t.Error("an image already of the size was copied")
		}
	}
}

// TestResizeDoesNotModifyInput runs every new transform on an input and
// checks the input afterwards.
func TestResizeDoesNotModifyInput(t *testing.T) {
	x := ramp([]int{9, 11, 3}, false)
	keep := x.Clone()
	for _, tr := range []data.Transform{
		Resize([2]int{4, 4}, ResizeOpts{Antialias: true}),
		ResizeShorter(5, ResizeOpts{}),
		CenterCrop([2]int{12, 4}),
		RandomResizedCrop([2]int{5, 5}, [2]float64{0.08, 1}, [2]float64{0.75, 4. / 3}, ResizeOpts{}),
	} {
		mustRun(t, tr, x, rand.New(rand.NewPCG(1, 2)))
		if !equal(x, keep) {
			t.Fatal("the input changed")
		}
	}
}
