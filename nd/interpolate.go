package nd

import "math"

// InterpolateMode is Interpolate's sampling rule.
type InterpolateMode uint8

// The sampling rules of Interpolate.
const (
	// InterpNearest copies input pixel floor(o·scale) for output pixel o,
	// PyTorch's mode="nearest" (and MXNet's UpSampling with
	// sample_type="nearest" at integer scales).
	InterpNearest InterpolateMode = iota
	// InterpBilinear blends the two nearest input pixels along each axis,
	// PyTorch's mode="bilinear" (MXNet's BilinearResize2D).
	InterpBilinear
)

// InterpolateOpts configures Interpolate. Exactly one of Size and Scale is
// set.
type InterpolateOpts struct {
	// Size is the output's height and width.
	Size [2]int
	// Scale gives the output's height and width as the input's times
	// Scale, rounded down, and maps output coordinates to input ones by
	// 1/Scale, as PyTorch's scale_factor does (recompute_scale_factor
	// unset). As in PyTorch 1.13's CPU kernels, a bilinear axis (without
	// antialias) that keeps its size is copied, whatever the scale, and so
	// is a nearest one of a single-channel input (axis −3 of size 1, or
	// fewer than 3 axes), but not of several channels.
	Scale [2]float64
	// Mode is the sampling rule (InterpNearest, the zero value, or
	// InterpBilinear).
	Mode InterpolateMode
	// AlignCorners, with InterpBilinear, maps the corner pixels' centres
	// onto each other (PyTorch's align_corners=True) instead of the
	// corners' edges.
	AlignCorners bool
	// Antialias, with InterpBilinear, widens the filter when shrinking so
	// that each output pixel averages all the input pixels it covers, as
	// PIL does (PyTorch's antialias=True). Not with AlignCorners.
	Antialias bool
}

// Interpolate resizes the last two axes of x (height and width: NCHW
// images, or any array of at least 2 axes) as
// torch.nn.functional.interpolate(x, size or scale_factor, mode,
// align_corners, antialias) does, with the sampling positions and weights
// computed as ATen's CPU kernels compute them (the scale in the array's
// precision, float32 for half arrays). It is differentiable in x: each axis is a
// sum of weighted Takes, so its gradient scatters the output's gradient
// back by the same weights. Nearest sampling works on every dtype; bilinear
// needs a floating-point x (half-precision ones are computed in float32
// and rounded once).
func Interpolate(x *NDArray, o InterpolateOpts) *NDArray {
	const op = "Interpolate"
	defer checkLive(op, x).done()
	if x.NDim() < 2 {
		fail(op, ErrShape, "want an array of at least 2 axes (height and width last), got %v", x.shape)
	}
	h, w := x.shape[x.NDim()-2], x.shape[x.NDim()-1]
	out := interpolateOut(op, x.shape, o)
	scaleSet := o.Scale != [2]float64{}
	if o.Mode == InterpBilinear {
		switch {
		case x.dtype.IsHalf():
			return viaFloat32(x.dtype, func(a []*NDArray) *NDArray { return Interpolate(a[0], o) }, x)
		case !x.dtype.IsFloat():
			fail(op, ErrDType, "bilinear sampling needs a floating-point array, got %v (convert with AsType)", x.dtype)
		}
	}
	scale := [2]float64{} // 0: in/out
	if scaleSet {
		scale = [2]float64{1 / o.Scale[0], 1 / o.Scale[1]}
	}
	f64 := x.dtype == Float64
	single := singleChannel(x.shape)
	rows := interpTaps(h, out[0], scale[0], o, f64, single)
	cols := interpTaps(w, out[1], scale[1], o, f64, single)
	y := resampleAxis(x, x.NDim()-1, cols)
	z := resampleAxis(y, x.NDim()-2, rows)
	if !z.requiresGrad() {
		y.Release()
	}
	return z
}

// interpolateOut checks o against an input of shape (height and width
// last) and returns the output's height and width.
func interpolateOut(op string, shape []int, o InterpolateOpts) [2]int {
	if len(shape) < 2 {
		fail(op, ErrShape, "want an array of at least 2 axes (height and width last), got %v", shape)
	}
	h, w := shape[len(shape)-2], shape[len(shape)-1]
	sizeSet, scaleSet := o.Size != [2]int{}, o.Scale != [2]float64{}
	switch {
	case o.Mode != InterpNearest && o.Mode != InterpBilinear:
		fail(op, ErrArgument, "unknown mode %d", o.Mode)
	case sizeSet == scaleSet:
		fail(op, ErrArgument, "set exactly one of Size (%v) and Scale (%v)", o.Size, o.Scale)
	case sizeSet && (o.Size[0] <= 0 || o.Size[1] <= 0):
		fail(op, ErrArgument, "output size %v must be positive", o.Size)
	case scaleSet && !(o.Scale[0] > 0 && o.Scale[1] > 0 && !math.IsInf(o.Scale[0], 0) && !math.IsInf(o.Scale[1], 0)):
		fail(op, ErrArgument, "scale %v must be positive and finite", o.Scale)
	case o.Mode == InterpNearest && (o.AlignCorners || o.Antialias):
		fail(op, ErrArgument, "AlignCorners and Antialias apply to bilinear sampling only")
	case o.AlignCorners && o.Antialias:
		fail(op, ErrArgument, "AlignCorners and Antialias cannot be combined")
	case h == 0 || w == 0:
		fail(op, ErrShape, "cannot resample an empty image of shape %v", shape)
	}
	out := o.Size
	if scaleSet {
		out = [2]int{int(math.Floor(float64(h) * o.Scale[0])), int(math.Floor(float64(w) * o.Scale[1]))}
		if out[0] <= 0 || out[1] <= 0 {
			fail(op, ErrArgument, "scale %v leaves no output pixels of the %dx%d input", o.Scale, h, w)
		}
	}
	return out
}

// InterpolateTaps returns the taps Interpolate resamples axis (0: height,
// 1: width) of an input of height and width in with, in ResampleAxis's
// form: output position p along the axis is the sum over k of
// w[k][p] · x[idx[k][p]] (w is nil for one tap of weight 1, as for
// nearest). dt is the array's dtype (float32 and float64 round
// positions differently). Exporters use it to write Interpolate as
// gathers, exactly.
func InterpolateTaps(shape []int, axis int, o InterpolateOpts, dt DType) (idx [][]int64, w [][]float64) {
	if axis < 0 || axis > 1 {
		fail("InterpolateTaps", ErrArgument, "axis %d: want 0 (height) or 1 (width)", axis)
	}
	out := interpolateOut("InterpolateTaps", shape, o)
	in := [2]int{shape[len(shape)-2], shape[len(shape)-1]}
	scale := 0.0
	if o.Scale != [2]float64{} {
		scale = 1 / o.Scale[axis]
	}
	t := interpTaps(in[axis], out[axis], scale, o, dt == Float64, singleChannel(shape))
	return t.idx, t.w
}

// singleChannel reports whether an image of shape has one channel (its
// axis −3), where PyTorch's nearest kernel copies an axis that keeps its
// size.
func singleChannel(shape []int) bool {
	return len(shape) < 3 || shape[len(shape)-3] == 1
}

// axisTaps are the inputs and weights of each output index along one
// axis: output o is the sum over k of w[k][o] · input[idx[k][o]].
type axisTaps struct {
	in, out int
	idx     [][]int64
	w       [][]float64 // nil: one tap of weight 1
}

// interpTaps computes the taps resampling in positions to out, as ATen's
// upsample kernels do (nearest_idx, area_pixel_compute_source_index and
// _compute_indices_weights_aa) for float32 arrays (nearest and antialiased
// positions in float32 arithmetic, bilinear ones from a float32 scale in
// float64), or in float64 when f64. scale is the output-to-input
// coordinate scale when given (non-zero), in/out otherwise.
func interpTaps(in, out int, scale float64, o InterpolateOpts, f64, single bool) axisTaps {
	r := func(v float64) float64 { // one float32 (or float64) operation's rounding
		if f64 {
			return v
		}
		return float64(float32(v))
	}
	s := r(float64(in) / float64(out))
	if scale != 0 {
		s = r(scale)
	}
	t := axisTaps{in: in, out: out}
	switch {
	case o.Mode == InterpNearest:
		// ATen has two rules, in float32 for every dtype: one channel
		// (nearest_idx) copies a kept size, halves a doubled one, else
		// floors a float32 product; several channels floor a float64
		// product rounded to float32.
		s32 := float32(float64(in) / float64(out))
		if scale != 0 {
			s32 = float32(scale)
		}
		idx := make([]int64, out)
		for i := range idx {
			var src float32
			switch {
			case single && in == out:
				src = float32(i)
			case single && out == 2*in:
				src = float32(i >> 1)
			case single:
				src = float32(i) * s32
			default:
				src = float32(float64(i) * float64(s32))
			}
			idx[i] = int64(min(int(math.Floor(float64(src))), in-1))
		}
		t.idx = [][]int64{idx}
	case o.Antialias:
		support, inv := 1.0, 1.0
		if s >= 1 {
			support, inv = s, r(1/s)
		}
		type tap struct {
			lo int
			w  []float64
		}
		taps := make([]tap, out)
		most := 0
		for i := range taps {
			c := r(s * r(float64(i)+0.5))
			lo := max(int(r(r(c-support)+0.5)), 0)
			hi := min(int(r(r(c+support)+0.5)), in)
			w := make([]float64, max(hi-lo, 0))
			total := 0.0
			for j := range w {
				d := math.Abs(r(r(r(float64(j+lo)-c)+0.5) * inv))
				if d < 1 {
					w[j] = r(1 - d)
				}
				total = r(total + w[j])
			}
			if total != 0 {
				for j := range w {
					w[j] = r(w[j] / total)
				}
			}
			taps[i] = tap{lo, w}
			most = max(most, len(w))
		}
		for k := range most {
			idx, wk := make([]int64, out), make([]float64, out)
			for i, tp := range taps {
				idx[i] = int64(tp.lo) // a missing tap reads a real pixel with weight 0
				if k < len(tp.w) {
					idx[i], wk[i] = int64(tp.lo+k), tp.w[k]
				}
			}
			t.idx, t.w = append(t.idx, idx), append(t.w, wk)
		}
	case in == out && !o.AlignCorners:
		// ATen copies an axis that keeps its size (for a given scale too).
		idx := make([]int64, out)
		for i := range idx {
			idx[i] = int64(i)
		}
		t.idx = [][]int64{idx}
	default:
		// The scale is rounded to the array's precision, the positions
		// and weights computed in float64 and the weights rounded, as
		// ATen's CPU kernel does: float32 positions would be off by
		// ~3e-5 a few hundred pixels in.
		if o.AlignCorners {
			s = 0
			if out > 1 {
				s = r(float64(in-1) / float64(out-1))
			}
		}
		i0, i1 := make([]int64, out), make([]int64, out)
		w0, w1 := make([]float64, out), make([]float64, out)
		for i := range out {
			src := s * float64(i)
			if !o.AlignCorners {
				src = max(s*(float64(i)+0.5)-0.5, 0)
			}
			lo := min(int(math.Floor(src)), in-1)
			l1 := min(max(src-float64(lo), 0), 1)
			hi := lo
			if lo < in-1 {
				hi = lo + 1
			}
			i0[i], i1[i], w0[i], w1[i] = int64(lo), int64(hi), r(1-l1), r(l1)
		}
		t.idx, t.w = [][]int64{i0, i1}, [][]float64{w0, w1}
	}
	return t
}

// ResampleAxis returns x resampled along axis by taps: output position o
// along axis is the sum over k of w[k][o] · x[idx[k][o]] (indices clipped
// to the axis), computed as weighted Takes, so it is differentiable in x.
// It is the separable step of image resizing (Interpolate) and of ONNX's
// Resize. All idx[k] have one length, the output's size along axis; w is
// nil for one tap of weight 1 (a gather, on any dtype), or has one weight
// slice per tap of that length (floating-point x; half precision is
// computed in float32 and rounded once).
func ResampleAxis(x *NDArray, axis int, idx [][]int64, w [][]float64) *NDArray {
	const op = "ResampleAxis"
	defer checkLive(op, x).done()
	ax := normAxis(op, axis, x.NDim())
	if len(idx) == 0 {
		fail(op, ErrArgument, "no taps")
	}
	out := len(idx[0])
	for k := range idx {
		if len(idx[k]) != out || (w != nil && len(w[k]) != out) {
			fail(op, ErrArgument, "tap %d has %d indices and %d weights, tap 0 %d indices", k, len(idx[k]), lenOr(w, k), out)
		}
	}
	switch {
	case w != nil && len(w) != len(idx):
		fail(op, ErrArgument, "%d index slices but %d weight slices", len(idx), len(w))
	case w == nil && len(idx) != 1:
		fail(op, ErrArgument, "%d taps without weights", len(idx))
	case w != nil && x.dtype.IsHalf():
		return viaFloat32(x.dtype, func(a []*NDArray) *NDArray { return ResampleAxis(a[0], axis, idx, w) }, x)
	case w != nil && !x.dtype.IsFloat():
		fail(op, ErrDType, "weighted taps need a floating-point array, got %v", x.dtype)
	case out > 0 && x.shape[ax] == 0:
		fail(op, ErrShape, "cannot resample an empty axis %d of shape %v", axis, x.shape)
	}
	return resampleAxis(x, ax, axisTaps{in: x.shape[ax], out: out, idx: idx, w: w})
}

func lenOr(w [][]float64, k int) int {
	if k < len(w) {
		return len(w[k])
	}
	return 0
}

// resampleAxis returns x resampled along axis by t: the sum over taps of
// Take(x, idx, axis) times the tap's weights, broadcast along axis.
func resampleAxis(x *NDArray, axis int, t axisTaps) *NDArray {
	sess, dev := x.Session(), x.st.dev
	trailing := x.NDim() - 1 - axis
	wshape := append([]int{t.out}, make([]int, trailing)...)
	for i := 1; i < len(wshape); i++ {
		wshape[i] = 1
	}
	var sum *NDArray
	var temps []*NDArray
	for k, idx := range t.idx {
		ia := sess.FromSlice(dev, idx, len(idx))
		g := Take(x, ia, axis)
		temps = append(temps, ia)
		term := g
		if t.w != nil {
			var wa *NDArray
			if x.dtype == Float64 {
				wa = sess.FromSlice(dev, t.w[k], wshape...)
			} else {
				w32 := make([]float32, len(t.w[k]))
				for i, v := range t.w[k] {
					w32[i] = float32(v)
				}
				wa = sess.FromSlice(dev, w32, wshape...)
			}
			term = Mul(g, wa)
			temps = append(temps, g, wa)
		}
		if sum == nil {
			sum = term
			continue
		}
		next := Add(sum, term)
		temps = append(temps, sum, term)
		sum = next
	}
	if !sum.requiresGrad() {
		release(temps...)
	}
	return sum
}
