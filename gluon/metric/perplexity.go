package metric

import (
	"math"
	"sync"

	"github.com/goluon/goluon/nd"
)

// Perplexity is mx.metric.Perplexity: exp of the mean over tokens of
// −log p[label], the standard measure of a language model. Predictions are
// probabilities over the classes of their last axis ([N, C], or [N, T, C]
// for sequences), or unnormalised scores when Logits is set (a log_softmax
// is taken on the host); labels hold one class index per prediction row.
// With UseIgnore, tokens whose label is IgnoreLabel (padding) are skipped.
// A probability below 1e-10 counts as 1e-10, as in MXNet, so one
// impossible token does not make the perplexity infinite.
// A label outside [0, C) that is not ignored panics.
//
// The zero value is ready to use.
type Perplexity struct {
	// Logits says predictions are raw scores, not probabilities.
	Logits bool
	// UseIgnore skips tokens whose label is IgnoreLabel.
	UseIgnore bool
	// IgnoreLabel is the label UseIgnore skips.
	IgnoreLabel int

	mu  sync.Mutex
	sum float64
	num int64
}

// NewPerplexity returns an empty Perplexity for probabilities.
func NewPerplexity() *Perplexity { return &Perplexity{} }

// Update adds a batch of one label and one prediction array per device.
func (m *Perplexity) Update(labels, preds []*nd.NDArray) {
	const op = "metric.Perplexity.Update"
	ls, ps := read(op, labels, preds, true)
	var sum float64
	var num int64
	for i := range ps {
		label, pred := ls[i], ps[i]
		if len(pred.shape) == 0 {
			nd.Panicf(op, nd.ErrShape, "predictions of shape %v have no class axis", pred.shape)
		}
		c := pred.shape[len(pred.shape)-1]
		if c == 0 || len(pred.data)/c != len(label.data) {
			nd.Panicf(op, nd.ErrShape, "predictions of shape %v do not fit %d labels (want one row of %d classes per label)",
				pred.shape, len(label.data), c)
		}
		for r, lv := range label.data {
			lbl := classIndex(lv)
			if m.UseIgnore && lbl == int64(m.IgnoreLabel) {
				continue
			}
			if lbl < 0 || lbl >= int64(c) {
				nd.Panicf(op, nd.ErrArgument, "label %v of token %d (device %d) is outside [0, %d)", lv, r, i, c)
			}
			row := pred.data[r*c : (r+1)*c]
			if m.Logits {
				sum -= row[lbl] - logSumExp(row)
			} else {
				sum -= math.Log(max(row[lbl], 1e-10)) // MXNet's floor

			}
			num++
		}
	}
	m.mu.Lock()
	m.sum += sum
	m.num += num
	m.mu.Unlock()
}

func logSumExp(v []float64) float64 {
	top := math.Inf(-1)
	for _, x := range v {
		top = max(top, x)
	}
	if math.IsInf(top, 0) {
		return top
	}
	var s float64
	for _, x := range v {
		s += math.Exp(x - top)
	}
	return top + math.Log(s)
}

// Get returns "perplexity" and exp of the mean negative log-likelihood per
// counted token (NaN before the first one).
func (m *Perplexity) Get() (string, float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return "perplexity", math.Exp(ratio(m.sum, m.num))
}

// Reset forgets every update.
func (m *Perplexity) Reset() {
	m.mu.Lock()
	m.sum, m.num = 0, 0
	m.mu.Unlock()
}
