// Dot products of one row of A with four rows of B, for the products of
// few rows by a transposed matrix (sgemm_dot.go). Go declarations are in
// sdot_amd64.go.

#include "textflag.h"

// dotmask<>: 16 lanes of all ones, then 16 of zeros. The AVX2 tail's
// masks for r leftover values start at lane 16−r (its low half) and
// 24−r (its high half).
DATA dotmask<>+0(SB)/8, $-1
DATA dotmask<>+8(SB)/8, $-1
DATA dotmask<>+16(SB)/8, $-1
DATA dotmask<>+24(SB)/8, $-1
DATA dotmask<>+32(SB)/8, $-1
DATA dotmask<>+40(SB)/8, $-1
DATA dotmask<>+48(SB)/8, $-1
DATA dotmask<>+56(SB)/8, $-1
DATA dotmask<>+64(SB)/8, $0
DATA dotmask<>+72(SB)/8, $0
DATA dotmask<>+80(SB)/8, $0
DATA dotmask<>+88(SB)/8, $0
DATA dotmask<>+96(SB)/8, $0
DATA dotmask<>+104(SB)/8, $0
DATA dotmask<>+112(SB)/8, $0
DATA dotmask<>+120(SB)/8, $0
GLOBL dotmask<>(SB), RODATA|NOPTR, $128

// DOTREDUCE sums the 16 lanes held as lo (lanes 0–7) + hi (lanes 8–15)
// in Y (already added) into the low lane of X: lanes i and i+4, then i
// and i+2, then 0 and 1. Both kernels reach it with the same partial
// sums, so they give the same bits.
#define DOTREDUCE(Y, X, T, TX) \
	VEXTRACTF128 $1, Y, TX; \
	VADDPS       TX, X, X;  \
	VMOVHLPS     X, X, TX;  \
	VADDPS       TX, X, X;  \
	VMOVSHDUP    X, TX;     \
	VADDSS       TX, X, X

// DOTARGS loads both kernels' arguments: SI x, R8–R11 the rows, DI out,
// CX the bytes of the whole groups of 16 values, DX the k mod 16 values
// left, AX the offset (0).
#define DOTARGS \
	MOVQ x+0(FP), SI;    \
	MOVQ b0+8(FP), R8;   \
	MOVQ b1+16(FP), R9;  \
	MOVQ b2+24(FP), R10; \
	MOVQ b3+32(FP), R11; \
	MOVQ k+40(FP), CX;   \
	MOVQ out+48(FP), DI; \
	MOVQ CX, DX;         \
	ANDQ $15, DX;        \
	ANDQ $-16, CX;       \
	SHLQ $2, CX;         \
	XORQ AX, AX

// func dot4F32(x, b0, b1, b2, b3 *float32, k int, out *float32)
// out[r] = Σ x[t]·br[t] over t < k: each row keeps 16 partial sums (two
// YMM registers, lanes t mod 16) added in order of t, the last k mod 16
// values through masked loads (zeros past k), then reduced by DOTREDUCE.
TEXT ·dot4F32(SB), NOSPLIT, $0-56
	DOTARGS
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8

loop:
	CMPQ        AX, CX
	JGE         tail
	VMOVUPS     (SI)(AX*1), Y0
	VMOVUPS     32(SI)(AX*1), Y9
	VFMADD231PS (R8)(AX*1), Y0, Y1
	VFMADD231PS 32(R8)(AX*1), Y9, Y5
	VFMADD231PS (R9)(AX*1), Y0, Y2
	VFMADD231PS 32(R9)(AX*1), Y9, Y6
	VFMADD231PS (R10)(AX*1), Y0, Y3
	VFMADD231PS 32(R10)(AX*1), Y9, Y7
	VFMADD231PS (R11)(AX*1), Y0, Y4
	VFMADD231PS 32(R11)(AX*1), Y9, Y8
	ADDQ        $64, AX
	JMP         loop

tail:
	TESTQ       DX, DX
	JZ          reduce
	MOVQ        $16, R12
	SUBQ        DX, R12
	LEAQ        dotmask<>(SB), BX
	VMOVDQU     (BX)(R12*4), Y10
	VMOVDQU     32(BX)(R12*4), Y11
	VMASKMOVPS  (SI)(AX*1), Y10, Y0
	VMASKMOVPS  32(SI)(AX*1), Y11, Y9
	VMASKMOVPS  (R8)(AX*1), Y10, Y12
	VFMADD231PS Y12, Y0, Y1
	VMASKMOVPS  32(R8)(AX*1), Y11, Y12
	VFMADD231PS Y12, Y9, Y5
	VMASKMOVPS  (R9)(AX*1), Y10, Y12
	VFMADD231PS Y12, Y0, Y2
	VMASKMOVPS  32(R9)(AX*1), Y11, Y12
	VFMADD231PS Y12, Y9, Y6
	VMASKMOVPS  (R10)(AX*1), Y10, Y12
	VFMADD231PS Y12, Y0, Y3
	VMASKMOVPS  32(R10)(AX*1), Y11, Y12
	VFMADD231PS Y12, Y9, Y7
	VMASKMOVPS  (R11)(AX*1), Y10, Y12
	VFMADD231PS Y12, Y0, Y4
	VMASKMOVPS  32(R11)(AX*1), Y11, Y12
	VFMADD231PS Y12, Y9, Y8

reduce:
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VADDPS Y8, Y4, Y4
	DOTREDUCE(Y1, X1, Y0, X0)
	VMOVSS X1, (DI)
	DOTREDUCE(Y2, X2, Y0, X0)
	VMOVSS X2, 4(DI)
	DOTREDUCE(Y3, X3, Y0, X0)
	VMOVSS X3, 8(DI)
	DOTREDUCE(Y4, X4, Y0, X0)
	VMOVSS X4, 12(DI)
	VZEROUPPER
	RET

// func dot4F32x512(x, b0, b1, b2, b3 *float32, k int, out *float32)
// dot4F32 with one ZMM register of partial sums per row (the tail's
// loads zero-masked).
TEXT ·dot4F32x512(SB), NOSPLIT, $0-56
	DOTARGS
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4

loopz:
	CMPQ        AX, CX
	JGE         tailz
	VMOVUPS     (SI)(AX*1), Z0
	VFMADD231PS (R8)(AX*1), Z0, Z1
	VFMADD231PS (R9)(AX*1), Z0, Z2
	VFMADD231PS (R10)(AX*1), Z0, Z3
	VFMADD231PS (R11)(AX*1), Z0, Z4
	ADDQ        $64, AX
	JMP         loopz

tailz:
	TESTQ       DX, DX
	JZ          reducez
	MOVQ        DX, CX
	MOVL        $1, BX
	SHLL        CX, BX
	DECL        BX
	KMOVW       BX, K1
	VMOVUPS.Z   (SI)(AX*1), K1, Z0
	VMOVUPS.Z   (R8)(AX*1), K1, Z5
	VFMADD231PS Z5, Z0, Z1
	VMOVUPS.Z   (R9)(AX*1), K1, Z5
	VFMADD231PS Z5, Z0, Z2
	VMOVUPS.Z   (R10)(AX*1), K1, Z5
	VFMADD231PS Z5, Z0, Z3
	VMOVUPS.Z   (R11)(AX*1), K1, Z5
	VFMADD231PS Z5, Z0, Z4

reducez:
	VEXTRACTF64X4 $1, Z1, Y5
	VADDPS        Y5, Y1, Y1
	VEXTRACTF64X4 $1, Z2, Y5
	VADDPS        Y5, Y2, Y2
	VEXTRACTF64X4 $1, Z3, Y5
	VADDPS        Y5, Y3, Y3
	VEXTRACTF64X4 $1, Z4, Y5
	VADDPS        Y5, Y4, Y4
	DOTREDUCE(Y1, X1, Y0, X0)
	VMOVSS X1, (DI)
	DOTREDUCE(Y2, X2, Y0, X0)
	VMOVSS X2, 4(DI)
	DOTREDUCE(Y3, X3, Y0, X0)
	VMOVSS X3, 8(DI)
	DOTREDUCE(Y4, X4, Y0, X0)
	VMOVSS X4, 12(DI)
	VZEROUPPER
	RET
