package transforms

import (
	"math"
	"math/rand/v2"

	"github.com/goluon/goluon/gluon/data"
)

// Affine returns torchvision's affine(img, angle, translate, scale, shear,
// interpolation, fill, center) on tensors: a rotation by angle degrees
// clockwise (unlike Rotate's counter-clockwise angle, as in torchvision),
// a scale, shears of shear[0] degrees parallel to the x axis and shear[1]
// parallel to the y axis, about the centre (opts.Center or the image
// centre), then a translation by translate (x, y) pixels; the output has
// the input's size. Sampling, fill and value types are as Rotate's;
// opts.Expand is not supported (an argument error, as torchvision's
// affine has no expand). A non-positive scale or non-finite arguments are
// argument errors.
func Affine(angle float64, translate [2]float64, scale float64, shear [2]float64, opts RotateOpts) data.Transform {
	const op = "Affine"
	if msg := checkAffine(opts); msg != "" {
		return argError(op, "%s", msg)
	}
	for _, v := range []float64{angle, translate[0], translate[1], scale, shear[0], shear[1]} {
		if !finite(v) {
			return argError(op, "arguments must be finite, got angle %v translate %v scale %v shear %v", angle, translate, scale, shear)
		}
	}
	if !(scale > 0) {
		return argError(op, "scale %v must be positive", scale)
	}
	opts = opts.clone()
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		fill, err := opts.fill(op, x, g.c)
		if err != nil {
			return data.Tensor{}, err
		}
		return affine(toPlanar(x, g), angle, translate, scale, shear, opts, fill), nil
	}
}

func checkAffine(opts RotateOpts) string {
	if msg := opts.check(); msg != "" {
		return msg
	}
	if opts.Expand {
		return "expand is not supported by affine transforms"
	}
	return ""
}

func affine(im planar, angle float64, translate [2]float64, scale float64, shear [2]float64, opts RotateOpts, fill []float32) data.Tensor {
	m := inverseAffine(opts.centre(im.g), angle, translate, scale, shear)
	return warp(im, m, im.g.w, im.g.h, opts.Interp, fill).tensor(im.g.h, im.g.w, true)
}

// AffineRanges are RandomAffine's parameter ranges; the zero value of a
// field other than Degrees disables that part (no draw).
type AffineRanges struct {
	// Degrees is the range of the angle, clockwise as Affine's;
	// torchvision's degrees=d is {−d, d}.
	Degrees [2]float64
	// Translate holds the largest horizontal and vertical translations as
	// fractions of the width and height, in [0, 1]: tx is drawn uniformly
	// from [−Translate[0]·w, Translate[0]·w] and rounded half to even, ty
	// likewise with the height.
	Translate [2]float64
	// Scale is the range of the scale, 0 < Scale[0] <= Scale[1]; {0, 0}
	// keeps the scale 1.
	Scale [2]float64
	// Shear holds the ranges of the x shear (Shear[0], Shear[1]) and of
	// the y shear (Shear[2], Shear[3]) in degrees; torchvision's shear=s
	// is {−s, s, 0, 0} and shear=(a, b) is {a, b, 0, 0}.
	Shear [4]float64
}

func (r AffineRanges) check() string {
	for _, v := range [...]float64{r.Degrees[0], r.Degrees[1], r.Translate[0], r.Translate[1], r.Scale[0], r.Scale[1], r.Shear[0], r.Shear[1], r.Shear[2], r.Shear[3]} {
		if !finite(v) {
			return "ranges must be finite"
		}
	}
	switch {
	case r.Degrees[0] > r.Degrees[1]:
		return "degrees must have min <= max"
	case r.Translate[0] < 0 || r.Translate[0] > 1 || r.Translate[1] < 0 || r.Translate[1] > 1:
		return "translate fractions must be in [0, 1]"
	case r.Scale != [2]float64{} && !(r.Scale[0] > 0 && r.Scale[0] <= r.Scale[1]):
		return "scale must be {0, 0} or satisfy 0 < min <= max"
	case r.Shear[0] > r.Shear[1] || r.Shear[2] > r.Shear[3]:
		return "shear ranges must have min <= max"
	}
	return ""
}

// RandomAffine returns torchvision's RandomAffine(degrees, translate,
// scale, shear, interpolation, fill, center): each call draws, in this
// order, an angle uniformly from r.Degrees, a translation (when
// r.Translate is not zero), a scale (when r.Scale is set), an x shear and
// a y shear (when their ranges are not zero), one rng.Float64() each, and
// applies Affine. A nil opts.Fill is {0}, as torchvision's default fill=0.
// Ranges out of bounds (see AffineRanges) and opts.Expand are argument
// errors.
func RandomAffine(r AffineRanges, opts RotateOpts) data.Transform {
	const op = "RandomAffine"
	if msg := checkAffine(opts); msg != "" {
		return argError(op, "%s", msg)
	}
	if msg := r.check(); msg != "" {
		return argError(op, "%s, got %+v", msg, r)
	}
	return randomWarp(op, opts, func(im planar, rng *rand.Rand, opts RotateOpts, fill []float32) data.Tensor {
		angle, t, s, sh := drawAffine(rng, r, im.g.w, im.g.h)
		return affine(im, angle, t, s, sh, opts, fill)
	})
}

// drawAffine draws RandomAffine's parameters for a w×h image, following
// torchvision's RandomAffine.get_params.
func drawAffine(rng *rand.Rand, r AffineRanges, w, h int) (angle float64, t [2]float64, scale float64, shear [2]float64) {
	angle = uniform(rng, r.Degrees)
	if r.Translate != [2]float64{} {
		dx, dy := r.Translate[0]*float64(w), r.Translate[1]*float64(h)
		t[0] = math.RoundToEven(uniform(rng, [2]float64{-dx, dx}))
		t[1] = math.RoundToEven(uniform(rng, [2]float64{-dy, dy}))
	}
	scale = 1
	if r.Scale != [2]float64{} {
		scale = uniform(rng, r.Scale)
	}
	if r.Shear[0] != 0 || r.Shear[1] != 0 {
		shear[0] = uniform(rng, [2]float64{r.Shear[0], r.Shear[1]})
	}
	if r.Shear[2] != 0 || r.Shear[3] != 0 {
		shear[1] = uniform(rng, [2]float64{r.Shear[2], r.Shear[3]})
	}
	return angle, t, scale, shear
}
