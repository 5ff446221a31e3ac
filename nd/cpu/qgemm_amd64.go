//go:build amd64

package cpu

import "unsafe"

// The int8 kernels of qgemm_amd64.s (the GEMM micro-kernels, qTile's
// contract) and qquant_amd64.s (the activations' range and quantization).

// qTileVNNI is the 6×64 micro-kernel on VPDPBUSD (4 panels); it needs
// AVX-512 F and AVX512_VNNI.
//
//go:noescape
func qTileVNNI(k4 int, a *uint8, lda, m int, b *int8, pstride, kstride int, c unsafe.Pointer, ldc int, corr *int32, scale, bias *float32)

// qTileAVX2 is the 4×16 micro-kernel on VPMADDUBSW and VPMADDWD (one
// panel); exact when every value of A is at most 128. It needs AVX2.
//
//go:noescape
func qTileAVX2(k4 int, a *uint8, lda, m int, b *int8, pstride, kstride int, c unsafe.Pointer, ldc int, corr *int32, scale, bias *float32)

// qTileAVX2Split is the 1×16 micro-kernel for any A on AVX2: each byte is
// multiplied as its low 7 bits plus 128 times its top bit.
//
//go:noescape
func qTileAVX2Split(k4 int, a *uint8, lda, m int, b *int8, pstride, kstride int, c unsafe.Pointer, ldc int, corr *int32, scale, bias *float32)

// qMinMaxAVX2 returns the least and greatest of the n values at x (n a
// positive multiple of 8) and whether one of them is a NaN (the bounds
// are then meaningless). It needs AVX2.
//
//go:noescape
func qMinMaxAVX2(x *float32, n int) (lo, hi float32, nan bool)

// qQuantizeAVX2 is quantizeU8Go for n values (a positive multiple of 32).
// It needs AVX2.
//
//go:noescape
func qQuantizeAVX2(dst *uint8, src *float32, n int, inv float32, zero int32)

// hasAVX512VNNI reports whether the CPU has AVX512_VNNI (CPUID leaf 7,
// ECX bit 11); the caller checks that AVX-512 is usable.
func hasAVX512VNNI() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx, _ := cpuid(7, 0)
	return ecx&(1<<11) != 0
}
