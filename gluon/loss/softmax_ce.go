package loss

import (
	"slices"

	"github.com/goluon/goluon/nd"
)

// SoftmaxCrossEntropy is Gluon's SoftmaxCrossEntropyLoss: the
// cross-entropy between softmax(pred) along Axis and the labels, averaged
// over every axis but the batch axis (and Axis).
//
// Build it with NewSoftmaxCrossEntropy, which sets Gluon's defaults
// (Axis −1, Sparse labels, logits in pred); a struct literal gets Go's zero
// values instead (Axis 0 is rejected, being the batch axis).
//
// With Sparse, labels hold class indices, as an integer array (Int64,
// Int32 or Uint8) or as floats of pred's dtype, with pred's shape
// without Axis ([N] for pred [N, C]; [N, 1] is reshaped), and the loss of a
// sample is −log softmax(pred)[label]. Indices outside [0, C) are clipped,
// as MXNet's pick does. Otherwise labels are dense (one-hot or soft)
// distributions of pred's shape and the loss is −Σ label·log softmax(pred).
//
// FromLogits says pred already holds log-probabilities (the output of
// nd.LogSoftmax), so the softmax is skipped. This is Gluon's naming: in
// PyTorch terms the loss is then nll_loss, while the default (logits in,
// log_softmax applied here) is PyTorch's cross_entropy.
type SoftmaxCrossEntropy struct {
	// Axis is the class axis (−1: the last). It must not be the batch axis.
	Axis int
	// Sparse says labels are class indices rather than distributions.
	Sparse bool
	// FromLogits says pred holds log-probabilities already.
	FromLogits bool
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewSoftmaxCrossEntropy returns a softmax cross-entropy loss with Gluon's
// defaults: class axis −1, sparse labels, log_softmax applied to pred, no
// weighting.
func NewSoftmaxCrossEntropy() SoftmaxCrossEntropy {
	return SoftmaxCrossEntropy{Axis: -1, Sparse: true, Weight: 1}
}

// Name returns "SoftmaxCrossEntropyLoss".
func (SoftmaxCrossEntropy) Name() string { return "SoftmaxCrossEntropyLoss" }

// Forward returns the per-sample cross-entropy, shape [N].
func (l SoftmaxCrossEntropy) Forward(pred, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none). The
// unreduced loss keeps the class axis with size 1 (Gluon's keepdims), so
// sample weights of shape [N] or [N, 1] weight whole samples.
func (l SoftmaxCrossEntropy) ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray {
	const op = "loss.SoftmaxCrossEntropy"
	checkLabels(op, pred, label, sampleWeight, l.Sparse)
	axis := normAxis(op, l.Axis, pred.NDim())
	logp := pred
	if !l.FromLogits {
		logp = nd.LogSoftmax(pred, axis)
	}
	var loss *nd.NDArray
	if l.Sparse {
		shape := slices.Delete(pred.Shape(), axis, axis+1)
		idx := reshapeLike(op, "sparse labels", label, shape, pred.Shape())
		loss = nd.ExpandDims(nd.Neg(nd.Pick(logp, idx, axis)), axis)
	} else {
		z := reshapeLike(op, "dense labels", label, pred.Shape(), pred.Shape())
		loss = nd.Neg(nd.SumKeepDims(nd.Mul(logp, z), axis))
	}
	return finish(op, loss, sampleWeight, scale(l.Weight))
}
