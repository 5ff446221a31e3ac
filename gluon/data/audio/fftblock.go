package audio

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
)

// FFT is a Block that applies one of nd/fft's transforms, described by a
// fft.Spec: FFTN, IFFTN, RFFTN or IRFFTN over the Spec's axes and
// lengths, with its normalisation (one axis, Dims {-1}, for the
// one-dimensional FFT, IFFT, RFFT and IRFFT; two for the 2-D ones). It
// lets a network that transforms its signal inside export to ONNX: its
// form is one DFT per axis (IRFFT's last axis as a full spectrum rebuilt
// from the half one). Complex values are nd/fft's and ONNX's trailing
// axis of 2. It is differentiable and has no parameters.
type FFT struct {
	gluon.BlockMeta
	spec fft.Spec
}

// NewFFT returns an FFT Block applying sp. An unknown Kind panics with
// an *nd.Error; the other arguments are checked, as nd/fft checks them,
// on each input.
func NewFFT(sp fft.Spec) *FFT {
	switch sp.Kind {
	case "", fft.KindFFT, fft.KindIFFT, fft.KindRFFT, fft.KindIRFFT:
	default:
		nd.Panicf("audio.NewFFT", nd.ErrArgument, "kind %q: want %q, %q, %q or %q", string(sp.Kind), fft.KindFFT, fft.KindIFFT, fft.KindRFFT, fft.KindIRFFT)
	}
	sp.S = append([]int(nil), sp.S...)
	sp.Dims = append([]int(nil), sp.Dims...)
	if len(sp.S) == 0 {
		sp.S = nil
	}
	if len(sp.Dims) == 0 {
		sp.Dims = nil
	}
	return &FFT{BlockMeta: gluon.NewBlockMeta("fft"), spec: sp}
}

// Spec returns the transform the Block applies.
func (f *FFT) Spec() fft.Spec { return f.spec }

// EagerOnly makes gluon.Hybridize run a network holding an FFT eagerly:
// nd/fft transforms on the host, which a trace cannot hold.
func (f *FFT) EagerOnly() string { return "its transform runs on the host (nd/fft)" }

// Forward returns the transform of x.
func (f *FFT) Forward(x *nd.NDArray) *nd.NDArray { return f.spec.Apply(x) }

// ExportONNX writes the transform as DFT nodes, one per axis, in the
// order nd/fft applies them (fft.Spec.Steps), with Mul for the
// normalisation. A length given in the Spec fixes that axis's size in the
// graph; without one the axis stays free unless the norm (Ortho, or
// Forward) scales by it.
func (f *FFT) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	shape, err := onnxShape(g, x, "FFT")
	if err != nil {
		return "", err
	}
	var steps []fft.Step
	if err := nd.Catch(func() { steps = f.spec.Steps(shape) }); err != nil {
		return "", err
	}
	return onnxSteps(g, x, shape, steps), nil
}
