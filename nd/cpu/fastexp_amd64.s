// Vectorised exp for float64 values that are rounded to float32 afterwards
// (fastmath.go): expF64 with YMM registers, 4 values a step, and
// expF64x512 with ZMM registers, 8 a step. Both do on each value the
// operations expScalar (fastmath.go) does, one by one in the same order
// (no fused multiply-adds): 2^k·p(r) with k = round(x·log2e) by the
// 1.5·2⁵² trick, r = (x − k·ln2Hi) − k·ln2Lo, p the degree-7 Taylor
// polynomial in Horner form, and 2^k built from k's bits; then 0 below
// expMin, +Inf above expMax; a NaN stays a NaN through the arithmetic (its
// compares are false). Written by hand; the constants are expScalar's,
// each stored four times for the YMM memory operands.

#include "textflag.h"

DATA expc<>+0(SB)/8, $0x3ff71547652b82fe // log2e
DATA expc<>+8(SB)/8, $0x3ff71547652b82fe
DATA expc<>+16(SB)/8, $0x3ff71547652b82fe
DATA expc<>+24(SB)/8, $0x3ff71547652b82fe
DATA expc<>+32(SB)/8, $0x4338000000000000 // magic
DATA expc<>+40(SB)/8, $0x4338000000000000
DATA expc<>+48(SB)/8, $0x4338000000000000
DATA expc<>+56(SB)/8, $0x4338000000000000
DATA expc<>+64(SB)/8, $0x3fe62e42fee00000 // ln2hi
DATA expc<>+72(SB)/8, $0x3fe62e42fee00000
DATA expc<>+80(SB)/8, $0x3fe62e42fee00000
DATA expc<>+88(SB)/8, $0x3fe62e42fee00000
DATA expc<>+96(SB)/8, $0x3dea39ef35793c76 // ln2lo
DATA expc<>+104(SB)/8, $0x3dea39ef35793c76
DATA expc<>+112(SB)/8, $0x3dea39ef35793c76
DATA expc<>+120(SB)/8, $0x3dea39ef35793c76
DATA expc<>+128(SB)/8, $0x3f2a01a01a01a01a // c7
DATA expc<>+136(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+144(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+152(SB)/8, $0x3f2a01a01a01a01a
DATA expc<>+160(SB)/8, $0x3f56c16c16c16c17 // c6
DATA expc<>+168(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+176(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+184(SB)/8, $0x3f56c16c16c16c17
DATA expc<>+192(SB)/8, $0x3f81111111111111 // c5
DATA expc<>+200(SB)/8, $0x3f81111111111111
DATA expc<>+208(SB)/8, $0x3f81111111111111
DATA expc<>+216(SB)/8, $0x3f81111111111111
DATA expc<>+224(SB)/8, $0x3fa5555555555555 // c4
DATA expc<>+232(SB)/8, $0x3fa5555555555555
DATA expc<>+240(SB)/8, $0x3fa5555555555555
DATA expc<>+248(SB)/8, $0x3fa5555555555555
DATA expc<>+256(SB)/8, $0x3fc5555555555555 // c3
DATA expc<>+264(SB)/8, $0x3fc5555555555555
DATA expc<>+272(SB)/8, $0x3fc5555555555555
DATA expc<>+280(SB)/8, $0x3fc5555555555555
DATA expc<>+288(SB)/8, $0x3fe0000000000000 // c2
DATA expc<>+296(SB)/8, $0x3fe0000000000000
DATA expc<>+304(SB)/8, $0x3fe0000000000000
DATA expc<>+312(SB)/8, $0x3fe0000000000000
DATA expc<>+320(SB)/8, $0x3ff0000000000000 // one
DATA expc<>+328(SB)/8, $0x3ff0000000000000
DATA expc<>+336(SB)/8, $0x3ff0000000000000
DATA expc<>+344(SB)/8, $0x3ff0000000000000
DATA expc<>+352(SB)/8, $0xc05a000000000000 // emin
DATA expc<>+360(SB)/8, $0xc05a000000000000
DATA expc<>+368(SB)/8, $0xc05a000000000000
DATA expc<>+376(SB)/8, $0xc05a000000000000
DATA expc<>+384(SB)/8, $0x4056400000000000 // emax
DATA expc<>+392(SB)/8, $0x4056400000000000
DATA expc<>+400(SB)/8, $0x4056400000000000
DATA expc<>+408(SB)/8, $0x4056400000000000
DATA expc<>+416(SB)/8, $0x7ff0000000000000 // inf
DATA expc<>+424(SB)/8, $0x7ff0000000000000
DATA expc<>+432(SB)/8, $0x7ff0000000000000
DATA expc<>+440(SB)/8, $0x7ff0000000000000
DATA expc<>+448(SB)/8, $0x00000000000003ff // bias
DATA expc<>+456(SB)/8, $0x00000000000003ff
DATA expc<>+464(SB)/8, $0x00000000000003ff
DATA expc<>+472(SB)/8, $0x00000000000003ff
GLOBL expc<>(SB), RODATA|NOPTR, $480

// func expF64(v *float64, n int)
//
// Replaces v[i] by e^v[i] for i < n; n must be a multiple of 4.
TEXT ·expF64(SB), NOSPLIT, $0-16
	MOVQ v+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $2, CX
	JEQ  edone
	LEAQ expc<>(SB), R8

eloop:
	VMOVUPD   (DI), Y0
	VMULPD    0(R8), Y0, Y1 // x·log2e
	VADDPD    32(R8), Y1, Y1 // + magic: k in the low bits
	VPSUBQ    32(R8), Y1, Y2 // k as an integer
	VSUBPD    32(R8), Y1, Y1 // k as a float
	VMULPD    64(R8), Y1, Y3
	VSUBPD    Y3, Y0, Y3     // x − k·ln2Hi
	VMULPD    96(R8), Y1, Y4
	VSUBPD    Y4, Y3, Y3     // r
	VMULPD    128(R8), Y3, Y4
	VADDPD    160(R8), Y4, Y4
	VMULPD    Y3, Y4, Y4
	VADDPD    192(R8), Y4, Y4
	VMULPD    Y3, Y4, Y4
	VADDPD    224(R8), Y4, Y4
	VMULPD    Y3, Y4, Y4
	VADDPD    256(R8), Y4, Y4
	VMULPD    Y3, Y4, Y4
	VADDPD    288(R8), Y4, Y4
	VMULPD    Y3, Y4, Y4
	VADDPD    320(R8), Y4, Y4
	VMULPD    Y3, Y4, Y4
	VADDPD    320(R8), Y4, Y4     // p
	VPADDQ    448(R8), Y2, Y2
	VPSLLQ    $52, Y2, Y2    // 2^k
	VMULPD    Y2, Y4, Y4
	VCMPPD    $0x11, 352(R8), Y0, Y5 // x < expMin
	VANDNPD   Y4, Y5, Y4
	VCMPPD    $0x1e, 384(R8), Y0, Y5 // x > expMax
	VBLENDVPD Y5, 416(R8), Y4, Y4
	VMOVUPD   Y4, (DI)
	ADDQ      $32, DI
	DECQ      CX
	JNE       eloop

edone:
	VZEROUPPER
	RET

// func expF64x512(v *float64, n int)
//
// expF64 with ZMM registers; n must be a multiple of 8. The constants live
// in Z16..Z30, zero in Z31.
TEXT ·expF64x512(SB), NOSPLIT, $0-16
	MOVQ v+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	JEQ  zedone
	LEAQ expc<>(SB), R8
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
	VPXORQ       Z31, Z31, Z31

zeloop:
	VMOVUPD (DI), Z0
	VMULPD  Z16, Z0, Z1
	VADDPD  Z17, Z1, Z1
	VPSUBQ  Z17, Z1, Z2
	VSUBPD  Z17, Z1, Z1
	VMULPD  Z18, Z1, Z3
	VSUBPD  Z3, Z0, Z3
	VMULPD  Z19, Z1, Z4
	VSUBPD  Z4, Z3, Z3
	VMULPD  Z20, Z3, Z4
	VADDPD  Z21, Z4, Z4
	VMULPD  Z3, Z4, Z4
	VADDPD  Z22, Z4, Z4
	VMULPD  Z3, Z4, Z4
	VADDPD  Z23, Z4, Z4
	VMULPD  Z3, Z4, Z4
	VADDPD  Z24, Z4, Z4
	VMULPD  Z3, Z4, Z4
	VADDPD  Z25, Z4, Z4
	VMULPD  Z3, Z4, Z4
	VADDPD  Z26, Z4, Z4
	VMULPD  Z3, Z4, Z4
	VADDPD  Z26, Z4, Z4
	VPADDQ  Z30, Z2, Z2
	VPSLLQ  $52, Z2, Z2
	VMULPD  Z2, Z4, Z4
	VCMPPD  $0x11, Z27, Z0, K1
	VMOVAPD Z31, K1, Z4
	VCMPPD  $0x1e, Z28, Z0, K2
	VMOVAPD Z29, K2, Z4
	VMOVUPD Z4, (DI)
	ADDQ    $64, DI
	DECQ    CX
	JNE     zeloop

zedone:
	VZEROUPPER
	RET
