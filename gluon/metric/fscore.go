package metric

import (
	"math"
	"sync"

	"github.com/goluon/goluon/nd"
)

// binaryStats is the state of F1, Fbeta and MCC: the outcome counts over
// every sample (for Global) and the sum of the per-batch scores and the
// number of batches (for BatchMean), both kept so Get can report either.
type binaryStats struct {
	mu       sync.Mutex
	all      confusion
	batchSum float64
	batches  int64
}

// update checks the batch and the averaging mode, then counts the batch
// and its score.
func (s *binaryStats) update(op string, avg Average, labels, preds []*nd.NDArray, score func(confusion) float64) {
	if avg != BatchMean && avg != Global {
		nd.Panicf(op, nd.ErrArgument, "Average = %v, want BatchMean or Global", avg)
	}
	c := binaryConfusion(op, labels, preds, 0.5)
	if c.total() == 0 {
		return
	}
	batch := score(c)
	s.mu.Lock()
	s.all.add(c)
	s.batchSum += batch
	s.batches++
	s.mu.Unlock()
}

// get returns the score under avg, NaN before the first sample.
func (s *binaryStats) get(avg Average, score func(confusion) float64) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if avg == Global {
		if s.all.total() == 0 {
			return math.NaN()
		}
		return score(s.all)
	}
	return ratio(s.batchSum, s.batches)
}

func (s *binaryStats) reset() {
	s.mu.Lock()
	s.all, s.batchSum, s.batches = confusion{}, 0, 0
	s.mu.Unlock()
}

func f1Score(c confusion) float64 { return c.fbeta(1) }

// F1 is mx.metric.F1: the F1 score 2·P·R / (P + R) of a binary classifier,
// with precision P = tp / (tp + fp) and recall R = tp / (tp + fn). Labels
// are 0 or 1 (truncated to integers; any other value panics, where MXNet
// 1.9 only rejects a batch with more than two distinct labels and counts
// every label but 1 as negative). Predictions are either class scores
// [N, 2], the positive class being the argmax (the first maximum), or one
// probability per label, positive when above 0.5 (as Gluon 2.0).
//
// Average selects the aggregation over Update calls: Global (the zero
// value) gives the F1 of all samples, as scikit-learn's f1_score on the
// whole data set and Gluon 2.0's default; BatchMean averages the F1 of
// each call, MXNet 1.9's default. Without true positives, when precision and
// recall have no denominator or are 0, F1 is 0, as in MXNet and
// scikit-learn with zero_division=0; it is NaN only before the first
// sample.
//
// The zero value is ready to use. Set Average before the first Update.
type F1 struct {
	// Average is BatchMean (per-batch mean) or Global (over all samples).
	Average Average

	st binaryStats
}

// NewF1 returns an empty F1 with the given averaging.
func NewF1(avg Average) *F1 { return &F1{Average: avg} }

// Update adds a batch of one label and one prediction array per device.
func (m *F1) Update(labels, preds []*nd.NDArray) {
	m.st.update("metric.F1.Update", m.Average, labels, preds, f1Score)
}

// Get returns "f1" and the score.
func (m *F1) Get() (string, float64) { return "f1", m.st.get(m.Average, f1Score) }

// Reset forgets every update.
func (m *F1) Reset() { m.st.reset() }

// Fbeta is Gluon 2.0's mx.gluon.metric.Fbeta: the F-beta score
// (1+β²)·P·R / (β²·P + R) of a binary classifier, which weighs recall β
// times as much as precision (β = 1 is F1). Labels, predictions, Average
// and the value without true positives (0) are as F1 describes. Gluon
// 2.0 only accumulates counts (Global); BatchMean averages per batch, as F1.
//
// Build it with NewFbeta.
type Fbeta struct {
	// Average is BatchMean (per-batch mean) or Global (over all samples).
	Average Average

	beta float64
	st   binaryStats
}

// NewFbeta returns an empty Fbeta with the given β and averaging; it
// panics unless beta is positive and finite.
func NewFbeta(beta float64, avg Average) *Fbeta {
	if !(beta > 0) || math.IsInf(beta*beta, 1) { // β² enters the score
		nd.Panicf("metric.NewFbeta", nd.ErrArgument, "beta = %v, want a positive finite value", beta)
	}
	return &Fbeta{Average: avg, beta: beta}
}

// Beta returns β.
func (m *Fbeta) Beta() float64 { return m.beta }

func (m *Fbeta) score(c confusion) float64 { return c.fbeta(m.beta) }

// Update adds a batch of one label and one prediction array per device.
func (m *Fbeta) Update(labels, preds []*nd.NDArray) {
	const op = "metric.Fbeta.Update"
	if !(m.beta > 0) {
		nd.Panicf(op, nd.ErrArgument, "beta = %v; build the metric with NewFbeta", m.beta)
	}
	m.st.update(op, m.Average, labels, preds, m.score)
}

// Get returns "fbeta" and the score.
func (m *Fbeta) Get() (string, float64) { return "fbeta", m.st.get(m.Average, m.score) }

// Reset forgets every update.
func (m *Fbeta) Reset() { m.st.reset() }

func mccScore(c confusion) float64 { return c.mcc() }

// MCC is mx.metric.MCC: the Matthews correlation coefficient of a binary
// classifier,
//
//	(tp·tn − fp·fn) / √((tp+fp)·(tp+fn)·(tn+fp)·(tn+fn)),
//
// from −1 (always wrong) through 0 (no better than chance) to 1. A zero
// factor of the denominator counts as 1, as in MXNet, so the coefficient is
// 0 when the labels or the predictions are all one class (scikit-learn's
// matthews_corrcoef agrees). Labels, predictions and Average are as F1
// describes (Global, the zero value, scores the whole data set).
//
// The zero value is ready to use. Set Average before the first Update.
type MCC struct {
	// Average is BatchMean (per-batch mean) or Global (over all samples).
	Average Average

	st binaryStats
}

// NewMCC returns an empty MCC with the given averaging.
func NewMCC(avg Average) *MCC { return &MCC{Average: avg} }

// Update adds a batch of one label and one prediction array per device.
func (m *MCC) Update(labels, preds []*nd.NDArray) {
	m.st.update("metric.MCC.Update", m.Average, labels, preds, mccScore)
}

// Get returns "mcc" and the coefficient.
func (m *MCC) Get() (string, float64) { return "mcc", m.st.get(m.Average, mccScore) }

// Reset forgets every update.
func (m *MCC) Reset() { m.st.reset() }
