//go:build amd64

package cpu

import "github.com/goluon/goluon/nd/backend"

// sbTile6x32 is the micro-kernel of sbgemm on VDPBF16PS
// (sbgemm_amd64.s); it needs AVX512_BF16.
//
//go:noescape
func sbTile6x32(kp int, a, b *uint32, w *float32, load int)

// sbStoreRows rounds rows of a full column panel's sums into C
// (sbStoreGo's bits; sbgemm_amd64.s).
//
//go:noescape
func sbStoreRows(w *float32, c *backend.BF16, ldc, rows int, alpha, beta float32)

// sbTileFast is sbgemm's micro-kernel where useBF16Kernel holds, and
// sbStoreFast its store of full panels.
var (
	sbTileFast  sbTile  = sbTile6x32
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
