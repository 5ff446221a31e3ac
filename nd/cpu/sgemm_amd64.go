//go:build amd64

package cpu

// sgemmPanel multiplies a packed m×k block of A (m/6 rounded up panels of
// 6 rows, each k groups of 6 values) by a 16-column panel of B (k rows of
// 16 values, ldb elements apart) and writes the m×16 result to C (row
// stride ldc elements): C = A·B when accum is 0, C += A·B otherwise. The
// micro-kernel holds a 6×16 tile of C in registers; a last panel of 1 to 5
// rows computes only 2, 4 or 6 of them and writes exactly its rows. k must
// be at least 1. It needs AVX2 and FMA.
//
//go:noescape
func sgemmPanel(k int, a *float32, m int, b *float32, ldb int, c *float32, ldc int, accum int)

// sgemmPanel2 is sgemmPanel for two adjacent 16-column panels of B at
// once (b1 and b2, each k rows ldb elements apart) writing the m×32 result
// to C: a 6×32 tile in 12 ZMM registers. Every element gets the same FMAs
// in the same order as with sgemmPanel. It needs AVX-512 F.
//
//go:noescape
func sgemmPanel2(k int, a *float32, m int, b1, b2 *float32, ldb int, c *float32, ldc int, accum int)

// sgemmPanelA is sgemmPanel reading A in place: value (i, p) of the
// panels is a[i*rs + p*cs] (rs = lda, cs = 1 for a row-major A; rs = 1,
// cs = lda for a transposed one). m must be a positive multiple of 6.
// Every element gets the same FMAs in the same order as with sgemmPanel.
//
//go:noescape
func sgemmPanelA(k int, a *float32, rs, cs int, m int, b *float32, ldb int, c *float32, ldc int, accum int)

// sgemmPanel2A is sgemmPanel2 reading A in place, as sgemmPanelA does. It
// needs AVX-512 F.
//
//go:noescape
func sgemmPanel2A(k int, a *float32, rs, cs int, m int, b1, b2 *float32, ldb int, c *float32, ldc int, accum int)

// packB16 copies k rows of 16 values, ld elements apart, from src to dst
// (16 values per row).
//
//go:noescape
func packB16(k int, src *float32, ld int, dst *float32)

// packB16T packs a transposed panel, dst[p*16+j] = rows[j][p] for j < 16
// and p < k, with 8×8 register transposes. k must be a multiple of 8.
//
//go:noescape
func packB16T(k int, rows *[16]*float32, dst *float32)

// packA6 packs six rows, dst[p*6+i] = alpha·rows[i][p] for i < 6 and
// p < k, with 8×8 register transposes (rows[6] and rows[7] are read but
// not used). k must be a multiple of 8. It also writes two values past the
// end (dst[k*6], dst[k*6+1]), which the caller must own and may overwrite
// afterwards.
//
//go:noescape
func packA6(k int, rows *[8]*float32, alpha float32, dst *float32)

// packA6T packs six columns of a row-major matrix: dst[p*6+i] =
// alpha·src[p*ld+i] for i < 6 and p < k.
//
//go:noescape
func packA6T(k int, src *float32, ld int, alpha float32, dst *float32)

// cpuid executes the CPUID instruction for the given leaf and subleaf.
func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

// xgetbv0 reads extended control register 0 (which register states the
// operating system saves). Only call it when CPUID reports OSXSAVE.
func xgetbv0() (eax, edx uint32)

// detectISA returns the best level the CPU has and the operating system
// enables: AVX2 and FMA with the YMM state saved across context switches;
// beyond that AVX-512 F, BW and VL with the opmask and ZMM states saved.
func detectISA() ISA {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return ISAGeneric
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
	)
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return ISAGeneric
	}
	xcr0, _ := xgetbv0()
	if xcr0&6 != 6 { // XMM and YMM state enabled
		return ISAGeneric
	}
	_, ebx7, _, _ := cpuid(7, 0)
	if ebx7&(1<<5) == 0 { // AVX2
		return ISAGeneric
	}
	const avx512 = 1<<16 | 1<<30 | 1<<31            // F, BW, VL
	if ebx7&avx512 == avx512 && xcr0&0xe0 == 0xe0 { // opmask, ZMM_Hi256, Hi16_ZMM
		return ISAAVX512
	}
	return ISAAVX2
}

// useAsmKernel selects the assembly kernels (sgemm and the others that
// test it): the active level is AVX2 or better.
var useAsmKernel = active >= ISAAVX2

// useZMMKernel selects sgemmPanel2 for pairs of full column panels: the
// active level is AVX-512.
var useZMMKernel = active >= ISAAVX512
