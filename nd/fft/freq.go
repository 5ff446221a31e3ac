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
// (torch.fft.fftshift); no axes means every axis. The axes are x's own,
// counted as nd counts them, which for a complex array include the
// trailing pair: shift a complex spectrum of shape [h, w, 2] with
// FFTShift(z, 0, 1) (or −3, −2), never over the pair axis.
func FFTShift(x *nd.NDArray, axes ...int) *nd.NDArray {
	return shift("fft.FFTShift", x, axes, false)
}

// IFFTShift undoes FFTShift, rolling each axis back by ⌊n/2⌋
// (torch.fft.ifftshift); no axes means every axis.
func IFFTShift(x *nd.NDArray, axes ...int) *nd.NDArray {
	return shift("fft.IFFTShift", x, axes, true)
}

func shift(op string, x *nd.NDArray, axes []int, inverse bool) *nd.NDArray {
	if x == nil {
		nd.Panicf(op, nd.ErrArgument, "nil array")
	}
	r := x.NDim()
	if len(axes) == 0 {
		for i := range r {
			axes = append(axes, i)
		}
	}
	shape := x.Shape()
	for _, a := range axes {
		if a < -r || a >= r {
			nd.Panicf(op, nd.ErrArgument, "axis %d out of range for shape %v", a, shape)
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
