//go:build amd64

package cpu

// The AVX2 elementwise kernels of vec_amd64.s. Each handles n contiguous
// float32 values; d may alias a or b.

//go:noescape
func addF32(d, a, b *float32, n int)

//go:noescape
func subF32(d, a, b *float32, n int)

//go:noescape
func mulF32(d, a, b *float32, n int)

//go:noescape
func divF32(d, a, b *float32, n int)

//go:noescape
func addScalarF32(d, a *float32, s float32, n int)

//go:noescape
func subScalarF32(d, a *float32, s float32, n int)

//go:noescape
func mulScalarF32(d, a *float32, s float32, n int)

//go:noescape
func divScalarF32(d, a *float32, s float32, n int)

//go:noescape
func reluF32(d, a *float32, n int)

//go:noescape
func reluGradF32(d, a, b *float32, n int)

// sqrtF32 sets d = sqrt(a), correctly rounded (float32(math.Sqrt(a))
// but for the NaN of a negative value, the CPU's default NaN).
//
//go:noescape
func sqrtF32(d, a *float32, n int)

//go:noescape
func copyRowsF32(d, s *float32, rows, width, ldd, lds int)

//go:noescape
func addRowsF32(d, s *float32, rows, width, ldd, lds int)

// prefetchF32 asks for the cache lines of n float32 values at p
// (PREFETCHT0): a hint that never faults.
//
//go:noescape
func prefetchF32(p *float32, n int)

//go:noescape
func sumF32(s *float32, n int) float64

//go:noescape
func accF32(acc *float64, s *float32, n int)

// expF64 replaces v[i] by e^v[i] for i < n (a multiple of 4) to float32
// accuracy, as expBlock does and with its bits (fastexp_amd64.s).
//
//go:noescape
func expF64(v *float64, n int)

// erfF64 replaces v[i] by erf(v[i]) for i < n (a multiple of 4) to float32
// accuracy, as erfBlock does and with its bits (fasterf_amd64.s).
//
//go:noescape
func erfF64(v *float64, n int)
