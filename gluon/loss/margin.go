package loss

import "github.com/goluon/goluon/nd"

// Hinge is Gluon's HingeLoss, the SVM loss max(0, Margin − pred·label) for
// labels in {−1, 1} (reshaped like pred), averaged over every axis but the
// batch axis. PyTorch's MultiLabelSoftMarginLoss is a different loss; its
// hinge_embedding_loss takes distances, not scores.
//
// NewHinge sets Gluon's margin 1; a struct literal's Margin is used as is.
// Where pred·label equals the margin the gradient is 0.
type Hinge struct {
	// Margin is the score margin a correct prediction must clear.
	Margin float64
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewHinge returns a hinge loss with Gluon's defaults (margin 1, weight 1).
func NewHinge() Hinge { return Hinge{Margin: 1, Weight: 1} }

// Name returns "HingeLoss".
func (Hinge) Name() string { return "HingeLoss" }

// Forward returns the per-sample loss, shape [N].
func (l Hinge) Forward(pred, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l Hinge) ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray {
	const op = "loss.Hinge"
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	check(op, pred, label, sampleWeight)
	label = reshapeLike(op, "labels", label, pred.Shape(), pred.Shape())
	return finish(op, hingeTerm(pred, label, l.Margin), sampleWeight, scale(l.Weight))
}

// hingeTerm is max(0, margin − pred·label).
func hingeTerm(pred, label *nd.NDArray, margin float64) *nd.NDArray {
	return nd.Relu(nd.RSubScalar(margin, nd.Mul(pred, label)))
}

// SquaredHinge is Gluon's SquaredHingeLoss: max(0, Margin − pred·label)²
// for labels in {−1, 1}, averaged over every axis but the batch axis.
// NewSquaredHinge sets Gluon's margin 1.
type SquaredHinge struct {
	// Margin is the score margin a correct prediction must clear.
	Margin float64
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewSquaredHinge returns a squared hinge loss with Gluon's defaults
// (margin 1, weight 1).
func NewSquaredHinge() SquaredHinge { return SquaredHinge{Margin: 1, Weight: 1} }

// Name returns "SquaredHingeLoss".
func (SquaredHinge) Name() string { return "SquaredHingeLoss" }

// Forward returns the per-sample loss, shape [N].
func (l SquaredHinge) Forward(pred, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l SquaredHinge) ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray {
	const op = "loss.SquaredHinge"
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	check(op, pred, label, sampleWeight)
	label = reshapeLike(op, "labels", label, pred.Shape(), pred.Shape())
	return finish(op, nd.Square(hingeTerm(pred, label, l.Margin)), sampleWeight, scale(l.Weight))
}

// Logistic is Gluon's LogisticLoss, PyTorch's soft_margin_loss:
// log(1 + exp(−pred·label)) for labels in {−1, 1}, or in {0, 1} with
// BinaryLabels (Gluon's label_format "binary", which makes it the
// sigmoid binary cross-entropy of logits), averaged over every axis but
// the batch axis. It is computed without overflow for any score.
type Logistic struct {
	// BinaryLabels says labels are 0 and 1 rather than −1 and 1.
	BinaryLabels bool
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewLogistic returns a logistic loss with Gluon's defaults (signed
// labels, weight 1).
func NewLogistic() Logistic { return Logistic{Weight: 1} }

// Name returns "LogisticLoss".
func (Logistic) Name() string { return "LogisticLoss" }

// Forward returns the per-sample loss, shape [N].
func (l Logistic) Forward(pred, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l Logistic) ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray {
	const op = "loss.Logistic"
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	check(op, pred, label, sampleWeight)
	z := reshapeLike(op, "labels", label, pred.Shape(), pred.Shape())
	if !l.BinaryLabels {
		z = nd.MulScalar(nd.AddScalar(z, 1), 0.5) // {−1, 1} → {0, 1}
	}
	return finish(op, bceLogits(pred, z, nil), sampleWeight, scale(l.Weight))
}

// Triplet is Gluon's TripletLoss: for an anchor embedding pred, one of the
// same class (positive) and one of another (negative), all of one shape,
// max(0, ‖pred − positive‖² − ‖pred − negative‖² + Margin), the squared
// distances summed over every axis but the batch axis. PyTorch's
// TripletMarginLoss uses distances that are not squared.
//
// NewTriplet sets Gluon's margin 1; a struct literal's Margin is used as
// is.
type Triplet struct {
	// Margin is how much farther the negative must be than the positive.
	Margin float64
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewTriplet returns a triplet loss with Gluon's defaults (margin 1,
// weight 1).
func NewTriplet() Triplet { return Triplet{Margin: 1, Weight: 1} }

// Name returns "TripletLoss".
func (Triplet) Name() string { return "TripletLoss" }

// Forward returns the per-sample loss, shape [N].
func (l Triplet) Forward(pred, positive, negative *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, positive, negative, nil)
}

// ForwardWeighted is Forward with per-sample weights ([N] or [N, 1]; nil
// for none).
func (l Triplet) ForwardWeighted(pred, positive, negative, sampleWeight *nd.NDArray) *nd.NDArray {
	const op = "loss.Triplet"
	p0 := pred
	pred, positive, sampleWeight = autocastInputs(pred, positive, sampleWeight)
	if pred != p0 && negative != nil && negative.DType().IsHalf() {
		negative = negative.AsType(nd.Float32)
	}
	check(op, pred, positive, sampleWeight)
	checkInput(op, "negatives", pred, negative)
	positive = reshapeLike(op, "positives", positive, pred.Shape(), pred.Shape())
	negative = reshapeLike(op, "negatives", negative, pred.Shape(), pred.Shape())
	d := nd.Sub(nd.Square(nd.Sub(positive, pred)), nd.Square(nd.Sub(negative, pred)))
	if d.NDim() > 1 {
		d = nd.Reshape(d, d.Shape()[0], -1)
		d = nd.Sum(d, 1)
	}
	return finish(op, nd.Relu(nd.AddScalar(d, l.Margin)), sampleWeight, scale(l.Weight))
}

// cosineEps keeps the cosine finite for zero vectors, as PyTorch's 1e-12.
const cosineEps = 1e-12

// CosineEmbedding is Gluon's CosineEmbeddingLoss and PyTorch's: for pairs
// of vectors (the last axis of input1 and input2, one shape) and labels
// in {1, −1}, 1 − cos(input1, input2) where the label is 1 and
// max(0, cos − Margin) where it is −1 (0 for other labels), averaged over
// every axis but the batch axis. Labels have the inputs' shape without the
// last axis ([N] for inputs [N, D]). The cosine is
// x·y / sqrt((‖x‖² + 1e-12)(‖y‖² + 1e-12)), PyTorch's form.
type CosineEmbedding struct {
	// Margin is the cosine below which dissimilar pairs cost nothing.
	Margin float64
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewCosineEmbedding returns a cosine embedding loss with Gluon's
// defaults (margin 0, weight 1).
func NewCosineEmbedding() CosineEmbedding { return CosineEmbedding{Weight: 1} }

// Name returns "CosineEmbeddingLoss".
func (CosineEmbedding) Name() string { return "CosineEmbeddingLoss" }

// Forward returns the per-sample loss, shape [N].
func (l CosineEmbedding) Forward(input1, input2, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(input1, input2, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l CosineEmbedding) ForwardWeighted(input1, input2, label, sampleWeight *nd.NDArray) *nd.NDArray {
	const op = "loss.CosineEmbedding"
	input1, input2, label, sampleWeight = pairInputs(op, input1, input2, label, sampleWeight)
	if input1.NDim() < 2 {
		nd.Panicf(op, nd.ErrShape, "inputs of shape %v: want [N, ..., D]", input1.Shape())
	}
	input2 = reshapeLike(op, "second inputs", input2, input1.Shape(), input1.Shape())
	s := input1.Shape()
	lshape := s[:len(s)-1]
	label = reshapeLike(op, "labels", label, lshape, s)
	if label.DType() != input1.DType() {
		label = label.AsType(input1.DType())
	}
	ax := len(s) - 1
	dot := nd.Sum(nd.Mul(input1, input2), ax)
	n1 := nd.AddScalar(nd.Sum(nd.Square(input1), ax), cosineEps)
	n2 := nd.AddScalar(nd.Sum(nd.Square(input2), ax), cosineEps)
	cos := nd.Div(dot, nd.Sqrt(nd.Mul(n1, n2)))
	sess := sessionOf(input1, label)
	one := sess.Full(label.Context(), label.DType(), 1, 1)
	zeros := nd.ZerosLike(cos)
	pos := nd.Where(nd.Equal(label, one), nd.RSubScalar(1, cos), zeros)
	neg := nd.Where(nd.Equal(label, nd.Neg(one)), nd.Relu(nd.AddScalar(cos, -l.Margin)), zeros)
	return finish(op, nd.Add(pos, neg), sampleWeight, scale(l.Weight))
}

// pairInputs prepares the inputs of a loss of two predictions and a
// label: autocast (the label widened with the predictions when they were),
// then the labels' and the second input's checks.
func pairInputs(op string, input1, input2, label, sampleWeight *nd.NDArray) (_, _, _, _ *nd.NDArray) {
	in0 := input1
	input1, input2, sampleWeight = autocastInputs(input1, input2, sampleWeight)
	if input1 != in0 && label != nil && label.DType().IsHalf() {
		label = label.AsType(input1.DType()) // autocast widened the inputs
	}
	checkLabels(op, input1, label, sampleWeight, true)
	checkInput(op, "second inputs", input1, input2)
	return input1, input2, label, sampleWeight
}
