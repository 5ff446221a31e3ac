package audio_test

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/data/audio"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestGradCheck checks the transforms' gradients against central
// differences in float64.
func TestGradCheck(t *testing.T) {
	dev := ctx.CPU(0)
	sig := func(seed uint64, shape ...int) []*nd.NDArray {
		return []*nd.NDArray{ndtest.Rand(dev, seed, -1, 1, shape...)}
	}
	block := func(f func(*nd.NDArray) *nd.NDArray) func([]*nd.NDArray) *nd.NDArray {
		return func(in []*nd.NDArray) *nd.NDArray { return f(in[0]) }
	}
	spec := audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 16, HopLength: 5})
	mag := audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 12, WinLength: 9, HopLength: 4, Power: 1,
		Normalized: audio.NormWindow, Window: audio.Hamming, Pad: 2})
	cplx := audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 10, HopLength: 3, Complex: true,
		Normalized: audio.NormFrameLength, NoCenter: true, TwoSided: true})
	mel := audio.NewMelSpectrogram(audio.MelSpectrogramOpts{
		Spectrogram: audio.SpectrogramOpts{NFFT: 32, HopLength: 8},
		Mel:         audio.MelOpts{SampleRate: 8000, NMels: 6, Norm: audio.Slaney, MelScale: audio.Slaney}})
	mfcc := audio.NewMFCC(audio.MFCCOpts{NMFCC: 5, Spectrogram: audio.SpectrogramOpts{NFFT: 32, HopLength: 8},
		Mel: audio.MelOpts{SampleRate: 8000, NMels: 8}})
	logMFCC := audio.NewMFCC(audio.MFCCOpts{NMFCC: 4, LogMels: true, Norm: audio.DCTNone,
		Spectrogram: audio.SpectrogramOpts{NFFT: 24, HopLength: 6, PadMode: "constant"}, Mel: audio.MelOpts{SampleRate: 8000, NMels: 6}})
	db := audio.NewAmplitudeToDB(audio.DBOpts{})
	dbFloor := audio.NewAmplitudeToDB(audio.DBOpts{SType: audio.Magnitude, TopDB: 20})
	down := audio.NewResample(12, 5, audio.ResampleOpts{})
	up := audio.NewResample(2, 3, audio.ResampleOpts{Method: audio.SincKaiser, LowpassFilterWidth: 3})
	fmask := audio.NewFrequencyMasking(4, audio.MaskOpts{IID: true, Value: 0.5})
	lfcc := audio.NewLFCC(audio.LFCCOpts{NLFCC: 5, Spectrogram: audio.SpectrogramOpts{NFFT: 32, HopLength: 8},
		Filter: audio.LinearOpts{SampleRate: 8000, NFilter: 8}})
	logLFCC := audio.NewLFCC(audio.LFCCOpts{NLFCC: 4, LogLF: true, Norm: audio.DCTNone,
		Spectrogram: audio.SpectrogramOpts{NFFT: 24, HopLength: 6, Power: 1}, Filter: audio.LinearOpts{SampleRate: 8000, NFilter: 6, FMin: 200}})
	griffin := audio.NewGriffinLim(audio.GriffinLimOpts{NFFT: 16, HopLength: 4, NIter: 3, NoRandInit: true})
	griffinMag := audio.NewGriffinLim(audio.GriffinLimOpts{NFFT: 15, WinLength: 12, HopLength: 5, NIter: 2, Power: 1,
		ZeroMomentum: true, Length: 42, NoRandInit: true})
	stretch := audio.NewTimeStretch(audio.TimeStretchOpts{NFreq: 5, HopLength: 3})
	advance := ndtest.Rand(dev, 12, 0, 3, 4, 1)
	vol := audio.NewVol(4, audio.GainPower)
	fade := audio.NewFade(audio.FadeOpts{In: 5, Out: 7, Shape: audio.FadeHalfSine})

	// Positive spectrogram-like inputs, with values spread over 40 dB
	// so that the 20 dB floor clamps some of them, none near the floor.
	spread := ndtest.AwayFrom(dev, 9, -2, 0, 0.02, []float64{-1}, 2, 3, 4, 5)
	power := func(in []*nd.NDArray) *nd.NDArray { return nd.RPowScalar(10, in[0]) }
	cases := []struct {
		name string
		f    func([]*nd.NDArray) *nd.NDArray
		in   []*nd.NDArray
		tol  ndtest.GradTol
	}{
		{"Spectrogram", block(spec.Forward), sig(1, 2, 30), ndtest.GradTol{}},
		{"SpectrogramMagnitude", block(mag.Forward), sig(2, 25), ndtest.GradTol{}},
		{"SpectrogramComplex", block(cplx.Forward), sig(3, 2, 1, 23), ndtest.GradTol{}},
		{"MelSpectrogram", block(mel.Forward), sig(4, 2, 40), ndtest.GradTol{}},
		{"MFCC", block(mfcc.Forward), sig(5, 40), ndtest.GradTol{Rtol: 1e-3}},
		{"MFCCLogMels", block(logMFCC.Forward), sig(6, 2, 30), ndtest.GradTol{Rtol: 1e-3}},
		{"AmplitudeToDB", func(in []*nd.NDArray) *nd.NDArray { return db.Forward(power(in)) }, []*nd.NDArray{spread}, ndtest.GradTol{}},
		{"AmplitudeToDBTopDB", func(in []*nd.NDArray) *nd.NDArray { return dbFloor.Forward(power(in)) }, []*nd.NDArray{spread}, ndtest.GradTol{}},
		{"DBToAmplitude", func(in []*nd.NDArray) *nd.NDArray { return audio.DBToAmplitude(in[0], 1.5, 0.5) }, sig(7, 3, 4), ndtest.GradTol{}},
		{"ResampleDown", block(down.Forward), sig(8, 2, 37), ndtest.GradTol{}},
		{"ResampleUp", block(up.Forward), sig(10, 19), ndtest.GradTol{}},
		{"FrequencyMasking", block(fmask.Forward), sig(11, 2, 2, 7, 3), ndtest.GradTol{Train: true}},
		{"LFCC", block(lfcc.Forward), sig(13, 40), ndtest.GradTol{}},
		{"LFCCLogLF", block(logLFCC.Forward), sig(14, 2, 30), ndtest.GradTol{}},
		// Magnitudes away from 0, where |·|^(1/power) has no derivative.
		{"GriffinLim", block(griffin.Forward), []*nd.NDArray{ndtest.Rand(dev, 15, 0.5, 2, 2, 9, 6)}, ndtest.GradTol{}},
		{"GriffinLimMagnitude", block(griffinMag.Forward), []*nd.NDArray{ndtest.Rand(dev, 16, 0.5, 2, 8, 9)}, ndtest.GradTol{}},
		{"TimeStretch", func(in []*nd.NDArray) *nd.NDArray { return stretch.Stretch(in[0], 1.3) }, sig(17, 2, 5, 9, 2), ndtest.GradTol{}},
		{"PhaseVocoderSlow", func(in []*nd.NDArray) *nd.NDArray { return audio.PhaseVocoder(in[0], 0.6, advance) }, sig(18, 4, 6, 2), ndtest.GradTol{}},
		// Codes away from the middle code, where |·| has no derivative.
		{"MuLawDecode", func(in []*nd.NDArray) *nd.NDArray { return audio.MuLawDecode(in[0], 256) },
			[]*nd.NDArray{ndtest.AwayFrom(dev, 19, 0, 255, 1, []float64{127.5}, 3, 5)}, ndtest.GradTol{}},
		// Samples away from ±1/2, where the clamp at ±1 cuts them.
		{"Vol", block(vol.Forward), []*nd.NDArray{ndtest.AwayFrom(dev, 20, -1, 1, 0.02, []float64{-0.5, 0.5}, 2, 9)}, ndtest.GradTol{}},
		{"Fade", block(fade.Forward), sig(21, 2, 3, 10), ndtest.GradTol{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { ndtest.CheckGrad(t, c.f, c.in, c.tol) })
	}
}
