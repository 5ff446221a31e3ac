package fft_test

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
)

// round prints values to 4 decimals, without negative zeros.
func round(a *nd.NDArray) []float64 {
	v := a.Float64s()
	for i, x := range v {
		v[i] = math.Round(x*1e4)/1e4 + 0
	}
	return v
}

// The spectrum of a cosine of 2 cycles in 8 samples: RFFT's bins 0..4,
// their frequencies in cycles per sample, and the magnitudes.
func Example() {
	dev := ctx.CPU(0)
	x := make([]float64, 8)
	for i := range x {
		x[i] = math.Cos(2 * math.Pi * 2 * float64(i) / 8)
	}
	spec := fft.RFFT(nd.FromSlice(dev, x), 0, -1, fft.Backward) // [5, 2]
	fmt.Println(spec.Shape())
	fmt.Println(round(fft.RFFTFreq(dev, nd.Float64, 8, 1)))
	fmt.Println(round(fft.Abs(spec)))
	// Output:
	// [5 2]
	// [0 0.125 0.25 0.375 0.5]
	// [0 0 4 0 0]
}

// A circular convolution as the product of two spectra, with a gradient
// for the kernel.
func Example_convolution() {
	dev := ctx.CPU(0)
	signal := nd.FromSlice(dev, []float64{1, 2, 3, 4})
	kernel := nd.FromSlice(dev, []float64{0, 1, 0.5, 0})
	kernel.AttachGrad(nd.GradWrite)
	var y *nd.NDArray
	autograd.Record(func() {
		prod := fft.ComplexMul(fft.RFFT(signal, 0, -1, ""), fft.RFFT(kernel, 0, -1, ""))
		y = fft.IRFFT(prod, 4, -1, "") // y_n = Σ_m signal_m · kernel_(n−m mod 4)
		autograd.Backward(nd.Sum(y))
	})
	fmt.Println(round(y))
	fmt.Println(round(kernel.Grad()))
	// Output:
	// [5.5 3 2.5 4]
	// [10 10 10 10]
}

// FFTShift puts the zero frequency of a real array (here FFTFreq's
// frequencies) in the middle.
func ExampleFFTShift() {
	dev := ctx.CPU(0)
	f := fft.FFTFreq(dev, nd.Float64, 5, 1)
	fmt.Println(round(f))
	fmt.Println(round(fft.FFTShift(f)))
	// Output:
	// [0 0.2 0.4 -0.4 -0.2]
	// [-0.4 -0.2 0 0.2 0.4]
}

// ComplexFFTShift centres a complex spectrum, torch.fft.fftshift of a
// complex tensor: it shifts the signal's axes and leaves each value's
// (real, imaginary) pair alone.
func ExampleComplexFFTShift() {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float64{1, 1, 0, 0}, 4)
	z := fft.FFT(fft.Complex(x, nil), 0, -1, "") // [2, 1−i, 0, 1+i]
	c := fft.ComplexFFTShift(z)                  // [0, 1+i, 2, 1−i]
	fmt.Println(round(fft.Real(c)), round(fft.Imag(c)))
	back := fft.ComplexIFFTShift(c)
	fmt.Println(round(fft.Real(back)), round(fft.Imag(back)))
	// Output:
	// [0 1 2 1] [0 1 0 -1]
	// [2 1 0 1] [0 -1 0 1]
}

// The short-time transform of a batch of two signals with a Hann window,
// and its inverse.
func ExampleSTFT() {
	dev := ctx.CPU(0)
	x := nd.Reshape(nd.Sin(nd.Arange(dev, nd.Float64, 0, 128, 1)), 2, 64)
	hann := make([]float64, 16)
	for i := range hann {
		hann[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/16)
	}
	o := fft.STFTOpts{Hop: 4, Window: nd.FromSlice(dev, hann), Length: 64}
	s := fft.STFT(x, 16, o)
	fmt.Println(s.Shape()) // 9 bins, 17 frames, (re, im)
	y := fft.ISTFT(s, 16, o)
	err := nd.Max(nd.Abs(nd.Sub(y, x))).Scalar()
	fmt.Println(y.Shape(), err < 1e-12)
	// Output:
	// [2 9 17 2]
	// [2 64] true
}
