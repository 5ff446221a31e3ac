package audio

import (
	"fmt"
	"math"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/internal/goldentest"
	"github.com/goluon/goluon/nd"
)

// goldenCase is one case of testdata/goldens.json (make_goldens.py).
type goldenCase struct {
	Kind                      string
	Input, Output, Head, Grad goldentest.Tensor
	// Windows and spectrograms.
	Window     string
	N          int
	Periodic   bool
	Beta       *float64
	NFFT       int `json:"n_fft"`
	WinLength  int `json:"win_length"`
	Hop, Pad   int
	Power      float64
	Complex    bool
	Normalized string
	NoCenter   bool   `json:"no_center"`
	PadMode    string `json:"pad_mode"`
	TwoSided   bool   `json:"two_sided"`
	// Mel filter banks and DCTs.
	NFreqs     int     `json:"n_freqs"`
	FMin       float64 `json:"f_min"`
	FMax       float64 `json:"f_max"`
	NMels      int     `json:"n_mels"`
	SampleRate int     `json:"sample_rate"`
	Norm       string
	MelScale   string `json:"mel_scale"`
	MelNorm    string `json:"mel_norm"`
	NMFCC      int    `json:"n_mfcc"`
	LogMels    bool   `json:"log_mels"`
	// AmplitudeToDB.
	SType string
	TopDB *float64 `json:"top_db"`
	Ref   float64
	// Resample.
	Orig, New, Width int
	Rolloff          float64
	Method           string
	ZeroBeta         bool `json:"zero_beta"`
	// Masking.
	Axis  string
	Param int
	IID   bool
	P     float64
	Draws []float64
	Value float64
}

// windowFn is the case's window function.
func (c goldenCase) windowFn() WindowFn {
	switch c.Window {
	case "hann":
		return Hann
	case "hamming":
		return Hamming
	case "blackman":
		return Blackman
	case "bartlett":
		return Bartlett
	case "kaiser":
		return Kaiser(*c.Beta)
	}
	panic("unknown window " + c.Window)
}

// spectrogramOpts are the case's spectrogram options.
func (c goldenCase) spectrogramOpts() SpectrogramOpts {
	o := SpectrogramOpts{NFFT: c.NFFT, WinLength: c.WinLength, HopLength: c.Hop, Pad: c.Pad, Power: c.Power,
		Complex: c.Complex, Normalized: c.Normalized, NoCenter: c.NoCenter, PadMode: c.PadMode, TwoSided: c.TwoSided}
	if c.Window != "" {
		o.Window = c.windowFn()
	}
	return o
}

// melOpts are the case's mel filter bank options.
func (c goldenCase) melOpts() MelOpts {
	return MelOpts{NMels: c.NMels, SampleRate: c.SampleRate, FMin: c.FMin, FMax: c.FMax, Norm: c.Norm, MelScale: c.MelScale}
}

// block returns the case's Block.
func (c goldenCase) block(t *testing.T) gluon.Block {
	switch c.Kind {
	case "spectrogram":
		return NewSpectrogram(c.spectrogramOpts())
	case "melscale":
		return NewMelScale(c.Input.Shape[len(c.Input.Shape)-2], c.melOpts())
	case "melspectrogram":
		return NewMelSpectrogram(MelSpectrogramOpts{Spectrogram: c.spectrogramOpts(), Mel: c.melOpts()})
	case "db":
		o := DBOpts{SType: c.SType}
		if c.TopDB != nil {
			o.TopDB = *c.TopDB
			o.ZeroTopDB = *c.TopDB == 0 // torchaudio's top_db=0
		}
		return NewAmplitudeToDB(o)
	case "mfcc":
		return NewMFCC(MFCCOpts{NMFCC: c.NMFCC, Norm: DCTNorm(c.Norm), LogMels: c.LogMels,
			Spectrogram: SpectrogramOpts{NFFT: c.NFFT, HopLength: c.Hop},
			Mel:         MelOpts{NMels: c.NMels, SampleRate: c.SampleRate, Norm: c.MelNorm, MelScale: c.MelScale}})
	case "resample":
		o := ResampleOpts{LowpassFilterWidth: c.Width, Rolloff: c.Rolloff, Method: c.Method, ZeroBeta: c.ZeroBeta}
		if c.Beta != nil {
			o.Beta = *c.Beta
		}
		return NewResample(c.Orig, c.New, o)
	}
	t.Fatalf("unknown kind %q", c.Kind)
	return nil
}

// TestGoldens compares every function and Block with torchaudio: values
// and gradients in float64, values in float32.
func TestGoldens(t *testing.T) {
	dev := ctx.CPU(0)
	for i, c := range goldentest.Cases[goldenCase](t, "testdata/goldens.json") {
		name := fmt.Sprint(i, c.Kind, c.Window)
		switch c.Kind {
		case "window":
			t.Run(name, func(t *testing.T) {
				var w *nd.NDArray
				switch c.Window {
				case "hann":
					w = HannWindow(dev, nd.Float64, c.N, c.Periodic)
				case "hamming":
					w = HammingWindow(dev, nd.Float64, c.N, c.Periodic)
				case "blackman":
					w = BlackmanWindow(dev, nd.Float64, c.N, c.Periodic)
				case "bartlett":
					w = BartlettWindow(dev, nd.Float64, c.N, c.Periodic)
				case "kaiser":
					w = KaiserWindow(dev, nd.Float64, c.N, c.Periodic, *c.Beta)
				}
				goldentest.Compare(t, "window", w, c.Output, 1e-13)
			})
			continue
		case "fbank":
			t.Run(name, func(t *testing.T) {
				fb := MelFilterBank(dev, nd.Float64, c.NFreqs, c.melOpts())
				goldentest.Compare(t, "filter bank", fb, c.Output, 1e-12)
			})
			continue
		case "hz_to_mel":
			t.Run(name, func(t *testing.T) {
				m := HzToMel(c.FMin, c.MelScale)
				if want := c.Output.Data[0]; math.Abs(m-want) > 1e-12*(1+math.Abs(want)) {
					t.Errorf("HzToMel(%g, %q) = %.17g, torchaudio %.17g", c.FMin, c.MelScale, m, want)
				}
				if f := MelToHz(m, c.MelScale); math.Abs(f-c.FMin) > 1e-9 {
					t.Errorf("MelToHz(HzToMel(%g)) = %.17g", c.FMin, f)
				}
			})
			continue
		case "dct":
			t.Run(name, func(t *testing.T) {
				goldentest.Compare(t, "DCT", DCTMatrix(dev, nd.Float64, c.NMFCC, c.NMels, DCTNorm(c.Norm)), c.Output, 1e-13)
			})
			continue
		case "mask":
			t.Run(name, func(t *testing.T) { checkMaskGolden(t, c) })
			continue
		}
		for _, dt := range []nd.DType{nd.Float64, nd.Float32} {
			t.Run(fmt.Sprint(name, dt), func(t *testing.T) {
				x := c.Input.Array(dev).AsType(dt)
				x.AttachGrad(nd.GradWrite)
				var y *nd.NDArray
				autograd.Record(func() {
					if c.Kind == "db_to_amplitude" {
						y = DBToAmplitude(x, c.Ref, c.Power)
					} else {
						y = c.block(t).Forward(x)
					}
					autograd.Backward(nd.Sum(nd.Mul(y, c.Head.Array(dev).AsType(dt))))
				})
				if y.DType() != dt {
					t.Fatalf("result of %v, input of %v", y.DType(), dt)
				}
				if dt == nd.Float32 {
					t.Logf("float32: largest difference %.3g", goldentest.Compare(t, "output", y, c.Output, float32Tol(c.Kind)))
					return
				}
				worst := goldentest.Compare(t, "output", y, c.Output, 1e-10)
				if c.Grad.Shape != nil {
					worst = max(worst, goldentest.Compare(t, "gradient", x.Grad(), c.Grad, 1e-10))
				}
				t.Logf("largest difference %.3g", worst)
			})
		}
	}
}

// float32Tol is the tolerance of a float32 run against torchaudio's
// float64 values, relative to 1 + |value|: float32 rounding of the
// input, of the constants and of every step. The DCT of decibels, which
// reach ±100 and cancel, loses the most (measured: MFCC 7e-6, the rest
// under 5e-7).
func float32Tol(kind string) float64 {
	if kind == "mfcc" {
		return 3e-5
	}
	return 2e-6
}

// checkMaskGolden feeds torchaudio's draws to the mask and compares.
func checkMaskGolden(t *testing.T, c goldenCase) {
	o := MaskOpts{IID: c.IID, P: c.P, ZeroP: c.P == 0, Value: c.Value}
	m := NewFrequencyMasking(c.Param, o)
	if c.Axis == "time" {
		m = NewTimeMasking(c.Param, o)
	}
	x := c.Input.Array(ctx.CPU(0))
	used := 0
	y := m.mask(x, func(n int) []float64 {
		used += n
		if n > len(c.Draws) {
			t.Fatalf("%d draws wanted, torchaudio drew %d", n, len(c.Draws))
		}
		return c.Draws[:n]
	})
	if used != len(c.Draws) {
		t.Errorf("%d draws used, torchaudio drew %d", used, len(c.Draws))
	}
	goldentest.Compare(t, "masked", y, c.Output, 0)
}
