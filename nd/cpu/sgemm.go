package cpu

import (
	"fmt"
	"sync"
	"unsafe"
)

// The float32 GEMM follows the GotoBLAS/BLIS design. C is computed in
// 6×16 tiles by an AVX2/FMA micro-kernel (sgemm_amd64.s) that keeps the
// whole tile in 12 YMM registers, broadcasts one element of A per row and
// loads 16 elements of B per step of k (12 FMAs per 8 loads). Around it:
//
//	for jc over N in blocks of ≤ sgemmNC             (B block: L3)
//	  for pc over K in blocks of ≤ sgemmKC           (B micro-panel kb×16: L1)
//	    pack op(B)[pc:pc+kb, jc:jc+nb] into 16-wide micro-panels
//	    for ic over M in blocks of ≤ sgemmMC         (A block mb×kb: L2)
//	      pack alpha·op(A)[ic:ic+mb, pc:pc+kb] into 6-tall micro-panels
//	      for jr over the B block: sgemmPanel (ir over the A block in asm)
//
// Packing absorbs the transposes, alpha and the padding of ragged panels
// (sgemm_pack.go), so the micro-kernel sees one layout. A ragged last row
// panel (1–5 rows) runs a 2-, 4- or 6-row variant and writes only its rows;
// a ragged last column panel is computed into a scratch tile and only its
// valid columns are written back. Block sizes are balanced (K = 288 runs
// as 2×144, not 256+32) so that no block is tiny.
//
// Beta: with beta = 0 the first K block overwrites C (so NaNs in C do not
// leak through), beta = 1 accumulates, and other values scale C first.
//
// B is used in place, unpacked, when it is not transposed and M is small
// (see useDirectB): each element of B is then used by so few tiles that
// copying it costs more than reading it with a stride.
//
// A is read in place too, with alpha = 1 (see useInPlaceA): the kernels
// sgemmPanelA and sgemmPanel2A (sgemma_amd64.s) broadcast each row's value
// from where it lies instead of from a packed panel, and only a ragged last
// row panel is packed. Each thread of a parallel product would otherwise
// pack the whole of A for itself; on the MLP's products the copy was 7% of
// the time.
//
// Parallelism: sgemm splits C (along N, or along M when M > N) into
// workers() ranges of whole tiles, each a serial sgemm on its own pooled
// buffers. Each element's sum runs in the same order either way, so results
// do not depend on the number of goroutines. Callers already running in
// parallel (per-image GEMMs of the convolutions, small products of a batch)
// pass parallel = false, so goroutines never nest.
const (
	sgemmMR = 6
	sgemmNR = 16
	sgemmKC = 256
	sgemmMC = 144
	sgemmNC = 2048
	// sgemmDirectM is the largest M for which a non-transposed B may be
	// read in place instead of packed.
	sgemmDirectM = 64
	// sgemmParallelMin is the least M·N·K worth splitting over goroutines.
	sgemmParallelMin = 1 << 17
	// dotParallelMin is the least M·N·K of a product of dot products
	// (sgemmDotRows) worth splitting: they stream B once, so splitting
	// pays off at smaller products than packed GEMMs do, but their A rows
	// were usually just written on the caller's core and the helper must
	// fetch them. On hosts whose cores hand cache lines over slowly,
	// LeNet's first dense layer at batch 1 (48K multiply-adds) runs
	// slower split than serial, on the others a little faster
	// (BenchmarkSgemmNets, lenet/fc1/fwd-b1; BenchmarkHybridInferLeNetB1):
	// it stays serial.
	dotParallelMin = 1 << 16
)

// sgemmBuf holds one goroutine's packing buffers; sgemmPool reuses them so
// that a GEMM allocates nothing once the pool is warm.
type sgemmBuf struct {
	a, b []float32
	tile [sgemmMC * 2 * sgemmNR]float32 // scratch for the last, ragged column panels
}

var sgemmPool = sync.Pool{New: func() any { return new(sgemmBuf) }}

// grow returns buf resized to n elements, reallocating (64-byte aligned,
// so that each packed row of B is one cache line) when it is too small.
func grow[T float32 | uint32](buf []T, n int) []T {
	if cap(buf) >= n {
		return buf[:n]
	}
	raw := make([]T, n+16)
	off := int(uintptr(unsafe.Pointer(&raw[0]))&63) / 4
	if off != 0 {
		off = 16 - off
	}
	return raw[off : off+n : off+n]
}

// sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices, where op(A) is m×k and op(B) is k×n. When parallel is true and
// the product is large enough, C is split into workers() column (or row)
// ranges computed concurrently; callers that already run inside
// parallelFor pass false so that goroutines do not multiply. While the
// dedicated goroutines take every core (Dedicate) the product is one
// serial call: the ranges would run one after the other on the caller,
// each packing the whole of the other operand again. Every element is the
// same sum in the same order either way (TestSgemmReproducible). Without the
// assembly kernel (other architectures, CPUs without AVX2/FMA) it uses
// gonum's Sgemm, except for A·Bᵀ (sgemmPortableNT).
func sgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	if !useAsmKernel {
		if !tA && tB {
			sgemmPortableNT(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, parallel)
			return
		}
		impl.Sgemm(trans(tA), trans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	checkSgemm(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	if useDotRows(tA, tB, m, k) { // decided for the whole product: a split never changes it
		if beta != 0 && beta != 1 {
			scaleC(m, n, beta, c, ldc)
			beta = 1
		}
		if !parallel || m*n*k < dotParallelMin || coresTaken() {
			sgemmDotRows(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			return
		}
		// Units of 4 columns, a chunk at least half of dotParallelMin.
		grain := ceilDiv(dotParallelMin, 2*4*m*k)
		parallelFor(ceilDiv(n, 4), grain, func(lo, hi int) {
			j0, j1 := 4*lo, min(4*hi, n)
			sgemmDotRows(m, j1-j0, k, alpha, a, lda, b[j0*ldb:], ldb, beta, c[j0:], ldc)
		})
		return
	}
	chunks := 1
	if parallel && m*n*k >= sgemmParallelMin && !coresTaken() {
		chunks = workers()
	}
	splitN := n >= m
	units := ceilDiv(m, sgemmMR)
	if splitN {
		units = ceilDiv(n, sgemmNR)
	}
	chunks = min(chunks, units)
	if chunks <= 1 {
		sgemmSerial(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	parallelFor(units, 1, func(lo, hi int) {
		if splitN {
			j0, j1 := lo*sgemmNR, min(hi*sgemmNR, n)
			bo := j0
			if tB {
				bo = j0 * ldb
			}
			sgemmSerial(tA, tB, m, j1-j0, k, alpha, a, lda, b[bo:], ldb, beta, c[j0:], ldc)
			return
		}
		i0, i1 := lo*sgemmMR, min(hi*sgemmMR, m)
		ao := i0 * lda
		if tA {
			ao = i0
		}
		sgemmSerial(tA, tB, i1-i0, n, k, alpha, a[ao:], lda, b, ldb, beta, c[i0*ldc:], ldc)
	})
}

// sgemmPortableNT is C = alpha·A·Bᵀ + beta·C without the assembly kernel.
// gonum's Sgemm computes each element of this case with f32.DotUnitary,
// whose amd64 assembly adds products one by one until B's row is 16-byte
// aligned and then in vector lanes, so its bits depend on where the rows
// lie in memory: a weight packed into a Trainer's bucket at an offset that
// is not a multiple of 4 values gave other products than the same weight
// on its own. Here every element is the sum over k in ascending order,
// wherever the operands lie and however the work is split.
func sgemmPortableNT(m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	checkSgemm(false, true, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if beta != 1 {
		scaleC(m, n, beta, c, ldc)
	}
	if k == 0 || alpha == 0 {
		return
	}
	block := func(i0, i1, j0, j1 int) {
		for i := i0; i < i1; i++ {
			ar := a[i*lda:][:k]
			cr := c[i*ldc:][:j1]
			j := j0
			for ; j+4 <= j1; j += 4 { // four independent sums for the pipeline
				b0, b1, b2, b3 := b[j*ldb:][:k], b[(j+1)*ldb:][:k], b[(j+2)*ldb:][:k], b[(j+3)*ldb:][:k]
				var s0, s1, s2, s3 float32
				for l, v := range ar {
					s0 += v * b0[l]
					s1 += v * b1[l]
					s2 += v * b2[l]
					s3 += v * b3[l]
				}
				cr[j] += alpha * s0
				cr[j+1] += alpha * s1
				cr[j+2] += alpha * s2
				cr[j+3] += alpha * s3
			}
			for ; j < j1; j++ {
				br := b[j*ldb:][:k]
				var s float32
				for l, v := range ar {
					s += v * br[l]
				}
				cr[j] += alpha * s
			}
		}
	}
	if !parallel || m*n*k < sgemmParallelMin {
		block(0, m, 0, n)
		return
	}
	if n >= m {
		// Units of 4 columns, a chunk at least half of dotParallelMin.
		grain := ceilDiv(dotParallelMin, 2*4*m*k)
		parallelFor(ceilDiv(n, 4), grain, func(lo, hi int) { block(0, m, lo*4, min(hi*4, n)) })
		return
	}
	parallelFor(m, 1, func(lo, hi int) { block(lo, hi, 0, n) })
}

// checkSgemm panics, BLAS-style, when a dimension, leading dimension or
// slice length is invalid: the assembly kernel does no bounds checks.
func checkSgemm(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("sgemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	ar, ac := m, k
	if tA {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB {
		br, bc = n, k
	}
	need := func(name string, s []float32, rows, cols, ld int) {
		if ld < max(1, cols) {
			panic(fmt.Sprintf("sgemm: bad ld%s=%d for %d columns", name, ld, cols))
		}
		if rows > 0 && cols > 0 && len(s) < (rows-1)*ld+cols {
			panic(fmt.Sprintf("sgemm: short %s: len %d < %d for %dx%d with ld %d", name, len(s), (rows-1)*ld+cols, rows, cols, ld))
		}
	}
	need("a", a, ar, ac, lda)
	need("b", b, br, bc, ldb)
	need("c", c, m, n, ldc)
}

// scaleC sets C = beta·C; beta = 0 clears C.
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		r := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(r)
			continue
		}
		if beta != 1 {
			for j := range r {
				r[j] *= beta
			}
		}
	}
}

// blocks splits n into the fewest blocks of at most size, of equal length
// rounded up to a multiple of unit, and returns that length.
func blocks(n, size, unit int) int {
	nb := ceilDiv(n, size)
	return min(size, ceilDiv(ceilDiv(n, nb), unit)*unit)
}

// useDirectB reports whether sgemmSerial reads B in place. A single row
// panel of A uses each micro-panel of B once, so packing never pays. Up to
// sgemmDirectM rows it still does not, unless the row stride of B is a
// multiple of 32 elements (128 bytes): then the rows of a micro-panel fall
// into few L1 sets and evict each other between uses.
func useDirectB(tB bool, m, ldb int) bool {
	return !tB && (m <= sgemmMR || m <= sgemmDirectM && ldb%32 != 0)
}

// sgemmSerial is sgemm on the calling goroutine with the assembly kernel.
func sgemmSerial(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if beta != 0 && beta != 1 {
		scaleC(m, n, beta, c, ldc)
		beta = 1
	}
	buf := sgemmPool.Get().(*sgemmBuf)
	defer sgemmPool.Put(buf)

	kc := blocks(k, sgemmKC, 1)
	mc := blocks(m, sgemmMC, sgemmMR)
	nc := blocks(n, sgemmNC, sgemmNR)
	direct := useDirectB(tB, m, ldb)
	inA := sgemmAInPlace && useInPlaceA(tA, alpha, lda)
	buf.a = grow(buf.a, mc*kc+2) // +2: packA6's slack
	if !direct {
		buf.b = grow(buf.b, nc*kc)
	} else {
		buf.b = grow(buf.b, 2*sgemmNR*kc) // for the last, ragged panels only
	}
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			accum := pc > 0 || beta == 1
			var bp []float32
			if !direct {
				bp = buf.b[:ceilDiv(nb, sgemmNR)*sgemmNR*kb]
				packB(tB, b, ldb, pc, jc, kb, nb, bp)
			}
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				ab := blockA(tA, a, lda, ic, pc, mb, kb, alpha, inA, buf)
				cb := c[ic*ldc+jc:]
				if direct {
					macroDirect(mb, nb, kb, ab, b[pc*ldb+jc:], ldb, buf, cb, ldc, accum)
				} else {
					macroKernel(mb, nb, kb, ab, bp, buf, cb, ldc, accum)
				}
			}
		}
	}
}

// sgemmPacked computes C = A·B (A m×k, row-major with row stride lda,
// not transposed; beta 0) on the calling goroutine, where B is never
// stored: pack(pc, kb, jc, nb, dst) writes op(B)[pc:pc+kb, jc:jc+nb] in
// packB's layout (16-wide micro-panels of kb rows; the columns of a ragged
// last panel past nb may hold anything, they are never written to C). The
// blocking, and so every sum's order, is sgemmSerial's: with the same
// values in the packed blocks, C is bitwise what sgemm gives.
func sgemmPacked(m, n, k int, a []float32, lda int, pack func(pc, kb, jc, nb int, dst []float32), c []float32, ldc int) {
	if m <= 0 || n <= 0 {
		return
	}
	if k <= 0 {
		scaleC(m, n, 0, c, ldc)
		return
	}
	if m < 0 || n < 0 || lda < k || ldc < n || len(a) < (m-1)*lda+k || len(c) < (m-1)*ldc+n {
		panic(fmt.Sprintf("sgemm: bad packed product m=%d n=%d k=%d lda=%d ldc=%d len(a)=%d len(c)=%d", m, n, k, lda, ldc, len(a), len(c)))
	}
	buf := sgemmPool.Get().(*sgemmBuf)
	defer sgemmPool.Put(buf)
	kc := blocks(k, sgemmKC, 1)
	mc := blocks(m, sgemmMC, sgemmMR)
	nc := blocks(n, sgemmNC, sgemmNR)
	inA := sgemmAInPlace && useInPlaceA(false, 1, lda)
	buf.a = grow(buf.a, mc*kc+2)
	buf.b = grow(buf.b, nc*kc)
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			bp := buf.b[:ceilDiv(nb, sgemmNR)*sgemmNR*kb]
			pack(pc, kb, jc, nb, bp)
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				ab := blockA(false, a, lda, ic, pc, mb, kb, 1, inA, buf)
				macroKernel(mb, nb, kb, ab, bp, buf, c[ic*ldc+jc:], ldc, pc > 0)
			}
		}
	}
}

// blockA returns alpha·op(A)[ic:ic+mb, pc:pc+kb] for the micro-kernels:
// its whole 6-row panels read in place when inA, the other rows packed
// into buf.a.
func blockA(tA bool, a []float32, lda, ic, pc, mb, kb int, alpha float32, inA bool, buf *sgemmBuf) aBlock {
	var ab aBlock
	if inA {
		ab = inPlaceA(tA, a, lda, ic, pc, mb, kb)
	}
	if rest := mb - ab.full; rest > 0 {
		ab.packed = buf.a[:ceilDiv(rest, sgemmMR)*sgemmMR*kb]
		packA(tA, a, lda, ic+ab.full, pc, rest, kb, alpha, ab.packed)
	}
	return ab
}

// sgemmAInPlace lets tests turn reading A in place off, to compare the
// two ways.
var sgemmAInPlace = true

// aBlock is how the micro-kernels find an mb×kb block of op(A): its first
// full rows (a multiple of sgemmMR) read in place, value (i, p) at
// in[i*rs+p*cs], and the rows after them from packed panels.
type aBlock struct {
	in     *float32
	rs, cs int
	full   int
	packed []float32
}

// useInPlaceA reports whether sgemmSerial reads A in place. Packing
// copies A once per K block, which the kernel's time hides only when a
// block of A meets many columns of B; reading A in place saves the copy
// and is faster on the MLP's products (BenchmarkSgemmNets), and never
// slower than the noise elsewhere, except in one case, which packs: a transposed
// A with a row stride that is a multiple of 1 KiB. Its kernel reads one
// cache line per step of k, and with that stride all of a panel's lines
// fall into a few sets of L1 (the CIFAR CNN's dense weight gradient ran 6%
// slower). Packing also applies alpha, so only alpha = 1 reads in place.
func useInPlaceA(tA bool, alpha float32, lda int) bool {
	return alpha == 1 && (!tA || lda%256 != 0)
}

// inPlaceA describes op(A)[ic:ic+mb, pc:pc+kb] read in place: all of its
// whole 6-row panels (the ragged last one, if any, is left for packing).
func inPlaceA(tA bool, a []float32, lda, ic, pc, mb, kb int) aBlock {
	full := mb / sgemmMR * sgemmMR
	if full == 0 {
		return aBlock{}
	}
	ab := aBlock{full: full, rs: lda, cs: 1}
	off := ic*lda + pc
	if tA {
		ab.rs, ab.cs = 1, lda
		off = pc*lda + ic
	}
	_ = a[off+(full-1)*ab.rs+(kb-1)*ab.cs] // the kernels do no bounds checks
	ab.in = &a[off]
	return ab
}

// macroKernel multiplies an mb×kb block of A by a packed kb×nb block of B
// into C.
func macroKernel(mb, nb, kb int, ab aBlock, bp []float32, buf *sgemmBuf, c []float32, ldc int, accum bool) {
	for jr := 0; jr < nb; jr += sgemmNR {
		if useZMMKernel && jr+2*sgemmNR <= nb {
			panel2(mb, kb, ab, &bp[jr*kb], &bp[(jr+sgemmNR)*kb], sgemmNR, c[jr:], ldc, accum)
			jr += sgemmNR
			continue
		}
		if useZMMKernel && nb-jr > sgemmNR { // the last 17–31 columns
			panel2Tail(mb, nb-jr, kb, ab, &bp[jr*kb], &bp[(jr+sgemmNR)*kb], sgemmNR, buf, c[jr:], ldc, accum)
			return
		}
		panel(mb, min(sgemmNR, nb-jr), kb, ab, &bp[jr*kb], sgemmNR, buf, c[jr:], ldc, accum)
	}
}

// panel2Tail computes the last nn columns (16 < nn < 32) of an mb-row
// block of C with the 32-wide AVX-512 kernels, b2 being the ragged second
// panel, through the scratch tile. The 16-wide kernels are AVX2: a full
// and a ragged panel through them took 1.3–1.45× as long on LeNet's dense
// layers (BenchmarkSgemmNets: 120 = 96 + 24 columns, 84 = 64 + 20).
// For 16 columns or fewer they stay, as fast as a half-used 32-wide
// panel. Each element gets the FMAs it gets in a full panel, and the
// kernels add their block's sum to C as the copy-back does, so C has the
// same bits.
func panel2Tail(mb, nn, kb int, ab aBlock, b1, b2 *float32, ldb int, buf *sgemmBuf, c []float32, ldc int, accum bool) {
	const w = 2 * sgemmNR
	t := buf.tile[:mb*w]
	panel2(mb, kb, ab, b1, b2, ldb, t, w, false)
	tileBack(mb, nn, t, w, c, ldc, accum)
}

// tileBack writes the first nn columns of the mb rows of the scratch tile
// t (row stride ldt) to C, or adds them to C when accum is set, as the
// kernels store or add their sums.
func tileBack(mb, nn int, t []float32, ldt int, c []float32, ldc int, accum bool) {
	for i := range mb {
		row, src := c[i*ldc:i*ldc+nn], t[i*ldt:i*ldt+nn]
		if accum {
			for j, v := range src {
				row[j] += v
			}
		} else {
			copy(row, src)
		}
	}
}

// macroDirect is macroKernel with B read in place (row stride ldb); only
// the ragged last column panel is packed, or with AVX-512 the last 17–31
// columns (panel2Tail).
func macroDirect(mb, nb, kb int, ab aBlock, b []float32, ldb int, buf *sgemmBuf, c []float32, ldc int, accum bool) {
	for jr := 0; jr < nb; jr += sgemmNR {
		nn := min(sgemmNR, nb-jr)
		if rem := nb - jr; useZMMKernel && rem > sgemmNR && rem < 2*sgemmNR { // the last 17–31 columns, packed
			bp := buf.b[:2*sgemmNR*kb]
			packB(false, b, ldb, 0, jr, kb, rem, bp)
			panel2Tail(mb, rem, kb, ab, &bp[0], &bp[sgemmNR*kb], sgemmNR, buf, c[jr:], ldc, accum)
			return
		}
		if nn < sgemmNR {
			bp := buf.b[:sgemmNR*kb]
			packB(false, b, ldb, 0, jr, kb, nn, bp)
			panel(mb, nn, kb, ab, &bp[0], sgemmNR, buf, c[jr:], ldc, accum)
			continue
		}
		if useZMMKernel && jr+2*sgemmNR <= nb {
			_ = b[(kb-1)*ldb+jr+2*sgemmNR-1]
			panel2(mb, kb, ab, &b[jr], &b[jr+sgemmNR], ldb, c[jr:], ldc, accum)
			jr += sgemmNR
			continue
		}
		_ = b[(kb-1)*ldb+jr+sgemmNR-1]
		panel(mb, nn, kb, ab, &b[jr], ldb, buf, c[jr:], ldc, accum)
	}
}

// panel2 computes the mb×32 block of C for two full column panels of B
// (b1, b2) with the AVX-512 kernels: the rows read in place, then the
// packed ones.
func panel2(mb, kb int, ab aBlock, b1, b2 *float32, ldb int, c []float32, ldc int, accum bool) {
	acc := 0
	if accum {
		acc = 1
	}
	_ = c[(mb-1)*ldc+2*sgemmNR-1]
	if ab.full > 0 {
		sgemmPanel2A(kb, ab.in, ab.rs, ab.cs, ab.full, b1, b2, ldb, &c[0], ldc, acc)
	}
	if ab.full < mb {
		sgemmPanel2(kb, &ab.packed[0], mb-ab.full, b1, b2, ldb, &c[ab.full*ldc], ldc, acc)
	}
}

// panel computes the mb×nn block of C (nn ≤ nr) for one column panel of
// B. A full-width panel goes straight to C; a ragged one goes through the
// scratch tile and only its nn valid columns are written back.
func panel(mb, nn, kb int, ab aBlock, b *float32, ldb int, buf *sgemmBuf, c []float32, ldc int, accum bool) {
	acc := 0
	if accum {
		acc = 1
	}
	if nn == sgemmNR {
		_ = c[(mb-1)*ldc+sgemmNR-1]
		panelRows(mb, kb, ab, b, ldb, c, ldc, acc)
		return
	}
	t := buf.tile[:mb*sgemmNR]
	panelRows(mb, kb, ab, b, ldb, t, sgemmNR, 0)
	tileBack(mb, nn, t, sgemmNR, c, ldc, accum)
}

// panelRows runs the 16-wide kernels over the mb rows of ab: those read
// in place, then the packed ones.
func panelRows(mb, kb int, ab aBlock, b *float32, ldb int, c []float32, ldc, acc int) {
	if ab.full > 0 {
		sgemmPanelA(kb, ab.in, ab.rs, ab.cs, ab.full, b, ldb, &c[0], ldc, acc)
	}
	if ab.full < mb {
		sgemmPanel(kb, &ab.packed[0], mb-ab.full, b, ldb, &c[ab.full*ldc], ldc, acc)
	}
}
