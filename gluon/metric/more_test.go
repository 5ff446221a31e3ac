package metric_test

import (
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/nd"
)

var (
	_ metric.Metric = (*metric.BinaryAccuracy)(nil)
	_ metric.Metric = (*metric.F1)(nil)
	_ metric.Metric = (*metric.Fbeta)(nil)
	_ metric.Metric = (*metric.MCC)(nil)
	_ metric.Metric = (*metric.MAE)(nil)
	_ metric.Metric = (*metric.MSE)(nil)
	_ metric.Metric = (*metric.RMSE)(nil)
	_ metric.Metric = (*metric.PearsonCorrelation)(nil)
	_ metric.Metric = (*metric.NegativeLogLikelihood)(nil)
	_ metric.Metric = (*metric.MeanPairwiseDistance)(nil)
	_ metric.Metric = (*metric.MeanCosineSimilarity)(nil)
	_ metric.Metric = (*metric.Perplexity)(nil)
)

// f64 builds a float64 array on dev.
func f64(dev ctx.Context, v []float64, shape ...int) *nd.NDArray {
	return nd.FromSlice(dev, v, shape...)
}

// mccExample is the batch of MXNet's MCC docstring: 1000 false positives,
// 1 true negative, 1 false negative and 10000 true positives.
func mccExample() batch {
	var labels, scores []float64
	add := func(n int, label float64, s0, s1 float64) {
		for range n {
			labels = append(labels, label)
			scores = append(scores, s0, s1)
		}
	}
	add(1000, 0, 0.3, 0.7)
	add(1, 0, 0.7, 0.3)
	add(1, 1, 0.7, 0.3)
	add(10000, 1, 0.3, 0.7)
	return batch{list(f64(c0, labels)), list(f64(c0, scores, len(labels), 2))}
}

// TestMoreMetrics checks the metrics added after mx.metric's first four on
// small hand-computed batches (most are the examples of MXNet's
// docstrings), and that Reset brings back NaN.
func TestMoreMetrics(t *testing.T) {
	// MXNet's F1 example: scores → classes [1 1 1], labels [0 1 1]:
	// tp 2, fp 1, fn 0, so P = 2/3, R = 1 and F1 = 0.8.
	f1Batch := batch{list(f64(c0, []float64{0, 1, 1})), list(f64(c0, []float64{0.3, 0.7, 0, 1, 0.4, 0.6}, 3, 2))}
	// Probabilities [0.2 0.9] against labels [1 0]: tp 0, fp 1, fn 1.
	missBatch := batch{list(f64(c0, []float64{1, 0})), list(f64(c0, []float64{0.2, 0.9}))}
	empty := batch{list(f64(c0, nil, 0)), list(f64(c0, nil, 0, 2))}
	regression := batch{list(f64(c0, []float64{2.5, 0, 2, 8})), list(f64(c0, []float64{3, -0.5, 2, 7}))}
	for _, c := range []struct {
		name      string
		m         metric.Metric
		batches   []batch
		wantName  string
		wantValue float64
	}{
		{"f1", metric.NewF1(metric.BatchMean), []batch{f1Batch}, "f1", 0.8},
		{"f1/zero-value", &metric.F1{}, []batch{f1Batch}, "f1", 0.8},
		{"f1/macro", metric.NewF1(metric.BatchMean), []batch{f1Batch, missBatch}, "f1", (0.8 + 0) / 2},
		// Over both batches: tp 2, fp 2, fn 1.
		{"f1/micro", metric.NewF1(metric.Global), []batch{f1Batch, missBatch}, "f1", 4.0 / 7},
		{"f1/empty-update-not-a-batch", metric.NewF1(metric.BatchMean), []batch{f1Batch, empty}, "f1", 0.8},
		{"f1/only-empty", metric.NewF1(metric.Global), []batch{empty}, "f1", math.NaN()},
		{"f1/no-positive-prediction", metric.NewF1(metric.Global),
			[]batch{{list(f64(c0, []float64{1, 0})), list(f64(c0, []float64{0.1, 0.5}))}}, "f1", 0},
		{"f1/label-column", metric.NewF1(metric.Global),
			[]batch{{list(f64(c0, []float64{0, 1, 1}, 3, 1)), f1Batch.preds}}, "f1", 0.8},
		{"f1/int-labels", metric.NewF1(metric.Global),
			[]batch{{list(nd.FromSlice(c0, []int64{0, 1, 1})), f1Batch.preds}}, "f1", 0.8},
		{"fbeta/2", metric.NewFbeta(2, metric.BatchMean), []batch{f1Batch}, "fbeta", 10.0 / 11},
		{"fbeta/0.5", metric.NewFbeta(0.5, metric.Global), []batch{f1Batch}, "fbeta", 1.25 * 2 / (1.25*2 + 1)},
		{"mcc/mxnet-example", metric.NewMCC(metric.BatchMean), []batch{mccExample()}, "mcc", 0.01917751877733392},
		{"f1/mxnet-mcc-example", metric.NewF1(metric.Global), []batch{mccExample()}, "f1", 0.9523356030665207},
		// f1Batch: (2·0 − 1·0)/√(3·2·1·1) = 0 … its column tn+fn is empty.
		{"mcc/empty-column", metric.NewMCC(metric.Global), []batch{f1Batch}, "mcc", 0},
		{"mcc/perfect-and-inverse-macro", metric.NewMCC(metric.BatchMean), []batch{
			{list(f64(c0, []float64{0, 1})), list(f64(c0, []float64{0.1, 0.9}))},
			{list(f64(c0, []float64{0, 1})), list(f64(c0, []float64{0.9, 0.1}))},
		}, "mcc", 0},
		{"binary-accuracy/mxnet-example", metric.NewBinaryAccuracy(0.6),
			[]batch{{list(f64(c0, []float64{0, 1, 0})), list(f64(c0, []float64{0.7, 1, 0.55}))}},
			"binary_accuracy", 2.0 / 3},
		{"binary-accuracy/zero-value", &metric.BinaryAccuracy{},
			[]batch{{list(f64(c0, []float64{0, 1, 0, 1}, 2, 2)), list(f64(c0, []float64{0.5, 0.51, 0.7, 0.2}, 2, 2))}},
			"binary_accuracy", 0.5},
		{"mae/mxnet-example", metric.NewMAE(), []batch{regression}, "mae", 0.5},
		{"mse/mxnet-example", metric.NewMSE(), []batch{regression}, "mse", 0.375},
		{"rmse/mxnet-example", metric.NewRMSE(), []batch{regression}, "rmse", math.Sqrt(0.375)},
		// Batches of 1 and 3 samples: the mean is over the 4 samples (Gluon
		// 2.0), not over the 2 batches (MXNet 1.9 would give (4 + 0)/2).
		{"mae/per-sample", &metric.MAE{}, []batch{
			{list(f64(c0, []float64{4})), list(f64(c0, []float64{0}, 1, 1))},
			{list(f64(c0, []float64{1, 2, 3})), list(f64(c0, []float64{1, 2, 3}, 3, 1))},
		}, "mae", 1},
		{"rmse/root-of-total", &metric.RMSE{}, []batch{
			{list(f64(c0, []float64{4})), list(f64(c0, []float64{0}))},
			{list(f64(c0, []float64{0, 0, 0})), list(f64(c0, []float64{0, 0, 0}))},
		}, "rmse", 2},
		// MXNet's example gives 0.42163704544016178 from float32 inputs.
		{"pearsonr/mxnet-example", metric.NewPearsonCorrelation(),
			[]batch{{list(f64(c0, []float64{1, 0, 0, 1, 0, 1}, 3, 2)), f1Batch.preds}}, "pearsonr", 0.42163702135578396},
		{"pearsonr/mxnet-example-float32", metric.NewPearsonCorrelation(),
			[]batch{{list(arr(c0, []float32{1, 0, 0, 1, 0, 1}, 3, 2)), list(arr(c0, []float32{0.3, 0.7, 0, 1, 0.4, 0.6}, 3, 2))}},
			"pearsonr", 0.42163704544016178},
		{"pearsonr/perfect", &metric.PearsonCorrelation{}, []batch{
			{list(f64(c0, []float64{1, 2})), list(f64(c0, []float64{10, 20}))},
			{list(f64(c0, []float64{3})), list(f64(c0, []float64{30}))},
		}, "pearsonr", 1},
		{"pearsonr/one-sample", &metric.PearsonCorrelation{},
			[]batch{{list(f64(c0, []float64{1})), list(f64(c0, []float64{2}))}}, "pearsonr", math.NaN()},
		{"pearsonr/constant-label", &metric.PearsonCorrelation{},
			[]batch{{list(f64(c0, []float64{1, 1, 1})), list(f64(c0, []float64{1, 2, 3}))}}, "pearsonr", math.NaN()},
		{"nll/mxnet-example", metric.NewNegativeLogLikelihood(),
			[]batch{{list(f64(c0, []float64{0, 1, 1})), list(f64(c0, []float64{0.3, 0.7, 0, 1, 0.4, 0.6}, 3, 2))}},
			"nll-loss", -(math.Log(0.3+1e-12) + math.Log(1+1e-12) + math.Log(0.6+1e-12)) / 3},
		{"nll/zero-value-eps", &metric.NegativeLogLikelihood{},
			[]batch{{list(f64(c0, []float64{0})), list(f64(c0, []float64{0, 1}, 1, 2))}}, "nll-loss", -math.Log(1e-12)},
		{"mpd/mxnet-example", metric.NewMeanPairwiseDistance(),
			[]batch{{list(f64(c0, []float64{1, 0, 4, 2}, 2, 2)), list(f64(c0, []float64{1, 2, 3, 4}, 2, 2))}},
			"mpd", (2 + math.Sqrt(5)) / 2},
		{"mpd/p1-zero-value", &metric.MeanPairwiseDistance{P: 1},
			[]batch{{list(f64(c0, []float64{1, 0, 4, 2}, 2, 2)), list(f64(c0, []float64{1, 2, 3, 4}, 2, 2))}},
			"mpd", (2 + 3) / 2.0},
		{"mpd/p3-odd", &metric.MeanPairwiseDistance{P: 3},
			[]batch{{list(f64(c0, []float64{0, 0})), list(f64(c0, []float64{1, 2}, 1, 2))}}, "mpd", math.Cbrt(9)},
		{"mpd/huge", &metric.MeanPairwiseDistance{},
			[]batch{{list(f64(c0, []float64{3e200, 4e200})), list(f64(c0, []float64{0, 0}, 1, 2))}}, "mpd", 5e200},
		{"cos-sim/mxnet-example", metric.NewMeanCosineSimilarity(),
			[]batch{{list(f64(c0, []float64{3, 4, 2, 2}, 2, 2)), list(f64(c0, []float64{1, 0, 1, 1}, 2, 2))}}, "cos_sim", 0.8},
		{"cos-sim/vector-and-zero", &metric.MeanCosineSimilarity{}, []batch{
			{list(f64(c0, []float64{1, 1})), list(f64(c0, []float64{-2, -2}))},
			{list(f64(c0, []float64{0, 0})), list(f64(c0, []float64{1, 2}))},
		}, "cos_sim", -0.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, b := range c.batches {
				c.m.Update(b.labels, b.preds)
			}
			name, v := c.m.Get()
			if name != c.wantName || !same(v, c.wantValue) {
				t.Fatalf("Get() = %q, %v; want %q, %v", name, v, c.wantName, c.wantValue)
			}
			c.m.Reset()
			if name, v := c.m.Get(); name != c.wantName || !math.IsNaN(v) {
				t.Fatalf("after Reset Get() = %q, %v; want %q, NaN", name, v, c.wantName)
			}
		})
	}
}

func TestBinaryOptions(t *testing.T) {
	if s := metric.BatchMean.String() + " " + metric.Global.String() + " " + metric.Average(7).String(); s != "batch-mean global Average(7)" {
		t.Errorf("Average strings %q", s)
	}
	if th := (&metric.BinaryAccuracy{}).Threshold(); th != 0.5 {
		t.Errorf("zero-value threshold %v, want 0.5", th)
	}
	if th := metric.NewBinaryAccuracy(0).Threshold(); th != 0 {
		t.Errorf("NewBinaryAccuracy(0) threshold %v, want 0", th)
	}
	if b := metric.NewFbeta(2, metric.Global).Beta(); b != 2 {
		t.Errorf("Beta() = %v", b)
	}
	// Fbeta with β = 1 is F1, in both modes.
	for _, avg := range []metric.Average{metric.BatchMean, metric.Global} {
		f1, fb := metric.NewF1(avg), metric.NewFbeta(1, avg)
		for _, b := range []batch{mccExample(),
			{list(f64(c0, []float64{1, 0, 1})), list(f64(c0, []float64{0.9, 0.9, 0.2}))}} {
			f1.Update(b.labels, b.preds)
			fb.Update(b.labels, b.preds)
		}
		_, a := f1.Get()
		_, b := fb.Get()
		if !same(a, b) {
			t.Errorf("%v: F1 %v, Fbeta(1) %v", avg, a, b)
		}
	}
	// Changing Average between updates only changes what Get reports.
	m := metric.NewF1(metric.BatchMean)
	m.Update(list(f64(c0, []float64{0, 1, 1})), list(f64(c0, []float64{0.3, 0.7, 0, 1, 0.4, 0.6}, 3, 2)))
	m.Update(list(f64(c0, []float64{1, 0})), list(f64(c0, []float64{0.2, 0.9})))
	m.Average = metric.Global
	if _, v := m.Get(); !same(v, 4.0/7) {
		t.Errorf("micro after macro updates: %v, want 4/7", v)
	}
}
