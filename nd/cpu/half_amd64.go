package cpu

//go:noescape
func f16ToF32AVX(dst *float32, src *uint16, n int)

//go:noescape
func f32ToF16AVX(dst *uint16, src *float32, n int)

//go:noescape
func bf16ToF32AVX(dst *float32, src *uint16, n int)

//go:noescape
func f32ToBF16AVX(dst *uint16, src *float32, n int)

// hasF16C reports the F16C conversions (CPUID.1:ECX bit 29), which every
// AVX2 CPU has in practice but is its own feature bit.
var hasF16C = func() bool {
	_, _, ecx, _ := cpuid(1, 0)
	return ecx&(1<<29) != 0
}()

// halfAsm reports which conversions run in assembly: Float16's needs F16C
// and the AVX2 level, BFloat16's AVX2.
func halfAsm() (f16, bf16 bool) { return useAsmKernel && hasF16C, useAsmKernel }
