package audio

import (
	"math"
	"math/rand/v2"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
)

// GriffinLimOpts are the options of GriffinLim, torchaudio's arguments
// with zero values that mean its defaults.
type GriffinLimOpts struct {
	// NFFT is the STFT's length (0: 400); the spectrogram has NFFT/2+1
	// bins.
	NFFT int
	// NIter is the number of phase-recovery iterations (0: 32).
	NIter int
	// WinLength is the window's length, at most NFFT (0: NFFT).
	WinLength int
	// HopLength is the distance between frames (0: WinLength/2).
	HopLength int
	// Window makes the window (nil: Hann, periodic), once, on the host
	// in float64.
	Window WindowFn
	// Power is the exponent of the magnitudes the spectrogram holds, > 0
	// (0: 2, a power spectrogram; 1 for magnitudes).
	Power float64
	// Momentum is the fast Griffin-Lim momentum, in [0, 1) (0: 0.99).
	Momentum float64
	// ZeroMomentum makes the momentum 0, the original Griffin-Lim
	// (torchaudio's momentum=0, which Momentum's 0 cannot say); Momentum
	// must be 0.
	ZeroMomentum bool
	// Length is the length of the waveform returned (0: all the samples
	// the frames cover, torchaudio's None).
	Length int
	// NoRandInit starts from phases of 0 (every complex value 1;
	// torchaudio's rand_init=False) instead of random ones.
	NoRandInit bool
}

// resolve checks o and fills in the defaults.
func (o GriffinLimOpts) resolve(op string) GriffinLimOpts {
	if o.NFFT == 0 {
		o.NFFT = 400
	}
	if o.NIter == 0 {
		o.NIter = 32
	}
	if o.WinLength == 0 {
		o.WinLength = o.NFFT
	}
	if o.HopLength == 0 {
		o.HopLength = o.WinLength / 2
	}
	if o.Window == nil {
		o.Window = Hann
	}
	if o.Power == 0 {
		o.Power = 2
	}
	if o.Momentum == 0 && !o.ZeroMomentum {
		o.Momentum = 0.99
	}
	switch {
	case o.NFFT < 1:
		nd.Panicf(op, nd.ErrArgument, "NFFT %d: want at least 1", o.NFFT)
	case o.NIter < 1:
		nd.Panicf(op, nd.ErrArgument, "%d iterations: want at least 1", o.NIter)
	case o.WinLength < 1 || o.WinLength > o.NFFT:
		nd.Panicf(op, nd.ErrArgument, "window length %d: want 1 to NFFT = %d", o.WinLength, o.NFFT)
	case o.HopLength < 1:
		nd.Panicf(op, nd.ErrArgument, "hop length %d: want at least 1", o.HopLength)
	case !(o.Power > 0) || math.IsInf(o.Power, 0):
		nd.Panicf(op, nd.ErrArgument, "power %g: want a finite power > 0", o.Power)
	case o.ZeroMomentum && o.Momentum != 0:
		nd.Panicf(op, nd.ErrArgument, "momentum %g with ZeroMomentum: give one of them", o.Momentum)
	case !(o.Momentum >= 0 && o.Momentum < 1):
		nd.Panicf(op, nd.ErrArgument, "momentum %g: want 0 ≤ momentum < 1", o.Momentum)
	case o.Length < 0:
		nd.Panicf(op, nd.ErrArgument, "negative length %d", o.Length)
	}
	return o
}

// GriffinLim is torchaudio's GriffinLim as a Block: it estimates the
// waveforms [..., L] whose spectrograms are spec [..., F, T] (F =
// NFFT/2+1 bins of |STFT|^Power, as Spectrogram computes them), by the
// fast Griffin-Lim algorithm. From initial phases it repeats NIter
// times: the inverse STFT (nd/fft's ISTFT) of the magnitudes with the
// phases, its STFT (centred, reflect padding), and new phases from
// that STFT less m times the previous one (m = Momentum/(1 + Momentum)),
// each divided by its modulus plus 10⁻¹⁶; it returns the inverse STFT
// with the last phases, trimmed or padded to Length.
//
// The initial phases are torchaudio's: each complex value has real and
// imaginary parts drawn uniformly from [0, 1) (torch.rand of a complex
// dtype), or is 1 with NoRandInit. Forward draws them from the input's
// session generator (nd.Seed makes it reproducible), Apply from a given
// generator (the form Transform uses). With NoRandInit the output is a
// deterministic, differentiable function of spec, as torchaudio's. It
// has no parameters; its window is a constant made once per context and
// dtype.
type GriffinLim struct {
	gluon.BlockMeta
	o      GriffinLimOpts
	window *consts
}

// NewGriffinLim returns a GriffinLim with the options o. Invalid
// options panic with an *nd.Error.
func NewGriffinLim(o GriffinLimOpts) *GriffinLim {
	const op = "audio.NewGriffinLim"
	o = o.resolve(op)
	v := windowValues(op, o.Window, o.WinLength)
	return &GriffinLim{BlockMeta: gluon.NewBlockMeta("griffinlim"), o: o, window: newConsts(v, len(v))}
}

// EagerOnly makes gluon.Hybridize run a network holding a GriffinLim
// eagerly: nd/fft transforms on the host, which a trace cannot hold.
func (g *GriffinLim) EagerOnly() string { return "its STFTs run on the host (nd/fft)" }

// Opts returns the GriffinLim's options, defaults filled in.
func (g *GriffinLim) Opts() GriffinLimOpts { return g.o }

// Forward returns the waveforms of spec [..., F, T], drawing the initial
// phases from spec's session generator unless NoRandInit.
func (g *GriffinLim) Forward(spec *nd.NDArray) *nd.NDArray {
	g.check("audio.GriffinLim", spec)
	var angles *nd.NDArray
	if !g.o.NoRandInit {
		angles = spec.Session().RandomUniform(spec.Context(), spec.DType(), 0, 1, append(spec.Shape(), 2)...)
	}
	return g.run(spec, angles)
}

// Apply returns the waveforms of spec [..., F, T], drawing the initial
// phases from rng (row-major, the real part of each value first), which
// must not be nil unless NoRandInit.
func (g *GriffinLim) Apply(spec *nd.NDArray, rng *rand.Rand) *nd.NDArray {
	const op = "audio.GriffinLim.Apply"
	g.check(op, spec)
	if g.o.NoRandInit {
		return g.run(spec, nil)
	}
	if rng == nil {
		nd.Panicf(op, nd.ErrArgument, "nil random generator")
	}
	u := make([]float64, 2*spec.Size())
	for i := range u {
		u[i] = rng.Float64()
	}
	a := spec.Session().FromSlice(spec.Context(), u, append(spec.Shape(), 2)...)
	angles := a.AsType(spec.DType())
	if angles != a {
		a.Release()
	}
	return g.run(spec, angles)
}

// needsRNG tells Transform whether Apply draws.
func (g *GriffinLim) needsRNG() bool { return !g.o.NoRandInit }

// check fails unless spec is a spectrogram of the GriffinLim's bins.
func (g *GriffinLim) check(op string, spec *nd.NDArray) {
	checkSignal(op, spec, 2)
	s := spec.Shape()
	if f := s[len(s)-2]; f != g.o.NFFT/2+1 {
		nd.Panicf(op, nd.ErrShape, "spectrogram of shape %v has %d frequency bins (axis −2): want NFFT/2+1 = %d", s, f, g.o.NFFT/2+1)
	}
	frames := s[len(s)-1]
	if frames < 1 {
		nd.Panicf(op, nd.ErrShape, "spectrogram of shape %v has no frames", s)
	}
	// The STFT of a waveform of Length samples, centred, has
	// 1 + (Length + 2·⌊NFFT/2⌋ − NFFT)/hop frames, which must be the
	// spectrogram's (torchaudio fails on the mismatch in its loop).
	if l := g.o.Length; l > 0 {
		if n := 1 + (l+2*(g.o.NFFT/2)-g.o.NFFT)/g.o.HopLength; n != frames {
			nd.Panicf(op, nd.ErrArgument, "a waveform of Length %d has %d frames, the spectrogram of shape %v %d", l, n, s, frames)
		}
	}
}

// run performs the iterations from the initial phases angles
// [..., F, T, 2] (nil: all 1).
func (g *GriffinLim) run(spec, angles *nd.NDArray) *nd.NDArray {
	o := g.o
	sess := spec.Session()
	if angles == nil {
		angles = fft.Complex(sess.Full(spec.Context(), spec.DType(), 1, spec.Shape()...), nil)
	}
	var mag *nd.NDArray
	switch o.Power {
	case 1:
		mag = spec
	case 2: // torch's pow(0.5) is a square root
		mag = nd.Sqrt(spec)
	default:
		mag = nd.PowScalar(spec, 1/o.Power)
	}
	mag = nd.ExpandDims(mag, -1)
	win := g.window.get(spec.Context(), spec.DType())
	inv := fft.STFTOpts{Hop: o.HopLength, WinLength: o.WinLength, Window: win, Length: o.Length}
	fwd := fft.STFTOpts{Hop: o.HopLength, WinLength: o.WinLength, Window: win}
	m := o.Momentum / (1 + o.Momentum)
	// torchaudio's 1e-16 keeps a silent bin at phase 0; in half precision
	// it would round to 0 (and 0/0 to NaN): the dtype's least positive
	// value then.
	eps := 1e-16
	switch spec.DType() {
	case nd.Float16:
		eps = 5.960464477539063e-08 // 2⁻²⁴
	case nd.BFloat16:
		eps = 9.183549615799121e-41 // 2⁻¹³³
	}
	var prev *nd.NDArray // the previous rebuilt spectrogram
	step := func() {
		rebuilt := fft.STFT(fft.ISTFT(nd.Mul(mag, angles), o.NFFT, inv), o.NFFT, fwd)
		a := rebuilt
		if m != 0 && prev != nil {
			a = nd.Sub(rebuilt, nd.MulScalar(prev, m))
		}
		angles = nd.Div(a, nd.ExpandDims(nd.AddScalar(fft.Abs(a), eps), -1))
		prev = rebuilt
	}
	for range o.NIter {
		if sess.IsRecording() {
			step()
			continue
		}
		// Outside recording each iteration's temporaries, and the
		// phases and spectrogram it replaces (made here), are released
		// at once.
		oldAngles, oldPrev := angles, prev
		sess.WithScope(func() []*nd.NDArray {
			step()
			return []*nd.NDArray{angles, prev}
		})
		oldAngles.Release()
		if oldPrev != nil {
			oldPrev.Release()
		}
	}
	return fft.ISTFT(nd.Mul(mag, angles), o.NFFT, inv)
}
