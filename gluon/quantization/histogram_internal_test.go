package quantization

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestHistogramRebin: batches that widen the range keep every count
// (re-binned in proportion), and the result is close to the histogram of
// all the values at once: each value moves at most one bin of the final
// width, so the cumulative counts differ by at most one bin's worth.
func TestHistogramRebin(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	batch := func(n int, scale, shift float64) ([]float32, float32, float32) {
		x := make([]float32, n)
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for i := range x {
			x[i] = float32(r.NormFloat64()*scale + shift)
			lo, hi = min(lo, x[i]), max(hi, x[i])
		}
		return x, lo, hi
	}
	var inc, all histogram
	var xs []float32
	for _, b := range []struct{ scale, shift float64 }{{1, 0}, {3, 1}, {0.5, -2}, {5, 0}, {0, 7}} {
		x, lo, hi := batch(3000, b.scale, b.shift)
		inc.add(x, lo, hi)
		xs = append(xs, x...)
	}
	lo, hi := inc.lo, inc.hi
	all.add(xs, lo, hi)
	var ci, ca, worst float64
	for i := range histBins {
		ci += inc.counts[i]
		ca += all.counts[i]
		worst = max(worst, math.Abs(ci-ca))
	}
	if math.Abs(ci-float64(len(xs))) > 1e-6 {
		t.Fatalf("%v counts after re-binning, want %d", ci, len(xs))
	}
	var maxBin float64
	for _, c := range all.counts {
		maxBin = max(maxBin, c)
	}
	if worst > 2*maxBin {
		t.Errorf("cumulative counts differ by %v (largest bin %v)", worst, maxBin)
	}
	// A degenerate first batch (one value) widened later.
	var d histogram
	d.add([]float32{2, 2, 2}, 2, 2)
	d.add([]float32{0, 4}, 0, 4)
	if d.counts[histBins/2] != 3 || d.counts[0] != 1 || d.counts[histBins-1] != 1 {
		t.Errorf("degenerate batch re-binned to %v, %v, %v", d.counts[0], d.counts[histBins/2], d.counts[histBins-1])
	}
}
