package cpu

import (
	"math"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// TestSqrtKernel: the Sqrt op on float32 (the vector kernel at the active
// level, the Go loop without one) gives float32(math.Sqrt(x)) bit for bit
// for every non-negative input (zeros, subnormals, the largest value,
// +Inf) and a NaN for negative ones and NaN, at every length up to 70
// (the tails of 8-, 16-, 32- and 64-value steps).
func TestSqrtKernel(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, 1e-40, 1, 2, 0.25, 3, math.MaxFloat32, float32(math.Inf(1)), -1, float32(math.Inf(-1)), float32(math.NaN())}
	for n := 0; n <= 70; n++ {
		x := make([]float32, n)
		for i := range x {
			if i < len(special) && n%3 == 0 {
				x[i] = special[i]
			} else {
				x[i] = float32(i*i)*0.37 + float32(n)*1e-3
			}
		}
		d := make([]float32, n+1)
		d[n] = -7 // past the end: untouched
		unaryRange(backend.Sqrt, nil, d[:n], x, 0, 0)
		for i, v := range x {
			want := float32(math.Sqrt(float64(v)))
			got := d[i]
			if v < 0 || v != v {
				if got == got {
					t.Fatalf("n=%d: sqrt(%v) = %v, want NaN", n, v, got)
				}
				continue
			}
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d: sqrt(%v) = %v (%#x), want %v (%#x)", n, v, got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
		if d[n] != -7 {
			t.Fatalf("n=%d: wrote past the end", n)
		}
	}
}
