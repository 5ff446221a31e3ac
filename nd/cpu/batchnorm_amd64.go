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

// fmaF32 sets d[i] = x[i]·s[i] + t[i], rounded once: scaleShiftF32 with a
// scale and a shift per element.
//
//go:noescape
func fmaF32(d, x, s, t *float32, n int)
