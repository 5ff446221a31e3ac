package audio_test

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/data/audio"
	"github.com/goluon/goluon/nd"
)

// A linear filter bank of three triangles over the 9 bins of a 16-point
// spectrum at 8 kHz (torchaudio's linear_fbanks(9, 0, 4000, 3, 8000)):
// their peaks are 1 kHz apart.
func ExampleLinearFilterBank() {
	fb := audio.LinearFilterBank(ctx.CPU(0), nd.Float64, 9, audio.LinearOpts{NFilter: 3, SampleRate: 8000})
	v := fb.Float64s()
	for f := range 9 {
		fmt.Printf("%4d Hz: %.2f %.2f %.2f\n", f*500, v[3*f], v[3*f+1], v[3*f+2])
	}
	// Output:
	//    0 Hz: 0.00 0.00 0.00
	//  500 Hz: 0.50 0.00 0.00
	// 1000 Hz: 1.00 0.00 0.00
	// 1500 Hz: 0.50 0.50 0.00
	// 2000 Hz: 0.00 1.00 0.00
	// 2500 Hz: 0.00 0.50 0.50
	// 3000 Hz: 0.00 0.00 1.00
	// 3500 Hz: 0.00 0.00 0.50
	// 4000 Hz: 0.00 0.00 0.00
}

// LFCCs of a batch of two stereo clips, torchaudio's LFCC with 13
// coefficients of 40 linear filters.
func ExampleLFCC() {
	x := nd.RandomUniform(ctx.CPU(0), nd.Float32, -1, 1, 2, 2, 4000)
	lfcc := audio.NewLFCC(audio.LFCCOpts{NLFCC: 13,
		Spectrogram: audio.SpectrogramOpts{NFFT: 400, HopLength: 160}, Filter: audio.LinearOpts{NFilter: 40}})
	fmt.Println(lfcc.Forward(x).Shape())
	// Output:
	// [2 2 13 26]
}

// A waveform recovered from the magnitudes of its spectrogram: 32
// iterations of fast Griffin-Lim from zero phases bring the spectrogram
// of the estimate within 9% of the one given (torchaudio's GriffinLim in
// float64 gives 0.089 too).
func ExampleGriffinLim() {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, tone(440, 8000, 2000), 1, 2000).AsType(nd.Float64)
	spec := audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 256, HopLength: 64, Power: 1})
	mag := spec.Forward(x) // [1 129 32]
	gl := audio.NewGriffinLim(audio.GriffinLimOpts{NFFT: 256, HopLength: 64, Power: 1, Length: 2000, NoRandInit: true})
	y := gl.Forward(mag)
	d := nd.Sub(spec.Forward(y), mag)
	rel := math.Sqrt(nd.Sum(nd.Square(d)).Scalar() / nd.Sum(nd.Square(mag)).Scalar())
	fmt.Printf("%v %.3f\n", y.Shape(), rel)
	// Output:
	// [1 2000] 0.089
}

// A linear spectrogram estimated from its mel spectrogram by
// torchaudio's SGD: its own mel spectrogram is within 1% of the one
// given (many spectrograms have it: 33 bins, 12 bands).
func ExampleInverseMelScale() {
	dev := ctx.CPU(0)
	mo := audio.MelOpts{NMels: 12, SampleRate: 8000}
	spec := nd.RandomUniform(dev, nd.Float64, 0, 1, 33, 10)
	mel := audio.NewMelScale(33, mo).Forward(spec)
	nd.Seed(1) // the SGD's random start
	est := audio.NewInverseMelScale(33, audio.InverseMelScaleOpts{Mel: mo}).Forward(mel)
	d := nd.Sub(audio.NewMelScale(33, mo).Forward(est), mel)
	rel := math.Sqrt(nd.Sum(nd.Square(d)).Scalar() / nd.Sum(nd.Square(mel)).Scalar())
	fmt.Println(est.Shape(), rel < 0.01)
	// Output:
	// [33 10] true
}

// Mu-law codes of 256 levels and the signal they decode to: the code
// grid is finest near 0.
func ExampleMuLawEncode() {
	x := nd.FromSlice(ctx.CPU(0), []float64{-1, -0.5, -0.01, 0, 0.01, 0.5, 1})
	codes := audio.MuLawEncode(x, 256)
	fmt.Println(codes.DType(), codes.Ints())
	fmt.Printf("%.4f\n", audio.MuLawDecode(codes, 256).Float64s())
	// Output:
	// int64 [0 16 98 128 157 239 255]
	// [-1.0000 -0.4967 -0.0102 0.0001 0.0102 0.4967 1.0000]
}

// The mu-law Blocks, torchaudio's MuLawEncoding and MuLawDecoding: 8
// levels quantise coarsely.
func ExampleMuLawEncoding() {
	x := nd.FromSlice(ctx.CPU(0), []float32{-0.9, -0.1, 0.05, 0.3, 0.8})
	codes := audio.NewMuLawEncoding(8).Forward(x)
	fmt.Println(codes.Ints())
	fmt.Printf("%.3f\n", audio.NewMuLawDecoding(8).Forward(codes).Float32s())
	// Output:
	// [0 3 4 5 7]
	// [-1.000 -0.049 0.049 0.205 1.000]
}

// Vol scales by a gain in decibels and clamps to [−1, 1].
func ExampleVol() {
	x := nd.FromSlice(ctx.CPU(0), []float64{-0.6, -0.1, 0, 0.25, 0.6})
	fmt.Printf("%.3f\n", audio.NewVol(6, audio.GainDB).Forward(x).Float64s())
	// Output:
	// [-1.000 -0.200 0.000 0.499 1.000]
}

// A linear fade-in over 4 samples and a half-sine fade-out over 3.
func ExampleFade() {
	x := nd.Ones(ctx.CPU(0), nd.Float64, 10)
	f := audio.NewFade(audio.FadeOpts{In: 4, Out: 3, Shape: audio.FadeLinear})
	fmt.Printf("%.2f\n", f.Forward(x).Float64s())
	f = audio.NewFade(audio.FadeOpts{In: 4, Out: 3, Shape: audio.FadeHalfSine})
	fmt.Printf("%.2f\n", f.Forward(x).Float64s())
	// Output:
	// [0.00 0.33 0.67 1.00 1.00 1.00 1.00 1.00 0.50 0.00]
	// [0.00 0.25 0.75 1.00 1.00 1.00 1.00 1.00 0.50 0.00]
}

// Speeding a complex spectrogram up by 1.25 (and slowing it down by 2)
// without changing its pitch: 51 frames become ⌈51/1.25⌉ = 41 (102).
func ExampleTimeStretch() {
	x := nd.FromSlice(ctx.CPU(0), tone(440, 8000, 800), 1, 800)
	z := audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 64, HopLength: 16, Complex: true}).Forward(x)
	ts := audio.NewTimeStretch(audio.TimeStretchOpts{NFreq: 33, HopLength: 16, FixedRate: 1.25})
	fmt.Println(z.Shape(), ts.Forward(z).Shape(), ts.Stretch(z, 0.5).Shape())
	// Output:
	// [1 33 51 2] [1 33 41 2] [1 33 102 2]
}

// The phase vocoder with the phase advance torchaudio's TimeStretch
// uses for 5 bins and a hop of 4: linspace(0, 4π, 5).
func ExamplePhaseVocoder() {
	dev := ctx.CPU(0)
	z := nd.RandomNormal(dev, nd.Float64, 0, 1, 5, 12, 2)
	adv := nd.Reshape(nd.Linspace(dev, nd.Float64, 0, 4*math.Pi, 5), 5, 1)
	fmt.Println(audio.PhaseVocoder(z, 1.5, adv).Shape())
	// Output:
	// [5 8 2]
}
