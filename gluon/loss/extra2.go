package loss

import (
	"math"
	"slices"

	"github.com/goluon/goluon/nd"
)

// The losses of PyTorch that Gluon lacks: GaussianNLLLoss,
// MultiMarginLoss and MarginRankingLoss. (PyTorch's NLLLoss is
// SoftmaxCrossEntropy with FromLogits; its MultiLabelSoftMarginLoss is
// SigmoidBCE, averaged over the classes, with sample weights [1, C] for
// its class weights.)

// GaussianNLL is PyTorch's GaussianNLLLoss: the negative log-likelihood
// of the labels (reshaped like pred when they hold as many elements, else
// broadcast to pred's shape as PyTorch broadcasts its target: [N, 1] for
// pred [N, C], say) under normal distributions of mean pred and the given
// variance,
//
//	½·(log max(var, ε) + (pred − label)²/max(var, ε)) [+ ½·log 2π with Full]
//
// averaged over every axis but the batch axis. The variance has pred's
// shape (one per prediction), or pred's shape with the last axis removed
// or of size 1 (one per row of the last axis), as in PyTorch. A negative
// variance is an error (checked on the host, which waits for the device;
// in a hybridized network it is clamped to ε instead). As in PyTorch, the
// clamp to ε does not stop the variance's gradient: it is the gradient
// at the clamped value.
type GaussianNLL struct {
	// Full adds the constant ½·log 2π.
	Full bool
	// Epsilon is the smallest variance used; 0 means PyTorch's 1e-6.
	Epsilon float64
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewGaussianNLL returns a Gaussian negative log-likelihood loss with
// PyTorch's defaults (no constant term, epsilon 1e-6, weight 1).
func NewGaussianNLL() GaussianNLL { return GaussianNLL{Weight: 1} }

// Name returns "GaussianNLLLoss".
func (GaussianNLL) Name() string { return "GaussianNLLLoss" }

// Forward returns the per-sample loss, shape [N].
func (l GaussianNLL) Forward(pred, label, variance *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, variance, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l GaussianNLL) ForwardWeighted(pred, label, variance, sampleWeight *nd.NDArray) *nd.NDArray {
	const op = "loss.GaussianNLL"
	p0 := pred
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	if pred != p0 && variance != nil && variance.DType().IsHalf() {
		variance = variance.AsType(pred.DType()) // autocast widened pred
	}
	check(op, pred, label, sampleWeight)
	checkInput(op, "variances", pred, variance)
	eps := l.Epsilon
	if eps == 0 {
		eps = 1e-6
	}
	if !(eps > 0) || math.IsInf(eps, 1) {
		nd.Panicf(op, nd.ErrArgument, "epsilon %g must be positive and finite", eps)
	}
	label = gaussianLabel(op, pred.Shape(), label)
	variance = gaussianVariance(op, pred.Shape(), variance)
	if variance.Size() > 0 && !nd.Tracing() {
		if lo := hostScalar(nd.Min(variance)); lo < 0 {
			nd.Panicf(op, nd.ErrArgument, "variance %g is negative", lo)
		}
	}
	// The value max(var, ε), the gradient var's own (PyTorch clamps a copy
	// without recording).
	v := nd.Add(nd.MaximumScalar(variance.Detach(), eps), nd.Sub(variance, variance.Detach()))
	loss := nd.MulScalar(nd.Add(nd.Log(v), nd.Div(nd.Square(nd.Sub(pred, label)), v)), 0.5)
	if l.Full {
		loss = nd.AddScalar(loss, 0.5*math.Log(2*math.Pi))
	}
	return finish(op, loss, sampleWeight, scale(l.Weight))
}

// gaussianLabel returns the labels shaped to meet predictions of shape
// ps: reshaped to ps when they hold as many elements (Gluon's rule), else
// as they are when they broadcast to ps (PyTorch's: pred's shape with
// axes of size 1, as one target per row, [N, 1] for [N, C], or with
// leading axes left out). The loss keeps pred's shape either way.
func gaussianLabel(op string, ps []int, label *nd.NDArray) *nd.NDArray {
	ls := label.Shape()
	if label.Size() == numel(ps) {
		return reshapeLike(op, "labels", label, ps, ps)
	}
	ok := len(ls) <= len(ps)
	for i := 1; ok && i <= len(ls); i++ {
		d := ls[len(ls)-i]
		ok = d == 1 || d == ps[len(ps)-i]
	}
	if !ok {
		nd.Panicf(op, nd.ErrShape, "labels of shape %v do not fit predictions of shape %v: want %v, %d elements, or a shape that broadcasts to it (axes of size 1)", ls, ps, ps, numel(ps))
	}
	return label
}

// gaussianVariance checks the variance's shape against pred's (PyTorch's
// rule) and returns it shaped to broadcast against pred.
func gaussianVariance(op string, ps []int, v *nd.NDArray) *nd.NDArray {
	vs := v.Shape()
	switch {
	case slices.Equal(vs, ps):
		return v
	case len(ps) > 0 && slices.Equal(vs, ps[:len(ps)-1]):
		return nd.ExpandDims(v, -1)
	case len(ps) > 0 && len(vs) == len(ps) && slices.Equal(vs[:len(vs)-1], ps[:len(ps)-1]) && vs[len(vs)-1] == 1:
		return v
	}
	nd.Panicf(op, nd.ErrShape, "variances of shape %v for predictions of shape %v: want %v, or without the last axis, or with it of size 1", vs, ps, ps)
	return nil
}

// hostScalar reads a one-element array as float64 and releases it.
func hostScalar(a *nd.NDArray) float64 {
	defer a.Release()
	return a.Float64s()[0]
}

// MultiMargin is PyTorch's MultiMarginLoss, the multi-class hinge loss of
// Weston and Watkins: for scores pred [N, C] and class labels [N] (an
// integer array, or whole numbers of pred's dtype), a sample's loss is
//
//	Σ over classes i ≠ y of max(0, Margin − pred[y] + pred[i])^P / C
//
// each term multiplied by ClassWeight[y] when set. Labels outside [0, C)
// are an error (checked on the host, which waits for the device; in a
// hybridized network they are clipped into range instead). Where a term
// is exactly 0 its gradient is 0, as PyTorch's.
//
// NewMultiMargin sets PyTorch's margin 1; a struct literal's Margin is
// used as is.
type MultiMargin struct {
	// P is the power of each term, 1 or 2; 0 means 1.
	P int
	// Margin is the score margin the labelled class must clear.
	Margin float64
	// ClassWeight, when set, is a [C] array on pred's context, of pred's
	// dtype, weighting each sample by its label's class.
	ClassWeight *nd.NDArray
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewMultiMargin returns a multi-class hinge loss with PyTorch's defaults
// (p 1, margin 1, no class weights, weight 1).
func NewMultiMargin() MultiMargin { return MultiMargin{P: 1, Margin: 1, Weight: 1} }

// Name returns "MultiMarginLoss".
func (MultiMargin) Name() string { return "MultiMarginLoss" }

// Forward returns the per-sample loss, shape [N].
func (l MultiMargin) Forward(pred, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, nil)
}

// ForwardWeighted is Forward with per-sample weights ([N] or [N, 1]; nil
// for none).
func (l MultiMargin) ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray {
	const op = "loss.MultiMargin"
	cw, p0 := l.ClassWeight, pred
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	if pred != p0 && cw != nil && cw.DType().IsHalf() {
		cw = cw.AsType(pred.DType()) // autocast widened pred
	}
	checkLabels(op, pred, label, sampleWeight, true)
	p := l.P
	if p == 0 {
		p = 1
	}
	if p != 1 && p != 2 {
		nd.Panicf(op, nd.ErrArgument, "p = %d: want 1 or 2", l.P)
	}
	if math.IsNaN(l.Margin) || math.IsInf(l.Margin, 0) {
		nd.Panicf(op, nd.ErrArgument, "margin %g must be finite", l.Margin)
	}
	if pred.NDim() != 2 {
		nd.Panicf(op, nd.ErrShape, "predictions of shape %v: want [N, C]", pred.Shape())
	}
	n, c := pred.Shape()[0], pred.Shape()[1]
	if cw != nil {
		if cw.NDim() != 1 || cw.Size() != c {
			nd.Panicf(op, nd.ErrShape, "class weights of shape %v for predictions of shape %v: want [%d]", cw.Shape(), pred.Shape(), c)
		}
		checkBroadcast(op, "class weights", pred, cw)
	}
	idx := reshapeLike(op, "labels", label, []int{n}, pred.Shape())
	if !idx.DType().IsInt() {
		if idx.Size() > 0 && !nd.Tracing() {
			checkWhole(op, idx)
		}
		idx = idx.AsType(nd.Int64)
	}
	if idx.Size() > 0 && !nd.Tracing() {
		if lo := hostScalar(nd.Min(idx)); lo < 0 {
			nd.Panicf(op, nd.ErrArgument, "label %g outside [0, %d)", lo, c)
		}
		if hi := hostScalar(nd.Max(idx)); hi >= float64(c) {
			nd.Panicf(op, nd.ErrArgument, "label %g outside [0, %d)", hi, c)
		}
	}
	if c == 0 || n == 0 {
		return finish(op, nd.Sum(pred, 1), sampleWeight, scale(l.Weight))
	}
	target := nd.ExpandDims(nd.Pick(pred, idx, 1), 1) // [N, 1]
	h := nd.Relu(nd.AddScalar(nd.Sub(pred, target), l.Margin))
	if p == 2 {
		h = nd.Square(h)
	}
	if cw != nil {
		h = nd.Mul(h, nd.ExpandDims(nd.Take(cw, idx, 0, nd.TakeClip), 1))
	}
	other := nd.Equal(nd.OneHotAs(idx, c, 0, 1, pred.DType()), nd.OnesLike(h)) // false at the label
	h = nd.Where(other, h, nd.ZerosLike(h))
	return finish(op, nd.DivScalar(nd.Sum(h, 1), float64(c)), sampleWeight, scale(l.Weight))
}

// checkWhole panics unless every floating label is a whole number.
func checkWhole(op string, idx *nd.NDArray) {
	for _, v := range idx.Float64s() {
		if v != math.Trunc(v) {
			nd.Panicf(op, nd.ErrArgument, "label %g is not a class index", v)
		}
	}
}

// MarginRanking is PyTorch's MarginRankingLoss: for pairs of scores
// input1 and input2 (one shape) and labels y in {1, −1} (reshaped like
// them; 1 says input1 should rank higher),
//
//	max(0, −y·(input1 − input2) + Margin)
//
// averaged over every axis but the batch axis. Where the term is exactly
// 0 the gradient passes, as PyTorch's clamp_min. NewMarginRanking sets
// PyTorch's margin 0.
type MarginRanking struct {
	// Margin is how far the higher-ranked score must lead.
	Margin float64
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewMarginRanking returns a margin ranking loss with PyTorch's defaults
// (margin 0, weight 1).
func NewMarginRanking() MarginRanking { return MarginRanking{Weight: 1} }

// Name returns "MarginRankingLoss".
func (MarginRanking) Name() string { return "MarginRankingLoss" }

// Forward returns the per-sample loss, shape [N].
func (l MarginRanking) Forward(input1, input2, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(input1, input2, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l MarginRanking) ForwardWeighted(input1, input2, label, sampleWeight *nd.NDArray) *nd.NDArray {
	const op = "loss.MarginRanking"
	input1, input2, label, sampleWeight = pairInputs(op, input1, input2, label, sampleWeight)
	if math.IsNaN(l.Margin) || math.IsInf(l.Margin, 0) {
		nd.Panicf(op, nd.ErrArgument, "margin %g must be finite", l.Margin)
	}
	s := input1.Shape()
	input2 = reshapeLike(op, "second inputs", input2, s, s)
	label = reshapeLike(op, "labels", label, s, s)
	if label.DType() != input1.DType() {
		label = label.AsType(input1.DType())
	}
	u := nd.AddScalar(nd.Neg(nd.Mul(label, nd.Sub(input1, input2))), l.Margin)
	zeros := nd.ZerosLike(u)
	loss := nd.Where(nd.Less(u, zeros), zeros, u) // NaN stays NaN, as clamp_min's

	return finish(op, loss, sampleWeight, scale(l.Weight))
}
