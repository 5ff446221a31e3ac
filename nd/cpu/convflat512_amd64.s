// AVX-512 kernel of the flat forward convolution (convflat.go): six
// filters over three vectors of 16 positions of an image's flat output
// plane at a time, every tap of the laid-out input (convfilterf.go's
// layout) broadcast-multiplied into 18 accumulators. Written by hand; Go
// declaration in convfilter_amd64.go.

#include "textflag.h"

// FLOADS loads the tap's three input vectors at byte offset DX from SI
// into Z24–Z26; FLOADSM under the masks K1–K3, zeroing the other lanes.
#define FLOADS \
	VMOVUPS (SI)(DX*1), Z24;    \
	VMOVUPS 64(SI)(DX*1), Z25;  \
	VMOVUPS 128(SI)(DX*1), Z26

#define FLOADSM \
	VMOVUPS.Z (SI)(DX*1), K1, Z24;   \
	VMOVUPS.Z 64(SI)(DX*1), K2, Z25; \
	VMOVUPS.Z 128(SI)(DX*1), K3, Z26

// FMAS broadcasts the tap's six weights (R8) and adds their products with
// the three input vectors into the 18 accumulators, Z(3f+v).
#define FMAS \
	VBROADCASTSS 0(R8), Z18; \
	VBROADCASTSS 4(R8), Z19; \
	VBROADCASTSS 8(R8), Z20; \
	VBROADCASTSS 12(R8), Z21; \
	VBROADCASTSS 16(R8), Z22; \
	VBROADCASTSS 20(R8), Z23; \
	VFMADD231PS Z24, Z18, Z0; \
	VFMADD231PS Z25, Z18, Z1; \
	VFMADD231PS Z26, Z18, Z2; \
	VFMADD231PS Z24, Z19, Z3; \
	VFMADD231PS Z25, Z19, Z4; \
	VFMADD231PS Z26, Z19, Z5; \
	VFMADD231PS Z24, Z20, Z6; \
	VFMADD231PS Z25, Z20, Z7; \
	VFMADD231PS Z26, Z20, Z8; \
	VFMADD231PS Z24, Z21, Z9; \
	VFMADD231PS Z25, Z21, Z10; \
	VFMADD231PS Z26, Z21, Z11; \
	VFMADD231PS Z24, Z22, Z12; \
	VFMADD231PS Z25, Z22, Z13; \
	VFMADD231PS Z26, Z22, Z14; \
	VFMADD231PS Z24, Z23, Z15; \
	VFMADD231PS Z25, Z23, Z16; \
	VFMADD231PS Z26, Z23, Z17

// TAPS points R8 at the first tap's weights, R9 at its offset and sets
// the tap count CX.
#define TAPS \
	MOVQ wp+16(FP), R8;    \
	MOVQ toffs+24(FP), R9; \
	MOVQ kk+32(FP), CX

// STORES writes the 18 accumulators to the six filters' planes at byte
// offset DX; STORESM under the masks K1–K3.
#define STORES \
	VMOVUPS Z0, (AX)(DX*1); \
	VMOVUPS Z1, 64(AX)(DX*1); \
	VMOVUPS Z2, 128(AX)(DX*1); \
	VMOVUPS Z3, (DI)(DX*1); \
	VMOVUPS Z4, 64(DI)(DX*1); \
	VMOVUPS Z5, 128(DI)(DX*1); \
	VMOVUPS Z6, (R10)(DX*1); \
	VMOVUPS Z7, 64(R10)(DX*1); \
	VMOVUPS Z8, 128(R10)(DX*1); \
	VMOVUPS Z9, (R11)(DX*1); \
	VMOVUPS Z10, 64(R11)(DX*1); \
	VMOVUPS Z11, 128(R11)(DX*1); \
	VMOVUPS Z12, (R12)(DX*1); \
	VMOVUPS Z13, 64(R12)(DX*1); \
	VMOVUPS Z14, 128(R12)(DX*1); \
	VMOVUPS Z15, (R13)(DX*1); \
	VMOVUPS Z16, 64(R13)(DX*1); \
	VMOVUPS Z17, 128(R13)(DX*1)

#define STORESM \
	VMOVUPS Z0, K1, (AX)(DX*1); \
	VMOVUPS Z1, K2, 64(AX)(DX*1); \
	VMOVUPS Z2, K3, 128(AX)(DX*1); \
	VMOVUPS Z3, K1, (DI)(DX*1); \
	VMOVUPS Z4, K2, 64(DI)(DX*1); \
	VMOVUPS Z5, K3, 128(DI)(DX*1); \
	VMOVUPS Z6, K1, (R10)(DX*1); \
	VMOVUPS Z7, K2, 64(R10)(DX*1); \
	VMOVUPS Z8, K3, 128(R10)(DX*1); \
	VMOVUPS Z9, K1, (R11)(DX*1); \
	VMOVUPS Z10, K2, 64(R11)(DX*1); \
	VMOVUPS Z11, K3, 128(R11)(DX*1); \
	VMOVUPS Z12, K1, (R12)(DX*1); \
	VMOVUPS Z13, K2, 64(R12)(DX*1); \
	VMOVUPS Z14, K3, 128(R12)(DX*1); \
	VMOVUPS Z15, K1, (R13)(DX*1); \
	VMOVUPS Z16, K2, 64(R13)(DX*1); \
	VMOVUPS Z17, K3, 128(R13)(DX*1)

// ZERO clears the 18 accumulators.
#define ZERO \
	VXORPS Z0, Z0, Z0; \
	VXORPS Z1, Z1, Z1; \
	VXORPS Z2, Z2, Z2; \
	VXORPS Z3, Z3, Z3; \
	VXORPS Z4, Z4, Z4; \
	VXORPS Z5, Z5, Z5; \
	VXORPS Z6, Z6, Z6; \
	VXORPS Z7, Z7, Z7; \
	VXORPS Z8, Z8, Z8; \
	VXORPS Z9, Z9, Z9; \
	VXORPS Z10, Z10, Z10; \
	VXORPS Z11, Z11, Z11; \
	VXORPS Z12, Z12, Z12; \
	VXORPS Z13, Z13, Z13; \
	VXORPS Z14, Z14, Z14; \
	VXORPS Z15, Z15, Z15; \
	VXORPS Z16, Z16, Z16; \
	VXORPS Z17, Z17, Z17

// func convFlatF32x512(y *[6]*float32, xs, wp *float32, toffs *int64, kk, triples int, tail uint64)
//
// For the triples whole groups of 48 positions of an image's flat output
// plane and, when tail is not 0, one more group under the 48-lane mask
// tail: y[f][q+lane] = Σ_t wp[t][f] · xs_t[q+lane] for the six filters f
// and the kk taps t, where xs_t = xs + toffs[t] (bytes) and wp holds six
// weights per tap.
TEXT ·convFlatF32x512(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), SI
	MOVQ 0(SI), AX
	MOVQ 8(SI), DI
	MOVQ 16(SI), R10
	MOVQ 24(SI), R11
	MOVQ 32(SI), R12
	MOVQ 40(SI), R13
	MOVQ xs+8(FP), BX
	XORQ DX, DX
	MOVQ triples+40(FP), R14
	TESTQ R14, R14
	JEQ  partial

triple:
	ZERO
	TAPS

tap:
	MOVQ (R9), SI
	ADDQ BX, SI
	FLOADS
	FMAS
	ADDQ $24, R8
	ADDQ $8, R9
	DECQ CX
	JNZ  tap
	STORES
	ADDQ $192, DX
	DECQ R14
	JNZ  triple

partial:
	MOVQ  tail+48(FP), SI
	TESTQ SI, SI
	JEQ   done
	KMOVW SI, K1
	SHRQ  $16, SI
	KMOVW SI, K2
	SHRQ  $16, SI
	KMOVW SI, K3
	ZERO
	TAPS

ptap:
	MOVQ (R9), SI
	ADDQ BX, SI
	FLOADSM
	FMAS
	ADDQ $24, R8
	ADDQ $8, R9
	DECQ CX
	JNZ  ptap
	STORESM

done:
	VZEROUPPER
	RET
