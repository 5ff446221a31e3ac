package audio

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// LinearOpts are the options of a linear filter bank, the arguments of
// torchaudio.functional.linear_fbanks and of LFCC's filters, with zero
// values that mean LFCC's defaults.
type LinearOpts struct {
	// NFilter is the number of triangular filters (0: 128).
	NFilter int
	// SampleRate is the signal's sample rate in Hz (0: 16000).
	SampleRate int
	// FMin and FMax bound the filters in Hz (FMax 0: SampleRate/2,
	// rounded down). 0 ≤ FMin < FMax.
	FMin, FMax float64
}

// resolve checks o and fills in the defaults.
func (o LinearOpts) resolve(op string) LinearOpts {
	if o.NFilter == 0 {
		o.NFilter = 128
	}
	if o.SampleRate == 0 {
		o.SampleRate = 16000
	}
	if o.FMax == 0 {
		o.FMax = float64(o.SampleRate / 2)
	}
	switch {
	case o.NFilter < 1:
		nd.Panicf(op, nd.ErrArgument, "%d filters: want at least 1", o.NFilter)
	case o.SampleRate < 1:
		nd.Panicf(op, nd.ErrArgument, "sample rate %d: want at least 1 Hz", o.SampleRate)
	case !(o.FMin >= 0 && o.FMin < o.FMax && !math.IsInf(o.FMax, 0)):
		nd.Panicf(op, nd.ErrArgument, "frequency bounds FMin %g, FMax %g: want 0 ≤ FMin < FMax < ∞", o.FMin, o.FMax)
	}
	return o
}

// LinearFilterBank returns the linear triangular filter bank
// [nFreqs, NFilter] that maps the nFreqs bins of a one-sided spectrum
// (0 Hz to SampleRate/2, rounded down, evenly spaced) to NFilter bands
// (torchaudio.functional.linear_fbanks): column j is a triangle rising
// from the (j)th to the (j+1)th and falling to the (j+2)th of NFilter+2
// points evenly spaced in Hz from FMin to FMax. Invalid options panic
// with an *nd.Error.
func LinearFilterBank(dev ctx.Context, dt nd.DType, nFreqs int, o LinearOpts) *nd.NDArray {
	const op = "audio.LinearFilterBank"
	checkFloat(op, dt)
	o = o.resolve(op)
	return fromFloat64s(false, dev, dt, linearBank(op, nFreqs, o), nFreqs, o.NFilter)
}

// linearBank computes LinearFilterBank's values, row-major
// [nFreqs, NFilter], for resolved options.
func linearBank(op string, nFreqs int, o LinearOpts) []float64 {
	if nFreqs < 1 {
		nd.Panicf(op, nd.ErrArgument, "%d frequency bins: want at least 1", nFreqs)
	}
	return triangles(linspace(0, float64(o.SampleRate/2), nFreqs), linspace(o.FMin, o.FMax, o.NFilter+2))
}

// LFCCOpts are the options of LFCC, torchaudio's LFCC arguments (its
// speckwargs as Spectrogram), with zero values that mean its defaults.
type LFCCOpts struct {
	// NLFCC is the number of coefficients kept, at most Spectrogram.NFFT
	// (torchaudio's check; 0: 40).
	NLFCC int
	// DCTType is the DCT's type; 2 is the only one (0: 2).
	DCTType int
	// Norm is the DCT's normalisation ("": DCTOrtho).
	Norm DCTNorm
	// LogLF takes log(x + 10⁻⁶) of the filtered spectrogram instead of
	// decibels with an 80 dB floor (log_lf).
	LogLF bool
	// Spectrogram are the spectrogram's options (Complex must be false).
	Spectrogram SpectrogramOpts
	// Filter are the linear filter bank's options, the sample rate among
	// them.
	Filter LinearOpts
}

// LFCC is torchaudio's LFCC as a Block: the linear-frequency cepstral
// coefficients of signals [..., L], [..., NLFCC, T]. It computes a
// Spectrogram, multiplies it by LinearFilterBank, converts the result to
// decibels (AmplitudeToDB, power, with a TopDB of 80) or, with LogLF, to
// log(x + 10⁻⁶), and keeps the first NLFCC coefficients of each frame's
// DCT-II: MFCC with linear filters in place of mel ones. Its children
// are the Spectrogram and the AmplitudeToDB. It is differentiable and
// has no parameters.
type LFCC struct {
	gluon.BlockMeta
	// Spectrogram computes the power spectrogram (child
	// "spectrogram0").
	Spectrogram *Spectrogram
	// AmplitudeToDB converts the filtered spectrogram to decibels unless
	// LogLF (child "amplitudetodb0").
	AmplitudeToDB *AmplitudeToDB
	o             LFCCOpts
	fb, dct       *consts
}

// NewLFCC returns an LFCC with the options o. Invalid options panic with
// an *nd.Error.
func NewLFCC(o LFCCOpts) *LFCC {
	const op = "audio.NewLFCC"
	if o.NLFCC == 0 {
		o.NLFCC = 40
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
	if o.Spectrogram.Complex {
		nd.Panicf(op, nd.ErrArgument, "LFCC needs a real spectrogram (Complex is set)")
	}
	s := NewSpectrogram(o.Spectrogram)
	o.Spectrogram = s.Opts()
	o.Filter = o.Filter.resolve(op)
	if o.NLFCC < 0 || o.NLFCC > o.Spectrogram.NFFT {
		nd.Panicf(op, nd.ErrArgument, "%d coefficients for NFFT %d: want 1 to NFFT", o.NLFCC, o.Spectrogram.NFFT)
	}
	nFreqs := o.Spectrogram.NFFT/2 + 1
	l := &LFCC{BlockMeta: gluon.NewBlockMeta("lfcc"), Spectrogram: s,
		AmplitudeToDB: NewAmplitudeToDB(DBOpts{SType: Power, TopDB: 80}), o: o,
		fb:  newConsts(linearBank(op, nFreqs, o.Filter), nFreqs, o.Filter.NFilter),
		dct: newConsts(dctValues(op, o.NLFCC, o.Filter.NFilter, o.Norm), o.Filter.NFilter, o.NLFCC)}
	l.AddChild(l.Spectrogram)
	l.AddChild(l.AmplitudeToDB)
	return l
}

// EagerOnly makes gluon.Hybridize run a network holding an LFCC
// eagerly, as its Spectrogram's.
func (l *LFCC) EagerOnly() string { return l.Spectrogram.EagerOnly() }

// Opts returns the LFCC's options, defaults filled in.
func (l *LFCC) Opts() LFCCOpts { return l.o }

// Forward returns the coefficients of x [..., L]: [..., NLFCC, T].
func (l *LFCC) Forward(x *nd.NDArray) *nd.NDArray {
	spec := l.Spectrogram.Forward(x)
	dev, dt := spec.Context(), spec.DType()
	lin := nd.SwapAxes(nd.MatMul(nd.SwapAxes(spec, -1, -2), l.fb.get(dev, dt)), -1, -2)
	if l.o.LogLF {
		lin = nd.Log(nd.AddScalar(lin, 1e-6))
	} else {
		lin = l.AmplitudeToDB.Forward(lin)
	}
	return nd.SwapAxes(nd.MatMul(nd.SwapAxes(lin, -1, -2), l.dct.get(dev, dt)), -1, -2)
}

// ExportONNX writes the spectrogram, the transposed filter bank
// [NFilter, F] times it, its decibels (or logarithm with LogLF) and the
// transposed DCT matrix [NLFCC, NFilter] times them.
func (l *LFCC) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	spec, err := g.Block(l.Spectrogram, x)
	if err != nil {
		return "", err
	}
	nf, nFreqs := l.o.Filter.NFilter, l.o.Spectrogram.NFFT/2+1
	lin := onnxMatMulLeft(g, spec, transposed(l.fb.values, nFreqs, nf), nf, nFreqs)
	if l.o.LogLF {
		lin = onnxOp(g, "Log", []string{onnxOp(g, "Add", []string{lin, onnxConst(g, []float64{1e-6})}, nil)}, nil)
	} else if lin, err = g.Block(l.AmplitudeToDB, lin); err != nil {
		return "", err
	}
	return onnxMatMulLeft(g, lin, transposed(l.dct.values, nf, l.o.NLFCC), l.o.NLFCC, nf), nil
}
