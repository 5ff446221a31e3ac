package nd_test

import (
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

func TestCategorical(t *testing.T) {
	dev := ctx.CPU(0)
	probs := []float64{0.1, 0, 0.2, 0.7, 0}
	const n = 40000
	nd.Seed(3)
	p := nd.Categorical(nd.FromSlice(dev, probs, 1, 5), n, false)
	if p.DType() != nd.Int64 || !slices.Equal(p.Shape(), []int{1, n}) {
		t.Fatalf("result %v %v, want int64 [1 %d]", p.DType(), p.Shape(), n)
	}
	counts := make([]float64, 5)
	for _, c := range p.Ints() {
		counts[c]++
	}
	for j, want := range probs {
		// 5 standard deviations of a binomial proportion.
		if got := counts[j] / n; math.Abs(got-want) > 5*math.Sqrt(want*(1-want)/n)+1e-12 {
			t.Errorf("class %d drawn with frequency %.4f, want %.2f", j, got, want)
		}
	}
	// The logits form draws the same classes from the same stream.
	logits := make([]float64, len(probs))
	for i, q := range probs {
		logits[i] = math.Log(q) + 3
	}
	nd.Seed(3)
	l := nd.Categorical(nd.FromSlice(dev, logits, 1, 5), n, true)
	if !slices.Equal(l.Ints(), p.Ints()) {
		t.Error("logits and probabilities drew different classes with one seed")
	}
	// Several rows, and reproducibility.
	w := nd.FromSlice(dev, []float32{1, 0, 0, 0, 0, 5}, 2, 3)
	nd.Seed(9)
	a := nd.Categorical(w, 4, false).Ints()
	nd.Seed(9)
	b := nd.Categorical(w, 4, false).Ints()
	if !slices.Equal(a, b) || !slices.Equal(a, []int{0, 0, 0, 0, 2, 2, 2, 2}) {
		t.Errorf("two rows: %v then %v, want [0 0 0 0 2 2 2 2] twice", a, b)
	}
	for name, f := range map[string]func(){
		"all zero": func() { nd.Categorical(nd.Zeros(dev, nd.Float32, 2, 3), 1, false) },
		"negative": func() { nd.Categorical(nd.FromSlice(dev, []float32{1, -1}), 1, false) },
		"nan":      func() { nd.Categorical(nd.FromSlice(dev, []float32{1, float32(math.NaN())}), 1, true) },
		"int":      func() { nd.Categorical(nd.Zeros(dev, nd.Int64, 3), 1, false) },
	} {
		if nd.Catch(f) == nil {
			t.Errorf("%s weights: no error", name)
		}
	}
}

func TestBernoulliRandomIntPermutation(t *testing.T) {
	dev := ctx.CPU(1)
	nd.Seed(5)
	b := nd.Bernoulli(nd.Full(dev, nd.Float32, 0.3, 20000))
	if m := nd.Mean(b).Scalar(); math.Abs(m-0.3) > 5*math.Sqrt(0.3*0.7/20000) {
		t.Errorf("Bernoulli(0.3) mean %.4f", m)
	}
	if z := nd.Sum(nd.Bernoulli(nd.Zeros(dev, nd.Float32, 100))).Scalar(); z != 0 {
		t.Errorf("Bernoulli(0) drew %v ones", z)
	}
	if nd.Catch(func() { nd.Bernoulli(nd.Full(dev, nd.Float32, 1.5, 2)) }) == nil {
		t.Error("Bernoulli(1.5): no error")
	}
	r := nd.RandomInt(dev, nd.Int32, -3, 4, 1000)
	v := r.Ints()
	seen := map[int]bool{}
	for _, x := range v {
		if x < -3 || x >= 4 {
			t.Fatalf("RandomInt drew %d outside [-3, 4)", x)
		}
		seen[x] = true
	}
	if len(seen) != 7 || r.DType() != nd.Int32 {
		t.Errorf("RandomInt: %d distinct values of 7, dtype %v", len(seen), r.DType())
	}
	nd.Seed(5)
	p := nd.Permutation(dev, 50).Ints()
	nd.Seed(5)
	q := nd.Permutation(dev, 50).Ints()
	sorted := slices.Sorted(slices.Values(p))
	for i, x := range sorted {
		if x != i {
			t.Fatalf("Permutation(50) = %v is not a permutation", p)
		}
	}
	if !slices.Equal(p, q) {
		t.Error("Permutation is not reproducible with one seed")
	}
}
