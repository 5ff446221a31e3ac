package loss

import "github.com/goluon/goluon/nd"

// L2 is Gluon's L2Loss: 0.5·Weight·(pred − label)², averaged over every
// axis but the batch axis. Labels are reshaped like pred when they hold
// as many elements.
type L2 struct {
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewL2 returns an L2 loss with Gluon's defaults (weight 1).
func NewL2() L2 { return L2{Weight: 1} }

// Name returns "L2Loss".
func (L2) Name() string { return "L2Loss" }

// Forward returns the per-sample L2 loss, shape [N].
func (l L2) Forward(pred, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l L2) ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray {
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	const op = "loss.L2"
	check(op, pred, label, sampleWeight)
	label = reshapeLike(op, "labels", label, pred.Shape(), pred.Shape())
	return finish(op, nd.Square(nd.Sub(label, pred)), sampleWeight, scale(l.Weight)/2)
}

// L1 is Gluon's L1Loss: Weight·|pred − label|, averaged over every axis but
// the batch axis. Its gradient where pred equals label is 0.
type L1 struct {
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewL1 returns an L1 loss with Gluon's defaults (no weighting).
func NewL1() L1 { return L1{Weight: 1} }

// Name returns "L1Loss".
func (L1) Name() string { return "L1Loss" }

// Forward returns the per-sample L1 loss, shape [N].
func (l L1) Forward(pred, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l L1) ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray {
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	const op = "loss.L1"
	check(op, pred, label, sampleWeight)
	label = reshapeLike(op, "labels", label, pred.Shape(), pred.Shape())
	return finish(op, nd.Abs(nd.Sub(label, pred)), sampleWeight, scale(l.Weight))
}
