package onnx_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data/audio"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
)

// fourierNets are the Fourier transforms and audio front-ends the export
// round trip covers, with an example input shape, the free axes (the
// signal's length where the form keeps it free) and whether the batch
// axis is fixed (a 1-D signal has none).
var fourierNets = []struct {
	name  string
	net   func() gluon.Block
	shape []int
	free  []int
	fixed bool
}{
	{"fft-1d", func() gluon.Block { return audio.NewFFT(fft.Spec{Dims: []int{-1}}) }, []int{2, 8, 2}, []int{1}, false},
	{"ifft-1d-ortho-padded", func() gluon.Block {
		return audio.NewFFT(fft.Spec{Kind: fft.KindIFFT, S: []int{10}, Dims: []int{1}, Norm: fft.Ortho})
	}, []int{2, 7, 2}, []int{1}, false},
	{"fft-batch-axis", func() gluon.Block { return audio.NewFFT(fft.Spec{Dims: []int{0}}) }, []int{3, 4, 2}, nil, false},
	{"rfft-1d", func() gluon.Block { return audio.NewFFT(fft.Spec{Kind: fft.KindRFFT, Dims: []int{-1}}) }, []int{2, 3, 9}, []int{2}, false},
	{"rfft-1d-forward-truncated", func() gluon.Block {
		return audio.NewFFT(fft.Spec{Kind: fft.KindRFFT, S: []int{6}, Dims: []int{-1}, Norm: fft.Forward})
	}, []int{2, 9}, []int{1}, false},
	{"irfft-1d", func() gluon.Block { return audio.NewFFT(fft.Spec{Kind: fft.KindIRFFT, Dims: []int{-1}}) }, []int{2, 5, 2}, []int{1}, false},
	{"irfft-1d-odd-sized", func() gluon.Block {
		return audio.NewFFT(fft.Spec{Kind: fft.KindIRFFT, S: []int{9}, Dims: []int{-1}, Norm: fft.Ortho})
	}, []int{2, 4, 2}, []int{1}, false},
	{"fft-2d", func() gluon.Block { return audio.NewFFT(fft.Spec{Dims: []int{-2, -1}}) }, []int{2, 4, 6, 2}, []int{1, 2}, false},
	{"ifft-2d", func() gluon.Block { return audio.NewFFT(fft.Spec{Kind: fft.KindIFFT, Dims: []int{-2, -1}}) }, []int{2, 3, 5, 2}, []int{1, 2}, false},
	{"rfft-2d", func() gluon.Block { return audio.NewFFT(fft.Spec{Kind: fft.KindRFFT, Dims: []int{-2, -1}}) }, []int{2, 4, 6}, []int{1, 2}, false},
	{"irfft-2d", func() gluon.Block { return audio.NewFFT(fft.Spec{Kind: fft.KindIRFFT, Dims: []int{-2, -1}}) }, []int{2, 4, 4, 2}, []int{1, 2}, false},
	{"spectrogram", func() gluon.Block {
		return audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 16, HopLength: 4})
	}, []int{2, 64}, []int{1}, false},
	{"spectrogram-channels", func() gluon.Block {
		return audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 16, WinLength: 12, HopLength: 5, Pad: 3, PadMode: "constant",
			Power: 1, Normalized: audio.NormWindow, Window: audio.Hamming})
	}, []int{2, 3, 50}, []int{2}, false},
	{"spectrogram-complex-circular", func() gluon.Block {
		return audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 10, HopLength: 3, PadMode: "circular", Complex: true,
			TwoSided: true, Normalized: audio.NormFrameLength})
	}, []int{2, 40}, []int{1}, false},
	{"spectrogram-replicate-1d", func() gluon.Block {
		return audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 12, PadMode: "replicate", Power: 0.5, Window: audio.Blackman})
	}, []int{40}, nil, true},
	{"spectrogram-uncentred", func() gluon.Block {
		return audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 8, HopLength: 2, NoCenter: true})
	}, []int{2, 30}, []int{1}, false},
	{"melspectrogram", func() gluon.Block {
		return audio.NewMelSpectrogram(audio.MelSpectrogramOpts{Spectrogram: audio.SpectrogramOpts{NFFT: 32, HopLength: 8},
			Mel: audio.MelOpts{NMels: 10, SampleRate: 8000, Norm: audio.Slaney, MelScale: audio.Slaney}})
	}, []int{2, 100}, []int{1}, false},
	{"amplitudetodb", func() gluon.Block {
		return audio.NewAmplitudeToDB(audio.DBOpts{SType: audio.Magnitude, TopDB: 40})
	}, []int{2, 3, 5, 7}, []int{3}, false},
	{"amplitudetodb-2d", func() gluon.Block { return audio.NewAmplitudeToDB(audio.DBOpts{TopDB: 30}) }, []int{4, 9}, []int{1}, false},
	{"mfcc", func() gluon.Block {
		return audio.NewMFCC(audio.MFCCOpts{NMFCC: 6, Spectrogram: audio.SpectrogramOpts{NFFT: 32, HopLength: 8},
			Mel: audio.MelOpts{NMels: 12, SampleRate: 8000}})
	}, []int{2, 120}, []int{1}, false},
	{"mfcc-logmels", func() gluon.Block {
		return audio.NewMFCC(audio.MFCCOpts{NMFCC: 5, LogMels: true, Norm: audio.DCTNone,
			Spectrogram: audio.SpectrogramOpts{NFFT: 24, HopLength: 6}, Mel: audio.MelOpts{NMels: 8, SampleRate: 4000}})
	}, []int{1, 2, 90}, []int{2}, false},
}

// TestExportONNXFourier exports nd/fft's transforms (through audio.FFT)
// and the audio front-ends, with the signal's length free, loads each
// file back and compares with the Block's output in float32, at the
// example's size and at a longer signal and another batch; the exported
// graphs hold DFT, STFT and MatMul nodes of opset 17. With
// GOLUON_ONNX_EXPORT_DIR set the files stay there (make onnx-check runs
// ONNX's checker and ONNX Runtime on them).
func TestExportONNXFourier(t *testing.T) {
	dev := ctx.CPU(0)
	for _, c := range fourierNets {
		t.Run(c.name, func(t *testing.T) {
			nd.Seed(7)
			net := c.net()
			opts := onnx.ExportOpts{FreeAxes: c.free, FixedBatch: c.fixed}
			mp, err := onnx.Export(net, c.shape, opts)
			if err != nil {
				t.Fatal(err)
			}
			var ops []string
			for _, n := range mp.GetGraph().GetNode() {
				ops = append(ops, n.GetOpType())
			}
			if !slices.Contains(ops, "DFT") && !slices.Contains(ops, "STFT") && !slices.Contains(ops, "Log") {
				t.Errorf("no DFT or STFT node: %v", ops)
			}
			inputs := []*nd.NDArray{nd.RandomNormal(dev, nd.Float32, 0, 1, c.shape...)}
			longer := slices.Clone(c.shape)
			for _, a := range c.free {
				longer[a] += 5
			}
			if !c.fixed && len(longer) > 1 {
				longer[0]++
			}
			if !slices.Equal(longer, c.shape) {
				inputs = append(inputs, nd.RandomNormal(dev, nd.Float32, 0, 1, longer...))
			}
			onnxtest.RoundTrip(t, "fourier-"+c.name, net, c.shape, opts, inputs...)
		})
	}
}

// TestExportFourierErrors: a form that would fix a free length is
// refused (an Ortho transform scales by it), and so is a transform the
// example input does not fit.
func TestExportFourierErrors(t *testing.T) {
	net := audio.NewFFT(fft.Spec{Dims: []int{-1}, Norm: fft.Ortho})
	if _, err := onnx.Export(net, []int{2, 8, 2}, onnx.ExportOpts{FreeAxes: []int{1}}); err == nil || !strings.Contains(err.Error(), "free axes") {
		t.Errorf("an Ortho transform along a free axis: %v", err)
	}
	if _, err := onnx.Export(net, []int{2, 8, 2}, onnx.ExportOpts{}); err != nil {
		t.Errorf("the same transform at a fixed length: %v", err)
	}
	if _, err := onnx.Export(net, []int{2, 8, 3}, onnx.ExportOpts{}); err == nil {
		t.Error("a transform of an input without a pair axis exported")
	}
	db := audio.NewAmplitudeToDB(audio.DBOpts{TopDB: 80})
	if _, err := onnx.Export(db, []int{6}, onnx.ExportOpts{}); err == nil || !strings.Contains(err.Error(), "at least 2 axes") {
		t.Errorf("a top dB floor of a 1-D input: %v", err)
	}
}
