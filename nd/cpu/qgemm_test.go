package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"
)

// The int8 GEMM: every micro-kernel this CPU can run (whatever
// GOLUON_CPU says) against a plain triple loop, on random data with the
// extreme values (activations 0 and 255, or 0 and 128 for the AVX2
// kernel that needs them at most 128; weights -128, -127 and 127), tiles
// of every row count and sizes that are not multiples of anything.

// qKernels returns the kernels this CPU runs, with whether each takes
// activations above 128.
func qKernels() []qKern {
	ks := []qKern{qKernGo}
	if DetectedISA() >= ISAAVX2 {
		ks = append(ks, qKernAVX2, qKernAVX2Split)
	}
	if DetectedISA() >= ISAAVX512 && hasAVX512VNNI() {
		ks = append(ks, qKernVNNI)
	}
	return ks
}

// qFull reports whether kern takes activations above 128.
func qFull(kern qKern) bool { return kern.name != qKernAVX2.name }

// randU8 returns n activations: about a third 0 or top (255, or 128 for
// small), the rest uniform up to top.
func randU8(r *rand.Rand, n int, top int) []uint8 {
	a := make([]uint8, n)
	for i := range a {
		switch r.IntN(6) {
		case 0:
			a[i] = 0
		case 1:
			a[i] = uint8(top)
		default:
			a[i] = uint8(r.IntN(top + 1))
		}
	}
	return a
}

// randS8 returns n weights: about a third -128, -127 or 127.
func randS8(r *rand.Rand, n int) []int8 {
	w := make([]int8, n)
	for i := range w {
		switch r.IntN(9) {
		case 0:
			w[i] = -128
		case 1:
			w[i] = 127
		case 2:
			w[i] = -127
		default:
			w[i] = int8(r.IntN(256) - 128)
		}
	}
	return w
}

// refQ returns Σ_p (a[i·lda+p]−zero)·w[j·k+p] for the m×n product.
func refQ(m, n, k int, a []uint8, lda int, zero int32, w []int8) []int32 {
	c := make([]int32, m*n)
	for i := range m {
		for j := range n {
			var s int64
			for p := range k {
				s += int64(int32(a[i*lda+p])-zero) * int64(w[j*k+p])
			}
			c[i*n+j] = int32(s)
		}
	}
	return c
}

// TestQTile: each micro-kernel's tile, for every row count and k-group
// counts around the loops, int32 and dequantized stores, against the
// triple loop (the dequantization's two roundings in Go).
func TestQTile(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, kern := range qKernels() {
		top := 255
		if !qFull(kern) {
			top = qMaxSmall
		}
		for _, k4 := range []int{1, 2, 3, 17, 64} {
			for m := 1; m <= kern.mr; m++ {
				t.Run(fmt.Sprintf("%s/k4=%d/m=%d", kern.name, k4, m), func(t *testing.T) {
					k, n := 4*k4, kern.panels*qPanel
					lda := k + 3
					a := randU8(r, m*lda, top)
					w := randS8(r, n*k)
					p := PackInt8(w, n, k)
					zero := int32(r.IntN(256))
					corr := make([]int32, p.npad)
					scale := make([]float32, p.npad)
					bias := make([]float32, p.npad)
					for j := range p.npad {
						corr[j] = -zero * p.colSum[j]
						scale[j] = float32(math.Ldexp(1+r.Float64(), -14+r.IntN(4)))
						bias[j] = float32(r.NormFloat64())
					}
					want := refQ(m, n, k, a, lda, zero, w)
					ldc := n + 5
					ci := make([]int32, m*ldc)
					kern.tile(k4, &a[0], lda, m, p.panel(0), qPStride, qKStride, unsafe.Pointer(&ci[0]), ldc, &corr[0], nil, nil)
					cf := make([]float32, m*ldc)
					kern.tile(k4, &a[0], lda, m, p.panel(0), qPStride, qKStride, unsafe.Pointer(&cf[0]), ldc, &corr[0], &scale[0], &bias[0])
					for i := range m {
						for j := range n {
							if got := ci[i*ldc+j]; got != want[i*n+j] {
								t.Fatalf("int32 C[%d][%d] = %d, want %d", i, j, got, want[i*n+j])
							}
							wf := float32(float32(want[i*n+j])*scale[j]) + bias[j]
							if got := cf[i*ldc+j]; math.Float32bits(got) != math.Float32bits(wf) {
								t.Fatalf("float C[%d][%d] = %v, want %v", i, j, got, wf)
							}
						}
						for j := n; j < ldc; j++ {
							if ci[i*ldc+j] != 0 || cf[i*ldc+j] != 0 {
								t.Fatalf("row %d: column %d beyond the tile was written", i, j)
							}
						}
					}
				})
			}
		}
	}
}

// TestGemmU8S8Kernels: whole products through each kernel: odd sizes
// (partial row tiles, partial column groups, K not a multiple of 4, with
// and without room to read A in place), strides beyond the sizes, sizes
// that split over the cores, int32 and dequantized with per-tensor and
// per-column scales, with and without bias.
func TestGemmU8S8Kernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sizes := [][3]int{{1, 1, 1}, {1, 10, 48}, {7, 33, 5}, {13, 70, 30}, {6, 64, 64}, {5, 17, 3}, {50, 130, 77}, {97, 200, 260}}
	for _, kern := range qKernels() {
		top := 255
		if !qFull(kern) {
			top = qMaxSmall
		}
		for _, sz := range sizes {
			m, n, k := sz[0], sz[1], sz[2]
			for _, tight := range []bool{false, true} {
				name := fmt.Sprintf("%s/%dx%dx%d/tight=%v", kern.name, m, n, k, tight)
				t.Run(name, func(t *testing.T) {
					lda, ldc, na := k+3, n+1, m*(k+3) // room to read k-groups in place
					if tight {
						lda, ldc, na = k, n, m*k // K%4 != 0: copied into padded rows
					}
					a := randU8(r, na, top)
					w := randS8(r, n*k)
					p := PackInt8(w, n, k)
					ci := make([]int32, (m-1)*ldc+n)
					qgemm(kern, m, a, lda, p, unsafe.Pointer(&ci[0]), ldc, nil)
					want := refQ(m, n, k, a, lda, 0, w)
					for i := range m {
						for j := range n {
							if got := ci[i*ldc+j]; got != want[i*n+j] {
								t.Fatalf("C[%d][%d] = %d, want %d", i, j, got, want[i*n+j])
							}
						}
					}
					zero := int32(r.IntN(256))
					want = refQ(m, n, k, a, lda, zero, w)
					for _, perCol := range []bool{false, true} {
						scale := []float32{float32(r.Float64() * 1e-4)}
						if perCol {
							scale = make([]float32, n)
							for j := range scale {
								scale[j] = float32(r.Float64() * 1e-4)
							}
						}
						for _, bias := range [][]float32{nil, randF32(r, n)} {
							v := qVectors(p, zero, scale, bias)
							cf := make([]float32, (m-1)*ldc+n)
							qgemm(kern, m, a, lda, p, unsafe.Pointer(&cf[0]), ldc, v)
							for i := range m {
								for j := range n {
									wf := float32(float32(want[i*n+j]) * scale[min(j, len(scale)-1)])
									if bias != nil {
										wf += bias[j]
									}
									if got := cf[i*ldc+j]; math.Float32bits(got) != math.Float32bits(wf) {
										t.Fatalf("perCol %v bias %v: C[%d][%d] = %v, want %v", perCol, bias != nil, i, j, got, wf)
									}
								}
							}
						}
					}
				})
			}
		}
	}
}

func randF32(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// TestGemmU8S8Dispatch: the exported products at the active level, on
// activations up to 255 (the AVX2 level takes the split kernel for them)
// and up to 128, against the triple loop.
func TestGemmU8S8Dispatch(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const m, n, k = 9, 40, 23
	for _, top := range []int{255, 128} {
		a := randU8(r, m*k, top)
		w := randS8(r, n*k)
		p := PackInt8(w, n, k)
		c := make([]int32, m*n)
		GemmU8S8(m, a, k, p, c, n)
		want := refQ(m, n, k, a, k, 0, w)
		for i := range c {
			if c[i] != want[i] {
				t.Fatalf("top %d (%s): C[%d] = %d, want %d", top, Int8Kernel(), i, c[i], want[i])
			}
		}
		cf := make([]float32, m*n)
		GemmU8S8F32(m, a, k, 3, p, []float32{0.5}, nil, cf, n)
		want = refQ(m, n, k, a, k, 3, w)
		for i := range cf {
			if cf[i] != float32(want[i])*0.5 {
				t.Fatalf("top %d: float C[%d] = %v, want %v", top, i, cf[i], float32(want[i])*0.5)
			}
		}
	}
	big := []uint8{0, 0, 129}
	if useAsmKernel && !useVNNI {
		if got := qKernelFor(big, 1, 3, 3); got.name != qKernAVX2Split.name {
			t.Errorf("activations above 128 take %s", got.name)
		}
		if got := qKernelFor([]uint8{128, 0, 7}, 1, 3, 3); got.name != qKernAVX2.name {
			t.Errorf("activations up to 128 take %s", got.name)
		}
	}
	t.Logf("int8 kernel here: %s (%s)", Int8Kernel(), ISAReport())
}

// TestQSmall: the scan that sends activations above 128 to the split
// kernel finds one anywhere in a row, and ignores bytes past K.
func TestQSmall(t *testing.T) {
	for _, c := range []struct {
		a         []uint8
		m, lda, k int
		want      bool
	}{
		{make([]uint8, 40), 2, 20, 20, true},
		{append(make([]uint8, 19), 129), 1, 20, 20, false},
		{append(make([]uint8, 7), 128, 128, 128), 1, 10, 10, true},
		{append(make([]uint8, 9), 200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 2, 10, 9, true},
		{append(make([]uint8, 11), 200, 0, 0, 0, 0, 0, 0, 0, 0), 2, 10, 9, false},
	} {
		if got := qSmall(c.a, c.m, c.lda, c.k); got != c.want {
			t.Errorf("qSmall(%v, m %d, lda %d, k %d) = %v", c.a, c.m, c.lda, c.k, got)
		}
	}
}

// TestPackInt8: the layout (4 bytes of one column per k-group, panels
// of 16 columns, zeros beyond N and K) and the column sums.
func TestPackInt8(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n, k = 19, 6
	w := randS8(r, n*k)
	p := PackInt8(w, n, k)
	if p.N() != n || p.K() != k || p.k4 != 8 || p.npad != 64 || len(p.data) != 64*8 || p.Bytes() != 64*8+4*64 {
		t.Fatalf("sizes: N %d K %d k4 %d npad %d data %d bytes %d", p.N(), p.K(), p.k4, p.npad, len(p.data), p.Bytes())
	}
	for j := range p.npad {
		var s int32
		for q := range p.k4 {
			got := p.data[(j/64)*p.k4*64+(q/4)*256+(j%64)*4+q%4]
			var want int8
			if j < n && q < k {
				want = w[j*k+q]
			}
			if got != want {
				t.Fatalf("W[%d][%d] packed as %d, want %d", j, q, got, want)
			}
			s += int32(want)
		}
		if p.colSum[j] != s {
			t.Fatalf("column sum %d = %d, want %d", j, p.colSum[j], s)
		}
	}
	if cs := p.ColSum(); len(cs) != n {
		t.Errorf("ColSum has %d values", len(cs))
	}
}

// TestQBadInput: the products and the packing panic with a message
// naming the function on sizes, strides and zero points that do not fit.
func TestQBadInput(t *testing.T) {
	p := PackInt8(make([]int8, 12), 3, 4)
	cases := []struct {
		name string
		f    func()
	}{
		{"PackInt8 short", func() { PackInt8(make([]int8, 5), 2, 3) }},
		{"PackInt8 K", func() { PackInt8(make([]int8, qMaxK+1), 1, qMaxK+1) }},
		{"lda", func() { GemmU8S8(2, make([]uint8, 8), 3, p, make([]int32, 6), 3) }},
		{"short A", func() { GemmU8S8(2, make([]uint8, 7), 4, p, make([]int32, 6), 3) }},
		{"short C", func() { GemmU8S8(2, make([]uint8, 8), 4, p, make([]int32, 5), 3) }},
		{"nil", func() { GemmU8S8(1, make([]uint8, 4), 4, nil, make([]int32, 3), 3) }},
		{"zero", func() { GemmU8S8F32(1, make([]uint8, 4), 4, 256, p, []float32{1}, nil, make([]float32, 3), 3) }},
		{"scales", func() { GemmU8S8F32(1, make([]uint8, 4), 4, 0, p, []float32{1, 2}, nil, make([]float32, 3), 3) }},
		{"bias", func() { GemmU8S8F32(1, make([]uint8, 4), 4, 0, p, []float32{1}, []float32{1}, make([]float32, 3), 3) }},
		{"quantize", func() { QuantizeU8(make([]uint8, 2), make([]float32, 3), 1, 0) }},
	}
	for _, c := range cases {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, "cpu.") {
					t.Errorf("%s: panic %q, want a message naming the function", c.name, msg)
				}
			}()
			c.f()
		}()
	}
	GemmU8S8(0, nil, 4, p, nil, 3) // no rows: nothing to do
}
