package fft_test

import (
	"fmt"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/goldentest"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
)

// goldenCase is one case of testdata/goldens.json (make_goldens.py).
type goldenCase struct {
	Op                        string
	N, Dim                    int
	S, Dims                   []int
	Norm                      string
	D                         float64
	Input, Output, Head, Grad goldentest.Tensor
	// STFT and ISTFT.
	Hop, WinLength, Length         int
	PadMode                        string
	Normalized, TwoSided, NoCenter bool
	Window, WindowGrad             goldentest.Tensor
}

// opts are the case's STFTOpts, with the window w.
func (c goldenCase) opts(w *nd.NDArray) fft.STFTOpts {
	return fft.STFTOpts{Hop: c.Hop, WinLength: c.WinLength, Window: w, NoCenter: c.NoCenter, PadMode: c.PadMode,
		Normalized: c.Normalized, TwoSided: c.TwoSided, Length: c.Length}
}

// apply runs the case's function on x (and the window w).
func (c goldenCase) apply(t *testing.T, x, w *nd.NDArray) *nd.NDArray {
	norm := fft.Norm(c.Norm)
	one := map[string]func(*nd.NDArray, int, int, fft.Norm) *nd.NDArray{
		"FFT": fft.FFT, "IFFT": fft.IFFT, "RFFT": fft.RFFT, "IRFFT": fft.IRFFT, "HFFT": fft.HFFT, "IHFFT": fft.IHFFT,
	}
	many := map[string]func(*nd.NDArray, []int, []int, fft.Norm) *nd.NDArray{
		"FFT2": fft.FFT2, "IFFT2": fft.IFFT2, "RFFT2": fft.RFFT2, "IRFFT2": fft.IRFFT2, "HFFT2": fft.HFFT2, "IHFFT2": fft.IHFFT2,
		"FFTN": fft.FFTN, "IFFTN": fft.IFFTN, "RFFTN": fft.RFFTN, "IRFFTN": fft.IRFFTN, "HFFTN": fft.HFFTN, "IHFFTN": fft.IHFFTN,
	}
	if f, ok := one[c.Op]; ok {
		return f(x, c.N, c.Dim, norm)
	}
	if f, ok := many[c.Op]; ok {
		return f(x, c.S, c.Dims, norm)
	}
	switch c.Op {
	case "Abs":
		return fft.Abs(x)
	case "Angle":
		return fft.Angle(x)
	case "Conj":
		return fft.Conj(x)
	case "FFTShift":
		return fft.FFTShift(x, c.Dims...)
	case "IFFTShift":
		return fft.IFFTShift(x, c.Dims...)
	case "ComplexFFTShift":
		return fft.ComplexFFTShift(x, c.Dims...)
	case "ComplexIFFTShift":
		return fft.ComplexIFFTShift(x, c.Dims...)
	case "STFT":
		return fft.STFT(x, c.N, c.opts(w))
	case "ISTFT":
		return fft.ISTFT(x, c.N, c.opts(w))
	}
	t.Fatalf("unknown op %q", c.Op)
	return nil
}

// TestGoldens compares every function with torch.fft (and torch.stft,
// torch.istft): values and
// gradients in float64, values in float32.
func TestGoldens(t *testing.T) {
	dev := ctx.CPU(0)
	for i, c := range goldentest.Cases[goldenCase](t, "testdata/goldens.json") {
		for _, dt := range []nd.DType{nd.Float64, nd.Float32} {
			t.Run(fmt.Sprint(i, c.Op, dt), func(t *testing.T) {
				tol := 1e-12
				if dt == nd.Float32 {
					tol = 5e-6
				}
				switch c.Op {
				case "FFTFreq":
					goldentest.Compare(t, "output", fft.FFTFreq(dev, dt, c.N, c.D), c.Output, tol)
					return
				case "RFFTFreq":
					goldentest.Compare(t, "output", fft.RFFTFreq(dev, dt, c.N, c.D), c.Output, tol)
					return
				}
				x := c.Input.Array(dev).AsType(dt)
				x.AttachGrad(nd.GradWrite)
				var w *nd.NDArray
				if c.Window.Shape != nil {
					w = c.Window.Array(dev).AsType(dt)
					w.AttachGrad(nd.GradWrite)
				}
				var y *nd.NDArray
				autograd.Record(func() {
					y = c.apply(t, x, w)
					autograd.Backward(nd.Sum(nd.Mul(y, c.Head.Array(dev).AsType(dt))))
				})
				if y.DType() != dt {
					t.Fatalf("result of %v, input of %v", y.DType(), dt)
				}
				goldentest.Compare(t, "output", y, c.Output, tol)
				if dt == nd.Float64 {
					goldentest.Compare(t, "gradient", x.Grad(), c.Grad, 1e-10)
					if w != nil {
						goldentest.Compare(t, "window gradient", w.Grad(), c.WindowGrad, 1e-10)
					}
				}
			})
		}
	}
}
