package audio_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/audio"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestTransformArgumentErrors checks that invalid arguments of the
// transforms added after the first set panic with an *nd.Error naming
// the function and the problem, never another panic.
func TestTransformArgumentErrors(t *testing.T) {
	dev := ctx.CPU(0)
	spec := ndtest.Rand(dev, 1, 0.1, 1, 2, 9, 5)   // 9 bins: NFFT 16
	cplx := ndtest.Rand(dev, 2, -1, 1, 2, 5, 6, 2) // 5 bins
	mel := ndtest.Rand(dev, 3, 0.1, 1, 2, 6, 4)    // 6 mel bands
	gl := audio.GriffinLimOpts{NFFT: 16, NIter: 2} // hop 8
	im := audio.InverseMelScaleOpts{Mel: audio.MelOpts{NMels: 6, SampleRate: 8000}}
	adv := nd.Zeros(dev, nd.Float64, 5, 1)
	cases := []struct {
		name, op, msg string
		f             func()
	}{
		{"GL NFFT", "audio.NewGriffinLim", "NFFT -1", func() { audio.NewGriffinLim(audio.GriffinLimOpts{NFFT: -1}) }},
		{"GL hop", "audio.NewGriffinLim", "hop length -1", func() { audio.NewGriffinLim(audio.GriffinLimOpts{HopLength: -1}) }},
		{"GL hop of a short window", "audio.NewGriffinLim", "hop length 0", func() { audio.NewGriffinLim(audio.GriffinLimOpts{NFFT: 1}) }},
		{"GL iterations", "audio.NewGriffinLim", "-2 iterations", func() { audio.NewGriffinLim(audio.GriffinLimOpts{NIter: -2}) }},
		{"GL window", "audio.NewGriffinLim", "window length 20", func() { audio.NewGriffinLim(audio.GriffinLimOpts{NFFT: 16, WinLength: 20}) }},
		{"GL power", "audio.NewGriffinLim", "power -1", func() { audio.NewGriffinLim(audio.GriffinLimOpts{Power: -1}) }},
		{"GL momentum", "audio.NewGriffinLim", "momentum 1", func() { audio.NewGriffinLim(audio.GriffinLimOpts{Momentum: 1}) }},
		{"GL zero momentum", "audio.NewGriffinLim", "with ZeroMomentum", func() { audio.NewGriffinLim(audio.GriffinLimOpts{Momentum: 0.5, ZeroMomentum: true}) }},
		{"GL length", "audio.NewGriffinLim", "negative length", func() { audio.NewGriffinLim(audio.GriffinLimOpts{Length: -1}) }},
		{"GL bins", "audio.GriffinLim", "9 frequency bins", func() { audio.NewGriffinLim(audio.GriffinLimOpts{NFFT: 20}).Forward(spec) }},
		{"GL rank", "audio.GriffinLim", "at least 2 axes", func() { audio.NewGriffinLim(gl).Forward(nd.FromSlice(dev, []float32{1, 2})) }},
		{"GL frames of Length", "audio.GriffinLim", "Length 100 has 13 frames", func() {
			o := gl
			o.Length = 100
			audio.NewGriffinLim(o).Forward(spec)
		}},
		{"GL rng", "audio.GriffinLim.Apply", "nil random generator", func() { audio.NewGriffinLim(gl).Apply(spec, nil) }},
		{"GL integer", "audio.GriffinLim", "floating-point", func() { audio.NewGriffinLim(gl).Forward(spec.AsType(nd.Int32)) }},
		{"invmel bins", "audio.NewInverseMelScale", "0 frequency bins", func() { audio.NewInverseMelScale(0, im) }},
		{"invmel iterations", "audio.NewInverseMelScale", "negative maximum", func() {
			o := im
			o.MaxIter = -1
			audio.NewInverseMelScale(9, o)
		}},
		{"invmel tolerance", "audio.NewInverseMelScale", "NaN tolerance", func() {
			o := im
			o.ToleranceChange = math.NaN()
			audio.NewInverseMelScale(9, o)
		}},
		{"invmel lr", "audio.NewInverseMelScale", "learning rate 0", func() {
			o := im
			o.SGD = &audio.SGDOpts{Momentum: 0.9}
			audio.NewInverseMelScale(9, o)
		}},
		{"invmel momentum", "audio.NewInverseMelScale", "momentum -1", func() {
			o := im
			o.SGD = &audio.SGDOpts{LR: 0.1, Momentum: -1}
			audio.NewInverseMelScale(9, o)
		}},
		{"invmel nesterov", "audio.NewInverseMelScale", "Nesterov", func() {
			o := im
			o.SGD = &audio.SGDOpts{LR: 0.1, Nesterov: true}
			audio.NewInverseMelScale(9, o)
		}},
		{"invmel bands", "audio.InverseMelScale", "5 mel bands", func() { audio.NewInverseMelScale(9, im).Forward(nd.Reshape(cplx, 2, 5, 12)) }},
		{"invmel rng", "audio.InverseMelScale.Apply", "nil random generator", func() { audio.NewInverseMelScale(9, im).Apply(mel, nil) }},
		{"LFCC coefficients", "audio.NewLFCC", "50 coefficients for NFFT 32", func() {
			audio.NewLFCC(audio.LFCCOpts{NLFCC: 50, Spectrogram: audio.SpectrogramOpts{NFFT: 32}})
		}},
		{"LFCC DCT", "audio.NewLFCC", "DCT type 3", func() { audio.NewLFCC(audio.LFCCOpts{DCTType: 3}) }},
		{"LFCC complex", "audio.NewLFCC", "Complex", func() { audio.NewLFCC(audio.LFCCOpts{Spectrogram: audio.SpectrogramOpts{Complex: true}}) }},
		{"LFCC bounds", "audio.NewLFCC", "FMin 9000, FMax 8000", func() { audio.NewLFCC(audio.LFCCOpts{Filter: audio.LinearOpts{FMin: 9000}}) }},
		{"LFCC hop", "audio.NewSpectrogram", "hop length -2", func() { audio.NewLFCC(audio.LFCCOpts{Spectrogram: audio.SpectrogramOpts{HopLength: -2}}) }},
		{"linear filters", "audio.LinearFilterBank", "-1 filters", func() { audio.LinearFilterBank(dev, nd.Float32, 9, audio.LinearOpts{NFilter: -1}) }},
		{"linear bins", "audio.LinearFilterBank", "0 frequency bins", func() { audio.LinearFilterBank(dev, nd.Float32, 0, audio.LinearOpts{}) }},
		{"linear dtype", "audio.LinearFilterBank", "floating-point dtype", func() { audio.LinearFilterBank(dev, nd.Int64, 9, audio.LinearOpts{}) }},
		{"mu-law channels", "audio.MuLawEncode", "1 quantization channels", func() { audio.MuLawEncode(spec, 1) }},
		{"mu-law decode channels", "audio.MuLawDecode", "0 quantization channels", func() { audio.MuLawDecode(spec, 0) }},
		{"mu-law block", "audio.NewMuLawEncoding", "-3 quantization channels", func() { audio.NewMuLawEncoding(-3) }},
		{"mu-law decoding block", "audio.NewMuLawDecoding", "1 quantization channels", func() { audio.NewMuLawDecoding(1) }},
		{"mu-law nil", "audio.MuLawEncode", "nil input", func() { audio.MuLawEncode(nil, 256) }},
		{"stretch bins", "audio.NewTimeStretch", "-1 frequency bins", func() { audio.NewTimeStretch(audio.TimeStretchOpts{NFreq: -1}) }},
		{"stretch hop", "audio.NewTimeStretch", "negative hop length", func() { audio.NewTimeStretch(audio.TimeStretchOpts{HopLength: -1}) }},
		{"stretch fixed rate", "audio.NewTimeStretch", "rate -1", func() { audio.NewTimeStretch(audio.TimeStretchOpts{FixedRate: -1}) }},
		{"stretch no rate", "audio.TimeStretch", "no FixedRate", func() { audio.NewTimeStretch(audio.TimeStretchOpts{NFreq: 5}).Forward(cplx) }},
		{"stretch rate", "audio.PhaseVocoder", "rate 0", func() { audio.NewTimeStretch(audio.TimeStretchOpts{NFreq: 5}).Stretch(cplx, 0) }},
		{"stretch NaN rate", "audio.PhaseVocoder", "rate NaN", func() { audio.NewTimeStretch(audio.TimeStretchOpts{NFreq: 5}).Stretch(cplx, math.NaN()) }},
		{"stretch tiny rate", "audio.PhaseVocoder", "rate 1e-300 would stretch 6 frames", func() { audio.NewTimeStretch(audio.TimeStretchOpts{NFreq: 5}).Stretch(cplx, 1e-300) }},
		{"stretch bins of input", "audio.TimeStretch", "5 frequency bins", func() { audio.NewTimeStretch(audio.TimeStretchOpts{NFreq: 7}).Stretch(cplx, 2) }},
		{"stretch rank", "audio.TimeStretch", "at least 3 axes", func() { audio.NewTimeStretch(audio.TimeStretchOpts{}).Stretch(nd.Zeros(dev, nd.Float32, 201, 2), 2) }},
		{"vocoder complex", "audio.PhaseVocoder", "complex spectrogram", func() { audio.PhaseVocoder(spec, 2, adv) }},
		{"vocoder advance", "audio.PhaseVocoder", "want [5 1]", func() { audio.PhaseVocoder(cplx, 2, nd.Zeros(dev, nd.Float64, 5)) }},
		{"vocoder nil advance", "audio.PhaseVocoder", "nil phase advance", func() { audio.PhaseVocoder(cplx, 2, nil) }},
		{"vocoder dtype", "audio.PhaseVocoder", "phase advance of float32", func() { audio.PhaseVocoder(cplx, 2, adv.AsType(nd.Float32)) }},
		{"vocoder frames", "audio.PhaseVocoder", "no frames", func() { audio.PhaseVocoder(nd.Zeros(dev, nd.Float64, 5, 0, 2), 2, adv) }},
		{"vol type", "audio.NewVol", "gain type \"volts\"", func() { audio.NewVol(1, "volts") }},
		{"vol amplitude", "audio.NewVol", "amplitude gain -1", func() { audio.NewVol(-1, "") }},
		{"vol power", "audio.NewVol", "power gain 0", func() { audio.NewVol(0, audio.GainPower) }},
		{"vol NaN", "audio.NewVol", "gain NaN", func() { audio.NewVol(math.NaN(), audio.GainDB) }},
		{"fade shape", "audio.NewFade", "fade shape \"cosine\"", func() { audio.NewFade(audio.FadeOpts{Shape: "cosine"}) }},
		{"fade length", "audio.NewFade", "in -1", func() { audio.NewFade(audio.FadeOpts{In: -1}) }},
		{"fade too long", "audio.Fade", "signal of 5 samples", func() { audio.NewFade(audio.FadeOpts{Out: 6}).Forward(ndtest.Rand(dev, 4, -1, 1, 2, 5)) }},
		{"fade scalar", "audio.Fade", "at least 1 axes", func() { audio.NewFade(audio.FadeOpts{}).Forward(nd.Full(dev, nd.Float32, 1)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := nd.Catch(c.f)
			var e *nd.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *nd.Error", err)
			}
			if e.Op != c.op || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("got %v, want op %s and a message with %q", err, c.op, c.msg)
			}
		})
	}
}

// TestTransformDefaults checks torchaudio's defaults of the added
// transforms.
func TestTransformDefaults(t *testing.T) {
	if o := audio.NewGriffinLim(audio.GriffinLimOpts{}).Opts(); o.NFFT != 400 || o.NIter != 32 || o.WinLength != 400 ||
		o.HopLength != 200 || o.Power != 2 || o.Momentum != 0.99 || o.Length != 0 || o.NoRandInit {
		t.Errorf("GriffinLim defaults %+v", o)
	}
	if o := audio.NewInverseMelScale(201, audio.InverseMelScaleOpts{}).Opts(); o.MaxIter != 100000 || o.ToleranceLoss != 1e-5 ||
		o.ToleranceChange != 1e-8 || o.SGD != nil || o.Mel.NMels != 128 || o.Mel.SampleRate != 16000 || o.Mel.FMax != 8000 {
		t.Errorf("InverseMelScale defaults %+v", o)
	}
	l := audio.NewLFCC(audio.LFCCOpts{})
	if o := l.Opts(); o.NLFCC != 40 || o.DCTType != 2 || o.Norm != audio.DCTOrtho || o.Filter.NFilter != 128 ||
		o.Filter.SampleRate != 16000 || o.Filter.FMax != 8000 || o.Spectrogram.NFFT != 400 || o.LogLF {
		t.Errorf("LFCC defaults %+v", o)
	}
	if got := l.Forward(ndtest.Rand(ctx.CPU(0), 1, -1, 1, 1600)).Shape(); !slices.Equal(got, []int{40, 9}) {
		t.Errorf("LFCC of 1600 samples: shape %v, want [40 9]", got)
	}
	if got := l.Meta().Children(); len(got) != 2 || got[0].Meta().Name() != "spectrogram0" || got[1].Meta().Name() != "amplitudetodb0" {
		t.Errorf("LFCC children %v", got)
	}
	if o := audio.NewTimeStretch(audio.TimeStretchOpts{}).Opts(); o.NFreq != 201 || o.HopLength != 200 || o.FixedRate != 0 {
		t.Errorf("TimeStretch defaults %+v", o)
	}
	if a, b := audio.NewMuLawEncoding(0).Channels(), audio.NewMuLawDecoding(0).Channels(); a != 256 || b != 256 {
		t.Errorf("mu-law channels %d, %d, want 256", a, b)
	}
	if g, typ := audio.NewVol(0.5, "").Gain(); g != 0.5 || typ != audio.GainAmplitude {
		t.Errorf("Vol gain %g %q", g, typ)
	}
	if r := audio.NewVol(20, audio.GainDB).Ratio(); r != 10 {
		t.Errorf("20 dB: ratio %g, want 10", r)
	}
	if r := audio.NewVol(100, audio.GainPower).Ratio(); math.Abs(r-10) > 1e-14 {
		t.Errorf("a power gain of 100: ratio %g, want 10", r)
	}
	if o := audio.NewFade(audio.FadeOpts{In: 3}).Opts(); o.Shape != audio.FadeLinear {
		t.Errorf("Fade defaults %+v", o)
	}
	for _, b := range []gluon.Block{audio.NewGriffinLim(audio.GriffinLimOpts{}), audio.NewInverseMelScale(201, audio.InverseMelScaleOpts{}),
		l, audio.NewTimeStretch(audio.TimeStretchOpts{}), audio.NewVol(1, ""), audio.NewFade(audio.FadeOpts{})} {
		if n := gluon.CollectParams(b).Len(); n != 0 {
			t.Errorf("%s has %d parameters, want none", b.Meta().Kind(), n)
		}
	}
}

// spectralConvergence is ‖S − |STFT(y)|‖/‖S‖ for the magnitudes S.
func spectralConvergence(spec *audio.Spectrogram, mag, y *nd.NDArray) float64 {
	d := nd.Sub(spec.Forward(y), mag)
	return math.Sqrt(nd.Sum(nd.Square(d)).Scalar() / nd.Sum(nd.Square(mag)).Scalar())
}

// TestGriffinLimRandom checks random phases: a seed (nd.Seed for
// Forward, a generator for Apply) reproduces the waveform, another
// changes it, and more iterations bring the waveform's spectrogram
// closer to the target.
func TestGriffinLimRandom(t *testing.T) {
	dev := ctx.CPU(0)
	const n = 1200
	v := make([]float64, n)
	for i := range v {
		k := float64(i) / 8000
		v[i] = 0.5*math.Sin(2*math.Pi*440*k) + 0.3*math.Sin(2*math.Pi*1234*k*(1+k))
	}
	spec := audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 128, HopLength: 32, Power: 1})
	mag := spec.Forward(nd.FromSlice(dev, v, 1, n))
	o := audio.GriffinLimOpts{NFFT: 128, HopLength: 32, Power: 1, NIter: 2}
	short := audio.NewGriffinLim(o)
	o.NIter = 30
	long := audio.NewGriffinLim(o)

	nd.Seed(11)
	a := short.Forward(mag).Float64s()
	nd.Seed(11)
	b := short.Forward(mag).Float64s()
	c := short.Forward(mag).Float64s()
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Error("Forward: the same seed should give the same waveform, the next draws another")
	}
	g1 := short.Apply(mag, rand.New(rand.NewPCG(3, 4))).Float64s()
	g2 := short.Apply(mag, rand.New(rand.NewPCG(3, 4))).Float64s()
	if !slices.Equal(g1, g2) {
		t.Error("Apply: the same generator state gave different waveforms")
	}
	sc := func(g *audio.GriffinLim, seed uint64) float64 {
		return spectralConvergence(spec, mag, g.Apply(mag, rand.New(rand.NewPCG(seed, 0))))
	}
	for seed := range uint64(2) {
		s2, s30 := sc(short, seed), sc(long, seed)
		t.Logf("seed %d: spectral convergence %.3f after 2 iterations, %.3f after 30", seed, s2, s30)
		if !(s30 < 0.6*s2) || !(s30 < 0.2) {
			t.Errorf("seed %d: spectral convergence %.3f after 2 iterations, %.3f after 30: want a clear improvement", seed, s2, s30)
		}
	}
	// Zero phases are deterministic and need no generator.
	o.NoRandInit, o.NIter = true, 3
	z := audio.NewGriffinLim(o)
	if y1, y2 := z.Forward(mag).Float64s(), z.Apply(mag, nil).Float64s(); !slices.Equal(y1, y2) {
		t.Error("NoRandInit: Forward and Apply differ")
	}
}

// TestInverseMelScaleRandom checks that the estimate is non-negative,
// reproduces the mel spectrogram it came from closely, and is
// reproducible from a seed.
func TestInverseMelScaleRandom(t *testing.T) {
	dev := ctx.CPU(0)
	mo := audio.MelOpts{NMels: 16, SampleRate: 8000}
	spec := ndtest.Rand(dev, 5, 0, 1, 2, 33, 6)
	melScale := audio.NewMelScale(33, mo)
	mel := melScale.Forward(spec)
	inv := audio.NewInverseMelScale(33, audio.InverseMelScaleOpts{Mel: mo})
	nd.Seed(3)
	a := inv.Forward(mel)
	nd.Seed(3)
	b := inv.Forward(mel)
	if !slices.Equal(a.Float64s(), b.Float64s()) || !slices.Equal(a.Shape(), spec.Shape()) {
		t.Fatalf("Forward: the same seed gave different spectrograms (shape %v)", a.Shape())
	}
	for _, v := range a.Float64s() {
		if v < 0 {
			t.Fatalf("negative estimate %g", v)
		}
	}
	res := nd.Sub(melScale.Forward(a), mel)
	rel := math.Sqrt(nd.Sum(nd.Square(res)).Scalar() / nd.Sum(nd.Square(mel)).Scalar())
	t.Logf("relative mel residual %.3g", rel)
	if rel > 0.02 {
		t.Errorf("relative mel residual %.3g: want under 2%%", rel)
	}
	c := inv.Apply(mel.AsType(nd.Float32), rand.New(rand.NewPCG(1, 1)))
	d := inv.Apply(mel.AsType(nd.Float32), rand.New(rand.NewPCG(1, 1)))
	if c.DType() != nd.Float32 || !slices.Equal(c.Float64s(), d.Float64s()) {
		t.Errorf("Apply: %v, or the same generator state gave different spectrograms", c.DType())
	}
	if e := inv.Forward(nd.Zeros(dev, nd.Float32, 0, 16, 3)); !slices.Equal(e.Shape(), []int{0, 33, 3}) {
		t.Errorf("empty batch: shape %v", e.Shape())
	}
}

// TestMuLawRoundTrip checks codes' range and that decoding the codes of
// a signal in [−1, 1] gives it back within the error of rounding to the
// code grid: half a step, 1/μ, of the companded signal, which is widest
// in the signal next to ±1.
func TestMuLawRoundTrip(t *testing.T) {
	dev := ctx.CPU(0)
	x := ndtest.Rand(dev, 7, -1, 1, 3, 200)
	for _, ch := range []int{2, 16, 256, 1024} {
		codes := audio.NewMuLawEncoding(ch).Forward(x)
		for _, c := range codes.Float64s() {
			if c < 0 || c > float64(ch-1) {
				t.Fatalf("%d channels: code %g out of range", ch, c)
			}
		}
		y := audio.NewMuLawDecoding(ch).Forward(codes)
		if y.DType() != nd.Float32 {
			t.Errorf("decoding int64 codes gives %v, want float32 (torchaudio's)", y.DType())
		}
		mu := float64(ch - 1)
		bound := ((1 + mu) - math.Pow(1+mu, 1-1/mu)) / mu
		xv, yv := x.Float64s(), y.Float64s()
		for i := range xv {
			if math.Abs(xv[i]-yv[i]) > bound+1e-6 {
				t.Fatalf("%d channels: %g decoded as %g, more than %g away", ch, xv[i], yv[i], bound)
			}
		}
	}
	if c := audio.MuLawEncode(nd.FromSlice(dev, []int32{0, 1, -1}), 256).Ints(); !slices.Equal(c, []int{128, 255, 0}) {
		t.Errorf("integer signal codes %v, want [128 255 0]", c)
	}
}

// TestTimeStretchShapes checks the number of frames, ⌈T/rate⌉, leading
// axes, rate 1 and the first frame, which keeps its phase and modulus.
func TestTimeStretchShapes(t *testing.T) {
	dev := ctx.CPU(0)
	s := audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 64, HopLength: 16, Complex: true})
	z := s.Forward(ndtest.Rand(dev, 9, -1, 1, 2, 3, 800)) // [2 3 33 51 2]
	ts := audio.NewTimeStretch(audio.TimeStretchOpts{NFreq: 33, HopLength: 16, FixedRate: 1.25})
	for _, c := range []struct {
		rate   float64
		frames int
	}{{1.25, 41}, {0.5, 102}, {2, 26}, {3, 17}, {51, 1}, {100, 1}} {
		y := ts.Stretch(z, c.rate)
		if want := []int{2, 3, 33, c.frames, 2}; !slices.Equal(y.Shape(), want) {
			t.Errorf("rate %g: shape %v, want %v", c.rate, y.Shape(), want)
		}
		first := nd.SliceAxis(y, 0, 1, -2).Float64s()
		orig := nd.SliceAxis(z, 0, 1, -2).Float64s()
		for i := range first {
			if math.Abs(first[i]-orig[i]) > 1e-5*(1+math.Abs(orig[i])) {
				t.Fatalf("rate %g: first frame changed: %g, was %g", c.rate, first[i], orig[i])
			}
		}
	}
	if got := ts.Forward(z).Shape(); got[3] != 41 {
		t.Errorf("FixedRate 1.25: %d frames, want 41", got[3])
	}
	if y := ts.Stretch(z, 1); y != z {
		t.Error("rate 1 should return the input")
	}
}

// TestFadeEnvelope checks the envelopes' ends and their overlap.
func TestFadeEnvelope(t *testing.T) {
	for _, shape := range []string{audio.FadeLinear, audio.FadeLogarithmic, audio.FadeExponential, audio.FadeQuarterSine, audio.FadeHalfSine} {
		env := audio.NewFade(audio.FadeOpts{In: 4, Out: 3, Shape: shape}).Envelope(10)
		if math.Abs(env[0]) > 1e-15 || math.Abs(env[9]) > 1e-15 || env[3] != 1 || env[6] != 1 || env[5] != 1 {
			t.Errorf("%s: envelope %v: want 0 at both ends and 1 between the fades", shape, env)
		}
		for i := 1; i < 4; i++ {
			if env[i] < env[i-1] {
				t.Errorf("%s: fade-in %v not rising", shape, env[:4])
			}
		}
	}
	// Fades longer than half the signal overlap: the product of both.
	env := audio.NewFade(audio.FadeOpts{In: 5, Out: 5}).Envelope(5)
	want := []float64{0, 0.75 * 0.25, 0.5 * 0.5, 0.25 * 0.75, 0}
	for i := range want {
		if math.Abs(env[i]-want[i]) > 1e-15 {
			t.Errorf("overlapping fades %v, want %v", env, want)
			break
		}
	}
}

// TestTransformPipelines runs the added Blocks through Transform: a
// generator drives GriffinLim's and InverseMelScale's starts, a
// deterministic GriffinLim needs none, and errors come back as errors.
func TestTransformPipelines(t *testing.T) {
	clip := data.Tensor{Shape: []int{1, 400}, F32: make([]float32, 400)}
	for i := range clip.F32 {
		clip.F32[i] = float32(math.Sin(float64(i) * 0.3))
	}
	mag := audio.Transform(audio.NewSpectrogram(audio.SpectrogramOpts{NFFT: 64, HopLength: 16}))
	spec, err := mag(clip, nil)
	if err != nil {
		t.Fatal(err)
	}
	gl := audio.Transform(audio.NewGriffinLim(audio.GriffinLimOpts{NFFT: 64, HopLength: 16, NIter: 4}))
	if _, err := gl(spec, nil); err == nil || !strings.Contains(err.Error(), "nil random generator") {
		t.Errorf("random GriffinLim without a generator: %v", err)
	}
	y1, err := gl(spec, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	y2, _ := gl(spec, rand.New(rand.NewPCG(5, 6)))
	if !slices.Equal(y1.Shape, []int{1, 400}) || !slices.Equal(y1.F32, y2.F32) {
		t.Errorf("GriffinLim in a pipeline: shape %v, or not reproducible", y1.Shape)
	}
	det := audio.Transform(audio.NewGriffinLim(audio.GriffinLimOpts{NFFT: 64, HopLength: 16, NIter: 4, NoRandInit: true}))
	if _, err := det(spec, nil); err != nil {
		t.Errorf("deterministic GriffinLim without a generator: %v", err)
	}
	codes, err := audio.Transform(audio.NewMuLawEncoding(0))(clip, nil)
	if err != nil || codes.F32[0] != 128 {
		t.Errorf("mu-law codes in a pipeline: %v, first code %v", err, codes.F32[:1])
	}
	if _, err := audio.Transform(audio.NewTimeStretch(audio.TimeStretchOpts{NFreq: 33}))(spec, nil); err == nil || !strings.Contains(err.Error(), "FixedRate") {
		t.Errorf("TimeStretch without a rate: %v", err)
	}
	mel, err := audio.Transform(audio.NewMelScale(33, audio.MelOpts{NMels: 12, SampleRate: 8000}))(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	inv := audio.Transform(audio.NewInverseMelScale(33, audio.InverseMelScaleOpts{Mel: audio.MelOpts{NMels: 12, SampleRate: 8000}, MaxIter: 50}))
	if back, err := inv(mel, rand.New(rand.NewPCG(1, 0))); err != nil || !slices.Equal(back.Shape, spec.Shape) {
		t.Errorf("InverseMelScale in a pipeline: %v, shape %v", err, back.Shape)
	}
}

// TestTransformHybridize checks the added Blocks under gluon.Hybridize:
// Vol, Fade, the mu-law Blocks and TimeStretch are traced and replayed,
// LFCC and GriffinLim run eagerly; all give the eager values.
func TestTransformHybridize(t *testing.T) {
	dev := ctx.CPU(0)
	stretch := audio.NewTimeStretch(audio.TimeStretchOpts{NFreq: 9, HopLength: 4, FixedRate: 1.3})
	cases := []struct {
		name   string
		b      gluon.Block
		shape  []int
		traced bool
	}{
		{"Vol", audio.NewVol(6, audio.GainDB), []int{2, 50}, true},
		{"Fade", audio.NewFade(audio.FadeOpts{In: 10, Out: 5, Shape: audio.FadeQuarterSine}), []int{2, 50}, true},
		{"MuLawEncoding", audio.NewMuLawEncoding(0), []int{2, 50}, true},
		{"MuLawDecoding", audio.NewMuLawDecoding(0), []int{2, 50}, true},
		{"TimeStretch", stretch, []int{2, 9, 20, 2}, true},
		{"LFCC", audio.NewLFCC(audio.LFCCOpts{NLFCC: 6, Spectrogram: audio.SpectrogramOpts{NFFT: 64}, Filter: audio.LinearOpts{NFilter: 12}}), []int{2, 300}, false},
		{"GriffinLim", audio.NewGriffinLim(audio.GriffinLimOpts{NFFT: 16, NIter: 2}), []int{2, 9, 10}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := gluon.Hybridize(c.b, gluon.HybridOpts{})
			for i := range 3 {
				x := ndtest.Rand(dev, uint64(i), 0.01, 1, c.shape...)
				var got, want []float64
				autograd.TrainMode(func() {
					nd.Seed(5)
					got = h.Forward(x).Float64s()
					nd.Seed(5)
					want = c.b.Forward(x).Float64s()
				})
				if !slices.Equal(got, want) {
					t.Fatalf("call %d: hybridized values differ from eager ones", i)
				}
			}
			if s := h.Stats(); c.traced != (s.Traces == 1 && s.Replays == 2) || !c.traced && s.Eager != 3 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}
