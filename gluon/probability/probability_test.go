package probability_test

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/probability"
	"github.com/goluon/goluon/nd"
)

type tensor struct {
	Shape []int
	Data  []number
}

// number is a float64 that JSON writes as "inf", "-inf" or "nan" too.
type number float64

func (v *number) UnmarshalJSON(b []byte) error {
	s := string(b)
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	}
	f, err := strconv.ParseFloat(s, 64)
	*v = number(f)
	return err
}

func floats(v []number) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func ramp(a *nd.NDArray) *nd.NDArray {
	n := a.Size()
	if n < 2 {
		return nd.OnesLike(a)
	}
	return nd.Reshape(nd.Linspace(a.Context(), a.DType(), -1, 1, n), a.Shape()...)
}

// TestGoldens compares log-densities, entropies, CDFs, quantiles and KL
// divergences with torch.distributions (testdata/make_goldens.py): values
// and the gradients of every parameter and value, in float64.
func TestGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Name   string
			Inputs map[string]tensor
			DTypes map[string]string
			Y      tensor
			Grads  map[string]tensor
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) != 38 {
		t.Fatalf("%d cases, want the generator's 38", len(g.Cases))
	}
	dev := ctx.CPU(0)
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			in := map[string]*nd.NDArray{}
			for k, v := range c.Inputs {
				a := nd.FromSlice(dev, floats(v.Data), v.Shape...)
				if c.DTypes[k] == "int64" {
					a = a.AsType(nd.Int64)
				} else {
					a.AttachGrad(nd.GradWrite)
				}
				in[k] = a
			}
			var y *nd.NDArray
			autograd.Record(func() {
				switch c.Name {
				case "normal_log_prob", "normal_log_prob_bcast":
					y = probability.NewNormal(in["loc"], in["scale"]).LogProb(in["x"])
				case "normal_entropy":
					y = probability.NewNormal(in["loc"], in["scale"]).Entropy()
				case "normal_cdf":
					y = probability.NewNormal(in["loc"], in["scale"]).CDF(in["x"])
				case "normal_icdf":
					y = probability.NewNormal(in["loc"], in["scale"]).ICDF(in["p"])
				case "normal_kl":
					y = probability.KLNormal(probability.NewNormal(in["loc"], in["scale"]), probability.NewNormal(in["loc2"], in["scale2"]))
				case "categorical_log_prob":
					y = probability.NewCategorical(in["logits"]).LogProb(in["idx"])
				case "categorical_entropy":
					y = probability.NewCategorical(in["logits"]).Entropy()
				case "categorical_kl":
					y = probability.KLCategorical(probability.NewCategorical(in["logits"]), probability.NewCategorical(in["logits2"]))
				case "categorical_probs_log_prob":
					y = probability.NewCategoricalProbs(in["probs"]).LogProb(in["idx"])
				case "bernoulli_log_prob":
					y = probability.NewBernoulli(in["logits"]).LogProb(in["x"])
				case "bernoulli_entropy":
					y = probability.NewBernoulli(in["logits"]).Entropy()
				case "bernoulli_kl":
					y = probability.KLBernoulli(probability.NewBernoulli(in["logits"]), probability.NewBernoulli(in["logits2"]))
				case "uniform_log_prob":
					y = probability.NewUniform(in["low"], in["high"]).LogProb(in["x"])
				case "uniform_entropy":
					y = probability.NewUniform(in["low"], in["high"]).Entropy()
				case "mvn_log_prob_tril":
					y = probability.NewMultivariateNormalTril(in["loc"], in["scale_tril"]).LogProb(in["x"])
				case "mvn_log_prob_cov":
					y = probability.NewMultivariateNormal(in["loc"], in["cov"]).LogProb(in["x"])
				case "mvn_entropy":
					y = probability.NewMultivariateNormalTril(in["loc"], in["scale_tril"]).Entropy()
				case "gamma_log_prob":
					y = probability.NewGamma(in["conc"], in["rate"]).LogProb(in["x"])
				case "gamma_entropy":
					y = probability.NewGamma(in["conc"], in["rate"]).Entropy()
				case "beta_log_prob":
					y = probability.NewBeta(in["a"], in["b"]).LogProb(in["x"])
				case "beta_entropy":
					y = probability.NewBeta(in["a"], in["b"]).Entropy()
				case "dirichlet_log_prob":
					y = probability.NewDirichlet(in["conc"]).LogProb(in["x"])
				case "dirichlet_entropy":
					y = probability.NewDirichlet(in["conc"]).Entropy()
				case "poisson_log_prob":
					y = probability.NewPoisson(in["rate"]).LogProb(in["k"])
				case "exponential_log_prob":
					y = probability.NewExponential(in["rate"]).LogProb(in["x"])
				case "exponential_entropy":
					y = probability.NewExponential(in["rate"]).Entropy()
				case "laplace_log_prob":
					y = probability.NewLaplace(in["loc"], in["scale"]).LogProb(in["x"])
				case "laplace_entropy":
					y = probability.NewLaplace(in["loc"], in["scale"]).Entropy()
				case "categorical_probs_kl":
					y = probability.KLCategorical(probability.NewCategoricalProbs(in["probs"]), probability.NewCategoricalProbs(in["probs2"]))
				case "gamma_kl":
					y = probability.KLGamma(probability.NewGamma(in["a1"], in["b1"]), probability.NewGamma(in["a2"], in["b2"]))
				case "beta_kl":
					y = probability.KLBeta(probability.NewBeta(in["a1"], in["b1"]), probability.NewBeta(in["a2"], in["b2"]))
				case "dirichlet_kl":
					y = probability.KLDirichlet(probability.NewDirichlet(in["c1"]), probability.NewDirichlet(in["c2"]))
				case "exponential_kl":
					y = probability.KLExponential(probability.NewExponential(in["r1"]), probability.NewExponential(in["r2"]))
				case "laplace_kl":
					y = probability.KLLaplace(probability.NewLaplace(in["l1"], in["s1"]), probability.NewLaplace(in["l2"], in["s2"]))
				default:
					t.Fatalf("unknown case %q", c.Name)
				}
				autograd.Backward(nd.Sum(nd.Mul(y, ramp(y))))
			})
			near(t, "value", y.Shape(), c.Y.Shape, y.Float64s(), floats(c.Y.Data), 1e-11)
			gradTol := 1e-11
			switch c.Name {
			case "gamma_entropy", "beta_entropy", "dirichlet_entropy", "gamma_kl", "beta_kl", "dirichlet_kl":
				// Through ψ′, where torch's polygamma(1, ·) is 5e-10 off
				// (nd.Trigamma agrees with mpmath).
				gradTol = 1e-8
			}
			for k, want := range c.Grads {
				near(t, "gradient of "+k, in[k].Grad().Shape(), want.Shape, in[k].Grad().Float64s(), floats(want.Data), gradTol)
			}
		})
	}
}

func near(t *testing.T, what string, shape, wantShape []int, got, want []float64, tol float64) {
	t.Helper()
	if len(shape) != len(wantShape) || len(got) != len(want) {
		t.Fatalf("%s: shape %v, torch %v", what, shape, wantShape)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) && got[i] != want[i] {
			t.Fatalf("%s %d: %v, torch %v", what, i, got[i], want[i])
		}
	}
}

// TestBuiltOutsideRecord: a distribution made before autograd.Record (a
// learnable prior made once) gives its parameters the same gradients as
// one made inside.
func TestBuiltOutsideRecord(t *testing.T) {
	dev := ctx.CPU(0)
	loc := nd.FromSlice(dev, []float64{0.5, -1}, 2)
	tril := nd.FromSlice(dev, []float64{1.5, 0, 0.3, 0.8}, 2, 2)
	logits := nd.FromSlice(dev, []float64{0.2, -1, 2}, 3)
	x, idx := nd.FromSlice(dev, []float64{1, 0.5}, 2), nd.FromSlice(dev, []int64{2}, 1)
	grads := func(outside bool) []float64 {
		for _, a := range []*nd.NDArray{loc, tril, logits} {
			a.AttachGrad(nd.GradWrite)
		}
		var mvn probability.MultivariateNormal
		var cat probability.Categorical
		build := func() {
			mvn, cat = probability.NewMultivariateNormalTril(loc, tril), probability.NewCategorical(logits)
		}
		if outside {
			build()
		}
		autograd.Record(func() {
			if !outside {
				build()
			}
			autograd.Backward(nd.Add(nd.Sum(mvn.LogProb(x)), nd.Sum(cat.LogProb(idx))))
		})
		return append(append(loc.Grad().Float64s(), tril.Grad().Float64s()...), logits.Grad().Float64s()...)
	}
	inside, outside := grads(false), grads(true)
	for i := range inside {
		if inside[i] != outside[i] {
			t.Fatalf("gradient %d: %v built outside Record, %v inside", i, outside[i], inside[i])
		}
	}
	if outside[2] == 0 {
		t.Error("the scale got no gradient")
	}
}
