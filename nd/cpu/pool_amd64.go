//go:build amd64

package cpu

// The AVX2 2×2 max-pooling kernels of pool_amd64.s (see maxPoolPlane and
// maxPool2x2BackwardPlane, which also hold their plain Go definitions).

//go:noescape
func maxPool2x2RowF32(y, r0, r1 *float32, groups int)

//go:noescape
func maxPool2x2BackRowF32(d0, d1, r0, r1, y, dy *float32, groups int) int
