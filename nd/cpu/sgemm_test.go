package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// sgemmCase is one product of the sgemm tests. padA/padB/padC are added to
// the minimal leading dimensions.
type sgemmCase struct {
	tA, tB           bool
	m, n, k          int
	alpha, beta      float32
	padA, padB, padC int
	parallel         bool
}

func (c sgemmCase) String() string {
	t := func(b bool) string {
		if b {
			return "T"
		}
		return "N"
	}
	return fmt.Sprintf("%s%s/%dx%dx%d/a%g/b%g/pad%d,%d,%d/par%v", t(c.tA), t(c.tB), c.m, c.n, c.k,
		c.alpha, c.beta, c.padA, c.padB, c.padC, c.parallel)
}

// sgemmOperands holds the inputs of a case and the reference result.
type sgemmOperands struct {
	a, b, c, want, bound []float32
	lda, ldb, ldc        int
}

// sentinel marks the elements of C outside the m×n product, which sgemm
// must leave alone.
const sentinel = float32(-12345.5)

// sgemmRef is a random product op(A)·op(B) and its float64 reference:
// at is op(A) (m×k), bt is op(B) transposed (n×k), prod the product and
// abs the sums of |a||b| that scale the tolerance.
type sgemmRef struct {
	m, n, k   int
	at, bt    []float64
	prod, abs []float64
}

func newSgemmRef(m, n, k int, rng *rand.Rand) *sgemmRef {
	r := &sgemmRef{m: m, n: n, k: k, at: make([]float64, m*k), bt: make([]float64, n*k),
		prod: make([]float64, m*n), abs: make([]float64, m*n)}
	for i := range r.at {
		r.at[i] = float64(rng.Float32()*2 - 1)
	}
	for i := range r.bt {
		r.bt[i] = float64(rng.Float32()*2 - 1)
	}
	for i := 0; i < m; i++ {
		ai := r.at[i*k : (i+1)*k]
		for j := 0; j < n; j++ {
			bj := r.bt[j*k : (j+1)*k]
			var sum, abs float64
			for p, x := range ai {
				sum += x * bj[p]
				abs += math.Abs(x * bj[p])
			}
			r.prod[i*n+j], r.abs[i*n+j] = sum, abs
		}
	}
	return r
}

// operands lays the reference out as case c asks (transposes, leading
// dimensions) and computes the expected C.
func (r *sgemmRef) operands(c sgemmCase, rng *rand.Rand) sgemmOperands {
	m, n, k := r.m, r.n, r.k
	ar, ac := m, k
	if c.tA {
		ar, ac = k, m
	}
	br, bc := k, n
	if c.tB {
		br, bc = n, k
	}
	o := sgemmOperands{lda: ac + c.padA, ldb: bc + c.padB, ldc: n + c.padC}
	o.a, o.b = make([]float32, ar*o.lda), make([]float32, br*o.ldb)
	for i := range o.a {
		o.a[i] = sentinel // padding: must not be read into the product
	}
	for i := range o.b {
		o.b[i] = sentinel
	}
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			if c.tA {
				o.a[p*o.lda+i] = float32(r.at[i*k+p])
			} else {
				o.a[i*o.lda+p] = float32(r.at[i*k+p])
			}
		}
	}
	for j := 0; j < n; j++ {
		for p := 0; p < k; p++ {
			if c.tB {
				o.b[j*o.ldb+p] = float32(r.bt[j*k+p])
			} else {
				o.b[p*o.ldb+j] = float32(r.bt[j*k+p])
			}
		}
	}
	o.c = make([]float32, m*o.ldc)
	o.want = make([]float32, len(o.c))
	o.bound = make([]float32, len(o.c))
	for i := range o.c {
		row, j := i/o.ldc, i%o.ldc
		if j >= n {
			o.c[i], o.want[i] = sentinel, sentinel
			continue
		}
		v := float64(c.alpha) * r.prod[row*n+j]
		abs := math.Abs(float64(c.alpha)) * r.abs[row*n+j]
		if c.beta == 0 {
			o.c[i] = float32(math.NaN())
		} else {
			o.c[i] = rng.Float32()*2 - 1
			v += float64(c.beta) * float64(o.c[i])
			abs += math.Abs(float64(c.beta) * float64(o.c[i]))
		}
		o.want[i] = float32(v)
		o.bound[i] = float32(1e-5*abs + 1e-7)
	}
	return o
}

func newSgemmOperands(c sgemmCase, rng *rand.Rand) sgemmOperands {
	return newSgemmRef(c.m, c.n, c.k, rng).operands(c, rng)
}

// check compares got with the reference and reports the first mismatches.
func (o sgemmOperands) check(t *testing.T, name string, got []float32) {
	t.Helper()
	bad := 0
	for i, g := range got {
		w := o.want[i]
		if !(math.Abs(float64(g-w)) <= float64(o.bound[i])) && !(g == w) {
			if bad < 5 {
				t.Errorf("%s: C[%d,%d] = %g, want %g (±%g)", name, i/o.ldc, i%o.ldc, g, w, o.bound[i])
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d mismatches in all", name, bad)
	}
}

func runSgemmCase(t *testing.T, c sgemmCase, rng *rand.Rand) {
	t.Helper()
	runSgemmRef(t, c, newSgemmRef(c.m, c.n, c.k, rng), rng)
}

func runSgemmRef(t *testing.T, c sgemmCase, ref *sgemmRef, rng *rand.Rand) {
	t.Helper()
	o := ref.operands(c, rng)
	sgemm(c.tA, c.tB, c.m, c.n, c.k, c.alpha, o.a, o.lda, o.b, o.ldb, c.beta, o.c, o.ldc, c.parallel)
	o.check(t, c.String(), o.c)
}

var transCombos = [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}}

var alphaBetas = [][2]float32{{1, 0}, {1, 1}, {1, -0.5}, {0.5, 0}, {0.5, 1}, {0.5, -0.5}}

// TestSgemmSmallExhaustive covers every m, n, k in 1..17 for each
// transpose combination, cycling through alpha, beta and padding.
func TestSgemmSmallExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tr := range transCombos {
		for m := 1; m <= 17; m++ {
			for n := 1; n <= 17; n++ {
				for k := 1; k <= 17; k++ {
					i := m + 3*n + 7*k
					ab := alphaBetas[i%len(alphaBetas)]
					pad := i % 3
					runSgemmCase(t, sgemmCase{tA: tr[0], tB: tr[1], m: m, n: n, k: k, alpha: ab[0], beta: ab[1],
						padA: pad, padB: 2 * pad, padC: pad}, rng)
				}
			}
		}
	}
}

// TestSgemmShapes covers odd and blocked shapes: tiles and blocks that do
// not divide the matrix, K split into several blocks, small-M products
// that read B in place, the conv shapes of the tutorials, and the
// parallel split over N and over M.
func TestSgemmShapes(t *testing.T) {
	shapes := [][3]int{
		{7, 13, 5}, {129, 67, 257}, {1000, 1, 300}, {1, 1000, 300}, {300, 1000, 1},
		{64, 64, 64}, {6, 576, 25}, {16, 100, 54}, {25, 576, 6}, {54, 100, 16},
		{6, 25, 576}, {32, 288, 900}, {24, 130, 513}, {25, 33, 40},
		{13, 2100, 20}, {150, 70, 300}, {300, 40, 700}, {97, 4099, 3},
		// Dot products of rows (useDotRows with B transposed): LeNet's
		// dense layers at batch 1–3, a long row split over the cores.
		{1, 120, 400}, {2, 84, 120}, {3, 10, 84}, {4, 37, 1000}, {1, 4099, 33}, {4, 5, 16},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d", s[0], s[1], s[2]), func(t *testing.T) {
			ref := newSgemmRef(s[0], s[1], s[2], rng)
			m, n, k := s[0], s[1], s[2]
			big := m*n*k > 1<<20 || m*n+m*k+k*n > 1<<17
			for _, tr := range transCombos {
				for _, ab := range alphaBetas {
					for _, pad := range []int{0, 3} {
						for _, par := range []bool{false, true} {
							if big && (ab != alphaBetas[0] && ab != alphaBetas[5] || (pad == 3) != par) {
								continue // big shapes: a few combinations are enough
							}
							c := sgemmCase{tA: tr[0], tB: tr[1], m: m, n: n, k: k, alpha: ab[0], beta: ab[1],
								padA: pad, padB: pad, padC: pad, parallel: par}
							runSgemmRef(t, c, ref, rng)
						}
					}
				}
			}
		})
	}
}

// TestSgemmDegenerate covers k = 0 and alpha = 0 (C = beta·C) and empty C.
func TestSgemmDegenerate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, beta := range []float32{0, 1, -0.5} {
		runSgemmCase(t, sgemmCase{m: 5, n: 7, k: 0, alpha: 1, beta: beta, padA: 1, padB: 1, padC: 2}, rng)
		runSgemmCase(t, sgemmCase{tA: true, tB: true, m: 5, n: 7, k: 0, alpha: 1, beta: beta, padB: 1, padC: 2}, rng)
		runSgemmCase(t, sgemmCase{m: 5, n: 7, k: 9, alpha: 0, beta: beta, padC: 2}, rng)
	}
	sgemm(false, false, 0, 5, 3, 1, make([]float32, 0), 3, make([]float32, 15), 5, 0, nil, 5, true)
	sgemm(false, false, 5, 0, 3, 1, make([]float32, 15), 3, nil, 1, 0, nil, 1, true)
}

// TestSgemmPanicsOnShortSlices checks that a slice too short for its
// dimensions panics before the assembly kernel can read past it.
func TestSgemmPanicsOnShortSlices(t *testing.T) {
	if !useAsmKernel {
		t.Skip("portable path: gonum does its own checks")
	}
	for name, f := range map[string]func(){
		"a": func() {
			sgemm(false, false, 4, 4, 4, 1, make([]float32, 15), 4, make([]float32, 16), 4, 0, make([]float32, 16), 4, false)
		},
		"b": func() {
			sgemm(false, true, 4, 4, 4, 1, make([]float32, 16), 4, make([]float32, 15), 4, 0, make([]float32, 16), 4, false)
		},
		"c": func() {
			sgemm(true, false, 4, 4, 4, 1, make([]float32, 16), 4, make([]float32, 16), 4, 0, make([]float32, 18), 5, false)
		},
		"ldc": func() {
			sgemm(false, false, 4, 4, 4, 1, make([]float32, 16), 4, make([]float32, 16), 4, 0, make([]float32, 16), 3, false)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestSgemmNoAlloc checks that a warm serial sgemm allocates nothing.
func TestSgemmNoAlloc(t *testing.T) {
	if !useAsmKernel {
		t.Skip("portable path")
	}
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random; the allocation count is checked in the normal run")
	}
	m, n, k := 100, 300, 200
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	allocs := testing.AllocsPerRun(20, func() {
		sgemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n, false)
	})
	if allocs > 0.5 {
		t.Errorf("sgemm allocates %.1f times per call", allocs)
	}
}

// TestGemmBatchStrides runs a float32 batch through Backend.Gemm, both the
// small (parallel over the batch) and the large (parallel inside) path.
func TestGemmBatchStrides(t *testing.T) {
	be := New()
	dev := ctx.CPU(0)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []sgemmCase{
		{tA: false, tB: true, m: 9, n: 11, k: 13, alpha: 1, beta: 0, padA: 1, padB: 2, padC: 3},
		{tA: true, tB: false, m: 70, n: 90, k: 80, alpha: 0.5, beta: -0.5, padA: 0, padB: 1, padC: 2},
	} {
		const batch = 3
		ops := make([]sgemmOperands, batch)
		for i := range ops {
			ops[i] = newSgemmOperands(c, rng)
		}
		o := ops[0]
		sa, sb, sc := len(o.a)+5, len(o.b)+7, len(o.c)+2
		buf := func(n int, part func(i int) []float32) backend.Buffer {
			bb, _ := be.Alloc(dev, backend.Float32, n*batch+1)
			host := make([]float32, bb.Len())
			for i := range batch {
				copy(host[1+i*n:], part(i))
			}
			be.Write(bb, 0, host)
			return bb
		}
		A := buf(sa, func(i int) []float32 { return ops[i].a })
		B := buf(sb, func(i int) []float32 { return ops[i].b })
		C := buf(sc, func(i int) []float32 { return ops[i].c })
		be.Gemm(backend.GemmParams{TransA: c.tA, TransB: c.tB, M: c.m, N: c.n, K: c.k,
			Alpha: float64(c.alpha), Beta: float64(c.beta),
			A: backend.Arg{Buf: A, Off: 1}, B: backend.Arg{Buf: B, Off: 1}, C: backend.Arg{Buf: C, Off: 1},
			LDA: o.lda, LDB: o.ldb, LDC: o.ldc, Batch: batch, StrideA: sa, StrideB: sb, StrideC: sc})
		got := make([]float32, C.Len())
		be.Read(C, 0, got)
		for i := range batch {
			ops[i].check(t, fmt.Sprintf("%v/batch%d", c, i), got[1+i*sc:][:len(o.c)])
		}
	}
}

// TestSgemmReproducible checks that the parallel split does not change
// the result: each element's sum runs in the same order either way.
func TestSgemmReproducible(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	// A large product, one split over rows into 6 + 4 (a last chunk the
	// size of useDotRows's products) and one of 3 rows split over columns.
	shapes := [][3]int{{150, 170, 600}, {10, 8, 2048}, {3, 4099, 64}}
	for i, tr := range append(slices.Clone(transCombos), [2]bool{false, true}, [2]bool{false, true}) {
		sh := shapes[max(0, i-len(transCombos)+1)]
		c := sgemmCase{tA: tr[0], tB: tr[1], m: sh[0], n: sh[1], k: sh[2], alpha: 1, beta: 0}
		o := newSgemmOperands(c, rng)
		c1 := make([]float32, len(o.c))
		c2 := make([]float32, len(o.c))
		sgemm(c.tA, c.tB, c.m, c.n, c.k, 1, o.a, o.lda, o.b, o.ldb, 0, c1, o.ldc, false)
		sgemm(c.tA, c.tB, c.m, c.n, c.k, 1, o.a, o.lda, o.b, o.ldb, 0, c2, o.ldc, true)
		for i := range c1 {
			if c1[i] != c2[i] {
				t.Fatalf("%v: serial and parallel differ at %d: %g vs %g", c, i, c1[i], c2[i])
			}
		}
		// With the cores taken by dedicated goroutines the product runs
		// as one serial call: the same bits again.
		release := Dedicate(workers())
		c3 := make([]float32, len(o.c))
		sgemm(c.tA, c.tB, c.m, c.n, c.k, 1, o.a, o.lda, o.b, o.ldb, 0, c3, o.ldc, true)
		release()
		requireSameBits(t, fmt.Sprintf("%v: serial, dedicated", c), c1, c3)
	}
	// Products of dot products (a few rows by a transposed B) from
	// dotParallelMin up, split over columns into 2 and 8 chunks.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{2, 8} {
		runtime.GOMAXPROCS(procs)
		for _, sh := range [][3]int{{1, 120, 400}, {4, 170, 100}, {2, 300, 256}, {3, 1001, 40}} {
			c := sgemmCase{tB: true, m: sh[0], n: sh[1], k: sh[2], alpha: 1, beta: 0}
			o := newSgemmOperands(c, rng)
			c1 := make([]float32, len(o.c))
			c2 := make([]float32, len(o.c))
			sgemm(false, true, c.m, c.n, c.k, 1, o.a, o.lda, o.b, o.ldb, 0, c1, o.ldc, false)
			sgemm(false, true, c.m, c.n, c.k, 1, o.a, o.lda, o.b, o.ldb, 0, c2, o.ldc, true)
			requireSameBits(t, fmt.Sprintf("%v at %d cores: serial, parallel", c, procs), c1, c2)
		}
	}
}

func TestCPUFeatures(t *testing.T) {
	t.Log(ISAReport())
	if useAsmKernel != (ActiveISA() >= ISAAVX2) {
		t.Errorf("assembly kernels %v with the active level %v", useAsmKernel, ActiveISA())
	}
	if runtime.GOARCH != "amd64" {
		if useAsmKernel {
			t.Errorf("the AVX2 kernel is selected on %s", runtime.GOARCH)
		}
		return
	}
	// The kernel's own CPUID/XGETBV detection must agree with what the
	// kernel reports to /proc/cpuinfo (which lists a flag only when the
	// OS also enables the state it needs).
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo to compare with: %v", err)
	}
	var flags []string
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	if flags == nil {
		t.Skip("/proc/cpuinfo lists no flags")
	}
	want := ISAGeneric
	if slices.Contains(flags, "avx2") && slices.Contains(flags, "fma") {
		want = ISAAVX2
		if slices.Contains(flags, "avx512f") && slices.Contains(flags, "avx512bw") && slices.Contains(flags, "avx512vl") {
			want = ISAAVX512
		}
	}
	if DetectedISA() != want {
		t.Errorf("detected %v, but /proc/cpuinfo's flags say %v", DetectedISA(), want)
	}
}

func TestChooseISA(t *testing.T) {
	for _, c := range []struct {
		env  string
		det  ISA
		want ISA
		note string
	}{
		{"", ISAAVX512, ISAAVX512, ""},
		{"avx2", ISAAVX512, ISAAVX2, "GOLUON_CPU=avx2"},
		{" Generic ", ISAAVX2, ISAGeneric, "GOLUON_CPU=generic"},
		{"avx512", ISAAVX2, ISAAVX2, "beyond this CPU"},
		{"sse2", ISAAVX2, ISAAVX2, "not one of generic, avx2, avx512"},
	} {
		got, note := chooseISA(c.env, c.det)
		if got != c.want || !strings.Contains(note, c.note) {
			t.Errorf("chooseISA(%q, %v) = %v, %q; want %v and a note with %q", c.env, c.det, got, note, c.want, c.note)
		}
	}
	if ISA(7).String() != "ISA(7)" || ISAAVX2.String() != "avx2" {
		t.Error("ISA.String")
	}
}

// TestSgemmPortable runs the fallback that CPUs without AVX2/FMA (and
// other architectures) use.
func TestSgemmPortable(t *testing.T) {
	defer func(v bool) { useAsmKernel = v }(useAsmKernel)
	useAsmKernel = false
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tr := range transCombos {
		for _, ab := range alphaBetas {
			runSgemmCase(t, sgemmCase{tA: tr[0], tB: tr[1], m: 37, n: 29, k: 41, alpha: ab[0], beta: ab[1],
				padA: 1, padB: 2, padC: 3}, rng)
		}
	}
}

// TestSgemmZMMMatchesYMM runs the same products with the AVX-512 6×32
// kernel and with the AVX2 6×16 kernel alone and requires identical
// results: each element gets the same FMAs in the same order. The shapes
// cover direct and packed B, ragged row and column panels, odd numbers of
// panels, several K blocks and accumulation.
func TestSgemmZMMMatchesYMM(t *testing.T) {
	if DetectedISA() < ISAAVX512 || !useAsmKernel {
		t.Skipf("no AVX-512 here (%s)", ISAReport())
	}
	defer func(v bool) { useZMMKernel = v }(useZMMKernel)
	rng := rand.New(rand.NewPCG(5, 6))
	// The last three end in 17–31 columns (panel2Tail), with K over
	// several blocks, B in place (m ≤ 64) and packed.
	for _, s := range [][3]int{{6, 32, 8}, {5, 48, 9}, {13, 64, 300}, {64, 80, 64}, {100, 97, 257}, {7, 130, 33}, {200, 256, 520},
		{7, 56, 300}, {40, 120, 520}, {70, 84, 300}} {
		for _, tr := range transCombos {
			// alpha 1 with beta 0 or 1 lets the kernels write C directly
			// (A in place where m ≤ 64); the others go through scaleC.
			for _, ab := range [][2]float32{{1, 0}, {1, 1}, {1.5, 0}, {1.5, 0.5}} {
				m, n, k := s[0], s[1], s[2]
				c := sgemmCase{tA: tr[0], tB: tr[1], m: m, n: n, k: k, alpha: ab[0], beta: ab[1], padA: 1, padB: 3, padC: 2}
				o := newSgemmRef(m, n, k, rng).operands(c, rng)
				run := func(zmm bool) []float32 {
					useZMMKernel = zmm
					out := slices.Clone(o.c)
					sgemm(c.tA, c.tB, m, n, k, c.alpha, o.a, o.lda, o.b, o.ldb, c.beta, out, o.ldc, false)
					return out
				}
				requireSameBits(t, fmt.Sprintf("%v: AVX2, AVX-512", c), run(false), run(true))
			}
		}
	}
}

// TestSgemmInPlaceAMatchesPacked checks that reading A in place gives the
// packed kernels' bits, with the AVX2 and (where the CPU has it) the
// AVX-512 kernels: row-major and transposed A, whole and ragged row
// panels, several K and M blocks, accumulation into C, and a transposed A
// whose row stride makes sgemm pack it anyway.
func TestSgemmInPlaceAMatchesPacked(t *testing.T) {
	if !useAsmKernel {
		t.Skipf("no assembly kernel here (%s)", ISAReport())
	}
	defer func(v bool) { useZMMKernel = v }(useZMMKernel)
	defer func(v bool) { sgemmAInPlace = v }(sgemmAInPlace)
	widths := []bool{false}
	if DetectedISA() >= ISAAVX512 {
		widths = append(widths, true)
	} else {
		t.Logf("AVX-512 kernels skipped: %s", ISAReport())
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range [][4]int{{6, 32, 8, 1}, {11, 48, 9, 0}, {12, 17, 300, 3}, {128, 100, 64, 1}, {150, 70, 257, 0}, {256, 40, 20, 0}} {
		for _, tr := range transCombos {
			for _, beta := range []float32{0, 1} {
				m, n, k := s[0], s[1], s[2]
				c := sgemmCase{tA: tr[0], tB: tr[1], m: m, n: n, k: k, alpha: 1, beta: beta, padA: s[3], padB: 1, padC: 2}
				o := newSgemmRef(m, n, k, rng).operands(c, rng)
				for _, zmm := range widths {
					useZMMKernel = zmm
					run := func(inPlace bool) []float32 {
						sgemmAInPlace = inPlace
						out := slices.Clone(o.c)
						sgemm(c.tA, c.tB, m, n, k, c.alpha, o.a, o.lda, o.b, o.ldb, c.beta, out, o.ldc, false)
						return out
					}
					packed, in := run(false), run(true)
					o.check(t, c.String(), in)
					requireSameBits(t, fmt.Sprintf("%v (AVX-512 %v): packed, in place", c, zmm), packed, in)
				}
			}
		}
	}
}

// requireSameBits fails the test at the first element where got differs
// from want (sameBits, vec_test.go).
func requireSameBits(t *testing.T, what string, want, got []float32) {
	t.Helper()
	for i := range want {
		if !sameBits(want[i], got[i]) {
			t.Fatalf("%s: element %d: %v, %v", what, i, want[i], got[i])
		}
	}
}

// TestSgemmPortableOffsetInvariant: the portable A·Bᵀ gives the same bits
// wherever B's rows lie (gonum's DotUnitary depends on their alignment),
// as a Trainer's bucket, which packs weights at any offset, needs.
func TestSgemmPortableOffsetInvariant(t *testing.T) {
	defer func(v bool) { useAsmKernel = v }(useAsmKernel)
	useAsmKernel = false
	rng := rand.New(rand.NewPCG(13, 14))
	m, n, k := 3, 10, 37
	a, buf := make([]float32, m*k), make([]float32, n*k+3)
	for i := range a {
		a[i] = rng.Float32() - 0.5
	}
	for i := range buf {
		buf[i] = rng.Float32() - 0.5
	}
	var want []float32
	for off := range 4 {
		b := make([]float32, n*k+off)[off:]
		copy(b, buf)
		c := make([]float32, m*n)
		sgemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n, false)
		if off == 0 {
			want = c
		} else if !slices.Equal(c, want) {
			t.Errorf("B at offset %d: the product differs from B at offset 0", off)
		}
	}
}
