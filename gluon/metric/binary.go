package metric

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/goluon/goluon/nd"
)

// Average says how a binary classification metric (F1, Fbeta, MCC) combines
// the batches it is updated with.
type Average int

const (
	// Global scores the true and false positives and negatives counted
	// over every sample since the last Reset: the score of the whole data
	// set, as scikit-learn computes it and Gluon 2.0 does (MXNet 1.9's
	// average="micro"). It is the zero value.
	Global Average = iota
	// BatchMean averages the score of each Update call (all its devices
	// together), MXNet 1.9's default average="macro" (not scikit-learn's
	// macro, a mean over classes): a batch counts once whatever its size.
	// An Update with no samples is not a batch.
	BatchMean
)

// String returns "global" or "batch-mean".
func (a Average) String() string {
	switch a {
	case Global:
		return "global"
	case BatchMean:
		return "batch-mean"
	}
	return fmt.Sprintf("Average(%d)", int(a))
}

// confusion counts the outcomes of binary predictions.
type confusion struct{ tp, fp, fn, tn int64 }

func (c *confusion) add(o confusion) {
	c.tp += o.tp
	c.fp += o.fp
	c.fn += o.fn
	c.tn += o.tn
}

func (c confusion) total() int64 { return c.tp + c.fp + c.fn + c.tn }

// fbeta returns (1+β²)·P·R / (β²·P + R), written with counts as
// (1+β²)·tp / ((1+β²)·tp + β²·fn + fp). It is 0 without true positives,
// as MXNet (precision or recall without a denominator counts as 0) and
// scikit-learn's zero_division=0.
func (c confusion) fbeta(beta float64) float64 {
	if c.tp == 0 {
		return 0
	}
	b2 := beta * beta
	tp := float64(c.tp)
	return (1 + b2) * tp / ((1+b2)*tp + b2*float64(c.fn) + float64(c.fp))
}

// mcc returns the Matthews correlation coefficient; a factor of the
// denominator that is 0 counts as 1, as MXNet, which makes the result 0
// whenever a row or column of the confusion matrix is empty (as
// scikit-learn).
func (c confusion) mcc() float64 {
	tp, fp, fn, tn := float64(c.tp), float64(c.fp), float64(c.fn), float64(c.tn)
	den := 1.0
	for _, t := range []float64{tp + fp, tp + fn, tn + fp, tn + fn} {
		if t != 0 {
			den *= t
		}
	}
	return (tp*tn - fp*fn) / math.Sqrt(den)
}

// binaryLabel returns label v as 0 or 1 (truncated like a class index) and
// panics for any other value.
func binaryLabel(op string, v float64, sample, device int) bool {
	switch classIndex(v) {
	case 0:
		return false
	case 1:
		return true
	}
	nd.Panicf(op, nd.ErrArgument, "label %v of sample %d (device %d) is not 0 or 1 (binary classification)", v, sample, device)
	return false
}

// binaryConfusion checks a batch of binary labels and predictions and
// counts its outcomes. Predictions [N, 2] (unless the labels have that
// shape too) are class scores, positive when the second is larger (the
// first maximum wins a tie, as argmax); otherwise predictions hold one
// probability per label, positive when above threshold.
func binaryConfusion(op string, labels, preds []*nd.NDArray, threshold float64) confusion {
	ls, ps := read(op, labels, preds, true)
	var c confusion
	for i := range ps {
		label, pred := ls[i], ps[i]
		scores := len(pred.shape) == 2 && pred.shape[1] == 2 && pred.shape[0] == len(label.data) &&
			!slices.Equal(label.shape, pred.shape)
		if !scores && len(pred.data) != len(label.data) {
			nd.Panicf(op, nd.ErrShape, "predictions of shape %v do not fit labels of shape %v (want scores [%d, 2] or one probability per label)",
				pred.shape, label.shape, len(label.data))
		}
		for r, lv := range label.data {
			var positive bool
			if scores {
				positive = pred.data[2*r+1] > pred.data[2*r]
			} else {
				positive = pred.data[r] > threshold
			}
			switch truth := binaryLabel(op, lv, r, i); {
			case positive && truth:
				c.tp++
			case positive:
				c.fp++
			case truth:
				c.fn++
			default:
				c.tn++
			}
		}
	}
	return c
}

// BinaryAccuracy is Gluon 2.0's mx.gluon.metric.BinaryAccuracy: the
// fraction of predictions p, each a confidence of being positive, with
// (p > Threshold) equal to the label (0 or 1). Every element is one
// prediction, so it serves multi-label outputs [N, C] as well; labels must
// hold as many elements as the predictions. A label other than 0 or 1
// (after truncation to an integer) panics, where Gluon silently counts it
// as wrong.
//
// The zero value uses threshold 0.5; NewBinaryAccuracy sets another.
type BinaryAccuracy struct {
	threshold    float64
	hasThreshold bool

	mu             sync.Mutex
	correct, total int64
}

// NewBinaryAccuracy returns an empty BinaryAccuracy that counts p >
// threshold as positive (0.5 for probabilities, 0 for logits); it panics
// if threshold is NaN.
func NewBinaryAccuracy(threshold float64) *BinaryAccuracy {
	if math.IsNaN(threshold) {
		nd.Panicf("metric.NewBinaryAccuracy", nd.ErrArgument, "threshold is NaN")
	}
	return &BinaryAccuracy{threshold: threshold, hasThreshold: true}
}

// Threshold returns the value above which a prediction is positive.
func (m *BinaryAccuracy) Threshold() float64 {
	if !m.hasThreshold {
		return 0.5
	}
	return m.threshold
}

// Update adds a batch of one label and one prediction array per device.
func (m *BinaryAccuracy) Update(labels, preds []*nd.NDArray) {
	const op = "metric.BinaryAccuracy.Update"
	threshold := m.Threshold()
	ls, ps := read(op, labels, preds, true)
	var correct, total int64
	for i := range ps {
		label, pred := ls[i], ps[i]
		if len(label.data) != len(pred.data) {
			nd.Panicf(op, nd.ErrShape, "labels of shape %v do not match predictions of shape %v (device %d: %d labels, %d predictions)",
				label.shape, pred.shape, i, len(label.data), len(pred.data))
		}
		for r, lv := range label.data {
			if binaryLabel(op, lv, r, i) == (pred.data[r] > threshold) {
				correct++
			}
		}
		total += int64(len(label.data))
	}
	m.mu.Lock()
	m.correct += correct
	m.total += total
	m.mu.Unlock()
}

// Get returns "binary_accuracy" and the fraction of correct predictions.
func (m *BinaryAccuracy) Get() (string, float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return "binary_accuracy", ratio(float64(m.correct), m.total)
}

// Reset forgets every update.
func (m *BinaryAccuracy) Reset() {
	m.mu.Lock()
	m.correct, m.total = 0, 0
	m.mu.Unlock()
}
