// Package metric holds the evaluation metrics of MXNet's mx.metric, and
// those Gluon 2.0's mx.gluon.metric added, for Goluon:
//
//   - classification: Accuracy, TopKAccuracy, and for binary classifiers
//     BinaryAccuracy, F1, Fbeta and MCC (Matthews correlation);
//   - probabilities: CrossEntropy, NegativeLogLikelihood and Perplexity;
//   - regression: MAE, MSE, RMSE, PearsonCorrelation, MeanPairwiseDistance
//     and MeanCosineSimilarity;
//   - Loss, the mean of precomputed losses, and a Composite that holds
//     several metrics.
//
// Get's name is MXNet's: "accuracy", "top_k_accuracy_<k>",
// "binary_accuracy", "f1", "fbeta", "mcc", "cross-entropy", "nll-loss",
// "perplexity", "mae", "mse", "rmse", "pearsonr", "mpd", "cos_sim" and
// "loss". Where MXNet 1.9 and Gluon 2.0 disagree, each metric says which
// it follows; the regression metrics average over samples, as Gluon 2.0.
//
// A Metric accumulates over many Update calls and reports the running
// value with Get until Reset. Update takes one label array and one
// prediction array per device, as produced by the multi-device training
// loop (gluon.SplitAndLoad shards a batch; each device computes its own
// predictions); the arrays may live on different contexts and are read back
// to the host, so updating a metric never runs device ops:
//
//	acc := metric.NewAccuracy()
//	acc.Update(labelShards, outputShards) // one array per device
//	name, value := acc.Get()              // "accuracy", correct/total
//
// Counts are exact int64 values, and Update, Get and Reset may be called
// from several goroutines at once. An Update is all or nothing: its input is
// checked and reduced before the metric's state changes.
//
// Misuse (a different number of label and prediction arrays, mismatched
// shapes, nil arrays, a class index out of range, a binary label other
// than 0 or 1) is a programmer mistake and panics with an *nd.Error that
// names the metric and the shapes, as every op of the project does (see
// "Errors" in package nd); mx.metric raises a ValueError in most of these
// places. nd.Catch turns the panic into an error.
package metric

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/nd"
)

// Metric is an evaluation metric accumulated over batches.
type Metric interface {
	// Update adds a batch, given as one label array and one prediction
	// array per device (labels[i] goes with preds[i]).
	Update(labels, preds []*nd.NDArray)
	// Get returns the metric's name and its value over every sample
	// since the last Reset (NaN before the first sample, as MXNet).
	Get() (name string, value float64)
	// Reset forgets every update.
	Reset()
}

// NameValue is one named value of a metric.
type NameValue struct {
	Name  string
	Value float64
}

// String formats the pair as "name=value".
func (nv NameValue) String() string { return fmt.Sprintf("%s=%g", nv.Name, nv.Value) }

// NameValues returns every value m reports, as MXNet's get_name_value: one
// pair for a plain metric and one per member (recursively) for a Composite.
func NameValues(m Metric) []NameValue {
	if c, ok := m.(*Composite); ok {
		return c.GetAll()
	}
	name, v := m.Get()
	return []NameValue{{name, v}}
}

// host is an array read back to the host.
type host struct {
	shape []int
	data  []float64
}

// read checks the per-device slices of an Update and reads every array back
// to the host. With needLabels false, labels are ignored.
func read(op string, labels, preds []*nd.NDArray, needLabels bool) (ls, ps []host) {
	if needLabels && len(labels) != len(preds) {
		nd.Panicf(op, nd.ErrArgument, "%d label arrays but %d prediction arrays (one of each per device)", len(labels), len(preds))
	}
	ps = make([]host, len(preds))
	for i, p := range preds {
		if p == nil {
			nd.Panicf(op, nd.ErrArgument, "prediction array %d is nil", i)
		}
		ps[i] = host{p.Shape(), p.Float64s()}
	}
	if !needLabels {
		return nil, ps
	}
	ls = make([]host, len(labels))
	for i, l := range labels {
		if l == nil {
			nd.Panicf(op, nd.ErrArgument, "label array %d is nil", i)
		}
		ls[i] = host{l.Shape(), l.Float64s()}
	}
	return ls, ps
}

// classIndex converts a label or predicted class stored as a float to an
// integer by truncation, as MXNet's astype('int32').
func classIndex(v float64) int64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return -1
	}
	return int64(v)
}

// ratio returns num/den, or NaN when den is 0.
func ratio(num float64, den int64) float64 {
	if den == 0 {
		return math.NaN()
	}
	return num / float64(den)
}
