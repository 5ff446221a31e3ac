// Package fft is PyTorch's torch.fft for nd arrays: discrete Fourier
// transforms of complex and real signals in one, two or any number of
// dimensions (FFT, RFFT, IRFFT, HFFT and their inverses, 2-D and N-D
// forms), the sample frequencies (FFTFreq, RFFTFreq), the shift of the
// zero frequency to the centre (FFTShift, ComplexFFTShift), and the short-time transform
// (STFT, ISTFT), all differentiable. A Spec holds a transform and its
// arguments as a value, and lists the one-dimensional steps it performs
// (Steps), for code that describes a transform elsewhere (an ONNX form).
//
// # Complex arrays
//
// nd has no complex dtype. A complex array is a real array with a
// trailing axis of 2 holding each value's real and imaginary parts, the
// layout of PyTorch's torch.view_as_real: a complex signal of shape
// [b, n] is an array of shape [b, n, 2]. Complex builds one from its
// parts, and Real, Imag, Conj, Abs, Angle and ComplexMul take them apart
// or combine them; they are composed of nd's ops and differentiable.
//
// Axis numbers (the dim and dims arguments) count the axes of the complex
// signal, without the trailing pair: for x of shape [b, n, 2], dim −1 and
// dim 1 are the axis of length n. A real input (RFFT's, IHFFT's) has no
// pair axis and its axes count as they are. FFTShift and IFFTShift shift
// real arrays (any array, its own axes); ComplexFFTShift and
// ComplexIFFTShift shift complex ones, their axes counted as the
// signal's, so that no axes shifts every signal axis and never the pair.
//
// # Lengths and normalisation
//
// As in PyTorch, a transform's length n (s for several axes) pads the
// input with zeros or truncates it along the axis before transforming,
// and 0 (or a nil s, or −1 in s) means the input's length; for IRFFT and
// HFFT, whose input is half a spectrum of m bins, the default is
// 2·(m−1) points. Norm chooses the scaling: with Backward, the default
// (the zero Norm), the forward transforms (FFT, RFFT, HFFT) are
// unnormalised and the inverse ones divide by n; Forward divides the
// forward transforms by n instead; Ortho divides both by √n, making them
// unitary.
//
// IRFFT's input is the non-redundant half of a Hermitian spectrum: the
// imaginary parts of its first bin and, for even n, of its last (bin
// n/2) are ignored, as PyTorch's, and their gradient is zero.
//
// # Computation
//
// The transforms run on the host in float64, whatever the array's
// context and dtype (Float32, Float64, Float16 and BFloat16 are taken):
// an array on a GPU is copied to the host and its result copied back, and
// the result has the input's dtype (half dtypes rounded from float64 as
// AsType rounds; PyTorch computes them only on CUDA, for powers of two). Lengths
// whose prime factors are at most 61 use Gonum's FFTPACK port
// (gonum.org/v1/gonum/dsp/fourier); other lengths, primes above all, use
// Bluestein's algorithm over a power-of-two transform, so every length
// costs O(n log n). Plans are cached per length, and the lines of a large
// batch are transformed on all cores.
//
// Every transform is a linear map, and its gradient is the adjoint map
// (for an unnormalised DFT F, Fᴴ, the unnormalised inverse, and the
// padding's adjoint is the truncation), computed by the same engine on
// the host. A gradient of a complex output is, as in PyTorch, the pair
// (∂L/∂re, ∂L/∂im). The gradients are not themselves recorded (no double
// backward).
//
// Invalid arguments (a missing pair axis, a length below 1, an axis out of
// range or repeated, a dtype that is not floating-point, an unknown Norm)
// panic with an *nd.Error, which nd.Catch turns into an error value.
package fft

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// Norm is a transform's normalisation mode, PyTorch's norm argument.
type Norm string

// The normalisation modes. The zero Norm ("") is Backward.
const (
	// Backward leaves the forward transforms unscaled and divides the
	// inverse ones by n (PyTorch's default, "backward").
	Backward Norm = "backward"
	// Ortho divides both directions by √n ("ortho").
	Ortho Norm = "ortho"
	// Forward divides the forward transforms by n and leaves the inverse
	// ones unscaled ("forward").
	Forward Norm = "forward"
)

// scale is the factor a transform of n points in the forward (or inverse)
// direction applies under norm.
func scale(op string, norm Norm, forward bool, n int) float64 {
	switch norm {
	case "", Backward:
		if forward {
			return 1
		}
		return 1 / float64(n)
	case Forward:
		if forward {
			return 1 / float64(n)
		}
		return 1
	case Ortho:
		return 1 / math.Sqrt(float64(n))
	}
	nd.Panicf(op, nd.ErrArgument, "norm %q: want %q, %q or %q", string(norm), Backward, Ortho, Forward)
	return 0
}
