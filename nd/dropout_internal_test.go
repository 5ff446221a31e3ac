package nd

import (
	"math"
	"slices"
	"testing"
)

// TestFillMask checks the dropout mask generator: the dropped fraction,
// the kept value, an odd length's last value, reproducibility for a seed
// and different masks for different seeds.
func TestFillMask(t *testing.T) {
	for _, p := range []float64{0, 0.25, 0.5, 0.9} {
		const n = 100001
		thr := uint32(min(p*(1<<32), 1<<32-1))
		keep := 1 / (1 - p)
		a := fillMask(make([]float32, n), 7, thr, keep)
		zeros := 0
		for i, v := range a {
			switch {
			case v == 0:
				zeros++
			case v != float32(keep):
				t.Fatalf("p=%g: value %d is %v, want 0 or %v", p, i, v, float32(keep))
			}
		}
		// Binomial standard deviation for n = 1e5 is at most 0.0016.
		if frac := float64(zeros) / n; math.Abs(frac-p) > 0.01 {
			t.Errorf("p=%g: dropped fraction %.4f", p, frac)
		}
		b := fillMask(make([]float64, n), 7, thr, keep)
		for i := range a {
			if float64(a[i]) != float64(float32(b[i])) {
				t.Fatalf("p=%g: float32 and float64 masks differ at %d", p, i)
			}
		}
		if p > 0 && slices.Equal(a, fillMask(make([]float32, n), 8, thr, keep)) {
			t.Errorf("p=%g: seeds 7 and 8 give the same mask", p)
		}
	}
}
