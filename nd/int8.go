package nd

import "github.com/goluon/goluon/nd/cpu"

// The int8 kernels of the CPU backend, re-exported for packages above nd
// (gluon/quantization) that may not import nd/cpu: they work on host
// slices, not arrays.

// PackedInt8 holds the signed 8-bit weights of a linear layer, packed for
// GemmU8S8F32 with their column sums; see nd/cpu.
type PackedInt8 = cpu.PackedInt8

// PackInt8 packs w, n rows of k signed bytes (a linear layer's weight,
// output × input, row-major), for GemmU8S8F32. It panics if the sizes do
// not fit, or if k exceeds 65536.
func PackInt8(w []int8, n, k int) *PackedInt8 { return cpu.PackInt8(w, n, k) }

// GemmU8S8F32 computes, for i < m and j < w's N,
//
//	c[i·ldc+j] = float32(float32(Σ_p (a[i·lda+p]−zero)·W[j][p]) · scale[j]) + bias[j]
//
// with exact int32 sums, on AVX-512 VNNI, AVX2 or Go kernels chosen at run
// time (the same bits); scale holds one value or one per column, bias is
// nil or one per column. See nd/cpu.GemmU8S8F32.
func GemmU8S8F32(m int, a []uint8, lda int, zero int32, w *PackedInt8, scale, bias []float32, c []float32, ldc int) {
	cpu.GemmU8S8F32(m, a, lda, zero, w, scale, bias, c, ldc)
}

// QuantizeU8 writes dst[i] = clamp(roundEven(src[i]·inv) + zero, 0, 255),
// the product rounded to float32 first, as PyTorch quantizes activations;
// see nd/cpu.QuantizeU8.
func QuantizeU8(dst []uint8, src []float32, inv float32, zero int32) {
	cpu.QuantizeU8(dst, src, inv, zero)
}

// MinMaxF32 returns the least and the greatest value of x, and ok = false
// when x is empty or holds a NaN; see nd/cpu.MinMaxF32.
func MinMaxF32(x []float32) (lo, hi float32, ok bool) { return cpu.MinMaxF32(x) }

// Int8Kernel names the int8 GEMM kernel products use on this CPU:
// "avx512-vnni", "avx2" (or "avx2-split" for activations above 128) or
// "go".
func Int8Kernel() string { return cpu.Int8Kernel() }

// Im2RowGeom is the geometry of an int8 convolution for Im2RowU8: N NHWC
// images of H×W pixels of C channels, the kernel, stride, padding and
// dilation, and the output size; see nd/cpu.
type Im2RowGeom = cpu.Im2RowGeom

// QuantizeNHWCU8 quantizes n NCHW float32 images of c planes of hw values
// into bytes laid out NHWC (pixel rows ld bytes apart) as QuantizeU8
// rounds; see nd/cpu.QuantizeNHWCU8.
func QuantizeNHWCU8(dst []uint8, ld int, src []float32, n, c, hw int, inv float32, zero int32) {
	cpu.QuantizeNHWCU8(dst, ld, src, n, c, hw, inv, zero)
}

// Im2RowU8 unrolls the channels c0..c0+cg of NHWC bytes into one row per
// output pixel, tap by tap (kh, kw), the zero point standing for padding:
// the activations of an int8 convolution whose weights are ordered
// [out][kh][kw][in]; see nd/cpu.Im2RowU8.
func Im2RowU8(dst []uint8, lda int, x []uint8, ldx int, g Im2RowGeom, c0, cg int, zero uint8) {
	cpu.Im2RowU8(dst, lda, x, ldx, g, c0, cg, zero)
}

// NHWCToNCHWF32 transposes n images of hw pixels of c float32 channels
// (rows ld apart) to NCHW, with a ReLU when relu is set; see
// nd/cpu.NHWCToNCHWF32.
func NHWCToNCHWF32(dst, src []float32, ld, n, hw, c int, relu bool) {
	cpu.NHWCToNCHWF32(dst, src, ld, n, hw, c, relu)
}
