// Vectorised erf for float64 values that are rounded to float32 afterwards
// (fastmath.go): erfF64 with YMM registers, 4 values a step, and
// erfF64x512 with ZMM registers, 8 a step. Both do on each value the
// operations erfScalar (fastmath.go) does, one by one in the same order
// (no fused multiply-adds): a = min(|x|, 4) keeping a NaN, z = a·a, the
// numerator P(z) and denominator Q(z) in Horner form, (a·P)/Q, and x's
// sign copied onto it. The constants are erf_coeffs.go's, each stored four
// times for the YMM memory operands.

#include "textflag.h"

DATA erfc<>+0(SB)/8, $0x3ff20dd7508ba2f8 // p0
DATA erfc<>+8(SB)/8, $0x3ff20dd7508ba2f8
DATA erfc<>+16(SB)/8, $0x3ff20dd7508ba2f8
DATA erfc<>+24(SB)/8, $0x3ff20dd7508ba2f8
DATA erfc<>+32(SB)/8, $0x3fc7bc64bde4b01b // p1
DATA erfc<>+40(SB)/8, $0x3fc7bc64bde4b01b
DATA erfc<>+48(SB)/8, $0x3fc7bc64bde4b01b
DATA erfc<>+56(SB)/8, $0x3fc7bc64bde4b01b
DATA erfc<>+64(SB)/8, $0x3fabbbd453ecfeca // p2
DATA erfc<>+72(SB)/8, $0x3fabbbd453ecfeca
DATA erfc<>+80(SB)/8, $0x3fabbbd453ecfeca
DATA erfc<>+88(SB)/8, $0x3fabbbd453ecfeca
DATA erfc<>+96(SB)/8, $0x3f6f6b6329dc4d98 // p3
DATA erfc<>+104(SB)/8, $0x3f6f6b6329dc4d98
DATA erfc<>+112(SB)/8, $0x3f6f6b6329dc4d98
DATA erfc<>+120(SB)/8, $0x3f6f6b6329dc4d98
DATA erfc<>+128(SB)/8, $0x3f385f5fef6551d0 // p4
DATA erfc<>+136(SB)/8, $0x3f385f5fef6551d0
DATA erfc<>+144(SB)/8, $0x3f385f5fef6551d0
DATA erfc<>+152(SB)/8, $0x3f385f5fef6551d0
DATA erfc<>+160(SB)/8, $0x3ed2c515361cc000 // p5
DATA erfc<>+168(SB)/8, $0x3ed2c515361cc000
DATA erfc<>+176(SB)/8, $0x3ed2c515361cc000
DATA erfc<>+184(SB)/8, $0x3ed2c515361cc000
DATA erfc<>+192(SB)/8, $0xbe4a120bc1000000 // p6
DATA erfc<>+200(SB)/8, $0xbe4a120bc1000000
DATA erfc<>+208(SB)/8, $0xbe4a120bc1000000
DATA erfc<>+216(SB)/8, $0xbe4a120bc1000000
DATA erfc<>+224(SB)/8, $0x3ff0000000000000 // q0
DATA erfc<>+232(SB)/8, $0x3ff0000000000000
DATA erfc<>+240(SB)/8, $0x3ff0000000000000
DATA erfc<>+248(SB)/8, $0x3ff0000000000000
DATA erfc<>+256(SB)/8, $0x3fdfd9dda5c553af // q1
DATA erfc<>+264(SB)/8, $0x3fdfd9dda5c553af
DATA erfc<>+272(SB)/8, $0x3fdfd9dda5c553af
DATA erfc<>+280(SB)/8, $0x3fdfd9dda5c553af
DATA erfc<>+288(SB)/8, $0x3fbd283b086df377 // q2
DATA erfc<>+296(SB)/8, $0x3fbd283b086df377
DATA erfc<>+304(SB)/8, $0x3fbd283b086df377
DATA erfc<>+312(SB)/8, $0x3fbd283b086df377
DATA erfc<>+320(SB)/8, $0x3f8f8dd19668879f // q3
DATA erfc<>+328(SB)/8, $0x3f8f8dd19668879f
DATA erfc<>+336(SB)/8, $0x3f8f8dd19668879f
DATA erfc<>+344(SB)/8, $0x3f8f8dd19668879f
DATA erfc<>+352(SB)/8, $0x3f55347602056cca // q4
DATA erfc<>+360(SB)/8, $0x3f55347602056cca
DATA erfc<>+368(SB)/8, $0x3f55347602056cca
DATA erfc<>+376(SB)/8, $0x3f55347602056cca
DATA erfc<>+384(SB)/8, $0x3f10057b8c4b4880 // q5
DATA erfc<>+392(SB)/8, $0x3f10057b8c4b4880
DATA erfc<>+400(SB)/8, $0x3f10057b8c4b4880
DATA erfc<>+408(SB)/8, $0x3f10057b8c4b4880
DATA erfc<>+416(SB)/8, $0x4010000000000000 // four
DATA erfc<>+424(SB)/8, $0x4010000000000000
DATA erfc<>+432(SB)/8, $0x4010000000000000
DATA erfc<>+440(SB)/8, $0x4010000000000000
DATA erfc<>+448(SB)/8, $0x7fffffffffffffff // abs
DATA erfc<>+456(SB)/8, $0x7fffffffffffffff
DATA erfc<>+464(SB)/8, $0x7fffffffffffffff
DATA erfc<>+472(SB)/8, $0x7fffffffffffffff
DATA erfc<>+480(SB)/8, $0x8000000000000000 // sign
DATA erfc<>+488(SB)/8, $0x8000000000000000
DATA erfc<>+496(SB)/8, $0x8000000000000000
DATA erfc<>+504(SB)/8, $0x8000000000000000
GLOBL erfc<>(SB), RODATA|NOPTR, $512

// func erfF64(v *float64, n int)
//
// Replaces v[i] by erf(v[i]) for i < n; n must be a multiple of 4.
TEXT ·erfF64(SB), NOSPLIT, $0-16
	MOVQ v+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $2, CX
	JEQ  erfdone
	LEAQ erfc<>(SB), R8

erfloop:
	VMOVUPD (DI), Y0                // x
	VANDPD  448(R8), Y0, Y1         // |x|
	VMOVUPD 416(R8), Y2             // 4
	VMINPD  Y1, Y2, Y1             // a: 4 when 4 < |x|, else |x| (a NaN stays)
	VMULPD  Y1, Y1, Y2             // z
	VMULPD  192(R8), Y2, Y3
	VADDPD  160(R8), Y3, Y3
	VMULPD  Y2, Y3, Y3
	VADDPD  128(R8), Y3, Y3
	VMULPD  Y2, Y3, Y3
	VADDPD  96(R8), Y3, Y3
	VMULPD  Y2, Y3, Y3
	VADDPD  64(R8), Y3, Y3
	VMULPD  Y2, Y3, Y3
	VADDPD  32(R8), Y3, Y3
	VMULPD  Y2, Y3, Y3
	VADDPD  0(R8), Y3, Y3             // P
	VMULPD  384(R8), Y2, Y4
	VADDPD  352(R8), Y4, Y4
	VMULPD  Y2, Y4, Y4
	VADDPD  320(R8), Y4, Y4
	VMULPD  Y2, Y4, Y4
	VADDPD  288(R8), Y4, Y4
	VMULPD  Y2, Y4, Y4
	VADDPD  256(R8), Y4, Y4
	VMULPD  Y2, Y4, Y4
	VADDPD  224(R8), Y4, Y4             // Q
	VMULPD  Y3, Y1, Y3             // a·P
	VDIVPD  Y4, Y3, Y3             // (a·P)/Q
	VANDPD  448(R8), Y3, Y3         // its magnitude
	VANDPD  480(R8), Y0, Y5         // x's sign
	VORPD   Y5, Y3, Y3
	VMOVUPD Y3, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JNE     erfloop

erfdone:
	VZEROUPPER
	RET

// func erfF64x512(v *float64, n int)
//
// erfF64 with ZMM registers; n must be a multiple of 8.
TEXT ·erfF64x512(SB), NOSPLIT, $0-16
	MOVQ v+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	JEQ  zerfdone
	LEAQ erfc<>(SB), R8
	VBROADCASTSD 0(R8), Z16
	VBROADCASTSD 32(R8), Z17
	VBROADCASTSD 64(R8), Z18
	VBROADCASTSD 96(R8), Z19
	VBROADCASTSD 128(R8), Z20
	VBROADCASTSD 160(R8), Z21
	VBROADCASTSD 192(R8), Z22
	VBROADCASTSD 224(R8), Z23
	VBROADCASTSD 256(R8), Z24
	VBROADCASTSD 288(R8), Z25
	VBROADCASTSD 320(R8), Z26
	VBROADCASTSD 352(R8), Z27
	VBROADCASTSD 384(R8), Z28
	VBROADCASTSD 416(R8), Z29
	VBROADCASTSD 448(R8), Z30
	VBROADCASTSD 480(R8), Z31

zerfloop:
	VMOVUPD (DI), Z0
	VPANDQ  Z30, Z0, Z1
	VMINPD  Z1, Z29, Z1
	VMULPD  Z1, Z1, Z2
	VMULPD  Z22, Z2, Z3
	VADDPD  Z21, Z3, Z3
	VMULPD  Z2, Z3, Z3
	VADDPD  Z20, Z3, Z3
	VMULPD  Z2, Z3, Z3
	VADDPD  Z19, Z3, Z3
	VMULPD  Z2, Z3, Z3
	VADDPD  Z18, Z3, Z3
	VMULPD  Z2, Z3, Z3
	VADDPD  Z17, Z3, Z3
	VMULPD  Z2, Z3, Z3
	VADDPD  Z16, Z3, Z3
	VMULPD  Z28, Z2, Z4
	VADDPD  Z27, Z4, Z4
	VMULPD  Z2, Z4, Z4
	VADDPD  Z26, Z4, Z4
	VMULPD  Z2, Z4, Z4
	VADDPD  Z25, Z4, Z4
	VMULPD  Z2, Z4, Z4
	VADDPD  Z24, Z4, Z4
	VMULPD  Z2, Z4, Z4
	VADDPD  Z23, Z4, Z4
	VMULPD  Z3, Z1, Z3
	VDIVPD  Z4, Z3, Z3
	VPANDQ  Z30, Z3, Z3
	VPANDQ  Z31, Z0, Z5
	VPORQ   Z5, Z3, Z3
	VMOVUPD Z3, (DI)
	ADDQ    $64, DI
	DECQ    CX
	JNE     zerfloop

zerfdone:
	VZEROUPPER
	RET
