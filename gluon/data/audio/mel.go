package audio

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// The mel scales and filter-bank norms, torchaudio's mel_scale and norm
// arguments.
const (
	// HTK is the mel scale 2595·log₁₀(1 + f/700) (the default, "htk").
	HTK = "htk"
	// Slaney is the Auditory Toolbox's mel scale, linear below 1 kHz and
	// logarithmic above (mel_scale "slaney"), and, as a filter-bank norm,
	// the division of each triangle by its width in Hz so that every
	// filter has about the same area (norm "slaney").
	Slaney = "slaney"
)

// The constants of the Slaney mel scale: 3 mels per 200 Hz below 1 kHz,
// then 27 mels per factor of 6.4.
const (
	slaneyHzPerMel = 200.0 / 3
	slaneyBreakHz  = 1000.0
	slaneyBreakMel = slaneyBreakHz / slaneyHzPerMel
)

var slaneyLogStep = math.Log(6.4) / 27

// HzToMel returns frequency f (Hz) on the mel scale scale, HTK ("" or
// "htk") or Slaney. Another scale panics with an *nd.Error.
func HzToMel(f float64, scale string) float64 {
	switch checkMelScale("audio.HzToMel", scale) {
	case Slaney:
		if f >= slaneyBreakHz {
			return slaneyBreakMel + math.Log(f/slaneyBreakHz)/slaneyLogStep
		}
		return f / slaneyHzPerMel
	}
	return 2595 * math.Log10(1+f/700)
}

// MelToHz returns the frequency in Hz of mel m on the mel scale scale,
// the inverse of HzToMel.
func MelToHz(m float64, scale string) float64 {
	switch checkMelScale("audio.MelToHz", scale) {
	case Slaney:
		if m >= slaneyBreakMel {
			return slaneyBreakHz * math.Exp(slaneyLogStep*(m-slaneyBreakMel))
		}
		return m * slaneyHzPerMel
	}
	return 700 * (math.Pow(10, m/2595) - 1)
}

// checkMelScale resolves a mel scale name ("" is HTK).
func checkMelScale(op, scale string) string {
	switch scale {
	case "", HTK:
		return HTK
	case Slaney:
		return Slaney
	}
	nd.Panicf(op, nd.ErrArgument, "mel scale %q: want %q or %q", scale, HTK, Slaney)
	return ""
}

// MelOpts are the options of a mel filter bank, torchaudio's MelScale
// arguments, with zero values that mean its defaults.
type MelOpts struct {
	// NMels is the number of mel filters (0: 128).
	NMels int
	// SampleRate is the signal's sample rate in Hz (0: 16000).
	SampleRate int
	// FMin and FMax bound the filters in Hz (FMax 0: SampleRate/2,
	// rounded down). 0 ≤ FMin < FMax.
	FMin, FMax float64
	// Norm is "" (none; each triangle peaks at 1) or Slaney (each
	// triangle divided by half its width in Hz).
	Norm string
	// MelScale is the mel scale: "" or HTK, or Slaney.
	MelScale string
}

// resolve checks o and fills in the defaults.
func (o MelOpts) resolve(op string) MelOpts {
	if o.NMels == 0 {
		o.NMels = 128
	}
	if o.SampleRate == 0 {
		o.SampleRate = 16000
	}
	if o.FMax == 0 {
		o.FMax = float64(o.SampleRate / 2)
	}
	if o.NMels < 1 {
		nd.Panicf(op, nd.ErrArgument, "%d mel filters: want at least 1", o.NMels)
	}
	if o.SampleRate < 1 {
		nd.Panicf(op, nd.ErrArgument, "sample rate %d: want at least 1 Hz", o.SampleRate)
	}
	if !(o.FMin >= 0 && o.FMin < o.FMax && !math.IsInf(o.FMax, 0)) {
		nd.Panicf(op, nd.ErrArgument, "frequency bounds FMin %g, FMax %g: want 0 ≤ FMin < FMax < ∞", o.FMin, o.FMax)
	}
	if o.Norm != "" && o.Norm != Slaney {
		nd.Panicf(op, nd.ErrArgument, "norm %q: want \"\" or %q", o.Norm, Slaney)
	}
	o.MelScale = checkMelScale(op, o.MelScale)
	return o
}

// MelFilterBank returns the triangular mel filter bank [nFreqs, NMels]
// that maps the nFreqs bins of a one-sided spectrum (0 Hz to
// SampleRate/2, rounded down, evenly spaced) to NMels mel bands
// (torchaudio.functional.melscale_fbanks): column j is a triangle rising
// from the (j)th to the (j+1)th and falling to the (j+2)th of NMels+2
// points evenly spaced on the mel scale from FMin to FMax. Like
// torchaudio's it may hold filters that are zero everywhere when NMels is
// large for nFreqs. Invalid options panic with an *nd.Error.
func MelFilterBank(dev ctx.Context, dt nd.DType, nFreqs int, o MelOpts) *nd.NDArray {
	const op = "audio.MelFilterBank"
	checkFloat(op, dt)
	o = o.resolve(op)
	return fromFloat64s(false, dev, dt, melBank(op, nFreqs, o), nFreqs, o.NMels)
}

// melBank computes the filter bank of MelFilterBank, row-major
// [nFreqs, NMels], for resolved options.
func melBank(op string, nFreqs int, o MelOpts) []float64 {
	if nFreqs < 1 {
		nd.Panicf(op, nd.ErrArgument, "%d frequency bins: want at least 1", nFreqs)
	}
	freqs := linspace(0, float64(o.SampleRate/2), nFreqs)
	mels := linspace(HzToMel(o.FMin, o.MelScale), HzToMel(o.FMax, o.MelScale), o.NMels+2)
	pts := make([]float64, len(mels))
	for i, m := range mels {
		pts[i] = MelToHz(m, o.MelScale)
	}
	fb := triangles(freqs, pts)
	if o.Norm == Slaney {
		for f := range nFreqs {
			for j := range o.NMels {
				fb[f*o.NMels+j] *= 2 / (pts[j+2] - pts[j])
			}
		}
	}
	return fb
}

// triangles returns the triangular filter bank
// (torchaudio.functional._create_triangular_filterbank), row-major
// [len(freqs), len(pts)−2]: filter j rises from 0 at pts[j] to 1 at
// pts[j+1] and falls back to 0 at pts[j+2], sampled at freqs.
func triangles(freqs, pts []float64) []float64 {
	n := len(pts) - 2
	fb := make([]float64, len(freqs)*n)
	for f, hz := range freqs {
		for j := range n {
			down := (hz - pts[j]) / (pts[j+1] - pts[j])
			up := (pts[j+2] - hz) / (pts[j+2] - pts[j+1])
			fb[f*n+j] = max(0, min(down, up))
		}
	}
	return fb
}

// linspace returns n points evenly spaced from start to stop, computed as
// torch.linspace computes them (from the nearer end), so that the end
// points are exact.
func linspace(start, stop float64, n int) []float64 {
	v := make([]float64, n)
	if n == 1 {
		v[0] = start
		return v
	}
	step := (stop - start) / float64(n-1)
	for i := range v {
		if i < n/2 {
			v[i] = start + float64(i)*step
		} else {
			v[i] = stop - float64(n-1-i)*step
		}
	}
	return v
}

// DCTNorm is the normalisation of DCTMatrix, torchaudio's norm argument
// of create_dct.
type DCTNorm string

// The DCT normalisations. The zero DCTNorm ("") is DCTOrtho.
const (
	// DCTOrtho scales the DCT-II to an orthonormal transform ("ortho",
	// the default of torchaudio's MFCC).
	DCTOrtho DCTNorm = "ortho"
	// DCTNone is the unnormalised DCT-II, 2·Σ x[n]·cos(πk(n+½)/N) (None).
	DCTNone DCTNorm = "none"
)

// DCTMatrix returns the DCT-II matrix [nMels, nMFCC] that, multiplied on
// the right of rows of nMels values, gives their first nMFCC coefficients
// (torchaudio.functional.create_dct): entry (n, k) is cos(πk(n+½)/nMels),
// times 2 with DCTNone; with DCTOrtho ("" too) times √(2/nMels), and
// column 0 further by 1/√2.
func DCTMatrix(dev ctx.Context, dt nd.DType, nMFCC, nMels int, norm DCTNorm) *nd.NDArray {
	const op = "audio.DCTMatrix"
	checkFloat(op, dt)
	return fromFloat64s(false, dev, dt, dctValues(op, nMFCC, nMels, norm), nMels, nMFCC)
}

// dctValues computes DCTMatrix's entries, row-major [nMels, nMFCC].
func dctValues(op string, nMFCC, nMels int, norm DCTNorm) []float64 {
	if nMFCC < 1 || nMels < 1 {
		nd.Panicf(op, nd.ErrArgument, "%d coefficients of %d mel bands: want at least 1 of each", nMFCC, nMels)
	}
	if norm != "" && norm != DCTOrtho && norm != DCTNone {
		nd.Panicf(op, nd.ErrArgument, "DCT norm %q: want %q or %q", string(norm), DCTOrtho, DCTNone)
	}
	v := make([]float64, nMels*nMFCC)
	for n := range nMels {
		for k := range nMFCC {
			c := math.Cos(math.Pi / float64(nMels) * (float64(n) + 0.5) * float64(k))
			if norm == DCTNone {
				c *= 2
			} else {
				if k == 0 {
					c /= math.Sqrt2
				}
				c *= math.Sqrt(2 / float64(nMels))
			}
			v[n*nMFCC+k] = c
		}
	}
	return v
}
