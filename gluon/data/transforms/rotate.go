package transforms

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/goluon/goluon/gluon/data"
)

// RotateOpts are the options of Rotate, RandomRotation, Affine and
// RandomAffine. The zero value samples bilinearly, about the image centre,
// keeps the size and fills with zeros.
type RotateOpts struct {
	// Interp is the sampling filter: InterpBilinear (the zero value) or
	// InterpNearest, which is torchvision's default for rotate and affine.
	Interp Interp
	// Expand, for Rotate and RandomRotation only, enlarges the output to
	// hold the whole rotated image, as torchvision's expand=True (which
	// assumes rotation about the centre).
	Expand bool
	// Center is the centre of rotation as (x, y) in pixels from the
	// top-left corner of the image (whose centre is (w/2, h/2)); nil is
	// the image centre.
	Center *[2]float64
	// Fill is torchvision's fill for the output pixels that map outside
	// the image: nil (or empty) is fill=None, zeros; otherwise one value
	// for every channel or one per channel, in the image's value scale
	// (0–255 for uint8, where results are clamped to that range rather
	// than wrapped as torch's cast would). Like torchvision, a non-nil Fill is blended in
	// through a sampled coverage mask, which with bilinear sampling also
	// darkens partly covered border pixels, even for Fill {0}.
	// RandomRotation and RandomAffine treat nil as {0}, as torchvision's
	// RandomRotation and RandomAffine do.
	Fill []float32
}

func (o RotateOpts) check() string {
	if o.Interp != InterpBilinear && o.Interp != InterpNearest {
		return "unknown interpolation " + o.Interp.String()
	}
	if o.Center != nil && !(finite(o.Center[0]) && finite(o.Center[1])) {
		return "center must be finite"
	}
	return ""
}

// clone copies Center and Fill, so that a transform does not see later
// changes to the caller's.
func (o RotateOpts) clone() RotateOpts {
	if o.Center != nil {
		c := *o.Center
		o.Center = &c
	}
	o.Fill = slices.Clone(o.Fill)
	return o
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// centre returns the centre of rotation relative to the image centre,
// as torchvision's rotate and affine compute it for tensors.
func (o RotateOpts) centre(g geom) [2]float64 {
	if o.Center == nil {
		return [2]float64{}
	}
	return [2]float64{o.Center[0] - float64(g.w)*0.5, o.Center[1] - float64(g.h)*0.5}
}

// fill returns the fill of a c-channel image: nil or c values.
func (o RotateOpts) fill(op string, x data.Tensor, c int) ([]float32, error) {
	switch len(o.Fill) {
	case 0:
		return nil, nil
	case 1:
		f := make([]float32, c)
		for i := range f {
			f[i] = o.Fill[0]
		}
		return f, nil
	case c:
		return append([]float32(nil), o.Fill...), nil
	}
	return nil, inputError(op, x, "fill %v has neither 1 nor %d values", o.Fill, c)
}

// Rotate returns torchvision's rotate(img, angle, interpolation, expand,
// center, fill) on tensors: the image turns angle degrees
// counter-clockwise about the centre. Each output pixel centre is mapped
// through torchvision's inverse affine matrix and sampled from the input
// with grid_sample's rules (align_corners=False, zeros outside): nearest
// rounds the position half to even, bilinear blends the four nearest
// pixels. It computes in float32 with torch's operation order, including
// the fused multiply-adds of torch 1.13's AVX2 CPU kernels, so float32
// results match torch's bit for bit on the goldens; uint8 results are
// rounded half to even, as torchvision rounds
// (testdata/make_goldens_color.py). It works on any number of channels
// (HW, HWC uint8, CHW float32). A non-finite angle or an unknown
// interpolation is an argument error; a Fill of the wrong length is an
// input error.
func Rotate(angle float64, opts RotateOpts) data.Transform {
	const op = "Rotate"
	if msg := opts.check(); msg != "" {
		return argError(op, "%s", msg)
	}
	if !finite(angle) {
		return argError(op, "angle %v must be finite", angle)
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
		return rotate(toPlanar(x, g), angle, opts, fill), nil
	}
}

// RandomRotation returns torchvision's RandomRotation(degrees,
// interpolation, expand, center, fill): each call draws an angle uniformly
// from [degrees[0], degrees[1]] (one rng.Float64()) and applies Rotate.
// torchvision's RandomRotation(d) is degrees {−d, d}. A nil opts.Fill is
// {0}, as torchvision's default fill=0. degrees must be finite with
// degrees[0] <= degrees[1].
func RandomRotation(degrees [2]float64, opts RotateOpts) data.Transform {
	const op = "RandomRotation"
	if msg := opts.check(); msg != "" {
		return argError(op, "%s", msg)
	}
	if !(finite(degrees[0]) && finite(degrees[1]) && degrees[0] <= degrees[1]) {
		return argError(op, "degrees %v must be finite with min <= max", degrees)
	}
	return randomWarp(op, opts, func(im planar, rng *rand.Rand, opts RotateOpts, fill []float32) data.Tensor {
		return rotate(im, uniform(rng, degrees), opts, fill)
	})
}

// randomWarp is the transform of RandomRotation and RandomAffine: a nil
// opts.Fill becomes {0}, and each call checks its generator, reads the
// image's geometry and fill and hands them to apply.
func randomWarp(op string, opts RotateOpts, apply func(im planar, rng *rand.Rand, opts RotateOpts, fill []float32) data.Tensor) data.Transform {
	opts = opts.clone()
	if len(opts.Fill) == 0 {
		opts.Fill = []float32{0}
	}
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		if err := needRNG(op, rng); err != nil {
			return data.Tensor{}, err
		}
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		fill, err := opts.fill(op, x, g.c)
		if err != nil {
			return data.Tensor{}, err
		}
		return apply(toPlanar(x, g), rng, opts, fill), nil
	}
}

func rotate(im planar, angle float64, opts RotateOpts, fill []float32) data.Tensor {
	m := inverseAffine(opts.centre(im.g), -angle, [2]float64{}, 1, [2]float64{})
	ow, oh := im.g.w, im.g.h
	if opts.Expand {
		ow, oh = expandedSize(m, im.g.w, im.g.h)
	}
	return warp(im, m, ow, oh, opts.Interp, fill).tensor(oh, ow, true)
}

// degToRad is π/180 as Python's math.radians computes it, in float64.
var degToRad = func() float64 { pi := math.Pi; return pi / 180 }()

// inverseAffine is torchvision's _get_inverse_affine_matrix, in float64
// with Python's operation order: the matrix mapping output pixel
// coordinates to input ones, both relative to the image centre, for a
// rotation by angle degrees (clockwise in image coordinates), a
// translation, a scale and x and y shears in degrees, about center.
func inverseAffine(center [2]float64, angle float64, translate [2]float64, scale float64, shear [2]float64) [6]float64 {
	rot := angle * degToRad
	sx, sy := shear[0]*degToRad, shear[1]*degToRad
	cx, cy := center[0], center[1]
	tx, ty := translate[0], translate[1]
	cs := math.Cos(sy)
	a := math.Cos(rot-sy) / cs
	b := float64(-math.Cos(rot-sy)*math.Tan(sx))/cs - math.Sin(rot)
	c := math.Sin(rot-sy) / cs
	d := float64(-math.Sin(rot-sy)*math.Tan(sx))/cs + math.Cos(rot)
	m := [6]float64{d, -b, 0, -c, a, 0}
	for i := range m {
		m[i] /= scale
	}
	m[2] += float64(m[0]*(-cx-tx)) + float64(m[1]*(-cy-ty))
	m[5] += float64(m[3]*(-cx-tx)) + float64(m[4]*(-cy-ty))
	m[2] += cx
	m[5] += cy
	return m
}

// fma32 is a float32 fused multiply-add, a·b+c rounded once, as the FMA
// instructions of torch's AVX2 kernels compute it. The product is exact in
// float64, so the float64 sum s is rounded once; rounding s to float32 is
// then the single rounding of the exact sum unless s is a float32 tie (the
// 29 bits float32 drops are 100…0) or below float32's normal range, where
// ties have another pattern. Those rare cases take fma32Tie.
func fma32(a, b, c float32) float32 {
	s := float64(a)*float64(b) + float64(c)
	if tie32(s) {
		return fma32Tie(a, b, c)
	}
	return float32(s)
}

// tie32 reports whether rounding s to float32 may differ from rounding the
// exact value s was rounded from.
func tie32(s float64) bool {
	bits := math.Float64bits(s)
	return bits&(1<<29-1) == 1<<28 || bits&(0x7ff<<52) < (1023-126)<<52
}

// fma32Tie rounds the float64 sum to odd (toward the exact sum when
// inexact and even), which makes the final rounding to float32 exact.
func fma32Tie(a, b, c float32) float32 {
	p, q := float64(a)*float64(b), float64(c)
	s := p + q
	// TwoSum: e is the rounding error of s.
	bv := s - p
	e := (p - (s - bv)) + (q - bv)
	if e != 0 && math.Float64bits(s)&1 == 0 && !math.IsInf(s, 0) {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
	}
	return float32(s)
}

// expandedSize is torchvision's _compute_affine_output_size: the size of
// the bounding box of the image's corners mapped by the float32 matrix m,
// truncated to 1e-4 before rounding outwards.
func expandedSize(m [6]float64, w, h int) (ow, oh int) {
	var th [6]float32
	for i, v := range m {
		th[i] = float32(v)
	}
	hw, hh := float32(0.5*float64(w)), float32(0.5*float64(h))
	lo := [2]float32{float32(math.Inf(1)), float32(math.Inf(1))}
	hi := [2]float32{float32(math.Inf(-1)), float32(math.Inf(-1))}
	for _, p := range [4][2]float32{{-hw, -hh}, {-hw, hh}, {hw, hh}, {hw, -hh}} {
		for k := range 2 {
			v := fma32(p[1], th[3*k+1], float32(p[0]*th[3*k])) + th[3*k+2]
			lo[k], hi[k] = min(lo[k], v), max(hi[k], v)
		}
	}
	const tol = float32(1e-4)
	var size [2]int
	for k, half := range [2]float32{hw, hh} {
		top := float32(math.Trunc(float64((hi[k]+half)/tol))) * tol
		bot := float32(math.Trunc(float64((lo[k]+half)/tol))) * tol
		size[k] = int(float32(math.Ceil(float64(top))) - float32(math.Floor(float64(bot))))
	}
	return size[0], size[1]
}

// warp returns the ow×oh image whose pixels are sampled from im at the
// positions the inverse matrix m maps them to, following torchvision's
// _gen_affine_grid and torch's grid_sample CPU kernel (bilinear or
// nearest, zeros padding, align_corners=False), then torchvision's fill
// blending when fill is not nil.
func warp(im planar, m [6]float64, ow, oh int, interp Interp, fill []float32) planar {
	w, h := im.g.w, im.g.h
	var th [6]float32
	for i, v := range m {
		th[i] = float32(v)
	}
	// The grid: base points (x, y, 1) at output pixel centres relative to
	// the output centre, times theta transposed over the input's half
	// size. torch's bmm sums the products in order, with fused
	// multiply-adds through BLAS, or with separately rounded products in
	// its own kernel for products of fewer than 400 multiply-adds
	// (3·oh·ow·2), that is, grids of fewer than 67 points.
	fused := 6*ow*oh >= 400
	hw, hh := float32(0.5*float64(w)), float32(0.5*float64(h))
	r := [6]float32{th[0] / hw, th[1] / hw, th[2] / hw, th[3] / hh, th[4] / hh, th[5] / hh}
	// grid_sample's unnormalization: ((g + 1)·size/2) − 0.5, fused.
	sx, sy := float32(w)/2, float32(h)/2
	out := im.like(len(im.p), ow*oh)
	for oy := range oh {
		by := float32(-float64(oh)*0.5 + 0.5 + float64(oy))
		for ox := range ow {
			bx := float32(-float64(ow)*0.5 + 0.5 + float64(ox))
			var gx, gy float32
			if fused {
				gx = fma32(by, r[1], float32(bx*r[0])) + r[2]
				gy = fma32(by, r[4], float32(bx*r[3])) + r[5]
			} else {
				gx = float32(float32(bx*r[0])+float32(by*r[1])) + r[2]
				gy = float32(float32(bx*r[3])+float32(by*r[4])) + r[5]
			}
			ix, iy := fma32(gx+1, sx, -0.5), fma32(gy+1, sy, -0.5)
			o := oy*ow + ox
			if interp == InterpNearest {
				sampleNearest(out.p, o, im.p, w, h, ix, iy, fill)
			} else {
				sampleBilinear(out.p, o, im.p, w, h, ix, iy, fill)
			}
		}
	}
	return out
}

// index converts a whole-valued float32 coordinate to an int, or -1 when it
// is outside [0, n) (NaN included).
func index(v float32, n int) int {
	if v > -1 && v < float32(n) {
		return int(v)
	}
	return -1
}

func sampleNearest(dst [][]float32, o int, src [][]float32, w, h int, ix, iy float32, fill []float32) {
	x := index(float32(math.RoundToEven(float64(ix))), w)
	y := index(float32(math.RoundToEven(float64(iy))), h)
	in := x >= 0 && y >= 0
	for c, p := range src {
		switch {
		case in:
			dst[c][o] = p[y*w+x]
		case fill != nil:
			dst[c][o] = fill[c]
		default:
			dst[c][o] = 0
		}
	}
}

func sampleBilinear(dst [][]float32, o int, src [][]float32, w, h int, ix, iy float32, fill []float32) {
	fx, fy := float32(math.Floor(float64(ix))), float32(math.Floor(float64(iy)))
	we := ix - fx
	e := 1 - we
	n := iy - fy
	s := 1 - n
	// The north-west, north-east, south-west and south-east neighbours'
	// weights and offsets; -1 when outside, where grid_sample reads zero.
	wt := [4]float32{s * e, s * we, n * e, n * we}
	x0, y0 := index(fx, w), index(fy, h)
	x1, y1 := index(fx+1, w), index(fy+1, h)
	k := [4]int{-1, -1, -1, -1}
	if y0 >= 0 {
		if x0 >= 0 {
			k[0] = y0*w + x0
		}
		if x1 >= 0 {
			k[1] = y0*w + x1
		}
	}
	if y1 >= 0 {
		if x0 >= 0 {
			k[2] = y1*w + x0
		}
		if x1 >= 0 {
			k[3] = y1*w + x1
		}
	}
	var mask float32
	if fill != nil {
		var one [4]float32
		for j, kj := range k {
			if kj >= 0 {
				one[j] = 1
			}
		}
		mask = interp4(one, wt)
	}
	for c, p := range src {
		var v [4]float32
		for j, kj := range k {
			if kj >= 0 {
				v[j] = p[kj]
			}
		}
		r := interp4(v, wt)
		if fill != nil {
			r = float32(r*mask) + float32((1-mask)*fill[c])
		}
		dst[c][o] = r
	}
}

// interp4 sums the four products v[j]·wt[j] left to right with fused
// multiply-adds, as the compiled grid_sample kernel does.
func interp4(v, wt [4]float32) float32 {
	acc := float32(v[0] * wt[0])
	for j := 1; j < 4; j++ {
		// fma32, inlined by hand: this is the rotations' hot loop.
		s := float64(v[j])*float64(wt[j]) + float64(acc)
		if tie32(s) {
			acc = fma32Tie(v[j], wt[j], acc)
		} else {
			acc = float32(s)
		}
	}
	return acc
}
