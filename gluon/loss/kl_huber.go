package loss

import "github.com/goluon/goluon/nd"

// KLDiv is Gluon's KLDivLoss: the Kullback–Leibler divergence
// label·(log label − log p) of the predicted distribution p from the label
// distribution, averaged over every axis but the batch axis. With
// FromLogits (Gluon's default, and PyTorch's kl_div input) pred holds log
// p; otherwise pred holds scores and log p = log_softmax(pred) along Axis.
// A label of 0 contributes 0 (0·log 0 = 0, as PyTorch's xlogy).
//
// With LogTarget (PyTorch's log_target) the labels hold log-probabilities
// log q and the loss is exp(log q)·(log q − log p), which stays finite
// where q underflows.
type KLDiv struct {
	// FromLogits says pred holds log-probabilities.
	FromLogits bool
	// LogTarget says the labels hold log-probabilities.
	LogTarget bool
	// Axis is the class axis of log_softmax when FromLogits is false.
	Axis int
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewKLDiv returns a KL-divergence loss with Gluon's defaults (pred holds
// log-probabilities, axis −1, weight 1).
func NewKLDiv() KLDiv { return KLDiv{FromLogits: true, Axis: -1, Weight: 1} }

// Name returns "KLDivLoss".
func (KLDiv) Name() string { return "KLDivLoss" }

// Forward returns the per-sample divergence, shape [N].
func (l KLDiv) Forward(pred, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l KLDiv) ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray {
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	const op = "loss.KLDiv"
	check(op, pred, label, sampleWeight)
	label = reshapeLike(op, "labels", label, pred.Shape(), pred.Shape())
	logp := pred
	if !l.FromLogits {
		logp = nd.LogSoftmax(pred, normAxis(op, l.Axis, pred.NDim()))
	}
	if l.LogTarget {
		return finish(op, nd.Mul(nd.Exp(label), nd.Sub(label, logp)), sampleWeight, scale(l.Weight))
	}
	sess := sessionOf(pred, label)
	zero := sess.Full(label.Context(), label.DType(), 0, 1)
	pos := nd.Greater(label, zero)
	one := sess.Full(label.Context(), label.DType(), 1, 1)
	// label·log label with log 1 where label is 0, so 0·log 0 is 0 and no
	// NaN reaches the gradient.
	xlogx := nd.Mul(label, nd.Log(nd.Where(pos, label, one)))
	return finish(op, nd.Sub(xlogx, nd.Mul(label, logp)), sampleWeight, scale(l.Weight))
}

// Huber is Gluon's HuberLoss with threshold Rho: 0.5·d²/Rho where |d| ≤
// Rho and |d| − 0.5·Rho elsewhere, d = pred − label, averaged over every
// axis but the batch axis. It is PyTorch's smooth_l1_loss with beta = Rho;
// PyTorch's huber_loss with delta = Rho is Rho times it.
type Huber struct {
	// Rho is the threshold between the quadratic and linear parts
	// (> 0; 0 means Gluon's default 1).
	Rho float64
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewHuber returns a Huber loss with Gluon's defaults (rho 1, weight 1).
func NewHuber() Huber { return Huber{Rho: 1, Weight: 1} }

// Name returns "HuberLoss".
func (Huber) Name() string { return "HuberLoss" }

// Forward returns the per-sample loss, shape [N].
func (l Huber) Forward(pred, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l Huber) ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray {
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	const op = "loss.Huber"
	check(op, pred, label, sampleWeight)
	rho := l.Rho
	if rho == 0 {
		rho = 1
	}
	if !(rho > 0) {
		nd.Panicf(op, nd.ErrArgument, "rho %g must be positive", rho)
	}
	label = reshapeLike(op, "labels", label, pred.Shape(), pred.Shape())
	d := nd.Abs(nd.Sub(pred, label))
	r := sessionOf(pred, label).Full(label.Context(), label.DType(), rho, 1)
	quad := nd.MulScalar(nd.Square(d), 0.5/rho)
	lin := nd.AddScalar(d, -0.5*rho)
	return finish(op, nd.Where(nd.Greater(d, r), lin, quad), sampleWeight, scale(l.Weight))
}
