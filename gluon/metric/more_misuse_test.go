package metric_test

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/nd"
)

// TestMoreErrors checks that misuse of the added metrics panics with an
// *nd.Error naming the metric and the shapes or values, and leaves the
// metric unchanged (all or nothing: a bad second shard does not let the
// first one count).
func TestMoreErrors(t *testing.T) {
	ok2 := func() *nd.NDArray { return f64(c0, []float64{0, 1}) }
	for _, c := range []struct {
		name   string
		m      metric.Metric
		labels []*nd.NDArray
		preds  []*nd.NDArray
		kind   nd.ErrorKind
		want   []string
	}{
		{"f1-label-2", metric.NewF1(metric.Global), list(f64(c0, []float64{0, 2})), list(f64(c0, []float64{0.1, 0.9})),
			nd.ErrArgument, []string{"metric.F1.Update", "label 2 of sample 1 (device 0) is not 0 or 1"}},
		{"f1-label-minus-1", metric.NewF1(metric.BatchMean), list(f64(c0, []float64{-1, 1})), list(f64(c0, []float64{0.1, 0.9})),
			nd.ErrArgument, []string{"label -1", "not 0 or 1"}},
		{"f1-shape", metric.NewF1(metric.Global), list(f64(c0, []float64{0, 1, 1})), list(f64(c0, make([]float64, 9), 3, 3)),
			nd.ErrShape, []string{"metric.F1.Update", "[3 3]", "[3]"}},
		{"f1-count", metric.NewF1(metric.Global), list(ok2(), ok2()), list(ok2()),
			nd.ErrArgument, []string{"2 label arrays but 1 prediction arrays"}},
		{"f1-nil-label", metric.NewF1(metric.Global), list(nil), list(ok2()),
			nd.ErrArgument, []string{"label array 0 is nil"}},
		{"f1-average", &metric.F1{Average: 7}, list(ok2()), list(ok2()),
			nd.ErrArgument, []string{"Average = Average(7)"}},
		{"f1-atomic", metric.NewF1(metric.Global), list(ok2(), f64(c1, []float64{1, 3})), list(ok2(), f64(c1, []float64{1, 1})),
			nd.ErrArgument, []string{"label 3 of sample 1 (device 1)"}},
		{"fbeta-zero-value", &metric.Fbeta{}, list(ok2()), list(ok2()),
			nd.ErrArgument, []string{"metric.Fbeta.Update", "NewFbeta"}},
		{"mcc-label", metric.NewMCC(metric.Global), list(f64(c0, []float64{5})), list(f64(c0, []float64{0.4, 0.6}, 1, 2)),
			nd.ErrArgument, []string{"metric.MCC.Update", "label 5"}},
		{"binary-accuracy-label", &metric.BinaryAccuracy{}, list(f64(c0, []float64{0, 2})), list(ok2()),
			nd.ErrArgument, []string{"metric.BinaryAccuracy.Update", "label 2"}},
		{"binary-accuracy-shape", &metric.BinaryAccuracy{}, list(ok2()), list(f64(c0, []float64{0, 1, 1})),
			nd.ErrShape, []string{"[2]", "[3]"}},
		{"mae-shape", metric.NewMAE(), list(f64(c0, []float64{1, 2, 3})), list(f64(c0, []float64{1, 2, 3, 4}, 2, 2)),
			nd.ErrShape, []string{"metric.MAE.Update", "[3]", "[2 2]"}},
		{"mse-nil-pred", metric.NewMSE(), list(ok2()), list(nil),
			nd.ErrArgument, []string{"metric.MSE.Update", "prediction array 0 is nil"}},
		{"rmse-empty-samples", metric.NewRMSE(), list(f64(c0, nil, 2, 0)), list(f64(c0, nil, 2, 0)),
			nd.ErrShape, []string{"metric.RMSE.Update", "[2 0]", "no elements"}},
		{"rmse-atomic", metric.NewRMSE(), list(ok2(), f64(c1, []float64{1})), list(ok2(), f64(c1, []float64{1, 2})),
			nd.ErrShape, []string{"device 1"}},
		{"pearson-shape", metric.NewPearsonCorrelation(), list(ok2()), list(f64(c0, []float64{1, 2, 3})),
			nd.ErrShape, []string{"metric.PearsonCorrelation.Update", "[2]", "[3]"}},
		{"nll-label-range", metric.NewNegativeLogLikelihood(), list(f64(c0, []float64{2})), list(f64(c0, []float64{0.5, 0.5}, 1, 2)),
			nd.ErrArgument, []string{"metric.NegativeLogLikelihood.Update", "label 2", "outside [0, 2)"}},
		{"nll-shape", metric.NewNegativeLogLikelihood(), list(ok2()), list(f64(c0, []float64{0.5, 0.5})),
			nd.ErrShape, []string{"[2]"}},
		{"mpd-p", &metric.MeanPairwiseDistance{P: -1}, list(ok2()), list(ok2()),
			nd.ErrArgument, []string{"metric.MeanPairwiseDistance.Update", "P = -1"}},
		{"mpd-p-nan", &metric.MeanPairwiseDistance{P: math.NaN()}, list(ok2()), list(ok2()),
			nd.ErrArgument, []string{"P = NaN"}},
		{"mpd-shape", metric.NewMeanPairwiseDistance(), list(ok2()), list(f64(c0, []float64{1, 2, 3, 4}, 2, 2)),
			nd.ErrShape, []string{"[2]", "[2 2]"}},
		{"cos-sim-eps", &metric.MeanCosineSimilarity{Epsilon: -1}, list(ok2()), list(ok2()),
			nd.ErrArgument, []string{"metric.MeanCosineSimilarity.Update", "Epsilon = -1"}},
		{"cos-sim-empty-vectors", metric.NewMeanCosineSimilarity(), list(f64(c0, nil, 3, 0)), list(f64(c0, nil, 3, 0)),
			nd.ErrShape, []string{"[3 0]", "empty vectors"}},
		{"cos-sim-shape", metric.NewMeanCosineSimilarity(), list(ok2()), list(f64(c0, []float64{1, 2, 3})),
			nd.ErrShape, []string{"[2]", "[3]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := nd.Catch(func() { c.m.Update(c.labels, c.preds) })
			if err == nil {
				t.Fatal("no panic")
			}
			if !errors.Is(err, &nd.Error{Kind: c.kind}) {
				t.Errorf("kind of %q is not %v", err, c.kind)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if _, v := c.m.Get(); !math.IsNaN(v) {
				t.Errorf("metric changed by a failed Update: %v", v)
			}
		})
	}
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"NewFbeta(0)", func() { metric.NewFbeta(0, metric.BatchMean) }, "beta = 0"},
		{"NewFbeta(-1)", func() { metric.NewFbeta(-1, metric.BatchMean) }, "beta = -1"},
		{"NewFbeta(+Inf)", func() { metric.NewFbeta(math.Inf(1), metric.BatchMean) }, "beta = +Inf"},
		{"NewBinaryAccuracy(NaN)", func() { metric.NewBinaryAccuracy(math.NaN()) }, "threshold is NaN"},
	} {
		if err := nd.Catch(c.f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// allMore returns a fresh instance of every added metric.
func allMore() []metric.Metric {
	return []metric.Metric{
		metric.NewF1(metric.BatchMean), metric.NewF1(metric.Global), metric.NewFbeta(2, metric.BatchMean),
		metric.NewMCC(metric.Global), metric.NewMCC(metric.BatchMean), metric.NewBinaryAccuracy(0.5),
		metric.NewMAE(), metric.NewMSE(), metric.NewRMSE(), metric.NewPearsonCorrelation(),
		metric.NewNegativeLogLikelihood(), metric.NewMeanPairwiseDistance(), metric.NewMeanCosineSimilarity(),
	}
}

// Six samples of probabilities [6, 2], with binary labels [6] for the
// classifiers, multi-label 0/1 labels [6, 2] for BinaryAccuracy and real
// targets [6, 2] for the regression metrics.
var (
	moreLabels = []float64{0, 1, 1, 0, 1, 1}
	moreProbs  = []float64{0.8, 0.2, 0.3, 0.7, 0.6, 0.4, 0.45, 0.55, 0.1, 0.9, 0.5, 0.5}
	moreTarget = []float64{1, 0, 0, 1, 0.5, 0.5, 1, 0, 0, 1, 0, 1}
	moreMulti  = []float64{0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0}
)

// moreUpdate feeds m one batch with the labels that fit it, split at row
// `at` over cpu(0) and cpu(1) (at = 6: one shard).
func moreUpdate(m metric.Metric, at int) {
	labels, width := moreLabels, 1
	switch m.(type) {
	case *metric.MAE, *metric.MSE, *metric.RMSE, *metric.PearsonCorrelation,
		*metric.MeanPairwiseDistance, *metric.MeanCosineSimilarity:
		labels, width = moreTarget, 2
	case *metric.BinaryAccuracy:
		labels, width = moreMulti, 2
	}
	if at == 6 {
		m.Update(list(f64(c0, labels, 6, width)), list(f64(c0, moreProbs, 6, 2)))
		return
	}
	m.Update(
		list(f64(c0, labels[:at*width], at, width), f64(c1, labels[at*width:], 6-at, width)),
		list(f64(c0, moreProbs[:2*at], at, 2), f64(c1, moreProbs[2*at:], 6-at, 2)))
}

// TestMoreMultiDevice checks that an Update with one shard per device
// equals an Update with the whole batch, for any split.
func TestMoreMultiDevice(t *testing.T) {
	for i := range allMore() {
		whole := allMore()[i]
		moreUpdate(whole, 6)
		name, want := whole.Get()
		if math.IsNaN(want) {
			t.Fatalf("%s: NaN for the whole batch", name)
		}
		for at := range 6 {
			m := allMore()[i]
			moreUpdate(m, at)
			if _, got := m.Get(); !near(got, want, 1e-12) {
				t.Errorf("%s split at %d: %v, whole batch %v", name, at, got, want)
			}
		}
	}
}

// TestMoreConcurrentUpdate updates every added metric from several
// goroutines at once (run with -race) and checks that the result is that
// of the same batch given once: the batches are equal, so macro and micro
// averages, means and correlations do not move.
func TestMoreConcurrentUpdate(t *testing.T) {
	want := allMore()
	ms := allMore()
	for i := range want {
		moreUpdate(want[i], 6)
	}
	const workers, rounds = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for _, m := range ms {
					moreUpdate(m, (w+r)%7)
					m.Get()
				}
			}
		}()
	}
	wg.Wait()
	for i, m := range ms {
		name, got := m.Get()
		_, w := want[i].Get()
		if !near(got, w, 1e-12) {
			t.Errorf("%s: %v after %d concurrent updates, %v after one", name, got, workers*rounds, w)
		}
	}
	// The counts are exact: 8·25·6 samples, of which BinaryAccuracy gets
	// 3 of 6 right each time (0.5 is not above the threshold).
	ba := metric.NewBinaryAccuracy(0.5)
	var wg2 sync.WaitGroup
	for range workers {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			for range rounds {
				ba.Update(list(f64(ctx.CPU(1), []float64{0, 1, 1, 0, 1, 1})), list(f64(c0, []float64{0.2, 0.7, 0.4, 0.55, 0.9, 0.5})))
			}
		}()
	}
	wg2.Wait()
	if _, v := ba.Get(); v != 0.5 {
		t.Errorf("binary accuracy %v, want exactly 0.5", v)
	}
}
