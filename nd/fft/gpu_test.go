//go:build cuda || cudaemu

package fft_test

// With -tags cuda (or cudaemu) the transforms run on GPU arrays: computed
// on the host, results and gradients copied back to the array's device
// (gpu(1) too when GOLUON_VIRTUAL_GPUS or the machine gives a second GPU).

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	_ "github.com/goluon/goluon/cuda"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
	"github.com/goluon/goluon/nd/ndtest"
)

func TestOnGPU(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0), ctx.GPU(0)}
	if ctx.NumGPUs() > 1 {
		devs = append(devs, ctx.GPU(1))
	}
	host := ndtest.Rand(ctx.CPU(0), 7, -1, 1, 3, 13).AsType(nd.Float32)
	var cpu []float32
	for _, dev := range devs {
		x := host.CopyTo(dev)
		x.AttachGrad(nd.GradWrite)
		var y, l *nd.NDArray
		autograd.Record(func() {
			spec := fft.RFFT(x, 16, -1, fft.Ortho)
			y = fft.IRFFT(fft.ComplexMul(spec, spec), 16, -1, fft.Ortho)
			z := fft.FFT2(fft.Complex(x, nil), nil, nil, fft.Forward)
			l = nd.Add(nd.Sum(nd.Mul(y, y)), nd.Sum(fft.Abs(fft.ComplexFFTShift(z))))
			l = nd.Add(l, nd.Sum(fft.HFFTN(fft.IHFFTN(x, nil, nil, ""), []int{3, 13}, nil, "")))
			o := fft.STFTOpts{Hop: 2, WinLength: 6, Length: 13}
			l = nd.Add(l, nd.Sum(nd.Square(fft.ISTFT(fft.STFT(x, 8, o), 8, o))))
		})
		autograd.Backward(l)
		if y.Context() != dev || x.Grad().Context() != dev {
			t.Fatalf("on %v: result on %v, gradient on %v", dev, y.Context(), x.Grad().Context())
		}
		if f := fft.FFTFreq(dev, nd.Float32, 4, 1); f.Context() != dev {
			t.Fatalf("FFTFreq on %v made an array on %v", dev, f.Context())
		}
		got := append(y.Float32s(), x.Grad().Float32s()...)
		if cpu == nil {
			cpu = got
			continue
		}
		for i := range got {
			if d := got[i] - cpu[i]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("value %d: %v on %v, %v on cpu(0)", i, got[i], dev, cpu[i])
			}
		}
	}
}
