package transforms

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/goluon/goluon/gluon/data"
)

// Interp is the resampling filter of the resizing transforms.
type Interp int

const (
	// InterpBilinear blends the input pixels around each output pixel's centre
	// (torch.nn.functional.interpolate's mode="bilinear" with
	// align_corners=False, torchvision's InterpolationMode.BILINEAR,
	// Gluon's interpolation=1). It is the zero value.
	InterpBilinear Interp = iota
	// InterpNearest copies the input pixel floor(o·in/out) for output pixel o
	// (interpolate's mode="nearest", OpenCV's INTER_NEAREST).
	InterpNearest
)

// String returns "bilinear" or "nearest".
func (m Interp) String() string {
	switch m {
	case InterpBilinear:
		return "bilinear"
	case InterpNearest:
		return "nearest"
	}
	return "Interp(" + strconv.Itoa(int(m)) + ")"
}

// ResizeOpts are the resampling options of Resize, ResizeShorter and
// RandomResizedCrop. The zero value is bilinear without antialiasing.
type ResizeOpts struct {
	// Interp is the filter.
	Interp Interp
	// Antialias, with InterpBilinear, widens the filter when shrinking so that
	// each output pixel averages every input pixel it covers, as PIL's
	// resize does (interpolate's antialias=True; torchvision's Resize on
	// PIL images, which pretrained torchvision models were trained on).
	// Without it each output pixel blends at most 2×2 input pixels
	// (interpolate's default, OpenCV's and Gluon's Resize), which aliases
	// when shrinking by more than 2. InterpNearest ignores it.
	Antialias bool
}

func (o ResizeOpts) check() string {
	if o.Interp != InterpBilinear && o.Interp != InterpNearest {
		return "unknown interpolation " + o.Interp.String()
	}
	return ""
}

// Resize returns a transform that resamples the image to size[0] rows by
// size[1] columns, like torchvision's Resize((h, w)) and Gluon's
// Resize((w, h)) (note the order). It works on HWC/HW uint8 and CHW/HW
// float32 images and keeps the element type: values are computed in
// float32 and uint8 results are rounded half to even (torch.round, as
// torchvision's Resize on uint8 tensors rounds) and clamped to [0, 255].
// Float results equal interpolate's on the same values within float32
// rounding (testdata/make_goldens_resize.py). An image
// already of the size is returned as is.
func Resize(size [2]int, opts ResizeOpts) data.Transform {
	const op = "Resize"
	if size[0] <= 0 || size[1] <= 0 {
		return argError(op, "want a positive size, got %v", size)
	}
	if msg := opts.check(); msg != "" {
		return argError(op, "%s", msg)
	}
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		return resized(x, g, window2{h: g.h, w: g.w}, size[0], size[1], opts), nil
	}
}

// ResizeShorter returns torchvision's Resize(n): the shorter side becomes
// n pixels and the longer one n·long/short, truncated, so the aspect ratio
// is kept (Gluon's Resize(n, keep_ratio=True)). ImageNet models are
// usually evaluated on ResizeShorter(256, ...) followed by
// CenterCrop([2]int{224, 224}). Layouts and values are as Resize's.
func ResizeShorter(n int, opts ResizeOpts) data.Transform {
	const op = "ResizeShorter"
	if n <= 0 {
		return argError(op, "want a positive size, got %d", n)
	}
	if msg := opts.check(); msg != "" {
		return argError(op, "%s", msg)
	}
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		oh, ow := n, n*g.w/g.h
		if g.w <= g.h {
			oh, ow = n*g.h/g.w, n
		}
		return resized(x, g, window2{h: g.h, w: g.w}, oh, ow, opts), nil
	}
}

// CenterCrop returns torchvision's CenterCrop(size): the window of
// size[0] rows by size[1] columns at the image's centre, its top row at
// round((h−size[0])/2) rounded half to even, as Python's round does (and
// its left column likewise). An image smaller than the window is padded
// with zeros first, as torchvision pads it. Layouts are as Resize's; an
// image already of the size is returned as is.
func CenterCrop(size [2]int) data.Transform {
	const op = "CenterCrop"
	if size[0] <= 0 || size[1] <= 0 {
		return argError(op, "want a positive size, got %v", size)
	}
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		if size[0] == g.h && size[1] == g.w {
			return x, nil
		}
		return window(x, g, size[0], size[1], centre(g.h, size[0]), centre(g.w, size[1]), Constant, 0, g.shape(size[0], size[1])), nil
	}
}

// centre is the first input index of a centred window of n out of size
// indices: torchvision pads a smaller image by (n−size)/2 (floored) before
// the leading edge, then crops at round((size'−n)/2).
func centre(size, n int) int {
	if n > size {
		return -((n - size) / 2)
	}
	return int(math.RoundToEven(float64(size-n) / 2))
}

// RandomResizedCrop returns torchvision's RandomResizedCrop(size, scale,
// ratio): it draws a window whose area is a fraction of the image's drawn
// uniformly from [scale[0], scale[1]] and whose width/height ratio is
// drawn log-uniformly from [ratio[0], ratio[1]], at a uniformly drawn
// position, and resamples it to size[0] rows by size[1] columns. When ten
// draws give no window that fits, it takes the largest centred window
// whose ratio is within bounds. torchvision's defaults, the usual ImageNet
// training augmentation, are scale {0.08, 1} and ratio {3/4, 4/3}. The
// draws come from rng (not torch's generator), so the windows follow
// torchvision's distribution, not its sequence. Layouts and values are as
// Resize's.
func RandomResizedCrop(size [2]int, scale, ratio [2]float64, opts ResizeOpts) data.Transform {
	const op = "RandomResizedCrop"
	switch {
	case size[0] <= 0 || size[1] <= 0:
		return argError(op, "want a positive size, got %v", size)
	case !(scale[0] > 0 && scale[0] <= scale[1]):
		return argError(op, "want 0 < scale[0] <= scale[1], got %v", scale)
	case !(ratio[0] > 0 && ratio[0] <= ratio[1]):
		return argError(op, "want 0 < ratio[0] <= ratio[1], got %v", ratio)
	}
	if msg := opts.check(); msg != "" {
		return argError(op, "%s", msg)
	}
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		if err := needRNG(op, rng); err != nil {
			return data.Tensor{}, err
		}
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		return resized(x, g, cropWindow(rng, g.h, g.w, scale, ratio), size[0], size[1], opts), nil
	}
}

// window2 is a rectangle of an image: h rows and w columns from (y, x).
type window2 struct{ y, x, h, w int }

// cropWindow draws RandomResizedCrop's window of an h×w image, following
// torchvision's RandomResizedCrop.get_params.
func cropWindow(rng *rand.Rand, h, w int, scale, ratio [2]float64) window2 {
	area := float64(h * w)
	lo, hi := math.Log(ratio[0]), math.Log(ratio[1])
	for range 10 {
		target := area * (scale[0] + rng.Float64()*(scale[1]-scale[0]))
		aspect := math.Exp(lo + rng.Float64()*(hi-lo))
		cw := int(math.RoundToEven(math.Sqrt(target * aspect)))
		ch := int(math.RoundToEven(math.Sqrt(target / aspect)))
		if cw > 0 && cw <= w && ch > 0 && ch <= h {
			return window2{y: rng.IntN(h - ch + 1), x: rng.IntN(w - cw + 1), h: ch, w: cw}
		}
	}
	cw, ch := w, h
	switch in := float64(w) / float64(h); {
	case in < ratio[0]:
		ch = int(math.RoundToEven(float64(cw) / ratio[0]))
	case in > ratio[1]:
		cw = int(math.RoundToEven(float64(ch) * ratio[1]))
	}
	ch, cw = max(min(ch, h), 1), max(min(cw, w), 1)
	return window2{y: (h - ch) / 2, x: (w - cw) / 2, h: ch, w: cw}
}

// resized resamples the window win of x (geometry g) to oh×ow; the input
// itself when win is the whole image and the size does not change.
func resized(x data.Tensor, g geom, win window2, oh, ow int, opts ResizeOpts) data.Tensor {
	if win.y == 0 && win.x == 0 && win.h == g.h && win.w == g.w && oh == g.h && ow == g.w {
		return x
	}
	rows, cols := makeTaps(win.h, oh, opts), makeTaps(win.w, ow, opts)
	shape := g.shape(oh, ow)
	if x.U8 != nil {
		out := make([]uint8, len(x.U8)/(g.h*g.w)*oh*ow)
		resample(out, x.U8, g, win, rows, cols, func(v float32) uint8 {
			return uint8(math.RoundToEven(float64(min(max(v, 0), 255))))
		})
		return data.Tensor{Shape: shape, U8: out}
	}
	out := make([]float32, len(x.F32)/(g.h*g.w)*oh*ow)
	resample(out, x.F32, g, win, rows, cols, func(v float32) float32 { return v })
	return data.Tensor{Shape: shape, F32: out}
}

// taps are the input indices and weights of each output index along one
// axis: output o blends inputs start[o] .. start[o]+len(w[o])-1.
type taps struct {
	start []int
	w     [][]float32
}

// makeTaps returns the taps resampling in inputs to out outputs, computed
// as ATen computes them for float32 tensors (upsample kernels'
// area_pixel_compute_source_index, nearest_idx and
// _compute_indices_weights_aa).
func makeTaps(in, out int, opts ResizeOpts) taps {
	t := taps{start: make([]int, out), w: make([][]float32, out)}
	scale := float32(in) / float32(out)
	switch {
	case opts.Interp == InterpNearest:
		one := []float32{1}
		for o := range out {
			i := in - 1
			if in == out {
				i = o
			} else if f := float32(math.Floor(float64(float32(o) * scale))); f < float32(in-1) {
				i = int(f)
			}
			t.start[o], t.w[o] = i, one
		}
	case opts.Antialias:
		support, inv := float32(1), float32(1)
		if scale >= 1 {
			support, inv = scale, 1/scale
		}
		for o := range out {
			c := scale * (float32(o) + 0.5)
			lo := max(int(c-support+0.5), 0)
			hi := min(int(c+support+0.5), in)
			w := make([]float32, max(hi-lo, 0))
			var total float32
			for j := range w {
				d := (float32(j+lo) - c + 0.5) * inv
				if d < 0 {
					d = -d
				}
				if d < 1 {
					w[j] = 1 - d
				}
				total += w[j]
			}
			if total != 0 {
				for j := range w {
					w[j] /= total
				}
			}
			t.start[o], t.w[o] = lo, w
		}
	default:
		// Positions from the float32 scale in float64, as ATen's CPU
		// kernel computes them (float32 positions lose ~3e-5 of a weight
		// a few hundred pixels in).
		for o := range out {
			src := max(float64(scale)*(float64(o)+0.5)-0.5, 0)
			i := int(src)
			l1 := min(max(src-float64(i), 0), 1)
			if i < in-1 {
				t.start[o], t.w[o] = i, []float32{float32(1 - l1), float32(l1)}
			} else {
				t.start[o], t.w[o] = i, []float32{1}
			}
		}
	}
	return t
}

// resample writes into dst the window win of src (geometry g) resampled
// by rows and cols: first along each row of the window into float32, then
// along the columns, each result stored through put.
func resample[T uint8 | float32](dst, src []T, g geom, win window2, rows, cols taps, put func(float32) T) {
	planes, pix := g.planes()
	oh, ow := len(rows.start), len(cols.start)
	in, out := g.h*g.w*pix, oh*ow*pix
	tmp := make([]float32, win.h*ow*pix)
	for p := range planes {
		s := src[p*in : (p+1)*in]
		for r := range win.h {
			row := s[(win.y+r)*g.w*pix:]
			t := tmp[r*ow*pix : (r+1)*ow*pix]
			for o, w := range cols.w {
				base := (win.x + cols.start[o]) * pix
				for c := range pix {
					var acc float32
					for k, wk := range w {
						acc += wk * float32(row[base+k*pix+c])
					}
					t[o*pix+c] = acc
				}
			}
		}
		d := dst[p*out : (p+1)*out]
		n := ow * pix
		for o, w := range rows.w {
			di := d[o*n : (o+1)*n]
			for i := range di {
				var acc float32
				for k, wk := range w {
					acc += wk * tmp[(rows.start[o]+k)*n+i]
				}
				di[i] = put(acc)
			}
		}
	}
}
