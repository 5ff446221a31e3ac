//go:build amd64

package cpu

// The AVX2/FMA kernels of batchnorm_amd64.s (see sums and affine in
// batchnorm.go, which hold their plain Go definitions).

//go:noescape
func bnSumsF32(x, y *float32, n int) (sx, sxy float64)

//go:noescape
func scaleShiftF32(d, x *float32, n int, s, t float32)

//go:noescape
func axpbycF32(d, gp, x *float32, n int, a, b, c float32)
