package metric_test

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/nd"
)

// The goldens come from testdata/make_goldens_metrics.py (scikit-learn,
// SciPy, PyTorch and numpy, float64); see its docstring for the schema.

// jnum is a JSON number that may also be written as the string "NaN",
// "Infinity" or "-Infinity".
type jnum float64

func (n *jnum) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch s {
		case "NaN":
			*n = jnum(math.NaN())
		case "Infinity":
			*n = jnum(math.Inf(1))
		case "-Infinity":
			*n = jnum(math.Inf(-1))
		default:
			return &json.UnsupportedValueError{Str: s}
		}
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*n = jnum(f)
	return err
}

type goldenTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

type goldenShard struct {
	Label goldenTensor `json:"label"`
	Pred  goldenTensor `json:"pred"`
}

type goldenCase struct {
	Name   string `json:"name"`
	Metric string `json:"metric"`
	Config struct {
		Average   string   `json:"average"`
		Beta      float64  `json:"beta"`
		Threshold *float64 `json:"threshold"`
		P         jnum     `json:"p"`
		Eps       float64  `json:"eps"`
	} `json:"config"`
	Batches [][]goldenShard `json:"batches"`
	Value   jnum            `json:"value"`
}

func loadMetricGoldens(t *testing.T) []goldenCase {
	t.Helper()
	b, err := os.ReadFile("testdata/goldens_metrics.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("no golden cases")
	}
	return f.Cases
}

// build returns the metric a golden case describes.
func (g goldenCase) build(t *testing.T) metric.Metric {
	t.Helper()
	avg := metric.BatchMean
	if g.Config.Average == "micro" {
		avg = metric.Global
	}
	switch g.Metric {
	case "f1":
		return &metric.F1{Average: avg}
	case "fbeta":
		return metric.NewFbeta(g.Config.Beta, avg)
	case "mcc":
		return metric.NewMCC(avg)
	case "binary_accuracy":
		if g.Config.Threshold == nil {
			return &metric.BinaryAccuracy{}
		}
		return metric.NewBinaryAccuracy(*g.Config.Threshold)
	case "mae":
		return metric.NewMAE()
	case "mse":
		return metric.NewMSE()
	case "rmse":
		return metric.NewRMSE()
	case "pearsonr":
		return metric.NewPearsonCorrelation()
	case "nll-loss":
		return &metric.NegativeLogLikelihood{Epsilon: g.Config.Eps}
	case "mpd":
		return &metric.MeanPairwiseDistance{P: float64(g.Config.P)}
	case "cos_sim":
		return &metric.MeanCosineSimilarity{Epsilon: g.Config.Eps}
	}
	t.Fatalf("unknown metric %q", g.Metric)
	return nil
}

// TestGoldens feeds each case batch by batch, shard j of a batch on
// cpu(j), and compares Get with the reference value.
func TestGoldens(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range loadMetricGoldens(t) {
		seen[g.Metric] = true
		t.Run(g.Name, func(t *testing.T) {
			m := g.build(t)
			for _, b := range g.Batches {
				var labels, preds []*nd.NDArray
				for j, s := range b {
					labels = append(labels, nd.FromSlice(ctx.CPU(j), s.Label.Data, s.Label.Shape...))
					preds = append(preds, nd.FromSlice(ctx.CPU(j), s.Pred.Data, s.Pred.Shape...))
				}
				m.Update(labels, preds)
			}
			name, got := m.Get()
			want := float64(g.Value)
			if name != g.Metric || !near(got, want, 1e-12) {
				t.Errorf("Get() = %q, %.17g; want %q, %.17g", name, got, g.Metric, want)
			}
		})
	}
	for _, name := range []string{"f1", "fbeta", "mcc", "binary_accuracy", "mae", "mse", "rmse",
		"pearsonr", "nll-loss", "mpd", "cos_sim"} {
		if !seen[name] {
			t.Errorf("no golden case for %q", name)
		}
	}
}

// near compares with a relative tolerance, NaN equal to NaN.
func near(got, want, tol float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	return math.Abs(got-want) <= tol*(1+math.Abs(want))
}
