package audio

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
)

// The spectrogram normalisations, torchaudio's normalized argument.
const (
	// NormWindow divides the spectrum by the window's L2 norm,
	// √Σw² (normalized=True or "window").
	NormWindow = "window"
	// NormFrameLength divides it by √NFFT, the STFT's own normalisation
	// (normalized="frame_length").
	NormFrameLength = "frame_length"
)

// SpectrogramOpts are the options of Spectrogram, torchaudio's
// Spectrogram arguments, with zero values that mean its defaults.
type SpectrogramOpts struct {
	// NFFT is the length of each frame's transform (0: 400); the
	// spectrogram has NFFT/2+1 frequency bins (NFFT with TwoSided).
	NFFT int
	// WinLength is the window's length, at most NFFT (0: NFFT). A
	// shorter window is centred in the frame, padded with zeros.
	WinLength int
	// HopLength is the distance between frames (0: WinLength/2).
	HopLength int
	// Pad is the number of zeros added to both ends of the signal
	// before the transform.
	Pad int
	// Window makes the window (nil: Hann, periodic). It is called once,
	// when the Block is made, on the host in float64.
	Window WindowFn
	// Power is the exponent of the magnitude, > 0 (0: 2, the power
	// spectrogram; 1 gives the magnitude).
	Power float64
	// Complex returns the complex spectrum [..., F, T, 2] instead of a
	// power of its magnitude (torchaudio's power=None); Power is then
	// ignored.
	Complex bool
	// Normalized is "" (none), NormWindow or NormFrameLength.
	Normalized string
	// NoCenter starts the first frame at the first sample
	// (center=False); by default the signal is padded by NFFT/2 on both
	// sides so that frame t is centred on sample t·HopLength.
	NoCenter bool
	// PadMode fills the centring padding: "" or "reflect" (the default),
	// "constant", "replicate" or "circular".
	PadMode string
	// TwoSided keeps all NFFT bins (onesided=False).
	TwoSided bool
}

// resolve checks o and fills in the defaults.
func (o SpectrogramOpts) resolve(op string) SpectrogramOpts {
	if o.NFFT == 0 {
		o.NFFT = 400
	}
	if o.WinLength == 0 {
		o.WinLength = o.NFFT
	}
	if o.HopLength == 0 {
		o.HopLength = o.WinLength / 2
	}
	if o.Power == 0 {
		o.Power = 2
	}
	if o.Window == nil {
		o.Window = Hann
	}
	switch {
	case o.NFFT < 1:
		nd.Panicf(op, nd.ErrArgument, "NFFT %d: want at least 1", o.NFFT)
	case o.WinLength < 1 || o.WinLength > o.NFFT:
		nd.Panicf(op, nd.ErrArgument, "window length %d: want 1 to NFFT = %d", o.WinLength, o.NFFT)
	case o.HopLength < 1:
		nd.Panicf(op, nd.ErrArgument, "hop length %d: want at least 1", o.HopLength)
	case o.Pad < 0:
		nd.Panicf(op, nd.ErrArgument, "negative padding %d", o.Pad)
	case !(o.Power > 0) || math.IsInf(o.Power, 0):
		nd.Panicf(op, nd.ErrArgument, "power %g: want a finite power > 0", o.Power)
	case o.Normalized != "" && o.Normalized != NormWindow && o.Normalized != NormFrameLength:
		nd.Panicf(op, nd.ErrArgument, "normalized %q: want \"\", %q or %q", o.Normalized, NormWindow, NormFrameLength)
	}
	switch o.PadMode {
	case "", "reflect", "constant", "replicate", "circular":
	default:
		nd.Panicf(op, nd.ErrArgument, "pad mode %q: want \"reflect\", \"constant\", \"replicate\" or \"circular\"", o.PadMode)
	}
	return o
}

// Spectrogram is torchaudio's Spectrogram as a Block: the short-time
// Fourier transform of signals [..., L] (any leading axes, none
// included), frames of NFFT samples HopLength apart, each multiplied by
// the window, then the Power of each bin's magnitude, giving [..., F, T];
// or the complex spectrum [..., F, T, 2] (Complex). It is composed of
// nd's ops and nd/fft's STFT, so the input gets gradients. It has no
// parameters; its window is a constant made once per context and dtype.
type Spectrogram struct {
	gluon.BlockMeta
	o      SpectrogramOpts
	window *consts
	wnorm  float64 // √Σw²
}

// NewSpectrogram returns a Spectrogram with the options o. Invalid
// options, or a Window that does not make WinLength floating-point
// values, panic with an *nd.Error.
func NewSpectrogram(o SpectrogramOpts) *Spectrogram {
	const op = "audio.NewSpectrogram"
	o = o.resolve(op)
	v := windowValues(op, o.Window, o.WinLength)
	ss := 0.0
	for _, x := range v {
		ss += x * x
	}
	return &Spectrogram{BlockMeta: gluon.NewBlockMeta("spectrogram"), o: o, window: newConsts(v, len(v)), wnorm: math.Sqrt(ss)}
}

// windowValues calls the window function fn for n points, on the host in
// float64, and returns its values, failing unless it makes n of them.
func windowValues(op string, fn WindowFn, n int) []float64 {
	w := fn(ctx.CPU(0), nd.Float64, n)
	if w == nil || w.NDim() != 1 || w.Shape()[0] != n {
		var s []int
		if w != nil {
			s = w.Shape()
		}
		nd.Panicf(op, nd.ErrShape, "the window function made shape %v for a window of %d points", s, n)
	}
	v := w.Float64s()
	w.Release() // its values are kept as a shared constant
	return v
}

// EagerOnly makes gluon.Hybridize run a network holding a Spectrogram
// eagerly: nd/fft transforms on the host, which a trace cannot hold.
func (s *Spectrogram) EagerOnly() string { return "its STFT runs on the host (nd/fft)" }

// Opts returns the Spectrogram's options, defaults filled in.
func (s *Spectrogram) Opts() SpectrogramOpts { return s.o }

// Bins returns the number of frequency bins of the Spectrogram's
// output: NFFT/2+1, or NFFT when TwoSided.
func (s *Spectrogram) Bins() int {
	if s.o.TwoSided {
		return s.o.NFFT
	}
	return s.o.NFFT/2 + 1
}

// Forward returns the spectrogram of x [..., L]: [..., F, T], or
// [..., F, T, 2] when Complex. x must be floating-point and, with the
// default reflect padding, longer than NFFT/2 samples.
func (s *Spectrogram) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "audio.Spectrogram"
	checkSignal(op, x, 1)
	o := s.o
	if o.Pad > 0 {
		widths := make([][2]int, x.NDim())
		widths[len(widths)-1] = [2]int{o.Pad, o.Pad}
		x = nd.Pad(x, widths, nd.PadConstant, 0)
	}
	spec := fft.STFT(x, o.NFFT, fft.STFTOpts{
		Hop: o.HopLength, WinLength: o.WinLength, Window: s.window.get(x.Context(), x.DType()),
		NoCenter: o.NoCenter, PadMode: o.PadMode, Normalized: o.Normalized == NormFrameLength, TwoSided: o.TwoSided,
	})
	if o.Normalized == NormWindow {
		spec = nd.DivScalar(spec, s.wnorm)
	}
	if o.Complex {
		return spec
	}
	mag := fft.Abs(spec)
	switch o.Power {
	case 1:
		return mag
	case 2: // as torch's pow(2), a product (and cheaper than math.Pow)
		return nd.Square(mag)
	}
	return nd.PowScalar(mag, o.Power)
}

// MelScale is torchaudio's MelScale as a Block: it maps a spectrogram
// [..., F, T] of F = nStft one-sided bins to mel bands [..., NMels, T],
// multiplying by MelFilterBank. It is differentiable and has no
// parameters.
type MelScale struct {
	gluon.BlockMeta
	o     MelOpts
	nStft int
	fb    *consts
}

// NewMelScale returns a MelScale for spectrograms of nStft bins
// (NFFT/2+1; torchaudio's default is 201, for NFFT 400). Invalid options
// panic with an *nd.Error.
func NewMelScale(nStft int, o MelOpts) *MelScale {
	const op = "audio.NewMelScale"
	o = o.resolve(op)
	return &MelScale{BlockMeta: gluon.NewBlockMeta("melscale"), o: o, nStft: nStft,
		fb: newConsts(melBank(op, nStft, o), nStft, o.NMels)}
}

// Opts returns the MelScale's options, defaults filled in.
func (m *MelScale) Opts() MelOpts { return m.o }

// Forward returns the mel spectrogram of spec [..., F, T].
func (m *MelScale) Forward(spec *nd.NDArray) *nd.NDArray {
	const op = "audio.MelScale"
	checkSignal(op, spec, 2)
	if f := spec.Shape()[spec.NDim()-2]; f != m.nStft {
		nd.Panicf(op, nd.ErrShape, "spectrogram of shape %v has %d frequency bins (axis −2), the filter bank %d", spec.Shape(), f, m.nStft)
	}
	fb := m.fb.get(spec.Context(), spec.DType())
	return nd.SwapAxes(nd.MatMul(nd.SwapAxes(spec, -1, -2), fb), -1, -2)
}

// MelSpectrogramOpts are the options of MelSpectrogram: the
// spectrogram's (Complex must be false) and the mel filter bank's.
type MelSpectrogramOpts struct {
	// Spectrogram are the spectrogram's options (Complex must be false).
	Spectrogram SpectrogramOpts
	// Mel are the filter bank's options, the sample rate among them.
	Mel MelOpts
}

// MelSpectrogram is torchaudio's MelSpectrogram as a Block: a
// Spectrogram followed by a MelScale, mapping signals [..., L] to
// [..., NMels, T]. Its children are the two Blocks. It is differentiable
// and has no parameters.
type MelSpectrogram struct {
	gluon.BlockMeta
	// Spectrogram computes the power spectrogram (child "spectrogram0").
	Spectrogram *Spectrogram
	// MelScale maps it to mel bands (child "melscale0").
	MelScale *MelScale
}

// NewMelSpectrogram returns a MelSpectrogram with the options o.
// Invalid options, Complex among them, panic with an *nd.Error.
func NewMelSpectrogram(o MelSpectrogramOpts) *MelSpectrogram {
	if o.Spectrogram.Complex {
		nd.Panicf("audio.NewMelSpectrogram", nd.ErrArgument, "a mel spectrogram needs a real spectrogram (Complex is set)")
	}
	s := NewSpectrogram(o.Spectrogram)
	m := &MelSpectrogram{BlockMeta: gluon.NewBlockMeta("melspectrogram"), Spectrogram: s,
		MelScale: NewMelScale(s.o.NFFT/2+1, o.Mel)}
	m.AddChild(m.Spectrogram)
	m.AddChild(m.MelScale)
	return m
}

// EagerOnly makes gluon.Hybridize run a network holding a
// MelSpectrogram eagerly, as its Spectrogram's.
func (m *MelSpectrogram) EagerOnly() string { return m.Spectrogram.EagerOnly() }

// Forward returns the mel spectrogram of x [..., L].
func (m *MelSpectrogram) Forward(x *nd.NDArray) *nd.NDArray {
	return m.MelScale.Forward(m.Spectrogram.Forward(x))
}
