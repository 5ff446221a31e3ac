package audio

import (
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
)

// maxStretchFrames bounds the frames PhaseVocoder makes, so that a tiny
// rate fails with an error rather than exhausting memory.
const maxStretchFrames = 1 << 30

// checkRate fails unless rate is a finite positive speed-up.
func checkRate(op string, rate float64) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		nd.Panicf(op, nd.ErrArgument, "rate %g: want a finite rate > 0", rate)
	}
}

// torchArange returns torch.arange(0, n·step, step)'s n values as torch
// 1.13's CPU kernel computes them with AVX2 (the common build): in
// blocks of two vectors of 4 float64 (8 float32) values, value i of a
// vector as fma(k, step, step·(i−k)) for its lane k, the values after
// the last whole block as step·i; rounded to float32 when f32. Time
// steps that fall within a rounding of a whole frame pick their frames
// as torchaudio's then.
func torchArange(n int, step float64, f32 bool) []float64 {
	lanes := 4
	if f32 {
		lanes = 8
	}
	vec := n / (2 * lanes) * (2 * lanes)
	v := make([]float64, n)
	for i := range v {
		t := step * float64(i)
		if i < vec {
			k := i % lanes
			base := step * float64(i-k)
			if f32 {
				base = float64(float32(base))
			}
			t = math.FMA(float64(k), step, base)
		}
		if f32 {
			t = float64(float32(t))
		}
		v[i] = t
	}
	return v
}

// PhaseVocoder speeds the complex spectrograms z [..., F, T, 2] up by
// rate without changing their pitch (torchaudio.functional.phase_vocoder):
// the result has ⌈T/rate⌉ frames, frame k interpolating the magnitudes
// of input frames ⌊k·rate⌋ and ⌊k·rate⌋+1 (frames past the end are
// zero) and accumulating their phase differences, each less
// phaseAdvance (the expected advance per hop of each bin, [F, 1]) and
// wrapped to [−π, π], plus phaseAdvance, from the phase of frame 0. A
// rate of 1 returns z. phaseAdvance has z's dtype (torchaudio's
// TimeStretch makes it: linspace(0, π·hop, F)). It is differentiable in
// z, as torchaudio's (the wrapping's rounding has no gradient, and the
// phase of a zero bin has none).
func PhaseVocoder(z *nd.NDArray, rate float64, phaseAdvance *nd.NDArray) *nd.NDArray {
	const op = "audio.PhaseVocoder"
	checkSignal(op, z, 3)
	checkRate(op, rate)
	s := z.Shape()
	r := len(s)
	if s[r-1] != 2 {
		nd.Panicf(op, nd.ErrShape, "needs a complex spectrogram [..., F, T, 2], got shape %v", s)
	}
	f, frames := s[r-3], s[r-2]
	if phaseAdvance == nil {
		nd.Panicf(op, nd.ErrArgument, "nil phase advance")
	}
	if ps := phaseAdvance.Shape(); len(ps) != 2 || ps[0] != f || ps[1] != 1 {
		nd.Panicf(op, nd.ErrShape, "phase advance of shape %v for %d frequency bins: want [%d 1]", ps, f, f)
	}
	if phaseAdvance.DType() != z.DType() {
		nd.Panicf(op, nd.ErrDType, "phase advance of %v for a spectrogram of %v", phaseAdvance.DType(), z.DType())
	}
	if frames < 1 {
		nd.Panicf(op, nd.ErrShape, "no frames (shape %v)", s)
	}
	if rate == 1 {
		return z
	}
	// The time steps k·rate as torch.arange makes them, in the dtype,
	// their fractions and the frames either side.
	f32 := z.DType() != nd.Float64
	round := func(v float64) float64 { return v }
	if f32 {
		round = func(v float64) float64 { return float64(float32(v)) }
	}
	out := math.Ceil(float64(frames) / rate)
	if out > maxStretchFrames {
		nd.Panicf(op, nd.ErrArgument, "rate %g would stretch %d frames to %g: want at most %d", rate, frames, out, maxStretchFrames)
	}
	steps := torchArange(int(out), rate, f32)
	n := len(steps)
	alpha := make([]float64, n)
	beta := make([]float64, n)
	idx := make([]int, 2*n)
	for k, t := range steps {
		alpha[k] = t - math.Floor(t) // torch's t % 1.0, exact
		beta[k] = round(1 - alpha[k])
		idx[k] = int(t)
		idx[n+k] = int(round(t + 1))
	}
	sess, dev, dt := z.Session(), z.Context(), z.DType()
	widths := make([][2]int, r)
	widths[r-2] = [2]int{0, 2}
	padded := nd.Pad(z, widths, nd.PadConstant, 0)
	both := nd.Take(padded, sess.FromSlice(dev, idx, 2, n), -2) // [..., F, 2, n, 2]
	z0 := nd.Squeeze(nd.SliceAxis(both, 0, 1, -3), -3)
	z1 := nd.Squeeze(nd.SliceAxis(both, 1, 2, -3), -3)

	phase0 := fft.Angle(nd.SliceAxis(z, 0, 1, -2)) // [..., F, 1]
	phase := nd.Sub(nd.Sub(fft.Angle(z1), fft.Angle(z0)), phaseAdvance)
	turns := nd.Round(nd.DivScalar(phase.Detach(), 2*math.Pi))
	phase = nd.Add(nd.Sub(phase, nd.MulScalar(turns, 2*math.Pi)), phaseAdvance)
	phase = nd.Concat([]*nd.NDArray{phase0, nd.SliceAxis(phase, 0, n-1, -1)}, -1)
	// Accumulated in float64 and rounded once per frame, as PyTorch's CPU
	// cumsum of float32 phases is: long sums do not drift.
	acc := nd.Cumsum(phase.AsType(nd.Float64), -1).AsType(phase.DType())

	a := sess.FromSlice(dev, alpha, n).AsType(dt)
	b := sess.FromSlice(dev, beta, n).AsType(dt)
	mag := nd.Add(nd.Mul(a, fft.Abs(z1)), nd.Mul(b, fft.Abs(z0)))
	return nd.Stack([]*nd.NDArray{nd.Mul(mag, nd.Cos(acc)), nd.Mul(mag, nd.Sin(acc))}, -1)
}

// TimeStretchOpts are the options of TimeStretch, torchaudio's
// arguments with zero values that mean its defaults.
type TimeStretchOpts struct {
	// NFreq is the number of frequency bins of the spectrograms, NFFT/2+1
	// (0: 201).
	NFreq int
	// HopLength is the STFT's hop (0: NFFT/2 = NFreq − 1).
	HopLength int
	// FixedRate is the speed-up Forward applies (0: none; Forward then
	// fails, and Stretch takes the rate).
	FixedRate float64
}

// TimeStretch is torchaudio's TimeStretch as a Block: PhaseVocoder
// with the phase advance of an STFT of NFreq bins and hop HopLength,
// linspace(0, π·HopLength, NFreq). Forward stretches by FixedRate and
// Stretch by a rate given per call (torchaudio's overriding_rate). Its
// input is a complex spectrogram [..., NFreq, T, 2] (Spectrogram with
// Complex); its output has ⌈T/rate⌉ frames. It is differentiable and has
// no parameters.
type TimeStretch struct {
	gluon.BlockMeta
	o       TimeStretchOpts
	advance *consts
}

// NewTimeStretch returns a TimeStretch with the options o. Invalid
// options panic with an *nd.Error.
func NewTimeStretch(o TimeStretchOpts) *TimeStretch {
	const op = "audio.NewTimeStretch"
	if o.NFreq == 0 {
		o.NFreq = 201
	}
	if o.NFreq < 1 {
		nd.Panicf(op, nd.ErrArgument, "%d frequency bins: want at least 1", o.NFreq)
	}
	if o.HopLength == 0 {
		o.HopLength = o.NFreq - 1 // (NFreq−1)·2 / 2
	}
	if o.HopLength < 0 {
		nd.Panicf(op, nd.ErrArgument, "negative hop length %d", o.HopLength)
	}
	if o.FixedRate != 0 {
		checkRate(op, o.FixedRate)
	}
	adv := linspace(0, math.Pi*float64(o.HopLength), o.NFreq)
	return &TimeStretch{BlockMeta: gluon.NewBlockMeta("timestretch"), o: o, advance: newConsts(adv, o.NFreq, 1)}
}

// Opts returns the TimeStretch's options, defaults filled in.
func (s *TimeStretch) Opts() TimeStretchOpts { return s.o }

// Forward stretches z [..., NFreq, T, 2] by FixedRate; without one it
// panics with an *nd.Error (use Stretch).
func (s *TimeStretch) Forward(z *nd.NDArray) *nd.NDArray {
	if s.o.FixedRate == 0 {
		nd.Panicf("audio.TimeStretch", nd.ErrArgument, "no FixedRate: pass the rate to Stretch")
	}
	return s.Stretch(z, s.o.FixedRate)
}

// Stretch stretches z [..., NFreq, T, 2] by rate (> 1 speeds up,
// shortening it; < 1 slows down).
func (s *TimeStretch) Stretch(z *nd.NDArray, rate float64) *nd.NDArray {
	const op = "audio.TimeStretch"
	checkSignal(op, z, 3)
	if sh := z.Shape(); sh[len(sh)-3] != s.o.NFreq {
		nd.Panicf(op, nd.ErrShape, "spectrogram of shape %v has %d frequency bins (axis −3), the TimeStretch %d", sh, sh[len(sh)-3], s.o.NFreq)
	}
	return PhaseVocoder(z, rate, s.advance.get(z.Context(), z.DType()))
}
