//go:build !amd64

package cpu

// useAsmKernel is false off amd64: sgemm uses gonum's portable Sgemm.
var useAsmKernel = false

// useZMMKernel is false off amd64.
var useZMMKernel = false

// detectISA: off amd64 only the generic level exists.
func detectISA() ISA { return ISAGeneric }

// sgemmPanel exists only so that the portable build compiles; it is never
// called because useAsmKernel is false.
func sgemmPanel(k int, a *float32, m int, b *float32, ldb int, c *float32, ldc int, accum int) {
	panic("cpu: sgemmPanel called without the assembly kernel")
}

func sgemmPanel2(k int, a *float32, m int, b1, b2 *float32, ldb int, c *float32, ldc int, accum int) {
	panic("unreachable")
}

func sgemmPanelA(k int, a *float32, rs, cs int, m int, b *float32, ldb int, c *float32, ldc int, accum int) {
	panic("unreachable")
}

func sgemmPanel2A(k int, a *float32, rs, cs int, m int, b1, b2 *float32, ldb int, c *float32, ldc int, accum int) {
	panic("unreachable")
}

// The packing kernels are likewise never called off amd64.
func packB16(k int, src *float32, ld int, dst *float32)                { panic("unreachable") }
func packB16T(k int, rows *[16]*float32, dst *float32)                 { panic("unreachable") }
func packA6(k int, rows *[8]*float32, alpha float32, dst *float32)     { panic("unreachable") }
func packA6T(k int, src *float32, ld int, alpha float32, dst *float32) { panic("unreachable") }
