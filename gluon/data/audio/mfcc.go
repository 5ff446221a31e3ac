package audio

import (
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// The amplitude types of AmplitudeToDB, torchaudio's stype argument.
const (
	// Power marks a power spectrogram: 10·log₁₀ (stype "power", the
	// default).
	Power = "power"
	// Magnitude marks a magnitude spectrogram: 20·log₁₀ (stype
	// "magnitude").
	Magnitude = "magnitude"
)

// dbAmin is the smallest amplitude AmplitudeToDB takes the logarithm of,
// torchaudio's amin.
const dbAmin = 1e-10

// DBOpts are the options of AmplitudeToDB.
type DBOpts struct {
	// SType is "" or Power, or Magnitude.
	SType string
	// TopDB, when positive, raises every value to at least the maximum
	// less TopDB decibels, the maximum taken over each spectrogram's
	// last three axes (one per leading index; over the last two for a
	// 2-D input). 0 means no floor (torchaudio's None).
	TopDB float64
	// ZeroTopDB sets a floor of 0 dB below the maximum, torchaudio's
	// top_db=0 (every value becomes its spectrogram's maximum), which a
	// TopDB of 0 cannot express. It goes with a TopDB of 0.
	ZeroTopDB bool
}

// AmplitudeToDB is torchaudio's AmplitudeToDB as a Block: it maps a
// spectrogram to decibels, m·log₁₀(max(x, 10⁻¹⁰)) with m = 10 for power
// and 20 for magnitude, then applies the TopDB floor. Its gradient is
// torch's: zero where x < 10⁻¹⁰, and under the floor the gradient goes
// to the maximum the floor was taken from (shared with the value when
// they are equal).
type AmplitudeToDB struct {
	gluon.BlockMeta
	o DBOpts
}

// NewAmplitudeToDB returns an AmplitudeToDB with the options o. An
// unknown SType or a negative TopDB panics with an *nd.Error.
func NewAmplitudeToDB(o DBOpts) *AmplitudeToDB {
	const op = "audio.NewAmplitudeToDB"
	switch o.SType {
	case "":
		o.SType = Power
	case Power, Magnitude:
	default:
		nd.Panicf(op, nd.ErrArgument, "stype %q: want %q or %q", o.SType, Power, Magnitude)
	}
	if !(o.TopDB >= 0) || math.IsInf(o.TopDB, 0) {
		nd.Panicf(op, nd.ErrArgument, "top dB %g: want a finite value ≥ 0 (0: no floor)", o.TopDB)
	}
	if o.ZeroTopDB && o.TopDB != 0 {
		nd.Panicf(op, nd.ErrArgument, "top dB %g with ZeroTopDB: give one of them", o.TopDB)
	}
	return &AmplitudeToDB{BlockMeta: gluon.NewBlockMeta("amplitudetodb"), o: o}
}

// Opts returns the AmplitudeToDB's options, defaults filled in.
func (a *AmplitudeToDB) Opts() DBOpts { return a.o }

// Forward returns x in decibels. With a TopDB x needs at least 2 axes.
func (a *AmplitudeToDB) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "audio.AmplitudeToDB"
	checkSignal(op, x, 0)
	mult := 10.0
	if a.o.SType == Magnitude {
		mult = 20
	}
	db := nd.MulScalar(nd.Log10(nd.MaximumScalar(x, dbAmin)), mult)
	if !a.o.floored() {
		return db
	}
	s := x.Shape()
	if len(s) < 2 {
		nd.Panicf(op, nd.ErrShape, "a top dB floor needs a spectrogram of at least 2 axes, got shape %v", s)
	}
	packed := 1
	if len(s) > 2 {
		packed = s[len(s)-3]
	}
	f, t := s[len(s)-2], s[len(s)-1]
	if packed*f*t == 0 {
		return db
	}
	b := x.Size() / (packed * f * t)
	p := nd.Reshape(db, b, packed, f, t)
	floor := nd.Reshape(nd.SubScalar(nd.Max(p, 1, 2, 3), a.o.TopDB), b, 1, 1, 1)
	return nd.Reshape(maximum(p, floor), s...)
}

// floored reports whether the options set a top-dB floor.
func (o DBOpts) floored() bool { return o.TopDB != 0 || o.ZeroTopDB }

// maximum is torch.maximum of a and b (broadcast): where they are equal
// each gets half the gradient, as in PyTorch.
func maximum(a, b *nd.NDArray) *nd.NDArray {
	tie := nd.MulScalar(nd.Add(a, b), 0.5)
	return nd.Where(nd.Greater(a, b), a, nd.Where(nd.Equal(a, b), tie, b))
}

// DBToAmplitude returns ref·(10^(x/10))^power, the inverse of
// AmplitudeToDB for power 1 (power spectrograms) and 0.5 (magnitudes)
// with ref 1 (torchaudio.functional.DB_to_amplitude). It is
// differentiable.
func DBToAmplitude(x *nd.NDArray, ref, power float64) *nd.NDArray {
	checkSignal("audio.DBToAmplitude", x, 0)
	return nd.MulScalar(nd.PowScalar(nd.RPowScalar(10, nd.MulScalar(x, 0.1)), power), ref)
}

// MFCCOpts are the options of MFCC, torchaudio's MFCC arguments with its
// melkwargs split into the spectrogram's and the filter bank's, with
// zero values that mean its defaults.
type MFCCOpts struct {
	// NMFCC is the number of coefficients kept, at most Mel.NMels
	// (0: 40).
	NMFCC int
	// DCTType is the DCT's type; 2 is the only one (0: 2).
	DCTType int
	// Norm is the DCT's normalisation ("": DCTOrtho).
	Norm DCTNorm
	// LogMels takes log(mel + 10⁻⁶) instead of decibels with an 80 dB
	// floor.
	LogMels bool
	// Spectrogram are the mel spectrogram's spectrogram options.
	Spectrogram SpectrogramOpts
	// Mel are its filter bank's options (the sample rate among them).
	Mel MelOpts
}

// MFCC is torchaudio's MFCC as a Block: the mel-frequency cepstral
// coefficients of signals [..., L], [..., NMFCC, T]. It computes a
// MelSpectrogram, converts it to decibels (AmplitudeToDB, power, with a
// TopDB of 80) or, with LogMels, to log(mel + 10⁻⁶), and keeps the first
// NMFCC coefficients of each frame's DCT-II. Its children are the
// MelSpectrogram and the AmplitudeToDB. It is differentiable and has no
// parameters.
type MFCC struct {
	gluon.BlockMeta
	// MelSpectrogram computes the mel spectrogram (child
	// "melspectrogram0").
	MelSpectrogram *MelSpectrogram
	// AmplitudeToDB converts it to decibels unless LogMels (child
	// "amplitudetodb0").
	AmplitudeToDB *AmplitudeToDB
	o             MFCCOpts
	dct           *consts
}

// NewMFCC returns an MFCC with the options o. Invalid options panic with
// an *nd.Error.
func NewMFCC(o MFCCOpts) *MFCC {
	const op = "audio.NewMFCC"
	if o.NMFCC == 0 {
		o.NMFCC = 40
	}
	if o.DCTType == 0 {
		o.DCTType = 2
	}
	if o.DCTType != 2 {
		nd.Panicf(op, nd.ErrArgument, "DCT type %d: only type 2 is supported", o.DCTType)
	}
	if o.Norm == "" {
		o.Norm = DCTOrtho
	}
	ms := NewMelSpectrogram(MelSpectrogramOpts{Spectrogram: o.Spectrogram, Mel: o.Mel})
	o.Spectrogram, o.Mel = ms.Spectrogram.Opts(), ms.MelScale.Opts()
	if o.NMFCC > o.Mel.NMels {
		nd.Panicf(op, nd.ErrArgument, "%d coefficients of %d mel bands: cannot keep more coefficients than bands", o.NMFCC, o.Mel.NMels)
	}
	m := &MFCC{BlockMeta: gluon.NewBlockMeta("mfcc"), MelSpectrogram: ms,
		AmplitudeToDB: NewAmplitudeToDB(DBOpts{SType: Power, TopDB: 80}), o: o,
		dct: newConsts(dctValues(op, o.NMFCC, o.Mel.NMels, o.Norm), o.Mel.NMels, o.NMFCC)}
	m.AddChild(m.MelSpectrogram)
	m.AddChild(m.AmplitudeToDB)
	return m
}

// EagerOnly makes gluon.Hybridize run a network holding an MFCC
// eagerly, as its Spectrogram's.
func (m *MFCC) EagerOnly() string { return m.MelSpectrogram.EagerOnly() }

// Opts returns the MFCC's options, defaults filled in.
func (m *MFCC) Opts() MFCCOpts { return m.o }

// Forward returns the coefficients of x [..., L]: [..., NMFCC, T].
func (m *MFCC) Forward(x *nd.NDArray) *nd.NDArray {
	mel := m.MelSpectrogram.Forward(x)
	if m.o.LogMels {
		mel = nd.Log(nd.AddScalar(mel, 1e-6))
	} else {
		mel = m.AmplitudeToDB.Forward(mel)
	}
	dct := m.dct.get(mel.Context(), mel.DType())
	return nd.SwapAxes(nd.MatMul(nd.SwapAxes(mel, -1, -2), dct), -1, -2)
}
