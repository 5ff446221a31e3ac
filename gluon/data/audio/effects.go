package audio

import (
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// The gain types of Vol, torchaudio's gain_type argument.
const (
	// GainAmplitude is an amplitude ratio ("amplitude", the default).
	GainAmplitude = "amplitude"
	// GainPower is a power ratio, the square of an amplitude ratio
	// ("power").
	GainPower = "power"
	// GainDB is a gain in decibels ("db").
	GainDB = "db"
)

// Vol is torchaudio's Vol as a Block: it scales signals by a gain and
// clamps them to [−1, 1]. The gradient passes where the scaled signal is
// within [−1, 1] (inclusive, as torch.clamp's).
type Vol struct {
	gluon.BlockMeta
	gain     float64
	gainType string
	ratio    float64 // the amplitude ratio; 1 when torchaudio skips the product
	scale    bool    // whether the signal is multiplied by ratio
}

// NewVol returns a Vol of the given gain, read as gainType: "" or
// GainAmplitude (an amplitude ratio ≥ 0), GainPower (a power ratio > 0,
// 10·log₁₀(gain) decibels) or GainDB (decibels, any sign). A gain of
// 0 dB (a power gain of 1) leaves the signal unscaled, as torchaudio's
// gain does, before the clamp. A negative ratio, a power gain of 0
// (torchaudio fails on its logarithm), a gain that is not finite or
// another gain type panics with an *nd.Error.
func NewVol(gain float64, gainType string) *Vol {
	const op = "audio.NewVol"
	if gainType == "" {
		gainType = GainAmplitude
	}
	if math.IsNaN(gain) || math.IsInf(gain, 0) {
		nd.Panicf(op, nd.ErrArgument, "gain %g: want a finite gain", gain)
	}
	v := &Vol{BlockMeta: gluon.NewBlockMeta("vol"), gain: gain, gainType: gainType, ratio: gain, scale: true}
	db := gain
	switch gainType {
	case GainAmplitude:
		if gain < 0 {
			nd.Panicf(op, nd.ErrArgument, "amplitude gain %g: want a gain ≥ 0", gain)
		}
		return v
	case GainPower:
		if !(gain > 0) {
			nd.Panicf(op, nd.ErrArgument, "power gain %g: want a gain > 0", gain)
		}
		db = 10 * math.Log10(gain)
	case GainDB:
	default:
		nd.Panicf(op, nd.ErrArgument, "gain type %q: want %q, %q or %q", gainType, GainAmplitude, GainPower, GainDB)
	}
	if db == 0 { // torchaudio.functional.gain returns its input
		v.ratio, v.scale = 1, false
	} else {
		v.ratio = math.Pow(10, db/20)
	}
	return v
}

// Gain returns the gain and its type, as given (the type's default
// filled in).
func (v *Vol) Gain() (gain float64, gainType string) { return v.gain, v.gainType }

// Ratio returns the amplitude ratio the signal is multiplied by.
func (v *Vol) Ratio() float64 { return v.ratio }

// Forward returns x scaled and clamped to [−1, 1].
func (v *Vol) Forward(x *nd.NDArray) *nd.NDArray {
	checkSignal("audio.Vol", x, 0)
	if v.scale {
		x = nd.MulScalar(x, v.ratio)
	}
	return nd.Clip(x, -1, 1)
}

// ExportONNX writes the product with the ratio and a Clip to [−1, 1].
func (v *Vol) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	if v.scale {
		x = onnxArith(g, "Mul", x, v.ratio)
	}
	return onnxOp(g, "Clip", []string{x, onnxConst(g, []float64{-1}), onnxConst(g, []float64{1})}, nil), nil
}

// The fade shapes, torchaudio's fade_shape argument.
const (
	// FadeLinear fades linearly ("linear", the default).
	FadeLinear = "linear"
	// FadeLogarithmic fades in as log₁₀(0.1 + t) + 1 ("logarithmic").
	FadeLogarithmic = "logarithmic"
	// FadeExponential fades in as 2^(t−1)·t ("exponential").
	FadeExponential = "exponential"
	// FadeQuarterSine fades in as sin(πt/2) ("quarter_sine").
	FadeQuarterSine = "quarter_sine"
	// FadeHalfSine fades in as sin(πt − π/2)/2 + 1/2 ("half_sine").
	FadeHalfSine = "half_sine"
)

// FadeOpts are the options of Fade, torchaudio's arguments.
type FadeOpts struct {
	// In and Out are the lengths of the fade-in and the fade-out in
	// samples (0: none).
	In, Out int
	// Shape is the fades' shape: "" or FadeLinear, FadeLogarithmic,
	// FadeExponential, FadeQuarterSine or FadeHalfSine.
	Shape string
}

// Fade is torchaudio's Fade as a Block: it multiplies signals [..., L]
// by a fade-in over their first In samples and a fade-out over their
// last Out samples (the two overlap when In + Out > L). A fade of n
// samples follows its Shape at t = 0, 1/(n−1), …, 1 (torch.linspace(0,
// 1, n); for the fade-out the mirror image), clamped to [0, 1]. The
// envelope is computed on the host in float64 for each length; the
// gradient is the envelope.
type Fade struct {
	gluon.BlockMeta
	o FadeOpts
}

// NewFade returns a Fade with the options o. Negative lengths or an
// unknown shape panic with an *nd.Error.
func NewFade(o FadeOpts) *Fade {
	const op = "audio.NewFade"
	if o.Shape == "" {
		o.Shape = FadeLinear
	}
	switch o.Shape {
	case FadeLinear, FadeLogarithmic, FadeExponential, FadeQuarterSine, FadeHalfSine:
	default:
		nd.Panicf(op, nd.ErrArgument, "fade shape %q: want %q, %q, %q, %q or %q", o.Shape,
			FadeLinear, FadeLogarithmic, FadeExponential, FadeQuarterSine, FadeHalfSine)
	}
	if o.In < 0 || o.Out < 0 {
		nd.Panicf(op, nd.ErrArgument, "fade lengths in %d, out %d: want lengths ≥ 0", o.In, o.Out)
	}
	return &Fade{BlockMeta: gluon.NewBlockMeta("fade"), o: o}
}

// Opts returns the Fade's options, defaults filled in.
func (f *Fade) Opts() FadeOpts { return f.o }

// Envelope returns the gains [n] Fade multiplies a signal of n samples
// by, the product of its fade-in and fade-out. n must be at least In and
// at least Out.
func (f *Fade) Envelope(n int) []float64 {
	if n < f.o.In || n < f.o.Out {
		nd.Panicf("audio.Fade", nd.ErrShape, "signal of %d samples: shorter than the fade-in (%d) or the fade-out (%d)", n, f.o.In, f.o.Out)
	}
	env := make([]float64, n)
	for i := range env {
		env[i] = 1
	}
	for i, t := range linspace(0, 1, f.o.In) {
		env[i] = fadeIn(f.o.Shape, t)
	}
	for i, t := range linspace(0, 1, f.o.Out) {
		env[n-f.o.Out+i] *= fadeOut(f.o.Shape, t)
	}
	return env
}

// fadeIn is the fade-in's gain at t in [0, 1], clamped to [0, 1].
func fadeIn(shape string, t float64) float64 {
	v := t
	switch shape {
	case FadeExponential:
		v = math.Pow(2, t-1) * t
	case FadeLogarithmic:
		v = math.Log10(0.1+t) + 1
	case FadeQuarterSine:
		v = math.Sin(t * math.Pi / 2)
	case FadeHalfSine:
		v = math.Sin(t*math.Pi-math.Pi/2)/2 + 0.5
	}
	return min(max(v, 0), 1)
}

// fadeOut is the fade-out's gain at t in [0, 1], clamped to [0, 1].
func fadeOut(shape string, t float64) float64 {
	v := -t + 1
	switch shape {
	case FadeExponential:
		v = math.Pow(2, -t) * (1 - t)
	case FadeLogarithmic:
		v = math.Log10(1.1-t) + 1
	case FadeQuarterSine:
		v = math.Sin(t*math.Pi/2 + math.Pi/2)
	case FadeHalfSine:
		v = math.Sin(t*math.Pi+math.Pi/2)/2 + 0.5
	}
	return min(max(v, 0), 1)
}

// Forward returns x [..., L] faded in and out.
func (f *Fade) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "audio.Fade"
	checkSignal(op, x, 1)
	n := x.Shape()[x.NDim()-1]
	env := x.Session().FromSlice(x.Context(), f.Envelope(n), n).AsType(x.DType())
	return nd.Mul(env, x)
}
