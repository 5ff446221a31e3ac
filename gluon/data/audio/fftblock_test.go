package audio_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data/audio"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestFFTBlock: the Block gives nd/fft's transform of each kind, runs
// eagerly under gluon.Hybridize, passes gradients, and refuses an
// unknown kind.
func TestFFTBlock(t *testing.T) {
	dev := ctx.CPU(0)
	z := ndtest.Rand(dev, 1, -1, 1, 2, 6, 2)
	x := ndtest.Rand(dev, 2, -1, 1, 2, 6)
	for _, c := range []struct {
		name string
		sp   fft.Spec
		in   *nd.NDArray
		want *nd.NDArray
	}{
		{"fft", fft.Spec{Dims: []int{-1}}, z, fft.FFT(z, 0, -1, "")},
		{"ifft-ortho", fft.Spec{Kind: fft.KindIFFT, Dims: []int{-1}, Norm: fft.Ortho}, z, fft.IFFT(z, 0, -1, fft.Ortho)},
		{"rfft-padded", fft.Spec{Kind: fft.KindRFFT, S: []int{9}, Dims: []int{1}}, x, fft.RFFT(x, 9, 1, "")},
		{"irfft", fft.Spec{Kind: fft.KindIRFFT, Dims: []int{-1}}, z, fft.IRFFT(z, 0, -1, "")},
		{"fft2", fft.Spec{Dims: []int{0, 1}}, z, fft.FFT2(z, nil, []int{0, 1}, "")},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := audio.NewFFT(c.sp)
			if got := b.Forward(c.in); !slices.Equal(got.Float64s(), c.want.Float64s()) || !slices.Equal(got.Shape(), c.want.Shape()) {
				t.Errorf("Forward differs from nd/fft")
			}
			h := gluon.Hybridize(b, gluon.HybridOpts{})
			for range 2 {
				if got := h.Forward(c.in); !slices.Equal(got.Float64s(), c.want.Float64s()) {
					t.Errorf("hybridized Forward differs from nd/fft")
				}
			}
			if s := h.Stats(); s.Eager != 2 {
				t.Errorf("hybridized stats %+v: want 2 eager calls", s)
			}
		})
	}
	xg := x.Detach()
	xg.AttachGrad(nd.GradWrite)
	autograd.Record(func() { autograd.Backward(nd.Sum(fft.Abs(audio.NewFFT(fft.Spec{Kind: fft.KindRFFT}).Forward(xg)))) })
	if xg.Grad() == nil {
		t.Error("no gradient through the Block")
	}
	err := nd.Catch(func() { audio.NewFFT(fft.Spec{Kind: "dct"}) })
	var ne *nd.Error
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "dct") {
		t.Errorf("unknown kind: %v", err)
	}
}

// shapeless is an ONNX graph that gives no shapes.
type shapeless struct{ gluon.ONNXGraph }

// TestExportONNXNeedsShapes: the forms that need their input's shape say
// so on a graph that does not give it.
func TestExportONNXNeedsShapes(t *testing.T) {
	for _, b := range []gluon.ONNXExporter{
		audio.NewFFT(fft.Spec{}),
		audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 8}),
		audio.NewAmplitudeToDB(audio.DBOpts{TopDB: 80}),
	} {
		if _, err := b.ExportONNX(shapeless{}, "x"); err == nil || !strings.Contains(err.Error(), "ONNXShapes") {
			t.Errorf("%T: %v", b, err)
		}
	}
}
