//go:build !amd64

package cpu

func f16ToF32AVX(dst *float32, src *uint16, n int)  { panic("cpu: no assembly conversions") }
func f32ToF16AVX(dst *uint16, src *float32, n int)  { panic("cpu: no assembly conversions") }
func bf16ToF32AVX(dst *float32, src *uint16, n int) { panic("cpu: no assembly conversions") }
func f32ToBF16AVX(dst *uint16, src *float32, n int) { panic("cpu: no assembly conversions") }

func halfAsm() (f16, bf16 bool) { return false, false }
