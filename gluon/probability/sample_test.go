package probability_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/probability"
	"github.com/goluon/goluon/nd"
)

// TestSamples: sample moments and frequencies match the distributions, a
// reparameterised sample's gradient is 1 for the mean and ε for the scale,
// and nd.Seed repeats draws.
func TestSamples(t *testing.T) {
	dev := ctx.CPU(0)
	const n = 40000
	nd.Seed(5)
	loc := nd.Full(dev, nd.Float64, 1.5, n)
	scale := nd.Full(dev, nd.Float64, 2, n)
	loc.AttachGrad(nd.GradWrite)
	scale.AttachGrad(nd.GradWrite)
	var s *nd.NDArray
	autograd.Record(func() {
		s = probability.NewNormal(loc, scale).RSample()
		autograd.Backward(nd.Sum(s))
	})
	v := s.Float64s()
	mean, sd := moments(v)
	if math.Abs(mean-1.5) > 0.05 || math.Abs(sd-2) > 0.05 {
		t.Errorf("normal samples: mean %v sd %v, want 1.5 and 2", mean, sd)
	}
	gl := loc.Grad().Float64s()
	for i, g := range scale.Grad().Float64s() {
		if eps := (v[i] - 1.5) / 2; math.Abs(g-eps) > 1e-12 || gl[i] != 1 {
			t.Fatalf("sample %d: gradients %v and %v, want 1 and ε = %v", i, gl[i], g, eps)
		}
	}
	nd.Seed(5)
	if again := probability.NewNormal(loc, scale).Sample().Float64s(); !slices.Equal(again, v) {
		t.Error("the same seed drew other values")
	}

	counts := make([]int, 3)
	probs := nd.FromSlice(dev, []float64{0.2, 0.5, 0.3}, 1, 3)
	cat := probability.NewCategoricalProbs(nd.BroadcastTo(probs, n, 3))
	for _, k := range cat.Sample().Int64s() {
		counts[k]++
	}
	for k, want := range []float64{0.2, 0.5, 0.3} {
		if f := float64(counts[k]) / n; math.Abs(f-want) > 0.01 {
			t.Errorf("class %d drawn %.3f of the time, want %v", k, f, want)
		}
	}
	ones := 0.0
	for _, b := range probability.NewBernoulli(nd.Full(dev, nd.Float64, math.Log(0.25/0.75), n)).Sample().Float64s() {
		ones += b
	}
	if f := ones / n; math.Abs(f-0.25) > 0.01 {
		t.Errorf("Bernoulli(0.25) drew 1 %.3f of the time", f)
	}
	u := probability.NewUniform(nd.Full(dev, nd.Float64, -1, n), nd.Full(dev, nd.Float64, 3, n)).Sample().Float64s()
	if lo, hi := slices.Min(u), slices.Max(u); lo < -1 || hi >= 3 {
		t.Errorf("uniform samples in [%v, %v]", lo, hi)
	}
	// A multivariate normal's sample covariance is its covariance.
	cov := nd.FromSlice(dev, []float64{2, 0.6, 0.6, 1}, 2, 2)
	mvn := probability.NewMultivariateNormal(nd.FromSlice(dev, []float64{1, -1}, 2), cov)
	x := mvn.Sample() // one vector: the batch is empty
	if !slices.Equal(x.Shape(), []int{2}) {
		t.Fatalf("sample of shape %v", x.Shape())
	}
	batch := probability.NewMultivariateNormal(nd.BroadcastTo(nd.FromSlice(dev, []float64{1, -1}, 1, 2), n, 2), cov)
	xs := batch.Sample().Float64s()
	var c [3]float64
	for i := 0; i < len(xs); i += 2 {
		a, b := xs[i]-1, xs[i+1]+1
		c[0], c[1], c[2] = c[0]+a*a, c[1]+a*b, c[2]+b*b
	}
	for i, want := range []float64{2, 0.6, 1} {
		if got := c[i] / n; math.Abs(got-want) > 0.05 {
			t.Errorf("covariance entry %d: %v, want %v", i, got, want)
		}
	}
}

func moments(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)))
}

// TestErrors: parameters of two dtypes or contexts, integer or nil ones,
// and a mean and scale of mismatched sizes are *nd.Error values.
func TestErrors(t *testing.T) {
	dev := ctx.CPU(0)
	f64 := nd.Ones(dev, nd.Float64, 3)
	for name, f := range map[string]func(){
		"dtypes":   func() { probability.NewNormal(f64, nd.Ones(dev, nd.Float32, 3)) },
		"contexts": func() { probability.NewNormal(f64, nd.Ones(ctx.CPU(1), nd.Float64, 3)) },
		"integer":  func() { probability.NewBernoulli(nd.Ones(dev, nd.Int64, 3)) },
		"nil":      func() { probability.NewUniform(nil, f64) },
		"scalar":   func() { probability.NewCategorical(nd.Full(dev, nd.Float64, 1)) },
		"mvn":      func() { probability.NewMultivariateNormalTril(f64, nd.Ones(dev, nd.Float64, 2, 2)) },
	} {
		var e *nd.Error
		if err := nd.Catch(f); !errors.As(err, &e) {
			t.Errorf("%s: %v, want an *nd.Error", name, err)
		}
	}
}

// A VAE's KL term and a reparameterised sample.
func Example() {
	dev := ctx.CPU(0)
	mu := nd.FromSlice(dev, []float64{0.5, -0.2}, 2)
	sigma := nd.FromSlice(dev, []float64{1, 0.5}, 2)
	q := probability.NewNormal(mu, sigma)
	prior := probability.NewNormal(nd.ZerosLike(mu), nd.OnesLike(sigma))
	kl := probability.KLNormal(q, prior)
	fmt.Printf("%.4f %.4f\n", kl.Float64s()[0], kl.Float64s()[1])
	z := q.RSample() // flows gradients back to mu and sigma
	fmt.Println(z.Shape())
	// Output:
	// 0.1250 0.3381
	// [2]
}

// TestMoreSamples: the host samplers' and the reparameterised samplers'
// means and variances are the distributions'.
func TestMoreSamples(t *testing.T) {
	dev := ctx.CPU(0)
	const n = 20000
	nd.Seed(9)
	full := func(v float64) *nd.NDArray { return nd.Full(dev, nd.Float64, v, n) }
	for _, c := range []struct {
		name      string
		sample    func() *nd.NDArray
		mean, vr  float64
		tolM, tol float64
	}{
		{"gamma a=0.5", probability.NewGamma(full(0.5), full(2)).Sample, 0.25, 0.125, 0.01, 0.01},
		{"gamma a=3", probability.NewGamma(full(3), full(2)).Sample, 1.5, 0.75, 0.02, 0.03},
		{"beta", probability.NewBeta(full(2), full(5)).Sample, 2.0 / 7, 10.0 / (49 * 8), 0.005, 0.002},
		{"exponential", probability.NewExponential(full(2)).Sample, 0.5, 0.25, 0.01, 0.01},
		{"laplace", probability.NewLaplace(full(1), full(2)).Sample, 1, 8, 0.05, 0.3},
	} {
		mean, sd := moments(c.sample().Float64s())
		if math.Abs(mean-c.mean) > c.tolM || math.Abs(sd*sd-c.vr) > c.tol {
			t.Errorf("%s: mean %v variance %v, want %v and %v", c.name, mean, sd*sd, c.mean, c.vr)
		}
	}
	conc := nd.BroadcastTo(nd.FromSlice(dev, []float64{1, 2, 3}, 1, 3), n, 3)
	x := probability.NewDirichlet(conc).Sample().Float64s()
	var sums [3]float64
	for i, v := range x {
		sums[i%3] += v
	}
	for k, want := range []float64{1.0 / 6, 2.0 / 6, 3.0 / 6} {
		if got := sums[k] / n; math.Abs(got-want) > 0.01 {
			t.Errorf("Dirichlet component %d: mean %v, want %v", k, got, want)
		}
	}
	for i := 0; i < len(x); i += 3 {
		if s := x[i] + x[i+1] + x[i+2]; math.Abs(s-1) > 1e-12 {
			t.Fatalf("a Dirichlet draw sums to %v", s)
		}
	}
}
