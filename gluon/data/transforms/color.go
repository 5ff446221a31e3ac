package transforms

import (
	"math"
	"math/rand/v2"

	"github.com/goluon/goluon/gluon/data"
)

// grayWeights are the red, green and blue weights of torchvision's
// rgb_to_grayscale on tensors: ITU-R BT.601 luma, with red's 0.299 written
// 0.2989 (so a white uint8 pixel becomes 254, not 255). They are float64
// variables, rounded to float32 at run time as torch rounds Python floats.
var grayWeights = [3]float64{0.2989, 0.587, 0.114}

// colorInput reads an image the colour transforms accept: 1 or 3 channels
// (HW, HWC uint8 or CHW float32).
func colorInput(op string, x data.Tensor) (planar, error) {
	g, err := geometry(op, x)
	if err != nil {
		return planar{}, err
	}
	if g.c != 1 && g.c != 3 {
		return planar{}, inputError(op, x, "want a 1- or 3-channel image, got %d channels", g.c)
	}
	return toPlanar(x, g), nil
}

// colorOp returns the transform applying f to 1- and 3-channel images.
// f returns false when the image does not change (hue and saturation of a
// one-channel image), and the input is then returned as is.
func colorOp(op string, f func(planar) (planar, bool)) data.Transform {
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		im, err := colorInput(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		out, changed := f(im)
		if !changed {
			return x, nil
		}
		return out.tensor(im.g.h, im.g.w, false), nil
	}
}

// checkFactor reports a blend factor torchvision rejects (negative) or
// that would not give an image (NaN, infinite).
func checkFactor(op string, f float64) data.Transform {
	if !(f >= 0) || math.IsInf(f, 1) {
		return argError(op, "factor %v must be finite and >= 0", f)
	}
	return nil
}

// AdjustBrightness returns torchvision's adjust_brightness(img, factor):
// every value is multiplied by factor (a blend with a black image), then
// clamped to the value range: [0, 1] for float32 images, which are
// therefore expected in [0, 1] (after ToTensor, before Normalize), and
// [0, 255] for uint8 ones. Factor 0 gives black, 1 the input, 2 doubles
// the brightness. Like every colour transform here it computes in float32
// as torch does on tensors, and a uint8 result is truncated toward zero,
// as torch's cast to uint8 truncates (torchvision's PIL path, through
// PIL's ImageEnhance, rounds differently). It takes 1- and 3-channel
// images (HW, HWC uint8, CHW float32); a negative factor is an argument
// error.
func AdjustBrightness(factor float64) data.Transform {
	const op = "AdjustBrightness"
	if t := checkFactor(op, factor); t != nil {
		return t
	}
	return colorOp(op, func(im planar) (planar, bool) { return brightness(im, factor), true })
}

// AdjustContrast returns torchvision's adjust_contrast(img, factor): a
// blend with the mean of the image's grayscale version (of the image
// itself when it has one channel), clamped to the value range. Factor 0
// gives a uniform gray image, 1 the input. For uint8 images the grayscale
// image is truncated to integers before its mean is taken, as torchvision
// does. Value ranges and types are as AdjustBrightness's.
func AdjustContrast(factor float64) data.Transform {
	const op = "AdjustContrast"
	if t := checkFactor(op, factor); t != nil {
		return t
	}
	return colorOp(op, func(im planar) (planar, bool) { return contrast(im, factor), true })
}

// AdjustSaturation returns torchvision's adjust_saturation(img, factor): a
// blend of an RGB image with its grayscale version (Grayscale's values),
// clamped to the value range. Factor 0 gives the grayscale image in three
// channels, 1 the input, 2 doubles the saturation. A one-channel image is
// returned as is, as torchvision returns it. Value ranges and types are as
// AdjustBrightness's.
func AdjustSaturation(factor float64) data.Transform {
	const op = "AdjustSaturation"
	if t := checkFactor(op, factor); t != nil {
		return t
	}
	return colorOp(op, func(im planar) (planar, bool) { return saturation(im, factor) })
}

// AdjustHue returns torchvision's adjust_hue(img, factor): each RGB pixel
// is converted to HSV, factor (in [-0.5, 0.5]; ±0.5 give the
// complementary colours) is added to its hue modulo 1, and it is
// converted back, with torchvision's float32 formulas. uint8 values are
// divided by 255 first and multiplied by 255 and truncated after; float32
// values should be in [0, 1] (the conversion assumes non-negative values).
// A one-channel image is returned as is. A factor outside [-0.5, 0.5] is
// an argument error.
func AdjustHue(factor float64) data.Transform {
	const op = "AdjustHue"
	if !(factor >= -0.5 && factor <= 0.5) {
		return argError(op, "factor %v is outside [-0.5, 0.5]", factor)
	}
	return colorOp(op, func(im planar) (planar, bool) { return hue(im, factor) })
}

// Grayscale returns torchvision's Grayscale(num_output_channels) on
// tensors (rgb_to_grayscale): an RGB image becomes
// 0.2989·R + 0.587·G + 0.114·B, computed in float32 (uint8 results
// truncated, so white becomes 254), in outChannels (1 or 3) equal
// channels. A one-channel image is returned as is for outChannels 1 and
// repeated for 3. A one-channel result of an HW image stays HW; otherwise
// the layout is HWC for uint8 and CHW for float32. outChannels other than
// 1 and 3, and images of other channel counts, are errors.
func Grayscale(outChannels int) data.Transform {
	const op = "Grayscale"
	if outChannels != 1 && outChannels != 3 {
		return argError(op, "want 1 or 3 output channels, got %d", outChannels)
	}
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		im, err := colorInput(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		if len(im.p) == 1 && outChannels == 1 {
			return x, nil
		}
		return grayImage(im, outChannels), nil
	}
}

// RandomGrayscale returns torchvision's RandomGrayscale(p): it draws one
// rng.Float64() per call and, when the draw is below p, converts the image
// as Grayscale does, keeping its number of channels (an RGB image becomes
// three equal channels; a one-channel image is unchanged). Otherwise, and
// for one-channel images, the input is returned as is. It takes 1- and
// 3-channel images, checked on every call; a p outside [0, 1] is an
// argument error.
func RandomGrayscale(p float64) data.Transform {
	const op = "RandomGrayscale"
	if !(p >= 0 && p <= 1) {
		return argError(op, "probability %v is outside [0, 1]", p)
	}
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		if err := needRNG(op, rng); err != nil {
			return data.Tensor{}, err
		}
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		if g.c != 1 && g.c != 3 {
			return data.Tensor{}, inputError(op, x, "want a 1- or 3-channel image, got %d channels", g.c)
		}
		if rng.Float64() >= p || g.c == 1 {
			return x, nil
		}
		return grayImage(toPlanar(x, g), 3), nil
	}
}

// grayImage returns im's grayscale version in c equal channels.
func grayImage(im planar, c int) data.Tensor {
	gray := grayPlane(im)
	out := im.like(c, len(gray))
	for _, p := range out.p {
		copy(p, gray)
	}
	return out.tensor(im.g.h, im.g.w, false)
}

// grayPlane returns rgb_to_grayscale of a 3-channel image, in float32 with
// the additions in torch's order and, for uint8 images, truncated; or a
// copy of the only plane of a one-channel image.
func grayPlane(im planar) []float32 {
	n := len(im.p[0])
	out := make([]float32, n)
	if len(im.p) == 1 {
		copy(out, im.p[0])
		return out
	}
	wr, wg, wb := float32(grayWeights[0]), float32(grayWeights[1]), float32(grayWeights[2])
	r, g, b := im.p[0][:n], im.p[1][:n], im.p[2][:n]
	for i := range out {
		v := float32(float32(wr*r[i])+float32(wg*g[i])) + float32(wb*b[i])
		if im.u8 {
			v = float32(quantize(v, false))
		}
		out[i] = v
	}
	return out
}

// blend returns torchvision's _blend: ratio·im + (1−ratio)·other, clamped
// to [0, 1] (float32) or [0, 255] (uint8, then truncated). other is the
// plane other (the same for every channel) or, when nil, the constant k.
// Both products are rounded to float32 before the sum, as torch computes
// them as separate tensor ops.
func blend(im planar, ratio float64, other []float32, k float32) planar {
	r, q := float32(ratio), float32(1-ratio)
	bound := float32(1)
	if im.u8 {
		bound = 255
	}
	out := im.like(len(im.p), len(im.p[0]))
	for c, src := range im.p {
		dst := out.p[c][:len(src)]
		for i, v := range src {
			b := k
			if other != nil {
				b = other[i]
			}
			y := min(max(float32(r*v)+float32(q*b), 0), bound)
			if im.u8 {
				y = float32(quantize(y, false))
			}
			dst[i] = y
		}
	}
	return out
}

func brightness(im planar, f float64) planar { return blend(im, f, nil, 0) }

// contrast blends with the mean of the grayscale image: torch's float32
// sum divided by the number of pixels. The sum is taken in float64 and
// rounded once; for uint8 images (integer grays) it is exact, as torch's
// is below 2^24, and for float32 ones it may differ from torch's pairwise
// float32 sum in the last bit.
func contrast(im planar, f float64) planar {
	p := im.p[0]
	if len(im.p) == 3 {
		p = grayPlane(im)
	}
	var s float64
	for _, v := range p {
		s += float64(v)
	}
	return blend(im, f, nil, float32(s)/float32(len(p)))
}

func saturation(im planar, f float64) (planar, bool) {
	if len(im.p) == 1 {
		return im, false
	}
	return blend(im, f, grayPlane(im), 0), true
}

// hue shifts the hue of every pixel by f turns through torchvision's
// _rgb2hsv and _hsv2rgb.
func hue(im planar, f float64) (planar, bool) {
	if len(im.p) == 1 {
		return im, false
	}
	n := len(im.p[0])
	out := im.like(3, n)
	hf := float32(f)
	r, g, b := im.p[0][:n], im.p[1][:n], im.p[2][:n]
	or, og, ob := out.p[0][:n], out.p[1][:n], out.p[2][:n]
	for i := range n {
		x, y, z := r[i], g[i], b[i]
		if im.u8 {
			x, y, z = x/255, y/255, z/255
		}
		h, s, v := rgbToHSV(x, y, z)
		// torch.remainder(h + f, 1.0): fmod, then + 1 when negative.
		h = mod1(h + hf)
		if h < 0 {
			h++
		}
		x, y, z = hsvToRGB(h, s, v)
		if im.u8 {
			x = float32(quantize(float32(x*255), false))
			y = float32(quantize(float32(y*255), false))
			z = float32(quantize(float32(z*255), false))
		}
		or[i], og[i], ob[i] = x, y, z
	}
	return out, true
}

// rgbToHSV is torchvision's _rgb2hsv for one pixel, in float32: hue in
// [0, 1), saturation, and value (the largest channel).
func rgbToHSV(r, g, b float32) (h, s, v float32) {
	maxc, minc := max(r, g, b), min(r, g, b)
	cr := maxc - minc
	div, crDiv := maxc, cr
	if maxc == minc { // gray: no hue, no saturation, no division by 0
		div, crDiv = 1, 1
	}
	s = cr / div
	rc, gc, bc := (maxc-r)/crDiv, (maxc-g)/crDiv, (maxc-b)/crDiv
	switch {
	case maxc == r:
		h = bc - gc
	case maxc == g:
		h = (2 + rc) - bc
	default:
		h = (4 + gc) - rc
	}
	h = mod1(h/6 + 1)
	return h, s, maxc
}

// mod1 is fmod(v, 1): v minus its integer part, which is exact (and
// faster than math.Mod) for every float32.
func mod1(v float32) float32 {
	return v - float32(math.Trunc(float64(v)))
}

// hsvToRGB is torchvision's _hsv2rgb for one pixel, in float32.
func hsvToRGB(h, s, v float32) (r, g, b float32) {
	h6 := h * 6
	fl := float32(math.Floor(float64(h6)))
	f := h6 - fl
	p := min(max(v*(1-s), 0), 1)
	q := min(max(v*(1-float32(s*f)), 0), 1)
	t := min(max(v*(1-float32(s*(1-f))), 0), 1)
	switch (int(fl)%6 + 6) % 6 { // torch's remainder: never negative
	case 0:
		return v, t, p
	case 1:
		return q, v, p
	case 2:
		return p, v, t
	case 3:
		return p, q, v
	case 4:
		return t, p, v
	}
	return v, p, q
}
