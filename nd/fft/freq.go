package fft

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// FFTFreq returns the sample frequencies of FFT's n bins for samples d
// apart (torch.fft.fftfreq): [0, 1, …, ⌈n/2⌉−1, −⌊n/2⌋, …, −1]/(d·n), an
// array of dtype dt (floating-point) on dev. As nd's other creation
// functions it takes the dtype first; PyTorch's default is Float32.
func FFTFreq(dev ctx.Context, dt nd.DType, n int, d float64) *nd.NDArray {
	const op = "fft.FFTFreq"
	v := freqs(op, dt, n, n)
	for k := range v {
		f := k
		if k >= (n+1)/2 {
			f = k - n
		}
		v[k] = float64(f) / (d * float64(n))
	}
	return made(dev, dt, v)
}

// RFFTFreq returns the sample frequencies of RFFT's n/2+1 bins for n
// samples d apart (torch.fft.rfftfreq): [0, 1, …, ⌊n/2⌋]/(d·n), an array
// of dtype dt (floating-point) on dev.
func RFFTFreq(dev ctx.Context, dt nd.DType, n int, d float64) *nd.NDArray {
	const op = "fft.RFFTFreq"
	v := freqs(op, dt, n, n/2+1)
	if n == 0 {
		v = v[:0]
	}
	for k := range v {
		v[k] = float64(k) / (d * float64(n))
	}
	return made(dev, dt, v)
}

// freqs checks FFTFreq's arguments and returns a slice of m values.
func freqs(op string, dt nd.DType, n, m int) []float64 {
	if !dt.IsFloat() {
		nd.Panicf(op, nd.ErrDType, "needs a floating-point dtype, got %v", dt)
	}
	if n < 0 {
		nd.Panicf(op, nd.ErrArgument, "negative length %d", n)
	}
	return make([]float64, m)
}

// made uploads v as a vector of dtype dt on dev.
func made(dev ctx.Context, dt nd.DType, v []float64) *nd.NDArray {
	a := nd.FromSlice(dev, v, len(v))
	if dt == nd.Float64 {
		return a
	}
	out := a.AsType(dt)
	a.Release()
	return out
}

// FFTShift rolls each of the axes of x by half its length, ⌊n/2⌋, so that
// the zero frequency of a spectrum moves to the centre
// (torch.fft.fftshift); no axes means every axis. It is for real arrays
// (FFTFreq's frequencies, RFFT's magnitudes), whose axes it counts as nd
// counts them, and takes any dtype. For a complex spectrum use
// ComplexFFTShift: FFTShift(z) of a complex array would roll its
// (real, imaginary) pair axis too and swap the parts.
func FFTShift(x *nd.NDArray, axes ...int) *nd.NDArray {
	return shift("fft.FFTShift", x, axes, false, false)
}

// IFFTShift undoes FFTShift, rolling each axis of the real array x back by
// ⌊n/2⌋ (torch.fft.ifftshift); no axes means every axis. For a complex
// array use ComplexIFFTShift.
func IFFTShift(x *nd.NDArray, axes ...int) *nd.NDArray {
	return shift("fft.IFFTShift", x, axes, true, false)
}

// ComplexFFTShift is FFTShift of the complex array z (a trailing axis of
// 2), torch.fft.fftshift of a complex tensor: it rolls each of the
// signal's axes by half its length, leaving each value's (real,
// imaginary) pair alone. The axes count the complex signal's, as the
// transforms' dims do (for z of shape [h, w, 2], 0 and −2 are the axis of
// length h); no axes means every axis of the signal.
func ComplexFFTShift(z *nd.NDArray, axes ...int) *nd.NDArray {
	return shift("fft.ComplexFFTShift", z, axes, false, true)
}

// ComplexIFFTShift undoes ComplexFFTShift, rolling each of the complex
// signal's axes back by ⌊n/2⌋ (torch.fft.ifftshift of a complex tensor);
// the axes count as ComplexFFTShift's, and no axes means all of them.
func ComplexIFFTShift(z *nd.NDArray, axes ...int) *nd.NDArray {
	return shift("fft.ComplexIFFTShift", z, axes, true, true)
}

// shift rolls x's axes by ⌊n/2⌋ (back, if inverse). With cplx, x is a
// complex array and the axes count its signal's, without the pair axis.
func shift(op string, x *nd.NDArray, axes []int, inverse, cplx bool) *nd.NDArray {
	if x == nil {
		nd.Panicf(op, nd.ErrArgument, "nil array")
	}
	r, what := x.NDim(), "shape"
	if cplx {
		checkComplex(op, x)
		r, what = r-1, "complex signal of shape"
	}
	if len(axes) == 0 {
		for i := range r {
			axes = append(axes, i)
		}
	}
	shape := x.Shape()
	for _, a := range axes {
		if a < -r || a >= r {
			nd.Panicf(op, nd.ErrArgument, "axis %d out of range for a %s %v", a, what, shape[:r])
		}
	}
	if len(axes) == 0 { // a scalar: a copy
		return nd.MulScalar(x, 1)
	}
	for _, a := range axes {
		if a < 0 {
			a += r
		}
		s := shape[a] / 2
		if inverse {
			s = -s
		}
		x = nd.Roll(x, s, a)
	}
	return x
}
