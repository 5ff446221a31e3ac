package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// needBF16 skips t where the VDPBF16PS kernel cannot run.
func needBF16(t *testing.T) {
	t.Helper()
	if !useBF16Kernel {
		t.Skipf("no AVX512_BF16 kernel here (%s, AVX512_BF16 %v)", ISAReport(), hasAVX512BF16())
	}
}

// randBF16 returns n bfloat16 values of magnitudes 2⁻⁴ to 2⁴ and both
// signs (no denormal products or sums).
func randBF16(r *rand.Rand, n int) []backend.BF16 {
	v := make([]backend.BF16, n)
	for i := range v {
		f := float32(math.Ldexp(1+r.Float64(), r.IntN(9)-5))
		if r.IntN(2) == 0 {
			f = -f
		}
		v[i] = backend.BF16From(f)
	}
	return v
}

// TestSBTileAsm: the VDPBF16PS micro-kernel gives the Go kernel's bits
// (the instruction's order: each pair's high product, then its low one),
// for pair counts around its unrolling.
func TestSBTileAsm(t *testing.T) {
	needBF16(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, kp := range []int{1, 2, 3, 4, 7, 64, 257} {
		a := make([]uint32, kp*sbMR)
		b := make([]uint32, kp*sbNR)
		for _, x := range [][]uint32{a, b} {
			v := randBF16(r, 2*len(x))
			for i := range x {
				x[i] = uint32(v[2*i]) | uint32(v[2*i+1])<<16
			}
		}
		w0 := make([]float32, sbMR*sbNR)
		for i := range w0 {
			w0[i] = float32(r.NormFloat64() * 4)
		}
		for _, load := range []int{0, 1} {
			want, got := slices.Clone(w0), slices.Clone(w0)
			sbTileGo(kp, &a[0], &b[0], &want[0], load)
			sbTileFast(kp, &a[0], &b[0], &got[0], load)
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
					t.Fatalf("kp %d, load %d, element %d: assembly %v, Go %v", kp, load, i, got[i], want[i])
				}
			}
		}
	}
}

// TestSBGemm: the bfloat16 product against a float64 product of the same
// bfloat16 values, for every transposition, edge sizes (partial tiles, odd
// k, k beyond one block), alpha and beta (beta 0 never reads C, which
// holds NaN), serial and parallel; with the assembly kernel, also the Go
// kernel's bits through the whole product.
func TestSBGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	nan := backend.BF16From(float32(math.NaN()))
	for _, sz := range [][3]int{{1, 1, 1}, {7, 33, 5}, {13, 70, 515}, {6, 32, 2}, {40, 65, 129}, {200, 20, 64}, {128, 40, 130}} { // the last packs A on the cores
		m, n, k := sz[0], sz[1], sz[2]
		for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			for _, ab := range [][2]float32{{1, 0}, {0.5, 2}} {
				name := fmt.Sprintf("%dx%dx%d/tA=%v,tB=%v/alpha=%v,beta=%v", m, n, k, tr[0], tr[1], ab[0], ab[1])
				t.Run(name, func(t *testing.T) {
					a, b, c0 := randBF16(r, m*k), randBF16(r, k*n), randBF16(r, m*n)
					if ab[1] == 0 {
						for i := range c0 {
							c0[i] = nan
						}
					}
					lda, ldb := k, n
					if tr[0] {
						lda = m
					}
					if tr[1] {
						ldb = k
					}
					run := func(parallel bool, tile sbTile, store sbStore) []backend.BF16 {
						c := slices.Clone(c0)
						sbgemm(tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], c, n, parallel, tile, store)
						return c
					}
					got := run(true, sbTileGo, sbStoreGo)
					for i := range m {
						for j := range n {
							var s, mag float64
							for kk := range k {
								x := float64(sbAt(tr[0], a, lda, i, kk).Float32())
								y := float64(sbAt(!tr[1], b, ldb, j, kk).Float32())
								s += x * y
								mag += math.Abs(x * y)
							}
							want := float64(ab[0]) * s
							if ab[1] != 0 {
								want += float64(ab[1]) * float64(c0[i*n+j].Float32())
								mag += math.Abs(float64(ab[1]) * float64(c0[i*n+j].Float32()))
							}
							g := float64(got[i*n+j].Float32())
							// bfloat16 rounding of the result, float32 sums
							if d := math.Abs(g - want); !(d <= math.Abs(want)*math.Ldexp(1, -8)+mag*float64(k+2)*math.Ldexp(1, -24)) {
								t.Fatalf("C[%d][%d] = %v, float64 product %v", i, j, g, want)
							}
						}
					}
					if serial := run(false, sbTileGo, sbStoreGo); !slices.Equal(serial, got) {
						t.Errorf("serial and parallel products differ")
					}
					if useBF16Kernel {
						if asm := run(true, sbTileFast, sbStoreFast); !slices.Equal(asm, got) {
							t.Errorf("the assembly kernels' product differs from the Go kernels'")
						}
					}
				})
			}
		}
	}
}

// TestSBTileDenormals: the Go kernel counts denormal inputs as zero and
// flushes denormal sums, as VDPBF16PS does.
func TestSBTileDenormals(t *testing.T) {
	tiny := uint32(0x0001)                   // the smallest bfloat16 denormal (low half)
	one := uint32(math.Float32bits(1) >> 16) // 1.0 in bfloat16
	a, b := make([]uint32, sbMR), make([]uint32, sbNR)
	a[0], b[0] = tiny|one<<16, one|one<<16 // row 0: tiny·1 + 1·1
	a[1], b[1] = one, one                  // row 1, column 1: 1·1
	w := make([]float32, sbMR*sbNR)
	w[1*sbNR+1] = -1                               // 1 − 1 = 0, exact
	w[2*sbNR+2] = math.Float32frombits(0x00000010) // a denormal accumulator: flushed by the first add
	sbTileGo(1, &a[0], &b[0], &w[0], 1)
	if w[0] != 1 {
		t.Errorf("tiny·1 + 1·1 = %v, want 1 (the denormal input counts as zero)", w[0])
	}
	if w[1*sbNR+1] != 0 {
		t.Errorf("−1 + 1·1 = %v, want 0", w[1*sbNR+1])
	}
	if w[2*sbNR+2] != 0 {
		t.Errorf("a denormal accumulator plus zero products = %v, want 0", w[2*sbNR+2])
	}
	if useBF16Kernel {
		w2 := make([]float32, sbMR*sbNR)
		w2[1*sbNR+1] = -1
		sbTileFast(1, &a[0], &b[0], &w2[0], 1)
		if w2[0] != 1 || w2[1*sbNR+1] != 0 {
			t.Errorf("assembly: %v and %v, want 1 and 0", w2[0], w2[1*sbNR+1])
		}
	}
}

// BenchmarkSBGemm is the bfloat16 product of two n×n matrices on the
// VDPBF16PS kernel, in GFLOP/s (2n³ per product); compare with the
// float32 sgemm of the same size (BenchmarkSGemmSquare).
func BenchmarkSBGemm(b *testing.B) {
	if !useBF16Kernel {
		b.Skip("no AVX512_BF16 kernel here")
	}
	for _, n := range []int{128, 512, 1024} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			x, y, c := randBF16(r, n*n), randBF16(r, n*n), make([]backend.BF16, n*n)
			for b.Loop() {
				sbgemm(false, false, n, n, n, 1, x, n, y, n, 0, c, n, true, sbTileFast, sbStoreFast)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkSGemmSquare is the float32 sgemm of two n×n matrices, in
// GFLOP/s.
func BenchmarkSGemmSquare(b *testing.B) {
	for _, n := range []int{128, 512, 1024} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			x, y, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
			for i := range x {
				x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			for b.Loop() {
				sgemm(false, false, n, n, n, 1, x, n, y, n, 0, c, n, true)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestSBStoreAsm: the assembly store gives the Go store's bits, beta 0
// (C not read: NaN there stays unread) and not, NaN, infinities, ties and
// denormal sums included.
func TestSBStoreAsm(t *testing.T) {
	needBF16(t)
	r := rand.New(rand.NewPCG(5, 6))
	const rows, ldc = 5, 40
	w := make([]float32, rows*sbNR)
	for i := range w {
		w[i] = float32(r.NormFloat64() * 3)
	}
	w[3], w[7], w[11] = float32(math.NaN()), float32(math.Inf(-1)), math.Float32frombits(0x00000300)
	w[12] = math.Float32frombits(0x3f808000) // a tie: rounds to even
	c0 := randBF16(r, rows*ldc)
	for _, ab := range [][2]float32{{1, 0}, {0.75, -1.5}, {2, 1}} {
		want, got := slices.Clone(c0), slices.Clone(c0)
		if ab[1] == 0 {
			for i := range want {
				want[i] = backend.BF16From(float32(math.NaN()))
				got[i] = want[i]
			}
		}
		sbStoreGo(&w[0], &want[0], ldc, rows, ab[0], ab[1])
		sbStoreFast(&w[0], &got[0], ldc, rows, ab[0], ab[1])
		if !slices.Equal(want, got) {
			for i := range want {
				if want[i] != got[i] {
					t.Fatalf("alpha %v beta %v, element %d: assembly %#x, Go %#x", ab[0], ab[1], i, got[i], want[i])
				}
			}
		}
	}
}

// TestBF16GemmGate: with the bfloat16 kernel off (GOLUON_CPU=avx2, a CPU
// without AVX512_BF16), a BFloat16 Gemm large enough for it widens instead
// of running the instruction; with it on, the same product runs it.
func TestBF16GemmGate(t *testing.T) {
	defer func(on bool, tile sbTile) { useBF16Kernel, sbTileFast = on, tile }(useBF16Kernel, sbTileFast)
	var called atomic.Bool // set by the workers
	sbTileFast = func(kp int, a, b *uint32, w *float32, load int) { called.Store(true); sbTileGo(kp, a, b, w, load) }
	r := rand.New(rand.NewPCG(1, 1))
	const m, n, k = 128, 128, 128 // m·n·k = sbMinWork
	for _, on := range []bool{false, true} {
		useBF16Kernel = on
		called.Store(false)
		buf := func(v []backend.BF16) backend.Arg { return backend.Arg{Buf: &Buffer{dt: backend.BFloat16, BF16: v}} }
		New().Gemm(backend.GemmParams{M: m, N: n, K: k, Alpha: 1, LDA: k, LDB: n, LDC: n,
			A: buf(randBF16(r, m*k)), B: buf(randBF16(r, k*n)), C: buf(make([]backend.BF16, m*n))})
		if called.Load() != on {
			t.Errorf("kernel on %v: the bfloat16 micro-kernel ran %v", on, called.Load())
		}
	}
}

// TestSBTileEdges: the Go kernel and the instruction agree where a product
// overflows float32 but the sum does not, where a sum overflows, where a
// product underflows, and on a denormal starting sum (counted as zero).
func TestSBTileEdges(t *testing.T) {
	needBF16(t)
	f := func(v float32) uint16 { return uint16(math.Float32bits(v) >> 16) }
	cases := []struct {
		ah, bh, al, bl uint16 // the pair's high (added first) and low halves
		acc            float32
	}{
		{f(0x1p100), f(0x1p100), f(1), f(1), 0},
		{f(0x1p64), f(0x1p64), f(1), f(1), -math.MaxFloat32},
		{f(0x1p100), f(0x1p100), f(1), f(1), -math.MaxFloat32},
		{f(1.5 * 0x1p63), f(1.5 * 0x1p63), f(1), f(1), -math.MaxFloat32},
		{f(0x1p-70), f(0x1p-70), f(1), f(1), 0},
		{f(0x1p-70), f(0x1p-70), 0, 0, 0x1p-120},
		{f(1), f(1), f(1), f(1), math.Float32frombits(0x00400000)},
	}
	for _, c := range cases {
		a, b := make([]uint32, sbMR), make([]uint32, sbNR)
		a[0], b[0] = uint32(c.al)|uint32(c.ah)<<16, uint32(c.bl)|uint32(c.bh)<<16
		w1, w2 := make([]float32, sbMR*sbNR), make([]float32, sbMR*sbNR)
		w1[0], w2[0] = c.acc, c.acc
		sbTileGo(1, &a[0], &b[0], &w1[0], 1)
		sbTileFast(1, &a[0], &b[0], &w2[0], 1)
		if math.Float32bits(w1[0]) != math.Float32bits(w2[0]) {
			t.Errorf("%#04x·%#04x + %#04x·%#04x onto %g: Go %g, instruction %g", c.ah, c.bh, c.al, c.bl, c.acc, w1[0], w2[0])
		}
	}
}

// TestBF16GemmNoTerms: a BFloat16 Gemm with K = 0 scales C by beta (beta 0
// writes zeros without reading C).
func TestBF16GemmNoTerms(t *testing.T) {
	nan := backend.BF16From(float32(math.NaN()))
	for _, beta := range []float64{0, 2} {
		c := []backend.BF16{backend.BF16From(1.5), nan, backend.BF16From(-3)}
		if beta == 0 {
			c[0], c[2] = nan, nan
		}
		New().Gemm(backend.GemmParams{M: 1, N: 3, K: 0, Alpha: 1, Beta: beta, LDA: 1, LDB: 3, LDC: 3,
			A: backend.Arg{Buf: &Buffer{dt: backend.BFloat16, BF16: []backend.BF16{}}},
			B: backend.Arg{Buf: &Buffer{dt: backend.BFloat16, BF16: []backend.BF16{}}},
			C: backend.Arg{Buf: &Buffer{dt: backend.BFloat16, BF16: c}}})
		for j, want := range map[bool][]float32{true: {0, 0, 0}, false: {3, float32(math.NaN()), -6}}[beta == 0] {
			if got := c[j].Float32(); got != want && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
				t.Errorf("beta %v, C[%d] = %v, want %v", beta, j, got, want)
			}
		}
	}
}
