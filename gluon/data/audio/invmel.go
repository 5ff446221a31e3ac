package audio

import (
	"math"
	"math/rand/v2"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// SGDOpts are the arguments of the SGD that InverseMelScale runs,
// torch.optim.SGD's (torchaudio's sgdargs).
type SGDOpts struct {
	// LR is the learning rate, > 0.
	LR float64
	// Momentum is the momentum factor, ≥ 0 (0: none).
	Momentum float64
	// Dampening damps the momentum.
	Dampening float64
	// WeightDecay is the L2 penalty, ≥ 0.
	WeightDecay float64
	// Nesterov uses Nesterov momentum (a momentum > 0 and no dampening).
	Nesterov bool
}

// InverseMelScaleOpts are the options of InverseMelScale, torchaudio's
// arguments with zero values that mean its defaults.
type InverseMelScaleOpts struct {
	// Mel are the filter bank's options, MelScale's.
	Mel MelOpts
	// MaxIter is the most SGD steps taken (0: 100000).
	MaxIter int
	// ToleranceLoss stops the SGD once the loss is below it (0: 10⁻⁵;
	// negative: never, as torchaudio's 0).
	ToleranceLoss float64
	// ToleranceChange stops it once the loss changes by less than it
	// from one step to the next (0: 10⁻⁸; negative: never).
	ToleranceChange float64
	// SGD are the optimizer's arguments (nil: learning rate 0.1,
	// momentum 0.9, torchaudio's default sgdargs; given, as torchaudio's
	// sgdargs, they replace those, so that a Momentum left 0 is none).
	SGD *SGDOpts
}

// InverseMelScale is torchaudio 0.13's InverseMelScale as a Block: it
// estimates the linear spectrograms [..., F, T] (F = nStft bins) whose
// mel spectrograms, by MelScale's filter bank, are mel [..., NMels, T],
// by torchaudio's SGD on the spectrogram: from a uniform random
// spectrogram in [0, 1), it minimises the squared error summed over the
// mel bands and averaged over the frames (and the leading axes), with
// SGD's update and momentum, clamping the estimate to ≥ 0 after each
// step, until the loss is below ToleranceLoss, changes by less than
// ToleranceChange, or MaxIter steps. Many spectrograms fit when
// F > NMels; the one found depends on the random start.
//
// The SGD is torch.optim.SGD's update, computed on the host in float64
// whatever the dtype (torchaudio runs it in the input's dtype), with the
// filter bank's non-zero entries only (a bin meets at most two
// triangles), so its steps are cheap. Given torchaudio's starting point
// it reproduces torchaudio's result to float64 rounding (the goldens).
// Forward draws the start from the input's session generator (nd.Seed
// makes it reproducible), Apply from a given generator (the form
// Transform uses). As torchaudio's, the result has no gradient.
type InverseMelScale struct {
	gluon.BlockMeta
	o     InverseMelScaleOpts
	sgd   SGDOpts
	nStft int
	// The filter bank's non-zero entries by bin (byBin[f]: the bands
	// and weights) and by band (byMel[m]: the bins and weights, in order).
	byBin, byMel [][]fbEntry
}

// fbEntry is a non-zero entry of a filter bank: the other index and the
// weight.
type fbEntry struct {
	i int
	w float64
}

// NewInverseMelScale returns an InverseMelScale for spectrograms of
// nStft bins (NFFT/2+1). Invalid options panic with an *nd.Error.
func NewInverseMelScale(nStft int, o InverseMelScaleOpts) *InverseMelScale {
	const op = "audio.NewInverseMelScale"
	o.Mel = o.Mel.resolve(op)
	if o.MaxIter == 0 {
		o.MaxIter = 100000
	}
	if o.ToleranceLoss == 0 {
		o.ToleranceLoss = 1e-5
	}
	if o.ToleranceChange == 0 {
		o.ToleranceChange = 1e-8
	}
	sgd := SGDOpts{LR: 0.1, Momentum: 0.9}
	if o.SGD != nil {
		sgd = *o.SGD
		o.SGD = &sgd
	}
	switch {
	case o.MaxIter < 0:
		nd.Panicf(op, nd.ErrArgument, "negative maximum of iterations %d", o.MaxIter)
	case math.IsNaN(o.ToleranceLoss) || math.IsNaN(o.ToleranceChange):
		nd.Panicf(op, nd.ErrArgument, "NaN tolerance")
	case !(sgd.LR > 0) || math.IsInf(sgd.LR, 0):
		nd.Panicf(op, nd.ErrArgument, "learning rate %g: want a finite rate > 0", sgd.LR)
	case !(sgd.Momentum >= 0) || math.IsInf(sgd.Momentum, 0):
		nd.Panicf(op, nd.ErrArgument, "momentum %g: want a finite momentum ≥ 0", sgd.Momentum)
	case !(sgd.WeightDecay >= 0) || math.IsInf(sgd.WeightDecay, 0):
		nd.Panicf(op, nd.ErrArgument, "weight decay %g: want a finite decay ≥ 0", sgd.WeightDecay)
	case math.IsNaN(sgd.Dampening) || math.IsInf(sgd.Dampening, 0):
		nd.Panicf(op, nd.ErrArgument, "dampening %g: want a finite dampening", sgd.Dampening)
	case sgd.Nesterov && (sgd.Momentum <= 0 || sgd.Dampening != 0):
		nd.Panicf(op, nd.ErrArgument, "Nesterov momentum needs a momentum > 0 and no dampening")
	}
	fb := melBank(op, nStft, o.Mel)
	m := &InverseMelScale{BlockMeta: gluon.NewBlockMeta("inversemelscale"), o: o, sgd: sgd, nStft: nStft,
		byBin: make([][]fbEntry, nStft), byMel: make([][]fbEntry, o.Mel.NMels)}
	for f := range nStft {
		for j := range o.Mel.NMels {
			if w := fb[f*o.Mel.NMels+j]; w != 0 {
				m.byBin[f] = append(m.byBin[f], fbEntry{j, w})
				m.byMel[j] = append(m.byMel[j], fbEntry{f, w})
			}
		}
	}
	return m
}

// EagerOnly makes gluon.Hybridize run a network holding an
// InverseMelScale eagerly: it solves on the host.
func (m *InverseMelScale) EagerOnly() string { return "it solves on the host" }

// Opts returns the InverseMelScale's options, defaults filled in (SGD
// stays nil for torchaudio's default arguments).
func (m *InverseMelScale) Opts() InverseMelScaleOpts { return m.o }

// Forward returns the spectrograms [..., F, T] of mel [..., NMels, T],
// starting from draws of mel's session generator.
func (m *InverseMelScale) Forward(mel *nd.NDArray) *nd.NDArray {
	const op = "audio.InverseMelScale"
	n := m.check(op, mel)
	return m.invert(mel, func() []float64 {
		u := mel.Session().RandomUniform(mel.Context(), nd.Float64, 0, 1, n)
		defer u.Release()
		return u.Float64s()
	})
}

// Apply returns the spectrograms [..., F, T] of mel [..., NMels, T],
// starting from draws of rng (row-major [B, T, F] for B spectrograms,
// as torchaudio's torch.rand), which must not be nil.
func (m *InverseMelScale) Apply(mel *nd.NDArray, rng *rand.Rand) *nd.NDArray {
	const op = "audio.InverseMelScale.Apply"
	n := m.check(op, mel)
	if rng == nil {
		nd.Panicf(op, nd.ErrArgument, "nil random generator")
	}
	return m.invert(mel, func() []float64 {
		u := make([]float64, n)
		for i := range u {
			u[i] = rng.Float64()
		}
		return u
	})
}

// check fails unless mel is a mel spectrogram of the Block's bands, and
// returns the number of values of the spectrogram sought.
func (m *InverseMelScale) check(op string, mel *nd.NDArray) int {
	checkSignal(op, mel, 2)
	s := mel.Shape()
	if b := s[len(s)-2]; b != m.o.Mel.NMels {
		nd.Panicf(op, nd.ErrShape, "mel spectrogram of shape %v has %d mel bands (axis −2), the filter bank %d", s, b, m.o.Mel.NMels)
	}
	return mel.Size() / m.o.Mel.NMels * m.nStft
}

// invert solves from the starting point init returns and returns the
// spectrograms, in mel's dtype, session and context.
func (m *InverseMelScale) invert(mel *nd.NDArray, init func() []float64) *nd.NDArray {
	s := mel.Shape()
	r := len(s)
	nm, t, f := s[r-2], s[r-1], m.nStft
	out := append(append([]int(nil), s[:r-2]...), f, t)
	if mel.Size() == 0 {
		return mel.Session().Zeros(mel.Context(), mel.DType(), out...)
	}
	mv := mel.Float64s()
	b := len(mv) / (nm * t)
	target := make([]float64, len(mv)) // [B·T, NMels]
	for k := range b {
		for j := range nm {
			for i := range t {
				target[(k*t+i)*nm+j] = mv[(k*nm+j)*t+i]
			}
		}
	}
	spec, _ := m.sgdSolve(target, init())
	res := make([]float64, b*f*t) // [B, F, T]
	for k := range b {
		for i := range t {
			for q := range f {
				res[(k*f+q)*t+i] = max(spec[(k*t+i)*f+q], 0)
			}
		}
	}
	a := mel.Session().FromSlice(mel.Context(), res, out...)
	y := a.AsType(mel.DType())
	if y != a {
		a.Release()
	}
	return y
}

// sgdSolve runs torchaudio's loop on the rows target [N, NMels] from the
// estimate x [N, F] (updated in place) and returns it with the number of
// steps taken. Each step computes the loss Σ(target − x·fb)²/N and its
// gradient as torch's autograd does (−(1/N)·2·diff times fbᵀ), takes
// torch.optim.SGD's step (products and sums fused where torch's
// vectorised kernels fuse them) and clamps x to ≥ 0; then it stops on
// the tolerances.
func (m *InverseMelScale) sgdSolve(target, x []float64) ([]float64, int) {
	nm, f := m.o.Mel.NMels, m.nStft
	n := len(target) / nm
	o := m.sgd
	rn := 1 / float64(n)
	diff := make([]float64, nm)
	grad := make([]float64, len(x))
	var buf []float64
	loss := math.Inf(1)
	steps := 0
	for steps < m.o.MaxIter {
		steps++
		total := 0.0
		for row := range n {
			xr, tr, gr := x[row*f:(row+1)*f], target[row*nm:(row+1)*nm], grad[row*f:(row+1)*f]
			sq := 0.0
			for j, col := range m.byMel {
				p := 0.0
				for _, e := range col {
					p = math.FMA(xr[e.i], e.w, p)
				}
				d := tr[j] - p
				sq += d * d
				diff[j] = -(rn * (2 * d)) // the gradient of x·fb
			}
			total += sq
			for q, bins := range m.byBin {
				g := 0.0
				for _, e := range bins {
					g = math.FMA(diff[e.i], e.w, g)
				}
				gr[q] = g
			}
		}
		newLoss := total / float64(n)
		if o.WeightDecay != 0 {
			for i := range grad {
				grad[i] = math.FMA(x[i], o.WeightDecay, grad[i])
			}
		}
		d := grad
		if o.Momentum != 0 {
			if buf == nil {
				buf = append([]float64(nil), grad...)
			} else {
				for i := range buf {
					buf[i] = math.FMA(grad[i], 1-o.Dampening, buf[i]*o.Momentum)
				}
			}
			if o.Nesterov {
				for i := range grad {
					grad[i] = math.FMA(buf[i], o.Momentum, grad[i])
				}
			} else {
				d = buf
			}
		}
		for i := range x {
			x[i] = max(math.FMA(d[i], -o.LR, x[i]), 0)
		}
		if newLoss < m.o.ToleranceLoss || math.Abs(loss-newLoss) < m.o.ToleranceChange {
			break
		}
		loss = newLoss
	}
	return x, steps
}
