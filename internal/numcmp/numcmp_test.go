package numcmp

import (
	"math"
	"testing"
)

func TestRelL2(t *testing.T) {
	for _, c := range []struct {
		got, want []float32
		rel       float64
	}{
		{[]float32{1, 2}, []float32{1, 2}, 0},
		{[]float32{3, 4}, []float32{0, 0}, 5e15},
		{[]float32{4, 4}, []float32{3, 4}, 0.2},
	} {
		if got := RelL2(c.got, c.want); math.Abs(got-c.rel) > 1e-12*max(1, c.rel) {
			t.Errorf("RelL2(%v, %v) = %v, want %v", c.got, c.want, got, c.rel)
		}
	}
	if r := RelL2([]float32{float32(math.NaN())}, []float32{1}); r == r {
		t.Errorf("NaN gave %v", r)
	}
}
