package transforms

import (
	"math"
	"math/rand/v2"

	"github.com/goluon/goluon/gluon/data"
)

// FillMode says how a transform fills the pixels it moves in from outside
// the image, as Keras's fill_mode and torchvision's padding_mode do.
type FillMode int

const (
	// Constant fills with a constant value cval (Keras "constant",
	// torchvision padding_mode="constant"): kkkk|abcd|kkkk.
	Constant FillMode = iota
	// Nearest repeats the nearest edge pixel (Keras "nearest", torchvision
	// padding_mode="edge"): aaaa|abcd|dddd.
	Nearest
)

// String returns "constant" or "nearest".
func (m FillMode) String() string {
	switch m {
	case Constant:
		return "constant"
	case Nearest:
		return "nearest"
	}
	return "FillMode(invalid)"
}

// Shift returns a fixed translation: output pixel (y, x) is input pixel
// (y-dy, x-dx), so a positive dx moves the content right and a positive dy
// moves it down. Uncovered pixels are filled by fill; cval is the Constant
// fill value (rounded and clamped to 0–255 for uint8 images). The shape is
// unchanged; a zero shift returns the input itself.
func Shift(dy, dx int, fill FillMode, cval float32) data.Transform {
	const op = "Shift"
	if fill != Constant && fill != Nearest {
		return argError(op, "unknown fill mode %d", int(fill))
	}
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		if dy == 0 && dx == 0 {
			return x, nil
		}
		return window(x, g, g.h, g.w, -dy, -dx, fill, cval, x.Shape), nil
	}
}

// RandomShift returns the width/height shift augmentation of Keras's
// ImageDataGenerator(width_shift_range=widthFrac,
// height_shift_range=heightFrac, fill_mode=fill, cval=cval). For each axis
// whose range r is non-zero (height first, then width, as Keras draws them)
// it draws u uniformly from [-r, r), scales it by the image's size along
// that axis when r < 1 (r >= 1 is a number of pixels), rounds to the nearest
// whole pixel and applies Shift. With r = 0.1 on a 32-pixel axis the shift
// is one of -3..3. See the package documentation for how this compares with
// Keras, which warps by the unrounded amount with bilinear interpolation.
func RandomShift(widthFrac, heightFrac float64, fill FillMode, cval float32) data.Transform {
	const op = "RandomShift"
	for _, r := range []float64{widthFrac, heightFrac} {
		if !(r >= 0) || math.IsInf(r, 0) {
			return argError(op, "shift ranges must be finite and >= 0, got width %v height %v", widthFrac, heightFrac)
		}
	}
	if fill != Constant && fill != Nearest {
		return argError(op, "unknown fill mode %d", int(fill))
	}
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		if err := needRNG(op, rng); err != nil {
			return data.Tensor{}, err
		}
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		dy := drawShift(rng, heightFrac, g.h)
		dx := drawShift(rng, widthFrac, g.w)
		if dy == 0 && dx == 0 {
			return x, nil
		}
		return window(x, g, g.h, g.w, -dy, -dx, fill, cval, x.Shape), nil
	}
}

// drawShift draws one axis's shift by Keras's rule for a float range r,
// rounded to whole pixels; r == 0 draws nothing.
func drawShift(rng *rand.Rand, r float64, size int) int {
	if r == 0 {
		return 0
	}
	t := -r + 2*r*rng.Float64() // np.random.uniform(-r, r)
	if r < 1 {
		t *= float64(size)
	}
	return int(math.Round(t))
}

// RandomCrop returns torchvision's RandomCrop(size, padding=pad): the image
// is padded by pad pixels on every side (filled by fill, with cval for
// Constant; Nearest is torchvision's padding_mode="edge"), then a window of
// size[0] rows by size[1] columns is cut at an offset drawn uniformly from
// all positions that fit, rows first. The padded image is never built: the
// window is read straight from the input. CIFAR-10 training commonly uses
// RandomCrop([2]int{32, 32}, 4, Constant, 0). A window larger than the
// padded image is an error.
func RandomCrop(size [2]int, pad int, fill FillMode, cval float32) data.Transform {
	const op = "RandomCrop"
	if size[0] <= 0 || size[1] <= 0 || pad < 0 {
		return argError(op, "want a positive size and pad >= 0, got size %v pad %d", size, pad)
	}
	if fill != Constant && fill != Nearest {
		return argError(op, "unknown fill mode %d", int(fill))
	}
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		if err := needRNG(op, rng); err != nil {
			return data.Tensor{}, err
		}
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		ph, pw := g.h+2*pad, g.w+2*pad
		if size[0] > ph || size[1] > pw {
			return data.Tensor{}, inputError(op, x, "crop %dx%d does not fit the %dx%d image padded by %d", size[0], size[1], g.h, g.w, pad)
		}
		oy := rng.IntN(ph - size[0] + 1)
		ox := rng.IntN(pw - size[1] + 1)
		shape := x.Shape
		if size[0] != g.h || size[1] != g.w {
			shape = g.shape(size[0], size[1])
		}
		return window(x, g, size[0], size[1], oy-pad, ox-pad, fill, cval, shape), nil
	}
}

// Pad returns torchvision's Pad(pad, padding_mode): the image grows by pad
// pixels on every side, filled by fill (cval for Constant). Fashion-MNIST's
// 28×28 images padded by 2 fit networks built for CIFAR's 32×32. A pad of
// 0 returns the input itself.
func Pad(pad int, fill FillMode, cval float32) data.Transform {
	const op = "Pad"
	if pad < 0 {
		return argError(op, "pad %d must be >= 0", pad)
	}
	if fill != Constant && fill != Nearest {
		return argError(op, "unknown fill mode %d", int(fill))
	}
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		if pad == 0 {
			return x, nil
		}
		oh, ow := g.h+2*pad, g.w+2*pad
		return window(x, g, oh, ow, -pad, -pad, fill, cval, g.shape(oh, ow)), nil
	}
}

// window returns the oh×ow image whose pixel (y, x) is x's pixel
// (y+sy0, x+sx0), filling pixels outside x by fill. It allocates once.
func window(x data.Tensor, g geom, oh, ow, sy0, sx0 int, fill FillMode, cval float32, shape []int) data.Tensor {
	planes, pix := g.planes()
	in, out := g.h*g.w*pix, oh*ow*pix
	if x.U8 != nil {
		cv := uint8(math.Round(float64(min(max(cval, 0), 255))))
		dst := make([]uint8, planes*out)
		for p := range planes {
			translate(dst[p*out:(p+1)*out], oh, ow, x.U8[p*in:(p+1)*in], g.h, g.w, pix, sy0, sx0, fill, cv)
		}
		return data.Tensor{Shape: shape, U8: dst}
	}
	dst := make([]float32, planes*out)
	for p := range planes {
		translate(dst[p*out:(p+1)*out], oh, ow, x.F32[p*in:(p+1)*in], g.h, g.w, pix, sy0, sx0, fill, cval)
	}
	return data.Tensor{Shape: shape, F32: dst}
}

// translate writes into dst (oh rows of ow pixels of c interleaved values)
// the window of src (h rows of w pixels) whose origin is src pixel
// (sy0, sx0). Each output row is one copy of the covered span plus fills.
func translate[T uint8 | float32](dst []T, oh, ow int, src []T, h, w, c, sy0, sx0 int, fill FillMode, cv T) {
	orow, irow := ow*c, w*c
	xl := min(max(-sx0, 0), ow)   // first column that reads inside src
	xr := min(max(w-sx0, xl), ow) // first column past the inside span
	for y := range oh {
		d := dst[y*orow : (y+1)*orow]
		sy := y + sy0
		if sy < 0 || sy >= h {
			if fill == Constant {
				set(d, cv)
				continue
			}
			sy = min(max(sy, 0), h-1)
		}
		s := src[sy*irow : (sy+1)*irow]
		if xl < xr {
			copy(d[xl*c:xr*c], s[(xl+sx0)*c:])
		}
		if fill == Constant {
			set(d[:xl*c], cv)
			set(d[xr*c:], cv)
			continue
		}
		if c == 1 {
			set(d[:xl], s[0])
			set(d[xr:], s[w-1])
			continue
		}
		first, last := s[:c], s[(w-1)*c:]
		for x := 0; x < xl; x++ {
			copy(d[x*c:(x+1)*c], first)
		}
		for x := xr; x < ow; x++ {
			copy(d[x*c:(x+1)*c], last)
		}
	}
}

func set[T uint8 | float32](d []T, v T) {
	if v == 0 {
		clear(d)
		return
	}
	for i := range d {
		d[i] = v
	}
}
