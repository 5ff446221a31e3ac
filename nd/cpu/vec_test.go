package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// vecInputs returns n values with zeros, negative zeros, NaN and ±Inf
// sprinkled in, so the kernels' special cases are exercised.
func vecInputs(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	for i := range s {
		if r.IntN(8) == 0 {
			s[i] = special[r.IntN(len(special))]
		} else {
			s[i] = float32(r.NormFloat64())
		}
	}
	return s
}

// sameBits reports whether x and y are the same value (NaNs compare equal).
func sameBits(x, y float32) bool {
	if x != x && y != y {
		return true
	}
	return math.Float32bits(x) == math.Float32bits(y)
}

// TestVecKernels checks every AVX2 elementwise kernel against the scalar
// Go definition for every length up to 80 (all loop tails) and for an
// output that aliases an input.
func TestVecKernels(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: the kernels are not used on this CPU")
	}
	r := rand.New(rand.NewPCG(1, 2))
	bins := []struct {
		op  backend.BinaryOp
		ref func(a, b float32) float32
	}{
		{backend.Add, func(a, b float32) float32 { return a + b }},
		{backend.Sub, func(a, b float32) float32 { return a - b }},
		{backend.Mul, func(a, b float32) float32 { return a * b }},
		{backend.Div, func(a, b float32) float32 { return a / b }},
		{backend.ReluGrad, func(a, b float32) float32 {
			if a > 0 {
				return b
			}
			return 0
		}},
	}
	for n := 0; n <= 80; n++ {
		a, b := vecInputs(r, n), vecInputs(r, n)
		s := float32(r.NormFloat64())
		for _, c := range bins {
			d := make([]float32, n+1)
			d[n] = 42 // must stay: nothing past n is written
			if !vecBinary(c.op, d[:n], a, b) && n > 0 {
				t.Fatalf("op %d: no kernel", c.op)
			}
			for i := range n {
				if want := c.ref(a[i], b[i]); !sameBits(d[i], want) {
					t.Fatalf("op %d n=%d [%d]: %v op %v = %v, want %v", c.op, n, i, a[i], b[i], d[i], want)
				}
			}
			if d[n] != 42 {
				t.Fatalf("op %d n=%d wrote past the end", c.op, n)
			}
			if c.op == backend.ReluGrad {
				continue
			}
			vecScalar(c.op, d[:n], a, s)
			for i := range n {
				if want := c.ref(a[i], s); !sameBits(d[i], want) {
					t.Fatalf("scalar op %d n=%d [%d]: got %v, want %v", c.op, n, i, d[i], want)
				}
			}
			alias := append([]float32(nil), a...)
			vecBinary(c.op, alias, alias, b)
			for i := range n {
				if want := c.ref(a[i], b[i]); !sameBits(alias[i], want) {
					t.Fatalf("aliased op %d n=%d [%d]: got %v, want %v", c.op, n, i, alias[i], want)
				}
			}
		}
		d := make([]float32, n)
		vecUnary(backend.Relu, d, a, 0)
		for i := range n {
			want := a[i]
			if !(a[i] >= 0) && a[i] == a[i] { // negative (or -0): 0 keeps -0's sign, as VMAXPS does
				want = 0
			}
			if a[i] == 0 {
				want = a[i]
			}
			if !sameBits(d[i], want) {
				t.Fatalf("relu n=%d [%d]: relu(%v) = %v, want %v", n, i, a[i], d[i], want)
			}
		}
	}
}

// TestSumF32 checks the float64-accumulating vector sum against a plain
// float64 loop for lengths covering every tail.
func TestSumF32(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: the kernel is not used on this CPU")
	}
	r := rand.New(rand.NewPCG(9, 10))
	for n := 1; n <= 100; n++ {
		s := make([]float32, n)
		var want float64
		for i := range s {
			s[i] = float32(r.NormFloat64() * 100)
			want += float64(s[i])
		}
		// float32 inputs summed in float64: both orders are exact to
		// well below 1e-12 relative for these magnitudes.
		if got := sumF32(&s[0], n); math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
			t.Errorf("n=%d: sum %v, want %v", n, got, want)
		}
	}
	inf := []float32{1, float32(math.Inf(1)), 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	if got := sumF32(&inf[0], len(inf)); !math.IsInf(got, 1) {
		t.Errorf("sum with +Inf = %v", got)
	}
}

// TestAccF32 checks the float64 accumulation of float32 values against a
// plain loop (the same additions, so the results are identical).
func TestAccF32(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: the kernel is not used on this CPU")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for n := 1; n <= 40; n++ {
		s := vecInputs(r, n)
		acc, want := make([]float64, n+1), make([]float64, n+1)
		for i := range acc {
			acc[i] = r.NormFloat64()
			want[i] = acc[i]
		}
		for i := range n {
			want[i] += float64(s[i])
		}
		accF32(&acc[0], &s[0], n)
		for i := range acc {
			if acc[i] != want[i] && !(acc[i] != acc[i] && want[i] != want[i]) {
				t.Fatalf("n=%d [%d]: %v, want %v", n, i, acc[i], want[i])
			}
		}
	}
}

// TestVecFallbackMatches runs the contiguous elementwise paths with the
// AVX2 kernels switched off (as on other CPUs) and checks that the plain
// loops give the same bits.
func TestVecFallbackMatches(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: only the plain loops exist here")
	}
	r := rand.New(rand.NewPCG(13, 14))
	a, b := vecInputs(r, 77), vecInputs(r, 77)
	ops := []backend.BinaryOp{backend.Add, backend.Sub, backend.Mul, backend.Div, backend.ReluGrad}
	run := func() [][]float32 {
		var out [][]float32
		for _, op := range ops {
			f := binaryFunc(op)
			d := make([]float32, len(a))
			binaryContig(op, f, d, a, b)
			out = append(out, d)
			d = make([]float32, len(a))
			binaryRight(op, f, d, a, b[3])
			out = append(out, d)
			d = make([]float32, len(a))
			binaryLeft(op, f, d, a[5], b)
			out = append(out, d)
		}
		for _, op := range []backend.UnaryOp{backend.Relu, backend.MulScalar, backend.AddScalar, backend.Square} {
			d := make([]float32, len(a))
			unary(op, d, a, 1.5, 0)
			out = append(out, d)
		}
		rows := make([]float32, 3*20)
		copyRows(rows, a, 3, 17, 20, 25)
		addRows(rows, b, 3, 17, 20, 25)
		return append(out, rows)
	}
	fast := run()
	useAsmKernel = false
	defer func() { useAsmKernel = true }()
	slow := run()
	for i := range fast {
		for j := range fast[i] {
			if !sameBits(fast[i][j], slow[i][j]) {
				t.Fatalf("result %d [%d]: kernel %v, plain loop %v", i, j, fast[i][j], slow[i][j])
			}
		}
	}
}

// TestPrefetchPlane calls the prefetch hint on planes inside, at the end
// of and past a slice, and on float64: it must change nothing.
func TestPrefetchPlane(t *testing.T) {
	s := make([]float32, 1000)
	for i := range s {
		s[i] = float32(i)
	}
	for _, c := range []struct{ off, n int }{{0, 1000}, {500, 1000}, {999, 16}, {1000, 16}, {2000, 16}, {0, 0}} {
		prefetchPlane(s, c.off, c.n)
	}
	prefetchPlane(make([]float64, 10), 0, 10)
	for i, v := range s {
		if v != float32(i) {
			t.Fatalf("s[%d] = %g after the prefetches", i, v)
		}
	}
}
