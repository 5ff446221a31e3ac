package cpu

import (
	"math"
	"sync"
	"unsafe"

	"github.com/goluon/goluon/nd/backend"
)

// sbgemm multiplies bfloat16 matrices on AVX512_BF16's VDPBF16PS, which
// takes pairs of bfloat16 values along k in each 32-bit lane and adds both
// products to a float32 accumulator: twice the multiply-adds per
// instruction of float32 FMAs, on operands half as large.
//
// A is packed into tiles of sbMR rows, B into panels of sbNR columns, both
// as 32-bit words holding the k-pair (element 2p in the low half, 2p+1 in
// the high half; an odd k pads with zero). The micro-kernel accumulates a
// sbMR×sbNR tile of float32 sums in a workspace over blocks of sbKC pairs
// (the B panel's block stays in the first-level cache); the epilogue then
// rounds alpha·sum + beta·C to bfloat16 once per element.
//
// Each lane adds the exact products in the instruction's order: the high
// half's (k = 2p+1), then the low half's (k = 2p), each sum rounded to
// float32, pairs in ascending order. Denormal inputs (and a denormal
// starting sum) count as zero and denormal sums are flushed to zero, as
// VDPBF16PS does; the sums therefore differ from the widened float32
// product's, and values below 2⁻¹²⁶ are lost where the widened product
// keeps them (backend.HalfGemmer allows both; PyTorch's CPU bfloat16
// GEMM on oneDNN does the same).
const (
	sbMR = 12
	sbNR = 32
	sbKC = 256 // k pairs per block
)

// useBF16Kernel selects sbgemm for BFloat16 products (Backend.GemmHalf):
// the CPU has AVX512_BF16 and the AVX-512 kernels are active.
var useBF16Kernel = active >= ISAAVX512 && hasAVX512BF16()

// sbTile is the micro-kernel: w (an sbMR×sbNR tile of float32, row-major)
// = w (0 when load is 0) + the kp pairs of a (sbMR words per pair) times b
// (sbNR words per pair).
type sbTile func(kp int, a, b *uint32, w *float32, load int)

// sbStore rounds rows rows of a full column panel's sums w (sbNR per row)
// into C: c[i·ldc+j] = bfloat16(alpha·w + beta·c), each product rounded
// to float32, then their sum; beta 0 does not read C. A denormal sum
// counts as zero (VCVTNEPS2BF16's rule).
type sbStore func(w *float32, c *backend.BF16, ldc, rows int, alpha, beta float32)

// sbStoreGo is sbStore in Go.
func sbStoreGo(w *float32, c *backend.BF16, ldc, rows int, alpha, beta float32) {
	sbStoreCols(unsafe.Slice(w, rows*sbNR), unsafe.Slice(c, (rows-1)*ldc+sbNR), ldc, rows, sbNR, alpha, beta)
}

// sbStoreCols is sbStore for the first cols columns of the panel.
func sbStoreCols(w []float32, c []backend.BF16, ldc, rows, cols int, alpha, beta float32) {
	for i := range rows {
		ws, cs := w[i*sbNR:][:cols], c[i*ldc:][:cols]
		for j, v := range ws {
			s := float32(alpha * v)
			if beta != 0 {
				s += float32(beta * cs[j].Float32())
			}
			cs[j] = backend.BF16From(flushDenormal(s))
		}
	}
}

// sbScratch holds sbgemm's packed A between calls, and sbPanels a
// worker's packed panel of B and its sums.
var (
	sbScratch = sync.Pool{New: func() any { return new([]uint32) }}
	sbPanels  = sync.Pool{New: func() any { return new(sbPanel) }}
)

type sbPanel struct {
	b []uint32
	w []float32
}

// sbgemm is C = alpha·op(A)·op(B) + beta·C on row-major bfloat16 matrices
// (beta 0: C is not read), with tile as the micro-kernel. parallel splits
// the work over the cores: the packing by tiles and panels, then the
// column panels, each summed over all of k in a worker's workspace and
// rounded into C at once.
func sbgemm(tA, tB bool, m, n, k int, alpha float32, a []backend.BF16, lda int, b []backend.BF16, ldb int,
	beta float32, c []backend.BF16, ldc int, parallel bool, tile sbTile, store sbStore) {
	if m == 0 || n == 0 {
		return
	}
	kp := (k + 1) / 2
	mt, nt := ceilDiv(m, sbMR), ceilDiv(n, sbNR)
	apBuf := sbScratch.Get().(*[]uint32)
	defer sbScratch.Put(apBuf)
	*apBuf = grow(*apBuf, mt*kp*sbMR)
	ap := *apBuf
	run := func(count int, fn func(lo, hi int)) {
		if parallel && m*n*k >= sgemmParallelMin {
			parallelFor(count, 1, fn)
		} else {
			fn(0, count)
		}
	}
	// A is packed before the panels start, on the cores from 2¹⁴ values
	// (a 128×128 A: serial, its packing took a quarter of
	// BenchmarkSBGemm's time while the helper waited); each worker packs
	// the B panels it multiplies.
	packA := func(lo, hi int) {
		for it := lo; it < hi; it++ {
			sbPackA(tA, a, lda, m, k, it, ap[it*kp*sbMR:(it+1)*kp*sbMR])
		}
	}
	if m*k >= 1<<14 {
		run(mt, packA)
	} else {
		packA(0, mt)
	}
	// The work items are column panels, each split into parts row-tile
	// ranges when the panels are too few to keep the cores busy; each
	// item packs its panel of B into its worker's buffer.
	parts := 1
	if w := workers(); parallel && nt < 2*w {
		parts = min(mt, ceilDiv(2*w, nt))
	}
	run(nt*parts, func(lo, hi int) {
		pw := sbPanels.Get().(*sbPanel)
		defer sbPanels.Put(pw)
		pw.b = grow(pw.b, kp*sbNR)
		bpj := pw.b
		for item := lo; item < hi; item++ {
			jt, part := item/parts, item%parts
			t0, t1 := mt*part/parts, mt*(part+1)/parts
			pw.w = grow(pw.w, (t1-t0)*sbMR*sbNR)
			w := pw.w
			if part == 0 || item == lo { // a worker's items of one panel share its packing
				sbPackB(tB, b, ldb, n, k, jt, bpj)
			}
			for p0 := 0; p0 < kp; p0 += sbKC {
				np := min(sbKC, kp-p0)
				for it := t0; it < t1; it++ {
					tile(np, &ap[(it*kp+p0)*sbMR], &bpj[p0*sbNR], &w[(it-t0)*sbMR*sbNR], p0)
				}
			}
			// The rows of the tiles follow each other in w.
			i0, rows := t0*sbMR, min(m, t1*sbMR)-t0*sbMR
			if j0 := jt * sbNR; n-j0 >= sbNR {
				store(&w[0], &c[i0*ldc+j0], ldc, rows, alpha, beta)
			} else {
				sbStoreCols(w, c[i0*ldc+j0:], ldc, rows, n-j0, alpha, beta)
			}
		}
	})
}

// sbPackA packs the rows of row tile it of op(A) (m×k) into dst: per k
// pair, sbMR words, rows past m zero.
func sbPackA(tA bool, a []backend.BF16, lda, m, k, it int, dst []uint32) {
	i0 := it * sbMR
	if tA { // op(A)'s row i is A's column i: the pair is rows 2p and 2p+1 of A
		packRowPairs(dst, a, lda, i0, min(sbMR, m-i0), k, sbMR)
		return
	}
	packWordRows(dst, a, lda, i0, min(sbMR, m-i0), k, sbMR)
}

// sbPackB packs column panel jt of op(B) (k×n) into dst: per k pair, sbNR
// words, columns past n zero.
func sbPackB(tB bool, b []backend.BF16, ldb, n, k, jt int, dst []uint32) {
	j0 := jt * sbNR
	if !tB { // the pair's values are in rows 2p and 2p+1
		packRowPairs(dst, b, ldb, j0, min(sbNR, n-j0), k, sbNR)
		return
	}
	packWordRows(dst, b, ldb, j0, min(sbNR, n-j0), k, sbNR) // op(B) = Bᵀ: column j is B's row j
}

// packWordRows packs rows i0..i0+rows−1 of x (leading dimension ld),
// whose k pairs lie next to each other, into the words of dst[p·width:],
// the rest of each width zero: a tile of A or a panel of Bᵀ.
func packWordRows(dst []uint32, x []backend.BF16, ld, i0, rows, k, width int) {
	kp := (k + 1) / 2
	var buf [sbNR][]uint32 // rows <= width <= sbNR
	words := buf[:rows]    // each row's pairs, as the words they are in memory
	for r := range rows {
		words[r] = pairWords(x[(i0+r)*ld:], k)
	}
	p0 := 0
	if useBF16Kernel && (width == sbMR || width == sbNR) {
		p0 = packWordBlocks(dst, words, k/2, width)
	}
	const block = 16 // pairs per pass: each row's words read in order, written into a block of dst that stays in cache
	for ; p0 < k/2; p0 += block {
		p1 := min(p0+block, k/2)
		for r, w := range words {
			for p, v := range w[p0:p1] {
				dst[(p0+p)*width+r] = v
			}
		}
		if rows < width {
			for p := p0; p < p1; p++ {
				clear(dst[p*width+rows : (p+1)*width])
			}
		}
	}
	if k%2 == 1 {
		d := dst[(kp-1)*width : kp*width]
		for r := range rows {
			d[r] = uint32(x[(i0+r)*ld+k-1])
		}
		clear(d[rows:])
	}
}

// packWordBlocks is packWordRows' loop for whole blocks of 16 pairs, a
// width of sbMR (12) or sbNR (32), with transpose16x16 (rows past
// len(words) read zeros). It returns the pairs it packed.
func packWordBlocks(dst []uint32, words [][]uint32, pairs, width int) int {
	var zeros [16]uint32
	var ptrs [16]*uint32
	full := pairs &^ 15
	for p0 := 0; p0 < full; p0 += 16 {
		for h := 0; h < width; h += 16 {
			for r := range ptrs {
				ptrs[r] = &zeros[0]
				if h+r < len(words) {
					ptrs[r] = &words[h+r][p0]
				}
			}
			_ = dst[(p0+15)*width+h+min(16, width-h)-1]
			transpose16x16(&dst[p0*width+h], width, &ptrs, min(16, width-h))
		}
	}
	return full
}

// packRowPairs packs, for each k pair p, values j0..j0+cols−1 of rows 2p
// and 2p+1 of x (leading dimension ld) into the words of dst[p·width:],
// the rest of its width zero: the layout of a tile or panel whose pairs
// lie in two rows of the stored matrix.
func packRowPairs(dst []uint32, x []backend.BF16, ld, j0, cols, k, width int) {
	for p := range (k + 1) / 2 {
		d := dst[p*width : (p+1)*width]
		lo := x[2*p*ld+j0:][:cols]
		if 2*p+1 < k {
			hi := x[(2*p+1)*ld+j0:][:cols]
			c0 := 0
			if useBF16Kernel && cols >= 16 {
				c0 = cols &^ 15
				packPairsBF16x512(&d[0], &lo[0], &hi[0], c0)
			}
			for c := c0; c < cols; c++ {
				d[c] = uint32(lo[c]) | uint32(hi[c])<<16
			}
		} else {
			for c := range cols {
				d[c] = uint32(lo[c])
			}
		}
		clear(d[cols:])
	}
}

// pairWords returns the first k/2 pairs of row as the little-endian
// 32-bit words they form in memory (the even value in the low half).
func pairWords(row []backend.BF16, k int) []uint32 {
	if k < 2 {
		return nil
	}
	_ = row[k/2*2-1]
	return unsafe.Slice((*uint32)(unsafe.Pointer(&row[0])), k/2)
}

// sbAt is element (i, kk) of a row-major matrix of leading dimension ld,
// or of its transpose when t.
func sbAt(t bool, x []backend.BF16, ld, i, kk int) backend.BF16 {
	if t {
		return x[kk*ld+i]
	}
	return x[i*ld+kk]
}

// sbTileGo is the micro-kernel in Go, lane by lane in VDPBF16PS's order:
// tests compare the assembly against it, bit for bit wherever the sums
// and products are NaN-free (the instruction's NaN payloads and the sign
// of some zero sums are not modelled).
func sbTileGo(kp int, a, b *uint32, w *float32, load int) {
	as := unsafe.Slice(a, kp*sbMR)
	bs := unsafe.Slice(b, kp*sbNR)
	ws := unsafe.Slice(w, sbMR*sbNR)
	for r := range sbMR {
		for c := range sbNR {
			var acc float32
			if load != 0 {
				acc = flushDenormal(ws[r*sbNR+c])
			}
			for p := range kp {
				x, y := as[p*sbMR+r], bs[p*sbNR+c]
				acc = flushDenormal(float32(float64(acc) + bf16Product(uint16(x>>16), uint16(y>>16))))
				acc = flushDenormal(float32(float64(acc) + bf16Product(uint16(x), uint16(y))))
			}
			ws[r*sbNR+c] = acc
		}
	}
}

// bf16Product is x·y exactly (in float64: 16 significant bits), a
// denormal input counting as zero. A sum with it in float64 is exact, or
// its rounding cannot move the float32 rounding after it (the float32
// value's exponent exceeds the product's by more than 29), so each lane
// rounds once, as the instruction does.
func bf16Product(x, y uint16) float64 {
	return float64(bf16DAZ(x)) * float64(bf16DAZ(y))
}

func bf16DAZ(h uint16) float32 {
	if h&0x7f80 == 0 { // zero or denormal
		return math.Float32frombits(uint32(h&0x8000) << 16)
	}
	return backend.BF16(h).Float32()
}

// flushDenormal returns a denormal f as zero of its sign.
func flushDenormal(f float32) float32 {
	if b := math.Float32bits(f); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return f
}

var _ backend.HalfGemmer = (*Backend)(nil)

// GemmHalf implements backend.HalfGemmer: Gemm multiplies BFloat16
// matrices itself where the CPU has AVX512_BF16 (sbgemm; products smaller
// than sbMinWork are widened to float32 inside Gemm, which is faster
// there). Float16 has no such instruction and is widened by package nd.
func (*Backend) GemmHalf(dt backend.DType) bool { return dt == backend.BFloat16 && useBF16Kernel }

// sbMinWork is the least m·n·k that bf16Gemm runs on sbgemm.
const sbMinWork = 1 << 21

// bf16Gemm is one BFloat16 product of Gemm: sbgemm, or for small products
// float32 copies, sgemm and the rounding of C.
func bf16Gemm(p backend.GemmParams, a, b, c backend.Arg, parallel bool) {
	as, bs, cs := storageSlice[backend.BF16](a), storageSlice[backend.BF16](b), storageSlice[backend.BF16](c)
	if useBF16Kernel && p.M*p.N*p.K >= sbMinWork {
		sbgemm(p.TransA, p.TransB, p.M, p.N, p.K, float32(p.Alpha), as, p.LDA, bs, p.LDB, float32(p.Beta), cs, p.LDC,
			parallel, sbTileFast, sbStoreFast)
		return
	}
	rowsA, rowsB := p.M, p.K // op(A) is M×K, op(B) K×N; the stored shapes
	if p.TransA {
		rowsA = p.K
	}
	if p.TransB {
		rowsB = p.N
	}
	na, nb := (rowsA-1)*p.LDA+cols(p.TransA, p.M, p.K), (rowsB-1)*p.LDB+cols(p.TransB, p.K, p.N)
	nc := (p.M-1)*p.LDC + p.N
	fa, fb, fc := make([]float32, na), make([]float32, nb), make([]float32, nc)
	bf16sToF32(fa, as[:na])
	bf16sToF32(fb, bs[:nb])
	if p.Beta != 0 {
		bf16sToF32(fc, cs[:nc])
	}
	sgemm(p.TransA, p.TransB, p.M, p.N, p.K, float32(p.Alpha), fa, p.LDA, fb, p.LDB, float32(p.Beta), fc, p.LDC, parallel)
	for i := range p.M {
		f32sToBF16(cs[i*p.LDC:i*p.LDC+p.N], fc[i*p.LDC:i*p.LDC+p.N])
	}
}

// cols is the number of stored columns of a rows×cols operand, transposed
// when t.
func cols(t bool, rows, cols int) int {
	if t {
		return rows
	}
	return cols
}
