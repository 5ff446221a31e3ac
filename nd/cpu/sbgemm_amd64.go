//go:build amd64

package cpu

import "github.com/goluon/goluon/nd/backend"

// sbStoreRows rounds rows of a full column panel's sums into C
// (sbStoreGo's bits; sbgemm_amd64.s).
//
//go:noescape
func sbStoreRows(w *float32, c *backend.BF16, ldc, rows int, alpha, beta float32)

// sbTileFast is sbgemm's micro-kernel where useBF16Kernel holds, and
// sbStoreFast its store of full panels.
var (
	sbTileFast  sbTile  = sbTile12x32
	sbStoreFast sbStore = sbStoreRows
)

// hasAVX512BF16 reports whether the CPU has AVX512_BF16 (CPUID leaf 7,
// subleaf 1, EAX bit 5); the caller checks that AVX-512 is usable.
func hasAVX512BF16() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	maxSub, _, _, _ := cpuid(7, 0)
	if maxSub < 1 {
		return false
	}
	eax, _, _, _ := cpuid(7, 1)
	return eax&(1<<5) != 0
}

// sbTile12x32 is the micro-kernel of sbgemm on VDPBF16PS
// (sbgemm_amd64.s), an sbMR×sbNR = 12×32 tile; it needs AVX512_BF16.
//
//go:noescape
func sbTile12x32(kp int, a, b *uint32, w *float32, load int)

// packPairsBF16x512 interleaves two rows of bfloat16 values into k-pair
// words, dst[c] = lo[c] | hi[c]<<16 for c < n (n a multiple of 16), with
// AVX-512: packRowPairs' loop.
//
//go:noescape
func packPairsBF16x512(dst *uint32, lo, hi *backend.BF16, n int)

// transpose16x16 writes output row p (p < 16) of a 16×16 word transpose:
// dst[p·stride+r] = rows[r][p] for r < ncols (12 or 16), with AVX-512
// shuffles: packWordRows' blocks of 16 pairs.
//
//go:noescape
func transpose16x16(dst *uint32, stride int, rows *[16]*uint32, ncols int)
