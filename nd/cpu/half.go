package cpu

import (
	"unsafe"

	"github.com/goluon/goluon/nd/backend"
)

// Conversions between float32 and the half-precision storage types, the
// passes every half-precision op makes (nd/half.go): F16C and AVX2
// assembly where the CPU has it, the same rounding as backend.F16From and
// BF16From bit for bit (TestHalfConversionsMatch), and a Go loop
// otherwise and for the tails.

// f16sToF32 decodes s into d (of the same length).
func f16sToF32(d []float32, s []backend.F16) {
	n := 0
	if f16, _ := halfAsm(); f16 && len(s) >= 8 {
		n = len(s) &^ 7
		f16ToF32AVX(&d[0], (*uint16)(unsafe.Pointer(&s[0])), n)
	}
	for i := n; i < len(s); i++ {
		d[i] = s[i].Float32()
	}
}

// f32sToF16 rounds s into d, to nearest even.
func f32sToF16(d []backend.F16, s []float32) {
	n := 0
	if f16, _ := halfAsm(); f16 && len(s) >= 8 {
		n = len(s) &^ 7
		f32ToF16AVX((*uint16)(unsafe.Pointer(&d[0])), &s[0], n)
	}
	for i := n; i < len(s); i++ {
		d[i] = backend.F16From(s[i])
	}
}

// bf16sToF32 decodes s into d.
func bf16sToF32(d []float32, s []backend.BF16) {
	n := 0
	if _, bf16 := halfAsm(); bf16 && len(s) >= 8 {
		n = len(s) &^ 7
		bf16ToF32AVX(&d[0], (*uint16)(unsafe.Pointer(&s[0])), n)
	}
	for i := n; i < len(s); i++ {
		d[i] = s[i].Float32()
	}
}

// f32sToBF16 rounds s into d, to nearest even.
func f32sToBF16(d []backend.BF16, s []float32) {
	n := 0
	if _, bf16 := halfAsm(); bf16 && len(s) >= 8 {
		n = len(s) &^ 7
		f32ToBF16AVX((*uint16)(unsafe.Pointer(&d[0])), &s[0], n)
	}
	for i := n; i < len(s); i++ {
		d[i] = backend.BF16From(s[i])
	}
}

// castHalf converts between float32 and a half-precision type, d and s
// being typed slices of one length; it reports false for other pairs.
func castHalf(d, s any) bool {
	switch dv := d.(type) {
	case []float32:
		switch sv := s.(type) {
		case []backend.F16:
			f16sToF32(dv, sv)
			return true
		case []backend.BF16:
			bf16sToF32(dv, sv)
			return true
		}
	case []backend.F16:
		if sv, ok := s.([]float32); ok {
			f32sToF16(dv, sv)
			return true
		}
	case []backend.BF16:
		if sv, ok := s.([]float32); ok {
			f32sToBF16(dv, sv)
			return true
		}
	}
	return false
}
