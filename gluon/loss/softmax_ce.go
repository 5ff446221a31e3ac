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
// With Sparse labels, UseIgnore skips the positions whose label is
// IgnoreLabel (padding in a batch of sequences; MXNet's use_ignore and
// ignore_label, PyTorch's ignore_index): they add nothing to the loss or
// the gradient, and a sample's loss is the mean over its other positions
// (0 when it has none). LabelSmoothing ε mixes the one-hot target with the
// uniform distribution, (1−ε)·onehot + ε/C, as PyTorch's label_smoothing:
// the loss is (1−ε)·(−log p[label]) + ε·mean over classes of −log p.
//
// TokenMean (sparse labels) scales the per-sample losses so that their
// mean over the batch is the mean over every counted position of the batch
// (PyTorch's reduction "mean": with ignore_index, the total over the kept
// positions divided by their number; with class weights, by the sum of
// their labels' weights), instead of the mean of the samples' own means: a
// sample's value is its positions' total times N over the batch's count. A
// batch with no counted position gives zeros (PyTorch: NaN). With half
// predictions the losses are float32, as the count and scale need. The scale is
// a constant of the batch, so gradients are those of PyTorch's mean; on
// several contexts each device's shard counts its own positions, as each
// process of PyTorch's DistributedDataParallel does.
//
// ClassWeight, when set, is PyTorch's weight argument: an array [C] that
// scales each position's loss by the weight of its label's class (sparse
// labels), or each class's term of the sum (dense labels), to rebalance
// unbalanced classes. With label smoothing the uniform part is weighted
// class by class too, as PyTorch does. The per-sample mean over positions
// is not divided by the weights' sum unless TokenMean is set.
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
	// UseIgnore skips positions whose sparse label is IgnoreLabel.
	UseIgnore bool
	// IgnoreLabel is the label UseIgnore skips (PyTorch's default is −100).
	IgnoreLabel int
	// TokenMean makes the batch mean of the per-sample losses the mean
	// over the batch's counted positions (PyTorch's "mean"; sparse labels).
	TokenMean bool
	// LabelSmoothing is ε in [0, 1): the share of the target spread
	// uniformly over the classes (sparse labels only).
	LabelSmoothing float64
	// ClassWeight weights the classes; nil for none. It must be a [C]
	// array on pred's context, of pred's dtype.
	ClassWeight *nd.NDArray
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
	cw, p0 := l.ClassWeight, pred
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	if pred != p0 && cw != nil && cw.DType().IsHalf() {
		cw = cw.AsType(pred.DType()) // autocast widened pred
	}
	const op = "loss.SoftmaxCrossEntropy"
	checkLabels(op, pred, label, sampleWeight, l.Sparse)
	axis := normAxis(op, l.Axis, pred.NDim())
	var cwAxis *nd.NDArray // cw shaped to broadcast along axis
	if cw != nil {
		c := pred.Shape()[axis]
		if cw.NDim() != 1 || cw.Size() != c {
			nd.Panicf(op, nd.ErrShape, "class weights of shape %v for predictions of shape %v: want [%d]", cw.Shape(), pred.Shape(), c)
		}
		want := make([]int, pred.NDim()-axis)
		for i := range want {
			want[i] = 1
		}
		want[0] = c
		cwAxis = nd.Reshape(cw, want...)
		checkBroadcast(op, "class weights", pred, cwAxis)
	}
	logSoftmax := func() *nd.NDArray {
		if l.FromLogits {
			return pred
		}
		return nd.LogSoftmax(pred, axis)
	}
	var loss *nd.NDArray
	if (l.UseIgnore || l.LabelSmoothing != 0 || l.TokenMean) && !l.Sparse {
		nd.Panicf(op, nd.ErrArgument, "UseIgnore, TokenMean and LabelSmoothing need sparse labels")
	}
	if !(l.LabelSmoothing >= 0 && l.LabelSmoothing < 1) {
		nd.Panicf(op, nd.ErrArgument, "label smoothing %g outside [0, 1)", l.LabelSmoothing)
	}
	if l.Sparse {
		shape := slices.Delete(pred.Shape(), axis, axis+1)
		idx := reshapeLike(op, "sparse labels", label, shape, pred.Shape())
		var nll *nd.NDArray
		if !l.FromLogits && l.LabelSmoothing == 0 {
			nll = nd.SoftmaxCrossEntropy(pred, idx, axis) // one pass each way where fused
		} else {
			logp := logSoftmax()
			nll = nd.Neg(nd.Pick(logp, idx, axis))
			if cw != nil {
				nll = nd.Mul(nll, classWeightOf(cw, idx))
			}
			if e := l.LabelSmoothing; e > 0 {
				uniform := logp
				if cw != nil {
					uniform = nd.Mul(logp, cwAxis)
				}
				nll = nd.Add(nd.MulScalar(nll, 1-e), nd.MulScalar(nd.Neg(nd.Mean(uniform, axis)), e))
			}
		}
		if cw != nil && !l.FromLogits && l.LabelSmoothing == 0 {
			nll = nd.Mul(nll, classWeightOf(cw, idx))
		}
		switch {
		case l.TokenMean:
			nll = l.tokenMean(idx, nll, cw)
		case l.UseIgnore:
			nll = l.ignore(idx, nll)
		}
		loss = nd.ExpandDims(nll, axis)
	} else {
		z := reshapeLike(op, "dense labels", label, pred.Shape(), pred.Shape())
		if cw != nil {
			z = nd.Mul(z, cwAxis)
		}
		loss = nd.Neg(nd.SumKeepDims(nd.Mul(logSoftmax(), z), axis))
	}
	if sampleWeight != nil && sampleWeight.DType().IsHalf() && loss.DType() == nd.Float32 {
		sampleWeight = sampleWeight.AsType(nd.Float32) // TokenMean's float32 losses
	}
	return finish(op, loss, sampleWeight, scale(l.Weight))
}

// classWeightOf returns the class weight of each sparse label (indices
// clipped into range, as Pick clips them).
func classWeightOf(cw, idx *nd.NDArray) *nd.NDArray {
	if !idx.DType().IsInt() {
		idx = idx.AsType(nd.Int64)
	}
	return nd.Take(cw, idx, 0, nd.TakeClip)
}

// tokenMean zeroes nll where UseIgnore skips a position and scales the
// rest by the number of positions over their count (the sum of their
// labels' class weights, with cw), so that finish's means give PyTorch's
// mean over the batch's counted positions.
func (l SoftmaxCrossEntropy) tokenMean(idx, nll, cw *nd.NDArray) *nd.NDArray {
	if nll.DType().IsHalf() {
		// The count and the scale exceed half's range on long batches
		// (65504 positions): they are taken in float32, and so is the loss.
		nll = nll.AsType(nd.Float32)
		if cw != nil {
			cw = cw.AsType(nd.Float32)
		}
	}
	s := sessionOf(nll, idx)
	dev, dt := idx.Context(), nll.DType()
	count := s.Full(dev, dt, float64(nll.Size()), 1) // every position counts once
	if cw != nil {
		count = nd.Sum(classWeightOf(cw, idx))
	}
	if l.UseIgnore && !(idx.DType() == nd.Uint8 && (l.IgnoreLabel < 0 || l.IgnoreLabel > 255)) {
		mask := nd.NotEqual(idx, s.Full(dev, idx.DType(), float64(l.IgnoreLabel), 1))
		zeros := nd.ZerosLike(nll)
		nll = nd.Where(mask, nll, zeros) // select: an ignored label may pick −inf
		w := mask.AsType(dt)
		if cw != nil {
			w = nd.Where(mask, classWeightOf(cw, idx), zeros)
		}
		count = nd.Sum(w)
	}
	zero := nd.Equal(count, s.Zeros(dev, dt, 1))
	count = nd.Where(zero, s.Full(dev, dt, 1, 1), count) // no counted position: every loss is 0
	return nd.Mul(nll, nd.Div(s.Full(dev, dt, float64(nll.Size()), 1), count))
}

// ignore zeroes nll where idx is IgnoreLabel and rescales each sample's
// other positions so that the mean over the sample (taken by finish) is
// the mean over its counted positions.
func (l SoftmaxCrossEntropy) ignore(idx, nll *nd.NDArray) *nd.NDArray {
	s := sessionOf(nll, idx)
	if idx.DType() == nd.Uint8 && (l.IgnoreLabel < 0 || l.IgnoreLabel > 255) {
		// No uint8 label can be IgnoreLabel (−100 would saturate to 0).
		return nll
	}
	ign := s.Full(idx.Context(), idx.DType(), float64(l.IgnoreLabel), 1)
	mask := nd.NotEqual(idx, ign)
	keep := mask.AsType(nll.DType())
	// Select, not multiply: an ignored position's clipped label may pick a
	// −inf log-probability, and −inf·0 is NaN.
	nll = nd.Where(mask, nll, nd.ZerosLike(nll))
	if nll.NDim() < 2 || nll.Size() == 0 {
		return nll
	}
	axes := make([]int, nll.NDim()-1)
	for i := range axes {
		axes[i] = i + 1
	}
	per := float64(nll.Size() / nll.Shape()[0]) // positions per sample
	count := nd.SumKeepDims(keep, axes...)      // counted positions per sample
	one := s.Full(idx.Context(), nll.DType(), 1, 1)
	return nd.Mul(nll, nd.Div(s.Full(idx.Context(), nll.DType(), per, 1), nd.Maximum(count, one)))
}
