package loss

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// PoissonNLL is Gluon's PoissonNLLLoss and PyTorch's poisson_nll_loss: the
// negative log-likelihood of counts (labels, reshaped like pred) under a
// Poisson distribution, averaged over every axis but the batch axis (Gluon
// averages over the batch too, to a scalar; here, as every loss of the
// package, the result is per sample).
//
// With FromLogits (Gluon's default, PyTorch's log_input) pred holds the
// log of the rate λ and the loss is exp(pred) − label·pred; otherwise pred
// holds λ and the loss is pred − label·log(pred + Epsilon). ComputeFull
// adds Stirling's approximation of log(label!), label·log(label) − label
// + ½·log(2π·label), for labels above 1 (0 elsewhere), as both frameworks.
type PoissonNLL struct {
	// FromLogits says pred holds log-rates.
	FromLogits bool
	// ComputeFull adds the Stirling term of log(label!).
	ComputeFull bool
	// Epsilon keeps log(pred) finite without FromLogits; 0 means 1e-8.
	Epsilon float64
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewPoissonNLL returns a Poisson negative log-likelihood loss with
// Gluon's defaults (pred holds log-rates, no Stirling term, weight 1).
func NewPoissonNLL() PoissonNLL { return PoissonNLL{FromLogits: true, Weight: 1} }

// Name returns "PoissonNLLLoss".
func (PoissonNLL) Name() string { return "PoissonNLLLoss" }

// Forward returns the per-sample loss, shape [N].
func (l PoissonNLL) Forward(pred, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l PoissonNLL) ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray {
	const op = "loss.PoissonNLL"
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	check(op, pred, label, sampleWeight)
	eps := l.Epsilon
	if eps == 0 {
		eps = 1e-8
	}
	if !(eps > 0) {
		nd.Panicf(op, nd.ErrArgument, "epsilon %g must be positive", eps)
	}
	z := reshapeLike(op, "labels", label, pred.Shape(), pred.Shape())
	var loss *nd.NDArray
	if l.FromLogits {
		loss = nd.Sub(nd.Exp(pred), nd.Mul(z, pred))
	} else {
		loss = nd.Sub(pred, nd.Mul(z, nd.Log(nd.AddScalar(pred, eps))))
	}
	if l.ComputeFull {
		one := sessionOf(pred, z).Full(z.Context(), z.DType(), 1, 1)
		big := nd.Greater(z, one)
		safe := nd.Where(big, z, nd.OnesLike(z)) // no log 0 (NaN) outside the term
		st := nd.Add(nd.Sub(nd.Mul(safe, nd.Log(safe)), safe), nd.MulScalar(nd.Log(nd.MulScalar(safe, 2*math.Pi)), 0.5))
		loss = nd.Add(loss, nd.Where(big, st, nd.ZerosLike(st)))
	}
	return finish(op, loss, sampleWeight, scale(l.Weight))
}
