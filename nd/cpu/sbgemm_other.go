//go:build !amd64

package cpu

import "github.com/goluon/goluon/nd/backend"

// sbTileFast is the Go micro-kernel off amd64, where useBF16Kernel is
// false: sbgemm runs only in tests there.
var (
	sbTileFast  sbTile  = sbTileGo
	sbStoreFast sbStore = sbStoreGo
)

// hasAVX512BF16 is false off amd64.
func hasAVX512BF16() bool { return false }

func packPairsBF16x512(dst *uint32, lo, hi *backend.BF16, n int) { panic("unreachable") }

func transpose16x16(dst *uint32, stride int, rows *[16]*uint32, ncols int) { panic("unreachable") }
