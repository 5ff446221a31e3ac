//go:build amd64

package cpu

// sdot_amd64.s: the dot-product kernels of sgemm_dot.go.

// dot4F32 sets out[0..3] to the dot products of x with b0…b3 over k
// values, with 16 partial sums per row (lanes t mod 16, the last k mod 16
// values read through masks) reduced in a fixed order. It reads nothing
// past k.
//
//go:noescape
func dot4F32(x, b0, b1, b2, b3 *float32, k int, out *float32)

// dot4F32x512 is dot4F32 on ZMM registers (the same bits).
//
//go:noescape
func dot4F32x512(x, b0, b1, b2, b3 *float32, k int, out *float32)
