package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// TestErf32 compares erf32 with math.Erf on 2 million float32 values in
// [−6, 6] and at the edges: the absolute error stays below 2e-8 (half a
// float32 ulp at 1 is 3e-8).
func TestErf32(t *testing.T) {
	worst, at := 0.0, 0.0
	check := func(x float64) {
		if d := math.Abs(erf32(x) - math.Erf(x)); d > worst {
			worst, at = d, x
		}
	}
	for i := range 2_000_000 {
		check(float64(float32(-6 + 12*float64(i)/2_000_000)))
	}
	for _, x := range []float64{0, 1e-30, -1e-30, 1, -1, 2, 3, 3.92, 3.9999999, 4, 4.5, 50, math.Inf(1), math.Inf(-1)} {
		check(x)
	}
	if worst > 2e-8 {
		t.Errorf("largest |erf32 − erf| %.3g at %g", worst, at)
	}
	if !math.IsNaN(erf32(math.NaN())) || math.Abs(erf32(math.Inf(-1))+1) > 2e-8 || !math.Signbit(erf32(math.Copysign(0, -1))) {
		t.Error("erf32 at NaN, −Inf or −0")
	}
	// Near 0 the error is relative: erf(x) ≈ 1.128·x.
	for _, x := range []float64{1e-3, 1e-8, -3e-20} {
		if r := math.Abs(erf32(x)/math.Erf(x) - 1); r > 1e-8 {
			t.Errorf("erf32(%g) relative error %.3g", x, r)
		}
	}
}

// TestExp32 compares exp32 with math.Exp over the float32 range.
func TestExp32(t *testing.T) {
	worst, at := 0.0, 0.0
	for i := range 2_000_000 {
		x := -104 + 193*float64(i)/2_000_000
		if r := math.Abs(exp32(x)/math.Exp(x) - 1); r > worst {
			worst, at = r, x
		}
	}
	if worst > 1e-8 { // a float32 ulp is 6e-8 relative
		t.Errorf("largest relative error %.3g at %g", worst, at)
	}
	if exp32(-200) != 0 || !math.IsInf(exp32(100), 1) || !math.IsNaN(exp32(math.NaN())) || exp32(0) != 1 {
		t.Error("exp32 at the edges")
	}
}

// BenchmarkExpBlock is expBlock on a softmax row's worth of values.
func BenchmarkExpBlock(b *testing.B) {
	for _, n := range []int{10, 1024} {
		v := make([]float64, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				for i := range v {
					v[i] = float64(i%17) - 8
				}
				expBlock(v)
			}
		})
	}
}

// TestExpKernelsMatchScalar checks the vector exp kernels against
// expScalar bit for bit, on values across the whole range and its edges
// (NaN, ±Inf, the clamps, ±0, ties of the rounding to an integer k).
func TestExpKernelsMatchScalar(t *testing.T) {
	if !useAsmKernel {
		t.Skipf("no vector kernels here (%s)", ISAReport())
	}
	type kernel struct {
		name string
		fn   func(v *float64, n int)
	}
	kernels := []kernel{{"avx2", expF64}}
	if DetectedISA() >= ISAAVX512 {
		kernels = append(kernels, kernel{"avx512", expF64x512})
	} else {
		t.Logf("AVX-512 kernel skipped: %s", ISAReport())
	}
	rng := rand.New(rand.NewPCG(9, 10))
	in := []float64{math.NaN(), math.Inf(1), math.Inf(-1), expMin, expMax, math.Nextafter(expMin, -200),
		math.Nextafter(expMax, 200), 0, math.Copysign(0, -1), 1e-300, -1e-300, 0.5 * math.Ln2, -0.5 * math.Ln2,
		1.5 * math.Ln2, 88.7, -103.9, -745, 710, 1, -1}
	for len(in) < 4096 {
		in = append(in, -110+205*rng.Float64())
	}
	want := slices.Clone(in)
	expScalar(want)
	for _, k := range kernels {
		got := slices.Clone(in)
		k.fn(&got[0], len(got))
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
				t.Fatalf("%s: exp(%v) = %v, expScalar %v", k.name, in[i], got[i], want[i])
			}
		}
	}
}

// TestErfKernelsMatchScalar checks that the vector erf kernels give
// erfScalar's bits on every value (NaNs: both NaN, with x's sign), and
// that erfBlock does at every length up to 40 (whole groups of 8 to the
// kernel, the rest in Go).
func TestErfKernelsMatchScalar(t *testing.T) {
	if !useAsmKernel {
		t.Skipf("no vector kernels here (%s)", ISAReport())
	}
	type kernel struct {
		name string
		fn   func(v *float64, n int)
	}
	kernels := []kernel{{"avx2", erfF64}}
	if DetectedISA() >= ISAAVX512 {
		kernels = append(kernels, kernel{"avx512", erfF64x512})
	} else {
		t.Logf("AVX-512 kernel skipped: %s", ISAReport())
	}
	rng := rand.New(rand.NewPCG(11, 12))
	in := []float64{math.NaN(), -math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 4, -4,
		math.Nextafter(4, 5), math.Nextafter(4, 0), 1e-300, -1e-300, 5e-324, 0.5, -0.5, 1, -1, 3.9, 100, -1e300}
	for len(in) < 4096 {
		in = append(in, -6+12*rng.Float64())
	}
	want := slices.Clone(in)
	erfScalar(want)
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b) && math.Signbit(a) == math.Signbit(b))
	}
	for _, k := range kernels {
		got := slices.Clone(in)
		k.fn(&got[0], len(got))
		for i := range got {
			if !same(got[i], want[i]) {
				t.Fatalf("%s: erf(%v) = %v (%#x), erfScalar %v (%#x)", k.name, in[i], got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
			}
		}
	}
	for n := 0; n <= 40; n++ {
		got := slices.Clone(in[:n])
		erfBlock(got)
		for i := range got {
			if !same(got[i], want[i]) {
				t.Fatalf("erfBlock of %d values: erf(%v) = %v, erfScalar %v", n, in[i], got[i], want[i])
			}
		}
	}
}

// TestExpF32: the Exp op on float32 (expF32, through expBlock) is within
// one float32 ulp of float32(math.Exp(x)) for x from −110 to 95 and gives
// exactly 0, +Inf, 1 and NaN where math.Exp's float32 result does.
func TestExpF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	x := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -200, 200, 88.7, 88.8, -103, -104, 1e-30}
	for len(x) < 5000 {
		x = append(x, float32(-110+205*rng.Float64()))
	}
	d := make([]float32, len(x))
	unaryRange(backend.Exp, nil, d, x, 0, 0)
	for i, v := range x {
		want := float32(math.Exp(float64(v)))
		got := d[i]
		switch {
		case want != want:
			if got == got {
				t.Fatalf("exp(%v) = %v, want NaN", v, got)
			}
		case want == 0 || math.IsInf(float64(want), 0) || want == 1:
			if got != want {
				t.Fatalf("exp(%v) = %v, want %v", v, got, want)
			}
		default:
			if diff := int64(math.Float32bits(got)) - int64(math.Float32bits(want)); diff > 1 || diff < -1 {
				t.Fatalf("exp(%v) = %v, math.Exp %v: %d ulps apart", v, got, want, diff)
			}
		}
	}
}
