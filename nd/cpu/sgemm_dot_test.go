//go:build amd64

package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDot4 checks dot4F32 and its ZMM twin against float64 sums, the two
// bit for bit (the same partial sums in the same order), and that the
// ZMM kernel reads nothing past rows that end at an inaccessible page.
func TestDot4(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{0, 1, 5, 15, 16, 17, 32, 48, 84, 120, 400, 401, 1024} {
		x := make([]float32, k+1)
		rows := make([][]float32, 4)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		for r := range rows {
			rows[r] = make([]float32, k+1)
			for i := range rows[r] {
				rows[r][i] = float32(rng.NormFloat64())
			}
		}
		var got, zmm [4]float32
		dot4F32(&x[0], &rows[0][0], &rows[1][0], &rows[2][0], &rows[3][0], k, &got[0])
		for r := range 4 {
			var want, mag float64
			for i := range k {
				want += float64(x[i]) * float64(rows[r][i])
				mag += math.Abs(float64(x[i]) * float64(rows[r][i]))
			}
			if d := math.Abs(float64(got[r]) - want); d > 1e-6*mag+1e-30 {
				t.Errorf("k=%d row %d: %g, want %g", k, r, got[r], want)
			}
		}
		if DetectedISA() >= ISAAVX512 {
			dot4F32x512(&x[0], &rows[0][0], &rows[1][0], &rows[2][0], &rows[3][0], k, &zmm[0])
			if zmm != got {
				t.Errorf("k=%d: ZMM %v, AVX2 %v", k, zmm, got)
			}
		}
	}
	g := newGuarded(t, 4*64)
	vals := []float32{1.5, -2, 0.25, 3}
	for _, k := range []int{4, 16, 20, 36, 48} { // the tails end at the guard page
		_, p := g.tail(k, vals)
		var a, z [4]float32
		dot4F32(p, p, p, p, p, k, &a[0])
		if DetectedISA() >= ISAAVX512 {
			dot4F32x512(p, p, p, p, p, k, &z[0])
		}
		if want := float32(k/4) * 15.3125; a[3] != want || DetectedISA() >= ISAAVX512 && z != a {
			t.Errorf("guarded k=%d: %v (ZMM %v), want %g", k, a, z, want)
		}
	}
}
