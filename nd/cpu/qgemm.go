package cpu

import (
	le "encoding/binary"
	"fmt"
	"sync"
	"unsafe"
)

// The int8 GEMM of dynamic quantization (gluon/quantization): unsigned
// 8-bit activations A (M×K, rows lda apart) times the signed 8-bit weights
// W of a linear layer (N×K, output × input) transposed, accumulated
// exactly in int32:
//
//	C[i][j] = Σ_p A[i][p]·W[j][p]
//
// The weights are packed once (PackInt8) in groups of 64 output columns:
// for each k-group of 4 inputs, 256 bytes, four panels of 16 columns, each
// column's 4 inputs as 4 adjacent bytes. That is the operand layout of
// VPDPBUSD, which multiplies 4 unsigned bytes by 4 signed bytes and adds
// the 4 products to an int32 lane (and of VPMADDUBSW+VPMADDWD), and a
// tile of 64 columns reads its weights as one sequential stream.
// Three micro-kernels share that layout, chosen at run time:
//
//   - AVX-512 VNNI (qgemm_amd64.s, qTileVNNI): a 6×64 tile in 24 ZMM
//     accumulators, one VPDPBUSD per 16 columns and 4 inputs;
//   - AVX2 (qTileAVX2): a 4×16 tile; VPMADDUBSW adds two u8·s8 products
//     into an int16 with saturation, which is exact when every activation
//     is at most 128 (|a₀b₀+a₁b₁| ≤ 2·128·128 = 32768, and the only sum of
//     that size is −32768): FBGEMM's reduce_range, 7-bit activations, is
//     what keeps PyTorch's AVX2 path exact, and it is what
//     gluon/quantization does. Where some value of A exceeds 128 the AVX2
//     path splits each byte into its low 7 bits and its top bit and
//     multiplies both (qTileAVX2Split, half the speed), so the product is
//     exact for every input;
//   - plain Go (qTileGo) elsewhere (GOLUON_CPU=generic, arm64).
//
// All of them give the same int32 sums, wrapping modulo 2³² like the
// instructions (exact whenever the true sum fits, which K ≤ 65536 and
// any values guarantee). GemmU8S8F32 also dequantizes in the kernels'
// store: C = float32(float32(sum − zero·colsum[j])·scale[j]) + bias[j],
// the same two roundings on every path, so results agree bit for bit.

const (
	qPanel    = 16             // columns of a packed panel
	qGroup    = 4 * qPanel     // columns of a packed group (a VNNI tile)
	qPStride  = qPanel * 4     // bytes between the panels of a group's k-group
	qKStride  = qGroup * 4     // bytes of a group's k-group
	qMaxK     = 1 << 16        // largest K: sums of 255·128 products stay below 2³¹
	qUnitRows = 48             // rows of A per unit of parallel work
	qMinWork  = 1 << 19        // multiply-adds a parallel chunk gets at least (1–5 µs)
	qTileCap  = 6 * qGroup     // elements of a tile staged for partial columns
	qAlign    = 4              // inputs per k-group
	qMaxSmall = 128            // the largest activation the AVX2 kernel takes as it is
	qErr      = "cpu.GemmU8S8" // the name errors give
)

// PackedInt8 holds the signed 8-bit weights of a linear layer, W (N×K),
// packed for GemmU8S8 and GemmU8S8F32, with their column sums. It is
// read-only after PackInt8 and may be used by any number of goroutines
// at once.
type PackedInt8 struct {
	n, k, k4, npad int
	data           []int8  // npad/64 groups of k4/4 k-groups of 64 columns × 4 bytes
	colSum         []int32 // Σ_p W[j][p], zero beyond N
}

// PackInt8 packs w, N rows of K signed bytes (a linear layer's weight,
// output × input, row-major), for GemmU8S8. It panics if the sizes do not
// fit, or if K exceeds 65536 (beyond which int32 sums could overflow).
func PackInt8(w []int8, n, k int) *PackedInt8 {
	if n < 1 || k < 1 || k > qMaxK || len(w) < n*k {
		panic(fmt.Sprintf("cpu.PackInt8: %d×%d weights (N and K from 1, K at most %d) from %d values", n, k, qMaxK, len(w)))
	}
	k4 := (k + qAlign - 1) / qAlign * qAlign
	npad := (n + qGroup - 1) / qGroup * qGroup
	p := &PackedInt8{n: n, k: k, k4: k4, npad: npad,
		data: make([]int8, npad*k4), colSum: make([]int32, npad)}
	for j := range n {
		row := w[j*k : j*k+k]
		col := p.data[(j/qGroup)*k4*qGroup+(j%qGroup)*qAlign:]
		var s int32
		for q, v := range row {
			col[(q/qAlign)*qKStride+q%qAlign] = v
			s += int32(v)
		}
		p.colSum[j] = s
	}
	return p
}

// N returns the number of output columns (the weights' rows).
func (p *PackedInt8) N() int { return p.n }

// K returns the number of inputs (the weights' columns).
func (p *PackedInt8) K() int { return p.k }

// Bytes returns the size of the packed weights in bytes.
func (p *PackedInt8) Bytes() int { return len(p.data) + 4*len(p.colSum) }

// ColSum returns Σ_p W[j][p] for j < N, the sums that turn a product of
// raw activations into one of activations less their zero point.
func (p *PackedInt8) ColSum() []int32 { return append([]int32(nil), p.colSum[:p.n]...) }

// panel returns the packed weights of the 16 columns from j0 (a multiple
// of 16).
func (p *PackedInt8) panel(j0 int) *int8 {
	return &p.data[(j0/qGroup)*p.k4*qGroup+(j0%qGroup/qPanel)*qPStride]
}

// GemmU8S8 computes C = A·Wᵀ in int32: c[i·ldc+j] = Σ_p a[i·lda+p]·W[j][p]
// for i < m, j < N, with W packed by PackInt8. The sums are exact (K is
// at most 65536). It panics if a slice is too short or a stride too small.
func GemmU8S8(m int, a []uint8, lda int, w *PackedInt8, c []int32, ldc int) {
	checkQ(m, len(a), lda, w, len(c), ldc)
	if m == 0 {
		return
	}
	qgemm(qKernelFor(a, m, lda, w.k), m, a, lda, w, unsafe.Pointer(unsafe.SliceData(c)), ldc, nil)
}

// GemmU8S8F32 computes the dequantized product of activations A with zero
// point zero and the packed weights W:
//
//	c[i·ldc+j] = float32(float32(Σ_p (a[i·lda+p]−zero)·W[j][p]) · scale[j]) + bias[j]
//
// for i < m, j < N: the int32 sum converted to float32, times the
// column's scale (the product of the activations' and the weights'
// scales) rounded once, plus the bias rounded once. scale holds one value
// for every column or N values (per-channel weights); bias is nil (none)
// or holds N values. It panics on slices too short, bad strides or a
// zero point outside [0, 255].
func GemmU8S8F32(m int, a []uint8, lda int, zero int32, w *PackedInt8, scale, bias []float32, c []float32, ldc int) {
	checkQ(m, len(a), lda, w, len(c), ldc)
	if zero < 0 || zero > 255 {
		panic(fmt.Sprintf("%sF32: zero point %d is not in [0, 255]", qErr, zero))
	}
	if len(scale) != 1 && len(scale) != w.n {
		panic(fmt.Sprintf("%sF32: %d scales for %d columns (want 1 or %d)", qErr, len(scale), w.n, w.n))
	}
	if bias != nil && len(bias) != w.n {
		panic(fmt.Sprintf("%sF32: %d biases for %d columns", qErr, len(bias), w.n))
	}
	if m == 0 {
		return
	}
	v := qVectors(w, zero, scale, bias)
	defer qVecPool.Put(v)
	qgemm(qKernelFor(a, m, lda, w.k), m, a, lda, w, unsafe.Pointer(unsafe.SliceData(c)), ldc, v)
}

// checkQ panics unless an m×K A and an m×N C fit their slices and strides.
func checkQ(m, na, lda int, w *PackedInt8, nc, ldc int) {
	if w == nil {
		panic(qErr + ": nil weights")
	}
	if m < 0 || lda < w.k || ldc < w.n {
		panic(fmt.Sprintf("%s: m %d, lda %d, ldc %d for K %d, N %d", qErr, m, lda, ldc, w.k, w.n))
	}
	if m > 0 && (na < (m-1)*lda+w.k || nc < (m-1)*ldc+w.n) {
		panic(fmt.Sprintf("%s: %d×%d A in %d values (lda %d) or %d×%d C in %d values (ldc %d)", qErr, m, w.k, na, lda, m, w.n, nc, ldc))
	}
}

// qVecs are the per-column vectors of a dequantizing product, padded to
// the packing's columns: corr = −zero·colsum, scale and bias.
type qVecs struct {
	corr        []int32
	scale, bias []float32
}

var qVecPool = sync.Pool{New: func() any { return new(qVecs) }}

// qVectors fills pooled per-column vectors for w.
func qVectors(w *PackedInt8, zero int32, scale, bias []float32) *qVecs {
	v := qVecPool.Get().(*qVecs)
	v.corr = qGrow(v.corr, w.npad)
	v.scale = qGrow(v.scale, w.npad)
	v.bias = qGrow(v.bias, w.npad)
	for j := range w.npad {
		v.corr[j] = -zero * w.colSum[j]
		v.scale[j], v.bias[j] = 0, 0
		if j < w.n {
			v.scale[j] = scale[min(j, len(scale)-1)]
			if bias != nil {
				v.bias[j] = bias[j]
			}
		}
	}
	return v
}

func qGrow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// qZeros is a zero correction vector for products without a zero point,
// grown as needed (read-only: reads race-free once published).
var qZeros struct {
	sync.Mutex
	v []int32
}

func zeroCorr(n int) []int32 {
	qZeros.Lock()
	defer qZeros.Unlock()
	if len(qZeros.v) < n {
		qZeros.v = make([]int32, n)
	}
	return qZeros.v[:n]
}

// qTile is a micro-kernel: it multiplies m rows (1 to its kernel's mr) of
// A, k4 groups of 4 bytes from a (rows lda bytes apart), by the packed
// panels at b (its kernel's panel count, pstride bytes apart, each
// k-group kstride bytes after the one before), adds corr[j] to each
// column's int32 sum and stores the tile to c (rows ldc elements apart):
// the sums as int32 when scale is nil, else float32(float32(sum)·scale[j])
// + bias[j] as float32. k4 is at least 1.
type qTile func(k4 int, a *uint8, lda, m int, b *int8, pstride, kstride int, c unsafe.Pointer, ldc int, corr *int32, scale, bias *float32)

// qKern is a micro-kernel with its tile's shape.
type qKern struct {
	name   string
	tile   qTile
	mr     int // rows of a tile
	panels int // 16-column panels of a tile
}

var (
	qKernGo        = qKern{"go", qTileGo, 4, 1}
	qKernAVX2      = qKern{"avx2", qTileAVX2, 4, 1}
	qKernAVX2Split = qKern{"avx2-split", qTileAVX2Split, 1, 1}
	qKernVNNI      = qKern{"avx512-vnni", qTileVNNI, 6, 4}
)

// useVNNI selects the VNNI kernel: the active level is AVX-512 and the CPU
// has AVX512_VNNI.
var useVNNI = active >= ISAAVX512 && hasAVX512VNNI()

// qKernelFor returns the kernel for a product with an m×k A: VNNI where
// useVNNI holds, else AVX2 (split where a value of A exceeds 128), else
// Go.
func qKernelFor(a []uint8, m, lda, k int) qKern {
	switch {
	case useVNNI:
		return qKernVNNI
	case useAsmKernel:
		if qSmall(a, m, lda, k) {
			return qKernAVX2
		}
		return qKernAVX2Split
	}
	return qKernGo
}

// Int8Kernel names the int8 GEMM kernel products use here: "avx512-vnni",
// "avx2" (or "avx2-split" for activations above 128) or "go".
func Int8Kernel() string {
	switch {
	case useVNNI:
		return qKernVNNI.name
	case useAsmKernel:
		return qKernAVX2.name
	}
	return qKernGo.name
}

// qSmall reports whether every value of the m×k A is at most 128.
func qSmall(a []uint8, m, lda, k int) bool {
	for i := range m {
		row := a[i*lda : i*lda+k]
		p := 0
		for ; p+8 <= len(row); p += 8 {
			w := le.LittleEndian.Uint64(row[p:])
			if w&0x8080808080808080 != 0 && !bytesSmall(row[p:p+8]) {
				return false
			}
		}
		if !bytesSmall(row[p:]) {
			return false
		}
	}
	return true
}

func bytesSmall(b []uint8) bool {
	for _, v := range b {
		if v > qMaxSmall {
			return false
		}
	}
	return true
}

// qgemm runs kern over the m×N product. With v nil it stores int32 sums
// (no zero point); with v it dequantizes. The kernels read whole k-groups
// of 4 bytes, so for K not a multiple of 4 they read up to 3 bytes past
// each row's K (multiplied by the packing's zero rows): A is read in place
// when its last row has them, and copied into padded rows otherwise.
func qgemm(kern qKern, m int, a []uint8, lda int, w *PackedInt8, c unsafe.Pointer, ldc int, v *qVecs) {
	if (m-1)*lda+w.k4 > len(a) {
		pa := make([]uint8, m*w.k4)
		for i := range m {
			copy(pa[i*w.k4:], a[i*lda:i*lda+w.k])
		}
		a, lda = pa, w.k4
	}
	var corr []int32
	var scale, bias []float32
	if v != nil {
		corr, scale, bias = v.corr, v.scale, v.bias
	} else {
		corr = zeroCorr(w.npad)
	}
	cols := kern.panels * qPanel
	groups := (w.n + cols - 1) / cols
	rowUnits := (m + qUnitRows - 1) / qUnitRows
	unitWork := min(m, qUnitRows) * cols * w.k4
	grain := max(1, qMinWork/max(unitWork, 1))
	esz := 4 // int32 and float32 alike
	parallelFor(groups*rowUnits, grain, func(lo, hi int) {
		var tile [qTileCap]float32
		for u := lo; u < hi; u++ {
			g, ru := u/rowUnits, u%rowUnits
			j0 := g * cols
			bp := w.panel(j0)
			var sc, bi *float32
			if v != nil {
				sc, bi = &scale[j0], &bias[j0]
			}
			for i := ru * qUnitRows; i < min(m, (ru+1)*qUnitRows); i += kern.mr {
				mm := min(kern.mr, m-i)
				dst, ld := unsafe.Add(c, (i*ldc+j0)*esz), ldc
				partial := j0+cols > w.n
				if partial {
					dst, ld = unsafe.Pointer(&tile[0]), cols
				}
				kern.tile(w.k4/qAlign, &a[i*lda], lda, mm, bp, qPStride, qKStride, dst, ld, &corr[j0], sc, bi)
				if partial {
					for r := range mm {
						copyBits(unsafe.Add(c, ((i+r)*ldc+j0)*esz), tile[r*cols:r*cols+w.n-j0])
					}
				}
			}
		}
	})
}

// copyBits copies the 4-byte elements of src (float32 or int32 bits) to
// the element at dst.
func copyBits(dst unsafe.Pointer, src []float32) {
	copy(unsafe.Slice((*float32)(dst), len(src)), src)
}

// qTileGo is the micro-kernel in Go: a tile of m ≤ 4 rows and one panel,
// the reference the assembly kernels are tested against.
func qTileGo(k4 int, a *uint8, lda, m int, b *int8, pstride, kstride int, c unsafe.Pointer, ldc int, corr *int32, scale, bias *float32) {
	bs := unsafe.Slice(b, (k4-1)*kstride+qPanel*qAlign)
	cr := unsafe.Slice(corr, qPanel)
	for r := range m {
		as := unsafe.Slice((*uint8)(unsafe.Add(unsafe.Pointer(a), r*lda)), k4*qAlign)
		var acc [qPanel]int32
		for g := range k4 {
			a0, a1, a2, a3 := int32(as[4*g]), int32(as[4*g+1]), int32(as[4*g+2]), int32(as[4*g+3])
			bg := bs[g*kstride : g*kstride+qPanel*qAlign]
			for j := range qPanel {
				acc[j] += a0*int32(bg[4*j]) + a1*int32(bg[4*j+1]) + a2*int32(bg[4*j+2]) + a3*int32(bg[4*j+3])
			}
		}
		row := unsafe.Add(c, r*ldc*4)
		if scale == nil {
			out := unsafe.Slice((*int32)(row), qPanel)
			for j := range qPanel {
				out[j] = acc[j] + cr[j]
			}
			continue
		}
		sc, bi := unsafe.Slice(scale, qPanel), unsafe.Slice(bias, qPanel)
		out := unsafe.Slice((*float32)(row), qPanel)
		for j := range qPanel {
			out[j] = float32(float32(acc[j]+cr[j])*sc[j]) + bi[j]
		}
	}
}
