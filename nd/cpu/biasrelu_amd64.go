//go:build amd64

package cpu

// The AVX2 kernels of biasrelu_amd64.s (see addRelu and reluGradSum in
// biasrelu.go, which hold their plain Go definitions).

//go:noescape
func addReluF32(d, x, b *float32, n int)

//go:noescape
func addReluScalarF32(d, x *float32, s float32, n int)

//go:noescape
func reluGradSumF32(d, y, gr *float32, n int) float64
