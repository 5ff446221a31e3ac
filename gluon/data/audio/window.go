package audio

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// WindowFn makes a window of n points of dtype dt on dev, the window_fn
// argument of torchaudio's Spectrogram. Hann, Hamming, Blackman and
// Bartlett are WindowFns (periodic, as torch's defaults), and Kaiser
// makes one.
type WindowFn func(dev ctx.Context, dt nd.DType, n int) *nd.NDArray

// Hann is the periodic Hann window (torch.hann_window's default), the
// Spectrogram's default window.
func Hann(dev ctx.Context, dt nd.DType, n int) *nd.NDArray { return HannWindow(dev, dt, n, true) }

// Hamming is the periodic Hamming window (torch.hamming_window's default).
func Hamming(dev ctx.Context, dt nd.DType, n int) *nd.NDArray { return HammingWindow(dev, dt, n, true) }

// Blackman is the periodic Blackman window (torch.blackman_window's
// default).
func Blackman(dev ctx.Context, dt nd.DType, n int) *nd.NDArray {
	return BlackmanWindow(dev, dt, n, true)
}

// Bartlett is the periodic triangular window (torch.bartlett_window's
// default).
func Bartlett(dev ctx.Context, dt nd.DType, n int) *nd.NDArray {
	return BartlettWindow(dev, dt, n, true)
}

// Kaiser returns the WindowFn of the periodic Kaiser window of shape
// parameter beta (torch.kaiser_window's default beta is 12).
func Kaiser(beta float64) WindowFn {
	return func(dev ctx.Context, dt nd.DType, n int) *nd.NDArray { return KaiserWindow(dev, dt, n, true, beta) }
}

// HannWindow returns the Hann window of n points, 0.5 − 0.5·cos(2πk/M)
// (torch.hann_window): M = n for a periodic window (one period of a
// window of n+1 points, the form spectral analysis wants), M = n−1 for a
// symmetric one. A window of one point is [1]. dt must be a
// floating-point dtype.
func HannWindow(dev ctx.Context, dt nd.DType, n int, periodic bool) *nd.NDArray {
	return windowArray("audio.HannWindow", false, dev, dt, window{kind: "hann", periodic: periodic}, n)
}

// HammingWindow returns the Hamming window of n points,
// 0.54 − 0.46·cos(2πk/M) (torch.hamming_window with its default alpha
// and beta); M as for HannWindow.
func HammingWindow(dev ctx.Context, dt nd.DType, n int, periodic bool) *nd.NDArray {
	return windowArray("audio.HammingWindow", false, dev, dt, window{kind: "hamming", periodic: periodic}, n)
}

// BlackmanWindow returns the Blackman window of n points,
// 0.42 − 0.5·cos(2πk/M) + 0.08·cos(4πk/M) (torch.blackman_window); M as
// for HannWindow.
func BlackmanWindow(dev ctx.Context, dt nd.DType, n int, periodic bool) *nd.NDArray {
	return windowArray("audio.BlackmanWindow", false, dev, dt, window{kind: "blackman", periodic: periodic}, n)
}

// BartlettWindow returns the triangular window of n points,
// 1 − |2k/M − 1| (torch.bartlett_window); M as for HannWindow.
func BartlettWindow(dev ctx.Context, dt nd.DType, n int, periodic bool) *nd.NDArray {
	return windowArray("audio.BartlettWindow", false, dev, dt, window{kind: "bartlett", periodic: periodic}, n)
}

// KaiserWindow returns the Kaiser window of n points and shape parameter
// beta ≥ 0, I₀(β·√(1 − (2k/M − 1)²)) / I₀(β) (torch.kaiser_window); M as
// for HannWindow.
func KaiserWindow(dev ctx.Context, dt nd.DType, n int, periodic bool, beta float64) *nd.NDArray {
	return windowArray("audio.KaiserWindow", false, dev, dt, window{kind: "kaiser", periodic: periodic, beta: beta}, n)
}

// window names one of the windows above.
type window struct {
	kind     string
	periodic bool
	beta     float64
}

// values returns the window's n points, computed in float64.
func (w window) values(op string, n int) []float64 {
	if n < 0 {
		nd.Panicf(op, nd.ErrArgument, "negative window length %d", n)
	}
	if w.kind == "kaiser" && !(w.beta >= 0 && w.beta < 700) {
		nd.Panicf(op, nd.ErrArgument, "Kaiser window beta %g: want 0 ≤ beta < 700", w.beta)
	}
	v := make([]float64, n)
	if n == 1 {
		v[0] = 1
		return v
	}
	m := float64(n - 1)
	if w.periodic {
		m = float64(n)
	}
	for k := range v {
		c := 2 * math.Pi * float64(k) / m
		switch w.kind {
		case "hann":
			v[k] = 0.5 - 0.5*math.Cos(c)
		case "hamming":
			v[k] = 0.54 - 0.46*math.Cos(c)
		case "blackman":
			v[k] = 0.42 - 0.5*math.Cos(c) + 0.08*math.Cos(2*c)
		case "bartlett":
			v[k] = 1 - math.Abs(2*float64(k)/m-1)
		case "kaiser":
			r := 2*float64(k)/m - 1
			v[k] = besselI0(w.beta*math.Sqrt(max(0, 1-r*r))) / besselI0(w.beta)
		}
	}
	return v
}

// besselI0 is the modified Bessel function of the first kind of order
// zero, by its power series Σ ((x/2)^k / k!)², which converges for every
// x (the terms peak near k = x/2).
func besselI0(x float64) float64 {
	q := x * x / 4
	sum, term := 1.0, 1.0
	for k := 1.0; k < 1000; k++ {
		term *= q / (k * k)
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

// windowArray makes window w of n points (a persistent array when
// persist).
func windowArray(op string, persist bool, dev ctx.Context, dt nd.DType, w window, n int) *nd.NDArray {
	checkFloat(op, dt)
	return fromFloat64s(persist, dev, dt, w.values(op, n), n)
}

// checkFloat fails unless dt is a floating-point dtype.
func checkFloat(op string, dt nd.DType) {
	if !dt.IsFloat() {
		nd.Panicf(op, nd.ErrDType, "needs a floating-point dtype, got %v", dt)
	}
}

// fromFloat64s returns v as an array of dtype dt and the given shape on
// dev: made by nd.Empty, or, when persist, by the persistent session (a
// Block's cached constants, which no Scope may release).
func fromFloat64s(persist bool, dev ctx.Context, dt nd.DType, v []float64, shape ...int) *nd.NDArray {
	var a *nd.NDArray
	if persist {
		a = nd.PersistentSession().Empty(dev, dt, shape...)
	} else {
		a = nd.Empty(dev, dt, shape...)
	}
	if len(v) > 0 {
		a.WriteFrom(v)
	}
	return a
}
