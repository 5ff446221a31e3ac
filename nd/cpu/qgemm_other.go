//go:build !amd64

package cpu

import "unsafe"

// Off amd64 the int8 products and quantization run in Go: useVNNI and
// useAsmKernel are false, so these are never called.

func qTileVNNI(k4 int, a *uint8, lda, m int, b *int8, pstride, kstride int, c unsafe.Pointer, ldc int, corr *int32, scale, bias *float32) {
	panic("unreachable")
}

func qTileAVX2(k4 int, a *uint8, lda, m int, b *int8, pstride, kstride int, c unsafe.Pointer, ldc int, corr *int32, scale, bias *float32) {
	panic("unreachable")
}

func qTileAVX2Split(k4 int, a *uint8, lda, m int, b *int8, pstride, kstride int, c unsafe.Pointer, ldc int, corr *int32, scale, bias *float32) {
	panic("unreachable")
}

func qMinMaxAVX2(x *float32, n int) (lo, hi float32, nan bool) { panic("unreachable") }

func qQuantizeAVX2(dst *uint8, src *float32, n int, inv float32, zero int32) { panic("unreachable") }

// hasAVX512VNNI is false off amd64.
func hasAVX512VNNI() bool { return false }
