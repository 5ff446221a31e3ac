package fft

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// naive is the O(n²) DFT, sign −1 forward and +1 backward.
func naive(x []complex128, sign float64) []complex128 {
	n := len(x)
	tw := make([]complex128, n) // (j·k) mod n keeps the angles exact
	for m := range tw {
		tw[m] = cmplx.Rect(1, sign*2*math.Pi*float64(m)/float64(n))
	}
	out := make([]complex128, n)
	for k := range n {
		var s complex128
		for j, v := range x {
			s += v * tw[(j*k)%n]
		}
		out[k] = s
	}
	return out
}

// planLengths mixes small lengths, primes around the FFTPACK limit and
// lengths that go through Bluestein's algorithm.
var planLengths = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 31, 32, 59, 61, 64, 67, 97, 100, 101,
	122, 127, 134, 256, 257, 331, 500, 1009, 2 * 1009, 4099}

func TestPlans(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range planLengths {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			x := make([]complex128, n)
			re := make([]float64, n)
			for i := range x {
				x[i] = complex(rng.Float64()*2-1, rng.Float64()*2-1)
				re[i] = real(x[i])
			}
			tol := 1e-12 * math.Sqrt(float64(n)) * math.Log2(float64(n)+1)
			c := getC(n)
			defer putC(n, c)
			got := make([]complex128, n)
			c.forward(got, x)
			closeC(t, "forward", got, naive(x, -1), tol)
			c.backward(got, x)
			closeC(t, "backward", got, naive(x, +1), tol)

			r := getR(n)
			defer putR(n, r)
			half := make([]complex128, n/2+1)
			r.coefficients(half, re)
			full := make([]complex128, n)
			for i, v := range re {
				full[i] = complex(v, 0)
			}
			closeC(t, "coefficients", half, naive(full, -1)[:n/2+1], tol)

			// sequence reads a half spectrum, ignoring the imaginary parts
			// of bin 0 and (even n) bin n/2.
			spec := naive(full, -1)
			in := append([]complex128(nil), spec[:n/2+1]...)
			in[0] += 5i
			if n%2 == 0 {
				in[n/2] -= 3i
			}
			seq := make([]float64, n)
			r.sequence(seq, in)
			for i := range seq {
				if d := math.Abs(seq[i] - float64(n)*re[i]); d > tol*float64(n) {
					t.Fatalf("sequence[%d] = %v, want %v", i, seq[i], float64(n)*re[i])
				}
			}
		})
	}
}

func closeC(t *testing.T, what string, got, want []complex128, tol float64) {
	t.Helper()
	for i := range want {
		if d := cmplx.Abs(got[i] - want[i]); d > tol*(1+cmplx.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestDirect: which lengths FFTPACK takes.
func TestDirect(t *testing.T) {
	for n, want := range map[int]bool{1: true, 2: true, 61: true, 67: false, 2 * 61 * 61: true, 4099: false,
		1 << 25: true, 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3: true, 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3 * 3: false} {
		if got := direct(n); got != want {
			t.Errorf("direct(%d) = %v, want %v", n, got, want)
		}
	}
}
