package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// qInputs returns n activations: mostly normal with scale s, some exactly
// on a rounding tie of inv (k+0.5 steps), some far outside the range,
// some ±0, ±Inf and NaN when special.
func qInputs(r *rand.Rand, n int, inv float32, special bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch r.IntN(10) {
		case 0:
			x[i] = (float32(r.IntN(300)-150) + 0.5) / inv
		case 1:
			x[i] = float32(r.NormFloat64() * 1e4)
		case 2:
			if special {
				x[i] = []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}[r.IntN(5)]
			}
		default:
			x[i] = float32(r.NormFloat64() * 3)
		}
	}
	return x
}

// TestQuantizeU8: the AVX2 kernel gives quantizeU8Go's bytes for every
// length up to 100 (all tails) and a long one, ties, values beyond the
// range, infinities and NaNs included; and a few values by hand.
func TestQuantizeU8(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct {
		x    float32
		zero int32
		want uint8
	}{
		{0, 7, 7}, {0.5, 0, 0}, {1.5, 0, 2}, {2.5, 10, 12}, {-0.5, 3, 3}, {-1.5, 3, 1},
		{127.5, 0, 128}, {300, 0, 255}, {-300, 200, 0}, {1e30, 0, 255}, {float32(math.NaN()), 255, 0},
	} {
		var d [1]uint8
		quantizeU8Go(d[:], []float32{c.x}, 1, c.zero)
		if d[0] != c.want {
			t.Errorf("quantize(%v, zero %d) = %d, want %d", c.x, c.zero, d[0], c.want)
		}
	}
	if DetectedISA() < ISAAVX2 {
		t.Skip("no AVX2 kernel on this CPU")
	}
	for n := 32; n <= 32*40; n += 32 {
		inv := float32(1 / (0.01 + r.Float64()))
		zero := int32(r.IntN(256))
		x := qInputs(r, n, inv, true)
		want, got := make([]uint8, n), make([]uint8, n)
		quantizeU8Go(want, x, inv, zero)
		qQuantizeAVX2(&got[0], &x[0], n, inv, zero)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("n %d: value %d (%v·%v, zero %d): AVX2 %d, Go %d", n, i, x[i], inv, zero, got[i], want[i])
			}
		}
	}
	for _, n := range append(func() []int { // the exported function: kernel plus tail, on several cores
		ns := make([]int, 100)
		for i := range ns {
			ns[i] = i
		}
		return ns
	}(), 2*qHostBlock+45) {
		x := qInputs(r, n, 10, false)
		want, got := make([]uint8, n), make([]uint8, n+3)
		quantizeU8Go(want, x, 10, 77)
		QuantizeU8(got, x, 10, 77)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("QuantizeU8 n %d: value %d: %d, want %d", n, i, got[i], want[i])
			}
		}
	}
}

// TestMinMaxF32: the range of every length up to 100 and a long one,
// with NaNs (reported) and infinities (kept), against a loop.
func TestMinMaxF32(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	if _, _, ok := MinMaxF32(nil); ok {
		t.Error("empty input reported ok")
	}
	for _, n := range append(func() []int {
		ns := make([]int, 100)
		for i := range ns {
			ns[i] = i + 1
		}
		return ns
	}(), 4099, 3*qHostBlock+77) {
		for _, special := range []bool{false, true} {
			x := qInputs(r, n, 10, special)
			lo, hi, nan := float32(math.Inf(1)), float32(math.Inf(-1)), false
			for _, v := range x {
				if v != v {
					nan = true
					continue
				}
				lo, hi = min(lo, v), max(hi, v)
			}
			gl, gh, ok := MinMaxF32(x)
			if ok == nan || (!nan && (gl != lo || gh != hi)) {
				t.Fatalf("n %d special %v: (%v, %v, ok %v), want (%v, %v, NaN %v)", n, special, gl, gh, ok, lo, hi, nan)
			}
		}
	}
}
