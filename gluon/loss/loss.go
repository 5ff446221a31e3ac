// Package loss holds the loss functions of Gluon (mxnet.gluon.loss) for
// Goluon, with the options PyTorch users reach for:
//
//   - classification: softmax cross-entropy (ignored labels, label
//     smoothing, class weights; with FromLogits, PyTorch's NLLLoss),
//     sigmoid binary cross-entropy (positive weights; averaged over
//     classes, MultiLabelSoftMarginLoss), logistic, hinge, squared hinge
//     and multi-class margin (MultiMargin);
//   - regression: L2, L1, Huber, Poisson and Gaussian negative
//     log-likelihood;
//   - ranking: margin ranking;
//   - distributions: KL divergence (probability or log-probability
//     targets);
//   - embeddings: triplet and cosine embedding losses;
//   - sequences: CTC, for outputs and targets of different lengths.
//
// Every loss takes predictions and labels (arrays on one context, of one
// dtype; Triplet, CosineEmbedding and CTC take more inputs) and returns
// the loss of each sample, shape [N]: the batch axis is
// axis 0 and the loss is averaged over every other axis, as Gluon does with
// mean(axis=batch_axis, exclude=True). The result is built from recorded nd
// ops, so inside an autograd recording scope it can be differentiated with
// respect to the predictions (and anything else that needs a gradient):
//
//	var l *nd.NDArray
//	autograd.Record(func() {
//		l = loss.NewSoftmaxCrossEntropy().Forward(net(x), y)
//	})
//	autograd.Backward(l)
//
// # Labels
//
// Labels whose shape differs from the one a loss needs but that hold the
// same number of elements are reshaped first, as Gluon's _reshape_like
// does: labels [N] fit predictions [N, 1] and sparse class labels [N, 1]
// fit scores [N, C]. Any other mismatch panics with an *nd.Error that names
// the loss and both shapes; so do inputs on different contexts or of
// different dtypes (see "Errors" in package nd).
//
// # Weights
//
// Each loss has a Weight field, Gluon's scalar weight, that multiplies
// every sample's loss; zero means 1 (no weighting), like Gluon's
// weight=None. ForwardWeighted also takes a sample-weight array that
// multiplies the loss element by element before the batch mean, like
// Gluon's sample_weight argument. A sample weight whose shape, without
// trailing 1-axes, is a leading part of the unreduced loss's shape is
// aligned on the batch axis: [N] and [N, 1] both weight whole samples, for
// any loss. Other shapes broadcast as nd.Mul does (trailing axes aligned)
// and must not grow the loss. A one-dimensional weight that could mean
// either (its length the batch size and the last axis's) is an error that
// asks for [N, 1] or [1, C].
package loss

import (
	"slices"

	"github.com/goluon/goluon/nd"
)

// Loss computes a per-sample loss from predictions and labels.
type Loss interface {
	// Forward returns the loss of each sample, shape [N] for predictions
	// with batch axis 0 of size N.
	Forward(pred, label *nd.NDArray) *nd.NDArray
	// Name names the loss as Gluon's class does, e.g. "L2Loss".
	Name() string
}

// Weighted is a Loss that also takes per-sample weights, as Gluon's
// sample_weight argument. Every loss of this package implements it.
type Weighted interface {
	Loss
	// ForwardWeighted is Forward with the unreduced loss multiplied by
	// sampleWeight (nil for none) before the batch mean.
	ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray
}

// scale returns the Weight a loss applies: w, or 1 when w is zero.
func scale(w float64) float64 {
	if w == 0 {
		return 1
	}
	return w
}

// check validates the inputs of a loss before any op runs: predictions need
// a batch axis, and every input must share pred's context and dtype.
func check(op string, pred, label, sw *nd.NDArray) { checkLabels(op, pred, label, sw, false) }

// autocastInputs returns half-precision predictions, labels and sample
// weights converted to float32 (recorded) when the predictions' session
// autocasts: the losses are in autocast's float32 list (package amp), and
// torch casts every floating input of such a loss. Integer labels (class
// indices) stay as they are.
func autocastInputs(pred, label, sw *nd.NDArray) (*nd.NDArray, *nd.NDArray, *nd.NDArray) {
	if pred == nil || !pred.DType().IsHalf() {
		return pred, label, sw
	}
	if _, on := pred.Session().AutocastDType(); !on {
		return pred, label, sw
	}
	widen := func(a *nd.NDArray) *nd.NDArray {
		if a != nil && a.DType().IsHalf() {
			return a.AsType(nd.Float32)
		}
		return a
	}
	return widen(pred), widen(label), widen(sw)
}

// checkLabels is check where, with indices, the labels may be an integer
// array of class indices (any floating labels still need pred's dtype).
func checkLabels(op string, pred, label, sw *nd.NDArray, indices bool) {
	if pred == nil || label == nil {
		nd.Panicf(op, nd.ErrArgument, "nil predictions or labels")
	}
	if pred.NDim() == 0 {
		nd.Panicf(op, nd.ErrShape, "predictions of shape %v have no batch axis", pred.Shape())
	}
	for _, in := range []struct {
		what string
		a    *nd.NDArray
	}{{"labels", label}, {"sample weights", sw}} {
		if in.a == nil {
			continue
		}
		if in.a.Context() != pred.Context() {
			nd.Panicf(op, nd.ErrContext, "predictions on %v, %s on %v (shapes %v and %v); copy one with CopyTo or AsIn first",
				pred.Context(), in.what, in.a.Context(), pred.Shape(), in.a.Shape())
		}
		if indices && in.a == label && (label.DType() == nd.Int64 || label.DType() == nd.Int32 || label.DType() == nd.Uint8) {
			continue
		}
		if in.a.DType() != pred.DType() {
			nd.Panicf(op, nd.ErrDType, "predictions are %v, %s are %v (shapes %v and %v)",
				pred.DType(), in.what, in.a.DType(), pred.Shape(), in.a.Shape())
		}
	}
}

// checkInput checks a further input of a loss (a, named what) against
// the first, pred: not nil, on pred's context and of pred's dtype.
func checkInput(op, what string, pred, a *nd.NDArray) {
	if a == nil {
		nd.Panicf(op, nd.ErrArgument, "nil %s", what)
	}
	if a.Context() != pred.Context() {
		nd.Panicf(op, nd.ErrContext, "predictions on %v, %s on %v (shapes %v and %v); copy one with CopyTo or AsIn first",
			pred.Context(), what, a.Context(), pred.Shape(), a.Shape())
	}
	if a.DType() != pred.DType() {
		nd.Panicf(op, nd.ErrDType, "predictions are %v, %s are %v (shapes %v and %v)", pred.DType(), what, a.DType(), pred.Shape(), a.Shape())
	}
}

// checkBroadcast checks that an auxiliary weight array w (class or
// positive weights) is on pred's context, of pred's dtype, and broadcasts
// against pred without growing it.
func checkBroadcast(op, what string, pred, w *nd.NDArray) {
	if w.Context() != pred.Context() {
		nd.Panicf(op, nd.ErrContext, "predictions on %v, %s on %v; copy one with CopyTo or AsIn first", pred.Context(), what, w.Context())
	}
	if w.DType() != pred.DType() {
		nd.Panicf(op, nd.ErrDType, "predictions are %v, %s are %v", pred.DType(), what, w.DType())
	}
	s, ps := w.Shape(), pred.Shape()
	ok := len(s) <= len(ps)
	for i := 1; ok && i <= len(s); i++ {
		d := s[len(s)-i]
		ok = d == 1 || d == ps[len(ps)-i]
	}
	if !ok {
		nd.Panicf(op, nd.ErrShape, "%s of shape %v do not broadcast to predictions of shape %v", what, s, ps)
	}
}

// reshapeLike returns label with the given shape, reshaping it when it
// holds the same number of elements (Gluon's _reshape_like).
func reshapeLike(op, what string, label *nd.NDArray, shape, predShape []int) *nd.NDArray {
	if slices.Equal(label.Shape(), shape) {
		return label
	}
	if label.Size() != numel(shape) {
		nd.Panicf(op, nd.ErrShape, "%s of shape %v do not fit predictions of shape %v (want shape %v or %d elements)",
			what, label.Shape(), predShape, shape, numel(shape))
	}
	return nd.Reshape(label, shape...)
}

// finish applies the sample weights and the scalar weight to the unreduced
// loss l and averages it over every axis but the batch axis.
func finish(op string, l, sw *nd.NDArray, weight float64) *nd.NDArray {
	if sw != nil {
		l = nd.Mul(l, alignWeight(op, sw, l.Shape()))
	}
	if weight != 1 {
		l = nd.MulScalar(l, weight)
	}
	if l.NDim() == 1 {
		return l
	}
	if l.Size() == l.Shape()[0] { // a mean over one value per sample is the value (a −0 stays −0): no kernels
		return nd.Reshape(l, l.Shape()[0])
	}
	axes := make([]int, l.NDim()-1)
	for i := range axes {
		axes[i] = i + 1
	}
	return nd.Mean(l, axes...)
}

// alignWeight prepares a sample-weight array for multiplying a loss of
// shape ls (see the package documentation).
func alignWeight(op string, sw *nd.NDArray, ls []int) *nd.NDArray {
	s := sw.Shape()
	trimmed := s
	for len(trimmed) > 0 && trimmed[len(trimmed)-1] == 1 {
		trimmed = trimmed[:len(trimmed)-1]
	}
	if len(trimmed) == 1 && len(ls) > 1 && ls[0] == trimmed[0] && ls[len(ls)-1] == trimmed[0] && len(s) == 1 {
		// [k] for a loss [k, ..., k]: per sample by the rule above, per
		// element of the last axis by broadcasting (Gluon's and NumPy's
		// reading, and what a per-class weight means), so the meaning
		// would change with the batch size.
		nd.Panicf(op, nd.ErrShape, "sample weights of shape %v for the unreduced loss of shape %v are ambiguous: reshape them to [%d, 1] to weight samples or [1, %d] to weight the last axis", s, ls, trimmed[0], trimmed[0])
	}
	if len(trimmed) <= len(ls) && slices.Equal(trimmed, ls[:len(trimmed)]) {
		want := append(slices.Clone(trimmed), make([]int, len(ls)-len(trimmed))...)
		for i := len(trimmed); i < len(want); i++ {
			want[i] = 1
		}
		if slices.Equal(s, want) {
			return sw
		}
		return nd.Reshape(sw, want...)
	}
	ok := len(s) <= len(ls)
	for i := 1; ok && i <= len(s); i++ {
		d := s[len(s)-i]
		ok = d == 1 || d == ls[len(ls)-i]
	}
	if !ok {
		nd.Panicf(op, nd.ErrShape, "sample weights of shape %v do not broadcast to the unreduced loss of shape %v", s, ls)
	}
	return sw
}

// normAxis resolves a possibly negative class axis of an n-dimensional
// prediction; the class axis must not be the batch axis 0.
func normAxis(op string, axis, n int) int {
	a := axis
	if a < 0 {
		a += n
	}
	if a < 0 || a >= n {
		nd.Panicf(op, nd.ErrArgument, "axis %d out of range for predictions with %d dimensions", axis, n)
	}
	if a == 0 {
		nd.Panicf(op, nd.ErrArgument, "class axis %d is the batch axis 0 (predictions need shape [N, ..., C, ...])", axis)
	}
	return a
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// sessionOf returns the session of the first array that belongs to one
// (the default session when none does): a loss makes its constants there.
func sessionOf(arrs ...*nd.NDArray) *nd.Session {
	for _, a := range arrs {
		if a != nil && a.Bound() {
			return a.Session()
		}
	}
	return nd.DefaultSession()
}
