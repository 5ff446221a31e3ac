// Package probability holds probability distributions over nd arrays, as
// MXNet Gluon's gluon.probability and PyTorch's torch.distributions: their
// samples (reparameterised, with gradients, where the distribution allows),
// log-densities, entropies and KL divergences, built from differentiable nd
// ops, so gradients reach the parameters on every backend — the pieces of
// a VAE's loss or a policy gradient.
//
// Parameters broadcast against each other and against the values given to
// LogProb; a distribution's batch shape is its parameters' broadcast shape
// (MultivariateNormal: without the event axis). Constructors only keep
// their parameters: every method computes from them, so a distribution
// made outside autograd.Record still gives its parameters gradients inside
// it. Samples draw from the
// session generator of the parameters' context (nd.Seed makes them
// repeatable).
package probability

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// Normal is the normal distribution N(Loc, Scale²) (torch's Normal).
type Normal struct {
	Loc, Scale *nd.NDArray
}

// NewNormal returns N(loc, scale²); loc and scale must share a dtype and
// context.
func NewNormal(loc, scale *nd.NDArray) Normal {
	check("probability.Normal", loc, scale)
	return Normal{Loc: loc, Scale: scale}
}

// Sample draws values of the batch shape, not differentiable.
func (d Normal) Sample() *nd.NDArray { return d.RSample().Detach() }

// RSample draws Loc + Scale·ε with ε ~ N(0, 1) (the reparameterisation
// trick): its gradient reaches Loc and Scale.
func (d Normal) RSample() *nd.NDArray {
	shape := batchShape(d.Loc, d.Scale)
	eps := d.Loc.Session().RandomNormal(d.Loc.Context(), d.Loc.DType(), 0, 1, shape...)
	return nd.Add(d.Loc, nd.Mul(d.Scale, eps))
}

// LogProb returns log p(x) = −(x−μ)²/(2σ²) − log σ − ½ log 2π.
func (d Normal) LogProb(x *nd.NDArray) *nd.NDArray {
	z := nd.Div(nd.Sub(x, d.Loc), d.Scale)
	return nd.AddScalar(nd.Sub(nd.MulScalar(nd.Square(z), -0.5), nd.Log(d.Scale)), -0.5*math.Log(2*math.Pi))
}

// CDF returns P(X ≤ x) = ½(1 + erf((x−μ)/(σ√2))).
func (d Normal) CDF(x *nd.NDArray) *nd.NDArray {
	z := nd.DivScalar(nd.Div(nd.Sub(x, d.Loc), d.Scale), math.Sqrt2)
	return nd.MulScalar(nd.AddScalar(nd.Erf(z), 1), 0.5)
}

// ICDF returns the quantile μ + σ√2·erfinv(2p − 1).
func (d Normal) ICDF(p *nd.NDArray) *nd.NDArray {
	return nd.Add(d.Loc, nd.Mul(d.Scale, nd.MulScalar(nd.Erfinv(nd.AddScalar(nd.MulScalar(p, 2), -1)), math.Sqrt2)))
}

// Entropy returns ½ + ½ log 2π + log σ.
func (d Normal) Entropy() *nd.NDArray {
	return nd.AddScalar(nd.Log(nd.BroadcastTo(d.Scale, batchShape(d.Loc, d.Scale)...)), 0.5+0.5*math.Log(2*math.Pi))
}

// Mean returns Loc, broadcast to the batch shape.
func (d Normal) Mean() *nd.NDArray { return nd.BroadcastTo(d.Loc, batchShape(d.Loc, d.Scale)...) }

// Variance returns Scale², broadcast to the batch shape.
func (d Normal) Variance() *nd.NDArray {
	return nd.BroadcastTo(nd.Square(d.Scale), batchShape(d.Loc, d.Scale)...)
}

// KLNormal returns KL(p‖q) of two normal distributions:
// log(σq/σp) + (σp² + (μp−μq)²)/(2σq²) − ½.
func KLNormal(p, q Normal) *nd.NDArray {
	vr := nd.Square(nd.Div(p.Scale, q.Scale))
	t := nd.Square(nd.Div(nd.Sub(p.Loc, q.Loc), q.Scale))
	return nd.MulScalar(nd.AddScalar(nd.Sub(nd.Add(vr, t), nd.Log(vr)), -1), 0.5)
}

// Categorical is a distribution over K classes along the last axis of its
// parameter: unnormalised log-probabilities (torch's Categorical(logits=))
// or non-negative weights (probs=).
type Categorical struct {
	raw       *nd.NDArray // as given
	fromProbs bool
}

// NewCategorical returns the categorical distribution of logits [..., K];
// NewCategoricalProbs takes probabilities instead.
func NewCategorical(logits *nd.NDArray) Categorical {
	check("probability.Categorical", logits)
	if logits.NDim() == 0 {
		nd.Panicf("probability.Categorical", nd.ErrShape, "logits need a class axis")
	}
	return Categorical{raw: logits}
}

// NewCategoricalProbs returns the categorical distribution of non-negative
// weights [..., K], normalised along the last axis (torch's probs=).
func NewCategoricalProbs(probs *nd.NDArray) Categorical {
	check("probability.Categorical", probs)
	if probs.NDim() == 0 {
		nd.Panicf("probability.Categorical", nd.ErrShape, "probabilities need a class axis")
	}
	return Categorical{raw: probs, fromProbs: true}
}

// Probs returns the class probabilities (a zero one stays 0).
func (d Categorical) Probs() *nd.NDArray {
	if d.fromProbs {
		return nd.Div(d.raw, nd.SumKeepDims(d.raw, -1))
	}
	return nd.Softmax(d.raw, -1)
}

// Logits returns the normalised log-probabilities. From probabilities they
// are clamped to [eps, 1 − eps] first (eps the dtype's epsilon), as
// torch's are, so a zero probability has a finite log-probability and
// gradients stay finite.
func (d Categorical) Logits() *nd.NDArray {
	if d.fromProbs {
		eps := epsilon(d.raw.DType())
		return nd.Log(nd.Clip(d.Probs(), eps, 1-eps))
	}
	return nd.LogSoftmax(d.raw, -1)
}

// Sample draws one class index (Int64) per distribution, of the batch
// shape.
func (d Categorical) Sample() *nd.NDArray {
	s := nd.Categorical(d.Logits().Detach(), 1, true)
	return nd.Squeeze(s, -1)
}

// LogProb returns the log-probabilities of the class indices idx (an
// integer array of the batch shape, or one that broadcasts to it).
func (d Categorical) LogProb(idx *nd.NDArray) *nd.NDArray {
	lp := d.Logits()
	shape := lp.Shape()
	batch := shape[:len(shape)-1]
	if !sameShape(idx.Shape(), batch) {
		full := broadcast(idx.Shape(), batch)
		idx = nd.BroadcastTo(idx, full...)
		lp = nd.BroadcastTo(lp, append(full, shape[len(shape)-1])...)
	}
	return nd.Pick(lp, idx, -1)
}

// Entropy returns −Σ p log p over the classes, with the log-probabilities
// clamped to the dtype's lowest finite value (torch's: a −Inf logit adds 0
// and has gradient 0).
func (d Categorical) Entropy() *nd.NDArray {
	lp := nd.MaximumScalar(d.Logits(), -maxFinite(d.raw.DType()))
	return nd.Neg(nd.Sum(nd.Mul(d.Probs(), lp), -1))
}

// KLCategorical returns KL(p‖q) = Σ p (log p − log q) over the classes:
// +Inf where q has a zero probability that p has not, and terms where p's
// probability is zero add 0 (torch's).
func KLCategorical(p, q Categorical) *nd.NDArray {
	pp, qp := p.Probs(), q.Probs()
	zero := nd.ZerosLike(pp)
	t := nd.Mul(pp, nd.Sub(p.Logits(), q.Logits()))
	t = nd.Where(nd.Equal(qp, zero), nd.FullLike(t, math.Inf(1)), t)
	t = nd.Where(nd.Equal(pp, zero), zero, t)
	return nd.Sum(t, -1)
}

// epsilon is dt's machine epsilon, maxFinite its largest finite value.
func epsilon(dt nd.DType) float64 {
	switch dt {
	case nd.Float32:
		return 0x1p-23
	case nd.Float16:
		return 0x1p-10
	case nd.BFloat16:
		return 0x1p-7
	}
	return 0x1p-52
}

func maxFinite(dt nd.DType) float64 {
	_, big, _ := nd.NanToNumDefaults(dt)
	return big
}

// Bernoulli is the distribution of a 0/1 variable with P(1) = sigmoid(Logits)
// (torch's Bernoulli(logits=)).
type Bernoulli struct {
	Logits *nd.NDArray
}

// NewBernoulli returns the Bernoulli distribution of logits.
func NewBernoulli(logits *nd.NDArray) Bernoulli {
	check("probability.Bernoulli", logits)
	return Bernoulli{Logits: logits}
}

// Probs returns P(1).
func (d Bernoulli) Probs() *nd.NDArray { return nd.Sigmoid(d.Logits) }

// Sample draws 0 or 1 values of the logits' dtype, not differentiable.
func (d Bernoulli) Sample() *nd.NDArray { return nd.Bernoulli(d.Probs().Detach()) }

// LogProb returns x·log σ(l) + (1−x)·log σ(−l) = x·l − softplus(l), stably.
func (d Bernoulli) LogProb(x *nd.NDArray) *nd.NDArray {
	return nd.Sub(nd.Mul(x, d.Logits), nd.Softrelu(d.Logits))
}

// Entropy returns softplus(l) − l·σ(l).
func (d Bernoulli) Entropy() *nd.NDArray {
	return nd.Sub(nd.Softrelu(d.Logits), nd.Mul(d.Logits, nd.Sigmoid(d.Logits)))
}

// KLBernoulli returns KL(p‖q) = σ(lp)(lp − lq) + softplus(lq) − softplus(lp).
func KLBernoulli(p, q Bernoulli) *nd.NDArray {
	return nd.Add(nd.Mul(p.Probs(), nd.Sub(p.Logits, q.Logits)), nd.Sub(nd.Softrelu(q.Logits), nd.Softrelu(p.Logits)))
}

// Uniform is the uniform distribution on [Low, High) (torch's Uniform).
type Uniform struct {
	Low, High *nd.NDArray
}

// NewUniform returns U(low, high).
func NewUniform(low, high *nd.NDArray) Uniform {
	check("probability.Uniform", low, high)
	return Uniform{Low: low, High: high}
}

// RSample draws Low + (High − Low)·u, u ~ U(0, 1), with gradients to both
// ends.
func (d Uniform) RSample() *nd.NDArray {
	shape := batchShape(d.Low, d.High)
	u := d.Low.Session().RandomUniform(d.Low.Context(), d.Low.DType(), 0, 1, shape...)
	return nd.Add(d.Low, nd.Mul(nd.Sub(d.High, d.Low), u))
}

// Sample draws values of the batch shape, not differentiable.
func (d Uniform) Sample() *nd.NDArray { return d.RSample().Detach() }

// LogProb returns −log(High − Low) inside [Low, High) and −Inf outside.
func (d Uniform) LogProb(x *nd.NDArray) *nd.NDArray {
	lp := nd.Neg(nd.Log(nd.Sub(d.High, d.Low)))
	inside := nd.LogicalAnd(nd.GreaterEqual(x, d.Low), nd.Less(x, d.High))
	shape := broadcast(inside.Shape(), lp.Shape())
	lp = nd.BroadcastTo(lp, shape...)
	return nd.Where(nd.BroadcastTo(inside, shape...), lp, nd.FullLike(lp, math.Inf(-1)))
}

// Entropy returns log(High − Low).
func (d Uniform) Entropy() *nd.NDArray { return nd.Log(nd.Sub(d.High, d.Low)) }
