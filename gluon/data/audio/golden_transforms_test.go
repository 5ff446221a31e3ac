package audio

import (
	"fmt"
	"math"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/goldentest"
	"github.com/goluon/goluon/nd"
)

// transformCase is one case of testdata/transforms.json
// (make_goldens_transforms.py).
type transformCase struct {
	Kind                      string
	Input, Output, Head, Grad goldentest.Tensor
	// Filter banks, LFCC and spectrograms.
	NFreqs     int     `json:"n_freqs"`
	FMin       float64 `json:"f_min"`
	FMax       float64 `json:"f_max"`
	NFilter    int     `json:"n_filter"`
	SampleRate int     `json:"sample_rate"`
	NLFCC      int     `json:"n_lfcc"`
	Norm       string
	LogLF      bool `json:"log_lf"`
	NFFT       int  `json:"n_fft"`
	Hop        int
	Power      float64
	NoCenter   bool `json:"no_center"`
	// GriffinLim.
	NIter     int `json:"n_iter"`
	WinLength int `json:"win_length"`
	Window    string
	Momentum  float64
	Length    int
	// InverseMelScale.
	NStft           int     `json:"n_stft"`
	NMels           int     `json:"n_mels"`
	MelScale        string  `json:"mel_scale"`
	MaxIter         int     `json:"max_iter"`
	ToleranceLoss   float64 `json:"tolerance_loss"`
	ToleranceChange float64 `json:"tolerance_change"`
	SGD             *struct {
		LR          float64 `json:"lr"`
		Momentum    float64
		Dampening   float64
		WeightDecay float64 `json:"weight_decay"`
		Nesterov    bool
	}
	Draws []float64
	// Mu-law.
	Channels int
	// TimeStretch and PhaseVocoder.
	NFreq     int     `json:"n_freq"`
	FixedRate float64 `json:"fixed_rate"`
	Rate      float64
	Advance   goldentest.Tensor
	DType     string `json:"dtype"` // torch.arange's
	// F32Frames marks a TimeStretch whose float32 time steps take other
	// frames than its float64 ones, as torch's do: its float32 output
	// differs from the float64 golden by more than rounding.
	F32Frames bool `json:"f32_frames"`
	// Vol and Fade.
	Gain      float64
	GainType  string `json:"gain_type"`
	FadeIn    int    `json:"fade_in"`
	FadeOut   int    `json:"fade_out"`
	FadeShape string `json:"fade_shape"`
}

// forward returns the case's function of its input.
func (c transformCase) forward(t *testing.T) func(*nd.NDArray) *nd.NDArray {
	switch c.Kind {
	case "lfcc":
		return NewLFCC(LFCCOpts{NLFCC: c.NLFCC, Norm: DCTNorm(c.Norm), LogLF: c.LogLF,
			Spectrogram: SpectrogramOpts{NFFT: c.NFFT, HopLength: c.Hop, Power: c.Power, NoCenter: c.NoCenter},
			Filter:      LinearOpts{NFilter: c.NFilter, SampleRate: c.SampleRate, FMin: c.FMin, FMax: c.FMax}}).Forward
	case "griffinlim":
		w := Hann
		if c.Window == "hamming" {
			w = Hamming
		}
		return NewGriffinLim(GriffinLimOpts{NFFT: c.NFFT, NIter: c.NIter, WinLength: c.WinLength, HopLength: c.Hop,
			Window: w, Power: c.Power, Momentum: c.Momentum, ZeroMomentum: c.Momentum == 0, Length: c.Length,
			NoRandInit: true}).Forward
	case "mulaw_decode":
		return func(x *nd.NDArray) *nd.NDArray { return MuLawDecode(x, c.Channels) }
	case "timestretch":
		s := NewTimeStretch(TimeStretchOpts{NFreq: c.NFreq, HopLength: c.Hop, FixedRate: c.FixedRate})
		if c.Rate == 0 {
			return s.Forward
		}
		return func(z *nd.NDArray) *nd.NDArray { return s.Stretch(z, c.Rate) }
	case "phase_vocoder":
		return func(z *nd.NDArray) *nd.NDArray {
			return PhaseVocoder(z, c.Rate, c.Advance.Array(z.Context()).AsType(z.DType()))
		}
	case "vol":
		return NewVol(c.Gain, c.GainType).Forward
	case "fade":
		return NewFade(FadeOpts{In: c.FadeIn, Out: c.FadeOut, Shape: c.FadeShape}).Forward
	}
	t.Fatalf("unknown kind %q", c.Kind)
	return nil
}

// invMel returns the case's InverseMelScale.
func (c transformCase) invMel() *InverseMelScale {
	o := InverseMelScaleOpts{MaxIter: c.MaxIter, ToleranceLoss: c.ToleranceLoss, ToleranceChange: c.ToleranceChange,
		Mel: MelOpts{NMels: c.NMels, SampleRate: c.SampleRate, FMin: c.FMin, FMax: c.FMax, Norm: c.Norm, MelScale: c.MelScale}}
	if s := c.SGD; s != nil {
		o.SGD = &SGDOpts{LR: s.LR, Momentum: s.Momentum, Dampening: s.Dampening, WeightDecay: s.WeightDecay, Nesterov: s.Nesterov}
	}
	return NewInverseMelScale(c.NStft, o)
}

// TestTransformGoldens compares the transforms added after the first
// set with torchaudio: values and gradients in float64, values in
// float32 (float32Tolerance).
func TestTransformGoldens(t *testing.T) {
	dev := ctx.CPU(0)
	worst := map[string]float64{}
	for i, c := range goldentest.Cases[transformCase](t, "testdata/transforms.json") {
		name := fmt.Sprint(i, c.Kind)
		switch c.Kind {
		case "linear_fbank":
			t.Run(name, func(t *testing.T) {
				fb := LinearFilterBank(dev, nd.Float64, c.NFreqs, LinearOpts{NFilter: c.NFilter, SampleRate: c.SampleRate, FMin: c.FMin, FMax: c.FMax})
				worst[c.Kind] = max(worst[c.Kind], goldentest.Compare(t, "filter bank", fb, c.Output, 1e-13))
			})
			continue
		case "inverse_melscale":
			// The SGD starts from torchaudio's own torch.rand draws
			// (recorded), so its steps, and the step it stops at, are
			// torchaudio's: only the rounding of the sums differs. In
			// float32 the input is rounded and the SGD still runs in
			// float64.
			t.Run(name, func(t *testing.T) {
				m := c.invMel()
				for _, dt := range []nd.DType{nd.Float64, nd.Float32} {
					y := m.invert(c.Input.Array(dev).AsType(dt), func() []float64 { return append([]float64(nil), c.Draws...) })
					if y.DType() != dt {
						t.Fatalf("result of %v, input of %v", y.DType(), dt)
					}
					tol, key := 1e-10, c.Kind
					if dt == nd.Float32 {
						tol, key = float32Tolerance(c.Kind), c.Kind+" float32"
					}
					worst[key] = max(worst[key], goldentest.Compare(t, fmt.Sprint("spectrogram ", dt), y, c.Output, tol))
				}
			})
			continue
		case "arange":
			t.Run(name, func(t *testing.T) {
				n := len(c.Output.Data)
				got := nd.FromSlice(dev, torchArange(n, c.Rate, c.DType == "float32"), n)
				goldentest.Compare(t, fmt.Sprint("arange(0, ", c.Length, ", ", c.Rate, ") ", c.DType), got, c.Output, 0)
			})
			continue
		case "mulaw_encode":
			t.Run(name, func(t *testing.T) {
				y := MuLawEncode(c.Input.Array(dev), c.Channels)
				if y.DType() != nd.Int64 {
					t.Fatalf("codes of %v, want int64", y.DType())
				}
				goldentest.Compare(t, "codes", y, c.Output, 0)
				// In float32 a value within float32 rounding of a code's
				// edge may get the next code (−10⁻⁹ with 2 channels).
				for i, v := range MuLawEncode(c.Input.Array(dev).AsType(nd.Float32), c.Channels).Float64s() {
					if math.Abs(v-c.Output.Data[i]) > 1 {
						t.Errorf("float32 code %d = %g, torchaudio %g", i, v, c.Output.Data[i])
					}
				}
			})
			continue
		case "mulaw_decode_int":
			t.Run(name, func(t *testing.T) {
				y := MuLawDecode(c.Input.Array(dev).AsType(nd.Int64), c.Channels)
				if y.DType() != nd.Float32 {
					t.Fatalf("signal of %v, torchaudio's float32", y.DType())
				}
				worst[c.Kind] = max(worst[c.Kind], goldentest.Compare(t, "signal", y, c.Output, 1e-7))
			})
			continue
		}
		for _, dt := range []nd.DType{nd.Float64, nd.Float32} {
			t.Run(fmt.Sprint(name, dt), func(t *testing.T) {
				x := c.Input.Array(dev).AsType(dt)
				x.AttachGrad(nd.GradWrite)
				var y *nd.NDArray
				autograd.Record(func() {
					y = c.forward(t)(x)
					if c.Head.Shape != nil {
						autograd.Backward(nd.Sum(nd.Mul(y, c.Head.Array(dev).AsType(dt))))
					}
				})
				if y.DType() != dt {
					t.Fatalf("result of %v, input of %v", y.DType(), dt)
				}
				if dt == nd.Float32 {
					if c.F32Frames {
						return
					}
					key := c.Kind + " float32"
					worst[key] = max(worst[key], goldentest.Compare(t, "output", y, c.Output, float32Tolerance(c.Kind)))
					return
				}
				w := goldentest.Compare(t, "output", y, c.Output, 1e-10)
				if c.Grad.Shape != nil {
					w = max(w, goldentest.Compare(t, "gradient", x.Grad(), c.Grad, 1e-10))
				}
				worst[c.Kind] = max(worst[c.Kind], w)
			})
		}
	}
	for k, w := range worst {
		t.Logf("%-24s largest difference %.3g", k, w)
	}
}

// float32Tolerance is the tolerance of a float32 run against
// torchaudio's float64 values, relative to 1 + |value|.
func float32Tolerance(kind string) float64 {
	switch kind {
	case "lfcc":
		return 3e-5
	case "griffinlim", "inverse_melscale":
		return 1e-4
	case "timestretch", "phase_vocoder":
		// The accumulated phases reach 1700 radians (a hop of 10, 55
		// frames), where float32's spacing is 1.2·10⁻⁴, and their
		// rounding errors add up along the frames, as torch's float32
		// ones do.
		return 1e-3
	}
	return 2e-6
}

// TestInverseMelScaleSteps checks the stopping rules: MaxIter steps at
// most, the loss tolerance, and torchaudio's solution satisfying them.
func TestInverseMelScaleSteps(t *testing.T) {
	fb := MelFilterBank(ctx.CPU(0), nd.Float64, 17, MelOpts{NMels: 6, SampleRate: 8000}).Float64s()
	spec := make([]float64, 4*17)
	for i := range spec {
		spec[i] = math.Abs(math.Sin(float64(i)))
	}
	target := make([]float64, 4*6)
	for r := range 4 {
		for j := range 6 {
			for f := range 17 {
				target[r*6+j] += spec[r*17+f] * fb[f*6+j]
			}
		}
	}
	start := func() []float64 {
		x := make([]float64, len(spec))
		for i := range x {
			x[i] = 0.5
		}
		return x
	}
	cases := []struct {
		name     string
		o        InverseMelScaleOpts
		minSteps int
		maxSteps int
	}{
		{"max iter", InverseMelScaleOpts{MaxIter: 7, ToleranceLoss: -1, ToleranceChange: -1}, 7, 7},
		{"loss tolerance", InverseMelScaleOpts{ToleranceLoss: 1e-3, ToleranceChange: -1}, 2, 5000},
		{"defaults", InverseMelScaleOpts{}, 2, 100000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.o.Mel = MelOpts{NMels: 6, SampleRate: 8000}
			m := NewInverseMelScale(17, c.o)
			_, steps := m.sgdSolve(target, start())
			if steps < c.minSteps || steps > c.maxSteps {
				t.Errorf("%d steps, want %d to %d", steps, c.minSteps, c.maxSteps)
			}
		})
	}
}
