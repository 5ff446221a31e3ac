package fft_test

import (
	"fmt"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestGradCheck checks every transform's gradient, in every norm, against
// central differences in float64, with lengths that pad and truncate.
func TestGradCheck(t *testing.T) {
	dev := ctx.CPU(0)
	type oneFn = func(*nd.NDArray, int, int, fft.Norm) *nd.NDArray
	type manyFn = func(*nd.NDArray, []int, []int, fft.Norm) *nd.NDArray
	ones := []struct {
		name    string
		f       oneFn
		complex bool
	}{
		{"FFT", fft.FFT, true}, {"IFFT", fft.IFFT, true}, {"RFFT", fft.RFFT, false},
		{"IRFFT", fft.IRFFT, true}, {"HFFT", fft.HFFT, true}, {"IHFFT", fft.IHFFT, false},
	}
	manys := []struct {
		name    string
		f       manyFn
		complex bool
	}{
		{"FFT2", fft.FFT2, true}, {"IFFT2", fft.IFFT2, true}, {"RFFT2", fft.RFFT2, false},
		{"IRFFT2", fft.IRFFT2, true}, {"HFFT2", fft.HFFT2, true}, {"IHFFT2", fft.IHFFT2, false},
		{"FFTN", fft.FFTN, true}, {"IFFTN", fft.IFFTN, true}, {"RFFTN", fft.RFFTN, false},
		{"IRFFTN", fft.IRFFTN, true}, {"HFFTN", fft.HFFTN, true}, {"IHFFTN", fft.IHFFTN, false},
	}
	input := func(seed uint64, complex bool, shape ...int) *nd.NDArray {
		if complex {
			shape = append(shape, 2)
		}
		return ndtest.Rand(dev, seed, -1, 1, shape...)
	}
	seed := uint64(1)
	for _, norm := range []fft.Norm{fft.Backward, fft.Ortho, fft.Forward} {
		for _, o := range ones {
			// n: the input's, padded (odd), truncated (even); along the
			// last and a leading axis; 67 goes through Bluestein.
			for _, a := range []struct{ n, dim int }{{0, -1}, {9, -1}, {4, 0}, {67, -1}} {
				seed++
				x := input(seed, o.complex, 3, 6)
				t.Run(fmt.Sprint(o.name, norm, a), func(t *testing.T) {
					ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray { return o.f(in[0], a.n, a.dim, norm) },
						[]*nd.NDArray{x}, ndtest.GradTol{})
				})
			}
		}
		for _, m := range manys {
			for _, a := range []struct{ s, dims []int }{{nil, nil}, {[]int{5, 3}, []int{2, 0}}} {
				seed++
				x := input(seed, m.complex, 3, 2, 4)
				t.Run(fmt.Sprint(m.name, norm, a), func(t *testing.T) {
					ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray { return m.f(in[0], a.s, a.dims, norm) },
						[]*nd.NDArray{x}, ndtest.GradTol{})
				})
			}
		}
	}
}

// TestGradCheckHelpers checks the complex helpers and the shifts.
func TestGradCheckHelpers(t *testing.T) {
	dev := ctx.CPU(0)
	z := ndtest.AwayFrom(dev, 3, -1, 1, 0.1, []float64{0}, 2, 3, 2)
	cases := []struct {
		name string
		f    func(in []*nd.NDArray) *nd.NDArray
		in   []*nd.NDArray
	}{
		{"Complex", func(in []*nd.NDArray) *nd.NDArray { return fft.Complex(in[0], in[1]) },
			[]*nd.NDArray{ndtest.Rand(dev, 1, -1, 1, 2, 3), ndtest.Rand(dev, 2, -1, 1, 2, 3)}},
		{"Real", func(in []*nd.NDArray) *nd.NDArray { return fft.Real(in[0]) }, []*nd.NDArray{z}},
		{"Imag", func(in []*nd.NDArray) *nd.NDArray { return fft.Imag(in[0]) }, []*nd.NDArray{z}},
		{"Conj", func(in []*nd.NDArray) *nd.NDArray { return fft.Conj(in[0]) }, []*nd.NDArray{z}},
		{"Abs", func(in []*nd.NDArray) *nd.NDArray { return fft.Abs(in[0]) }, []*nd.NDArray{z}},
		{"Angle", func(in []*nd.NDArray) *nd.NDArray { return fft.Angle(in[0]) }, []*nd.NDArray{z}},
		{"ComplexMul", func(in []*nd.NDArray) *nd.NDArray { return fft.ComplexMul(in[0], in[1]) },
			[]*nd.NDArray{z, ndtest.Rand(dev, 4, -1, 1, 3, 2)}},
		{"FFTShift", func(in []*nd.NDArray) *nd.NDArray { return fft.FFTShift(in[0]) }, []*nd.NDArray{ndtest.Rand(dev, 5, -1, 1, 3, 4)}},
		{"IFFTShift", func(in []*nd.NDArray) *nd.NDArray { return fft.IFFTShift(in[0], 1) }, []*nd.NDArray{ndtest.Rand(dev, 6, -1, 1, 3, 5)}},
		{"STFT", func(in []*nd.NDArray) *nd.NDArray {
			return fft.STFT(in[0], 8, fft.STFTOpts{Hop: 3, Window: in[1], Normalized: true})
		}, []*nd.NDArray{ndtest.Rand(dev, 7, -1, 1, 2, 19), ndtest.Rand(dev, 8, 0.5, 1, 6)}},
		{"STFTTwoSided", func(in []*nd.NDArray) *nd.NDArray {
			return fft.STFT(in[0], 7, fft.STFTOpts{Hop: 2, TwoSided: true, PadMode: "replicate"})
		}, []*nd.NDArray{ndtest.Rand(dev, 9, -1, 1, 15)}},
		{"ISTFT", func(in []*nd.NDArray) *nd.NDArray {
			return fft.ISTFT(in[0], 8, fft.STFTOpts{Hop: 2, Window: in[1], Length: 13})
		}, []*nd.NDArray{ndtest.Rand(dev, 10, -1, 1, 2, 5, 6, 2), ndtest.Rand(dev, 11, 0.5, 1, 8)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { ndtest.CheckGrad(t, c.f, c.in, ndtest.GradTol{}) })
	}
}

// TestGradGradCheck checks second derivatives (GradWith's CreateGraph)
// of the transforms, which are linear (their second derivatives vanish,
// but their gradients must stay differentiable with respect to the
// output gradient), and of the complex helpers.
func TestGradGradCheck(t *testing.T) {
	dev := ctx.CPU(0)
	z := ndtest.AwayFrom(dev, 3, -1, 1, 0.1, []float64{0}, 2, 3, 2)
	cases := []struct {
		name string
		f    func(in []*nd.NDArray) *nd.NDArray
		in   []*nd.NDArray
	}{
		{"Abs", func(in []*nd.NDArray) *nd.NDArray { return fft.Abs(in[0]) }, []*nd.NDArray{z}},
		{"Angle", func(in []*nd.NDArray) *nd.NDArray { return fft.Angle(in[0]) }, []*nd.NDArray{z}},
		{"ComplexMul", func(in []*nd.NDArray) *nd.NDArray { return fft.ComplexMul(in[0], in[1]) },
			[]*nd.NDArray{z, ndtest.Rand(dev, 4, -1, 1, 3, 2)}},
		// |RFFT(x)|² and the like: the second derivatives of a power
		// spectrum go through the transform's gradient and back.
		{"RFFT power", func(in []*nd.NDArray) *nd.NDArray {
			return nd.Square(fft.Abs(fft.RFFT(in[0], 0, -1, fft.Ortho)))
		}, []*nd.NDArray{ndtest.Rand(dev, 5, -1, 1, 2, 9)}},
		{"FFT2 power", func(in []*nd.NDArray) *nd.NDArray {
			return nd.Square(fft.FFT2(in[0], nil, nil, fft.Backward))
		}, []*nd.NDArray{ndtest.Rand(dev, 6, -1, 1, 3, 4, 2)}},
		{"IRFFT of a square", func(in []*nd.NDArray) *nd.NDArray {
			return fft.IRFFT(nd.Square(in[0]), 7, -1, fft.Forward)
		}, []*nd.NDArray{ndtest.Rand(dev, 7, -1, 1, 2, 4, 2)}},
		{"STFT power", func(in []*nd.NDArray) *nd.NDArray {
			return fft.Abs(fft.STFT(in[0], 8, fft.STFTOpts{Hop: 3, Window: in[1]}))
		}, []*nd.NDArray{ndtest.Rand(dev, 8, -1, 1, 2, 19), ndtest.Rand(dev, 9, 0.5, 1, 8)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := ndtest.CheckGradGrad(t, c.f, c.in, ndtest.GradTol{Step: 1e-5, Atol: 1e-5}); err != nil {
				t.Error(err)
			}
		})
	}
}
