package audio

import (
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// The resampling filters, torchaudio's resampling_method.
const (
	// SincHann is a sinc filter tapered by a Hann window (the default;
	// torchaudio 0.13 names it "sinc_interpolation", later versions
	// "sinc_interp_hann", and both names are taken).
	SincHann = "sinc_interp_hann"
	// SincKaiser is a sinc filter tapered by a Kaiser window
	// ("kaiser_window" in torchaudio 0.13, "sinc_interp_kaiser" later).
	SincKaiser = "sinc_interp_kaiser"
)

// defaultKaiserBeta is torchaudio's Kaiser shape parameter for
// resampling.
const defaultKaiserBeta = 14.769656459379492

// ResampleOpts are the options of Resample, torchaudio's arguments with
// zero values that mean its defaults.
type ResampleOpts struct {
	// LowpassFilterWidth is the filter's half-width in zero crossings of
	// the sinc (0: 6): wider is sharper and slower.
	LowpassFilterWidth int
	// Rolloff is the filter's cut-off as a fraction of the lower of the
	// two Nyquist frequencies, positive (0: 0.99). Above 1, as torchaudio
	// allows, the filter lets some aliasing through.
	Rolloff float64
	// Method is the filter: "" or SincHann, or SincKaiser.
	Method string
	// Beta is the Kaiser window's shape, in [0, 700) (0:
	// 14.769656459379492, torchaudio's default). SincHann ignores it.
	Beta float64
	// ZeroBeta makes the Kaiser window's shape 0, a rectangular window
	// (torchaudio's beta=0, which Beta's 0 cannot say); Beta must be 0.
	ZeroBeta bool
}

// Resample is torchaudio's Resample as a Block: it converts signals
// [..., L] sampled at orig Hz to new Hz, [..., ⌈L·new/orig⌉], by
// band-limited (windowed sinc) interpolation. With g = gcd(orig, new),
// o = orig/g and n = new/g, output sample k·n + j (j < n) is the
// correlation of the zero-padded signal, from sample k·o, with the j-th
// of n filters, so one strided 1-D convolution (nd.Conv1D) computes
// every phase; its output matches torchaudio's to float rounding. It is
// differentiable and has no parameters; the filters are a constant made
// once per context and dtype, computed in float64 (torchaudio's Resample
// with dtype float64).
type Resample struct {
	gluon.BlockMeta
	orig, new int // divided by their gcd
	width     int // the filter's reach in input samples on each side
	o         ResampleOpts
	kernel    *consts // [n, 1, 2·width + o]
}

// NewResample returns a Resample from origFreq to newFreq Hz, both
// positive. Invalid options panic with an *nd.Error.
func NewResample(origFreq, newFreq int, o ResampleOpts) *Resample {
	r := newResample("audio.NewResample", origFreq, newFreq, o)
	r.makeKernel()
	return r
}

// newResample returns a Resample, its options checked and resolved, but
// without its filters (makeKernel).
func newResample(op string, origFreq, newFreq int, o ResampleOpts) *Resample {
	if origFreq < 1 || newFreq < 1 {
		nd.Panicf(op, nd.ErrArgument, "frequencies %d → %d Hz: both must be positive", origFreq, newFreq)
	}
	if o.LowpassFilterWidth == 0 {
		o.LowpassFilterWidth = 6
	}
	if o.Rolloff == 0 {
		o.Rolloff = 0.99
	}
	if o.ZeroBeta && o.Beta != 0 {
		nd.Panicf(op, nd.ErrArgument, "Kaiser beta %g with ZeroBeta: give one of them", o.Beta)
	}
	switch o.Method {
	case "", SincHann, "sinc_interpolation":
		o.Method = SincHann
	case SincKaiser, "kaiser_window":
		o.Method = SincKaiser
		if o.Beta == 0 && !o.ZeroBeta {
			o.Beta = defaultKaiserBeta
		}
	default:
		nd.Panicf(op, nd.ErrArgument, "method %q: want %q or %q", o.Method, SincHann, SincKaiser)
	}
	if o.LowpassFilterWidth < 1 {
		nd.Panicf(op, nd.ErrArgument, "low-pass filter width %d: want at least 1", o.LowpassFilterWidth)
	}
	if !(o.Rolloff > 0 && o.Rolloff <= math.MaxFloat64) {
		nd.Panicf(op, nd.ErrArgument, "rolloff %g: want a finite rolloff > 0", o.Rolloff)
	}
	if !(o.Beta >= 0 && o.Beta < 700) {
		nd.Panicf(op, nd.ErrArgument, "Kaiser beta %g: want 0 ≤ beta < 700", o.Beta)
	}
	r := &Resample{BlockMeta: gluon.NewBlockMeta("resample"), o: o}
	g := gcd(origFreq, newFreq)
	r.orig, r.new = origFreq/g, newFreq/g
	if r.orig != r.new {
		base := float64(min(r.orig, r.new)) * o.Rolloff
		taps := 2*math.Ceil(float64(o.LowpassFilterWidth)*float64(r.orig)/base) + float64(r.orig)
		if taps*float64(r.new) > 1<<26 {
			nd.Panicf(op, nd.ErrArgument, "frequencies %d → %d Hz reduce to %d → %d: the %d filters of %g taps would be too large (choose rates with a larger common divisor)",
				origFreq, newFreq, r.orig, r.new, r.new, taps)
		}
	}
	return r
}

// makeKernel computes r's filters, unless its two frequencies are equal.
func (r *Resample) makeKernel() {
	if r.orig != r.new {
		var k []float64
		k, r.width = r.filters()
		r.kernel = newConsts(k, r.new, 1, len(k)/r.new)
	}
}

// gcd is the greatest common divisor of two positive numbers.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// filters returns the n filters of 2·width + o taps, row-major, and
// width: filter j holds the windowed sinc, cut off at
// base = min(o, n)·Rolloff cycles per o input samples, centred between
// the input samples at the output time j/n.
func (r *Resample) filters() ([]float64, int) {
	lpw := float64(r.o.LowpassFilterWidth)
	orig, newf := float64(r.orig), float64(r.new)
	base := min(orig, newf) * r.o.Rolloff
	width := int(math.Ceil(lpw * orig / base))
	taps := 2*width + r.orig
	k := make([]float64, r.new*taps)
	scale := base / orig
	i0beta := besselI0(r.o.Beta)
	for j := range r.new {
		for i := range taps {
			t := (float64(-j)/newf + float64(i-width)/orig) * base
			t = min(max(t, -lpw), lpw)
			var w float64
			if r.o.Method == SincKaiser {
				q := t / lpw
				w = besselI0(r.o.Beta*math.Sqrt(max(0, 1-q*q))) / i0beta
			} else {
				c := math.Cos(t * math.Pi / lpw / 2)
				w = c * c
			}
			t *= math.Pi
			s := 1.0
			if t != 0 {
				s = math.Sin(t) / t
			}
			k[j*taps+i] = s * (w * scale)
		}
	}
	return k, width
}

// Opts returns the Resample's options, defaults filled in.
func (r *Resample) Opts() ResampleOpts { return r.o }

// OutputLength returns the length of the resampled signal of n samples,
// ⌈n·new/orig⌉.
func (r *Resample) OutputLength(n int) int {
	return int((int64(n)*int64(r.new) + int64(r.orig) - 1) / int64(r.orig))
}

// Forward returns x [..., L] resampled, [..., OutputLength(L)]; x itself
// when the two frequencies are equal.
func (r *Resample) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "audio.Resample"
	checkSignal(op, x, 1)
	if r.orig == r.new {
		return x
	}
	s := x.Shape()
	l := s[len(s)-1]
	lead := s[:len(s)-1]
	b := 1
	for _, d := range lead {
		b *= d
	}
	out := r.OutputLength(l)
	if b == 0 || l == 0 {
		return nd.Zeros(x.Context(), x.DType(), append(lead, out)...)
	}
	w := nd.Pad(nd.Reshape(x, b, 1, l), [][2]int{{0, 0}, {0, 0}, {r.width, r.width + r.orig}}, nd.PadConstant, 0)
	y := nd.Conv1D(w, r.kernel.get(x.Context(), x.DType()), nil, nd.Conv1DOpts{Stride: r.orig}) // [b, n, T]
	// r holds the kernel until the product has it: the constants' cache
	// releases no array a reachable Block holds (consts.go).
	runtime.KeepAlive(r)
	y = nd.Reshape(nd.SwapAxes(y, 1, 2), b, -1)
	y = nd.SliceAxis(y, 0, out, 1)
	return nd.Reshape(y, append(lead, out)...)
}

// ResampleArray returns x [..., L], sampled at origFreq Hz, resampled to
// newFreq Hz, [..., ⌈L·newFreq/origFreq⌉]: torchaudio.functional.resample,
// the function form of Resample (NewResample(origFreq, newFreq,
// o).Forward(x), with the same arguments and panics). Its filters are
// made once for the calls of the same rates and options: the Blocks of
// the last few such calls are kept (those of filters up to 8 MiB), and
// their device copies come from the constants' cache (SetConstCacheLimit),
// so that resampling file after file neither recomputes the filters nor
// grows memory.
func ResampleArray(x *nd.NDArray, origFreq, newFreq int, o ResampleOpts) *nd.NDArray {
	r := recentResample(origFreq, newFreq, o)
	y := r.Forward(x)
	runtime.KeepAlive(r)
	return y
}

// resampleKey names a Resample by its reduced rates and resolved options.
type resampleKey struct {
	orig, new, width int
	rolloff, beta    float64
	method           string
}

// recentResamples are the Blocks of ResampleArray's last calls, the most
// recent last.
var recentResamples struct {
	mu     sync.Mutex
	blocks []*Resample
}

// Bounds of recentResamples: how many Blocks it keeps, and the largest
// filter it keeps, in float64 values.
const (
	recentResampleBlocks = 4
	recentResampleValues = 1 << 20
)

// recentResample returns a Resample from origFreq to newFreq Hz with
// options o: a recent one of the same rates and options, or a new one.
func recentResample(origFreq, newFreq int, o ResampleOpts) *Resample {
	r := newResample("audio.ResampleArray", origFreq, newFreq, o)
	if r.orig == r.new {
		return r
	}
	key := r.key()
	rc := &recentResamples
	find := func() *Resample {
		for i, b := range rc.blocks {
			if b.key() == key {
				rc.blocks = append(slices.Delete(rc.blocks, i, i+1), b)
				return b
			}
		}
		return nil
	}
	rc.mu.Lock()
	b := find()
	rc.mu.Unlock()
	if b != nil {
		return b
	}
	r.makeKernel()
	if len(r.kernel.values) > recentResampleValues {
		return r
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if b := find(); b != nil { // made meanwhile by another call
		return b
	}
	if len(rc.blocks) == recentResampleBlocks {
		rc.blocks = slices.Delete(rc.blocks, 0, 1)
	}
	rc.blocks = append(rc.blocks, r)
	return r
}

// key returns r's resampleKey.
func (r *Resample) key() resampleKey {
	return resampleKey{r.orig, r.new, r.o.LowpassFilterWidth, r.o.Rolloff, r.o.Beta, r.o.Method}
}
