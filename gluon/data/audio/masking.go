package audio

import (
	"math/rand/v2"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// MaskOpts are the options of FrequencyMasking and TimeMasking.
type MaskOpts struct {
	// IID draws a mask for every example and channel of a 4-D input
	// [B, C, F, T] (iid_masks); otherwise, and for other ranks, one mask
	// covers the whole input.
	IID bool
	// P caps a mask's width at ⌊P·n⌋ for an axis of length n, P in
	// [0, 1] (0: 1, no cap; torchaudio's TimeMasking p, which its
	// FrequencyMasking lacks). A cap under 1 masks nothing.
	P float64
	// ZeroP makes P 0, which masks nothing (torchaudio's p=0, which P's
	// 0 cannot say); P must be 0.
	ZeroP bool
	// Value fills the masked bins (torchaudio's mask_value, 0 by
	// default).
	Value float64
}

// Masking is SpecAugment's frequency or time masking, torchaudio's
// FrequencyMasking and TimeMasking: it sets a band of consecutive
// frequency bins (axis −2) or frames (axis −1) of a spectrogram
// [..., F, T] to Value. The band's width is ⌊u·W⌋ for the Block's
// maximum width W and a uniform draw u, and its start v·(n − u·W)
// truncated towards zero for the axis's length n and another draw v, as
// torchaudio draws them. W may exceed n (TimeMasking(80) on a short
// utterance): a band that starts before the axis or runs past its end is
// cut to it, as torchaudio cuts it.
//
// As a Block (Forward) it masks in training mode only, like Dropout, and
// draws from the input's session generator (nd.Seed makes it
// reproducible); in predict mode it returns its input. torchaudio's
// modules mask in both modes. Apply masks in any mode with draws from a
// given generator, the form data pipelines use (Transform calls it).
// The gradient passes where the input is not masked.
type Masking struct {
	gluon.BlockMeta
	maxWidth int
	axis     int // −2 (frequency) or −1 (time)
	p        float64
	o        MaskOpts
}

// NewFrequencyMasking returns the masking of up to maxWidth − 1
// consecutive frequency bins (torchaudio's FrequencyMasking of
// freq_mask_param maxWidth). Invalid options panic with an *nd.Error.
func NewFrequencyMasking(maxWidth int, o MaskOpts) *Masking {
	return newMasking("audio.NewFrequencyMasking", "frequencymasking", maxWidth, -2, o)
}

// NewTimeMasking returns the masking of up to maxWidth − 1 consecutive
// frames (torchaudio's TimeMasking of time_mask_param maxWidth).
func NewTimeMasking(maxWidth int, o MaskOpts) *Masking {
	return newMasking("audio.NewTimeMasking", "timemasking", maxWidth, -1, o)
}

func newMasking(op, kind string, maxWidth, axis int, o MaskOpts) *Masking {
	if maxWidth < 0 {
		nd.Panicf(op, nd.ErrArgument, "negative maximum width %d", maxWidth)
	}
	if o.ZeroP && o.P != 0 {
		nd.Panicf(op, nd.ErrArgument, "proportion p %g with ZeroP: give one of them", o.P)
	}
	p := o.P
	if p == 0 && !o.ZeroP {
		p = 1
	}
	if !(p >= 0 && p <= 1) {
		nd.Panicf(op, nd.ErrArgument, "proportion p %g: want 0 ≤ p ≤ 1", p)
	}
	return &Masking{BlockMeta: gluon.NewBlockMeta(kind), maxWidth: maxWidth, axis: axis, p: p, o: o}
}

// EagerOnly makes gluon.Hybridize run a network holding a Masking
// eagerly: the masks are drawn on the host.
func (m *Masking) EagerOnly() string { return "its masks are drawn on the host" }

// Forward masks x [..., F, T] in training mode and returns it unchanged
// in predict mode.
func (m *Masking) Forward(x *nd.NDArray) *nd.NDArray {
	checkSignal("audio.Masking", x, 2)
	if !x.Session().IsTraining() {
		return x
	}
	return m.mask(x, func(n int) []float64 {
		return x.Session().RandomUniform(x.Context(), nd.Float64, 0, 1, n).Float64s()
	})
}

// Apply masks x [..., F, T] whatever the mode, drawing from rng, which
// must not be nil.
func (m *Masking) Apply(x *nd.NDArray, rng *rand.Rand) *nd.NDArray {
	const op = "audio.Masking.Apply"
	checkSignal(op, x, 2)
	if rng == nil {
		nd.Panicf(op, nd.ErrArgument, "nil random generator")
	}
	return m.mask(x, func(n int) []float64 {
		u := make([]float64, n)
		for i := range u {
			u[i] = rng.Float64()
		}
		return u
	})
}

// mask masks x with the uniform draws that draw returns: the widths of
// all masks, then their starts. A mask wider than the axis can start
// before it (the start ⌊v·(n − u·W)⌋ is negative when u·W > n) or end
// after it; as torchaudio's mask (arange(n) ≥ start and < end), it is
// cut to the axis.
func (m *Masking) mask(x *nd.NDArray, draw func(n int) []float64) *nd.NDArray {
	s := x.Shape()
	r := len(s)
	size := s[r+m.axis]
	width := m.maxWidth
	if m.p != 1 {
		width = min(width, int(float64(size)*m.p))
	}
	if width < 1 {
		return x
	}
	masks := 1
	shape := make([]int, r) // the mask's shape, broadcast to x's
	for i := range shape {
		shape[i] = 1
	}
	if m.o.IID && r == 4 {
		masks = s[0] * s[1]
		shape[0], shape[1] = s[0], s[1]
	}
	shape[r+m.axis] = size
	u := draw(2 * masks)
	bits := make([]bool, masks*size)
	for k := range masks {
		w := u[k] * float64(width)
		start := int(u[masks+k] * (float64(size) - w)) // towards zero, as torch's long()
		end := start + int(w)
		for i := max(start, 0); i < min(end, size); i++ {
			bits[k*size+i] = true
		}
	}
	mask := x.Session().FromSlice(x.Context(), bits, shape...)
	return nd.MaskedFill(x, mask, m.o.Value)
}
