// Dot products of one row of A with four rows of B, for the products of
// few rows by a transposed matrix (sgemm_dot.go). Go declarations are in
// sdot_amd64.go.

#include "textflag.h"

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

// func dot4F32(x, b0, b1, b2, b3 *float32, k int, out *float32)
// out[r] = Σ x[t]·br[t] over t < k (a multiple of 16): each row keeps 16
// partial sums (two YMM registers, lanes t mod 16) added in order of t,
// then reduced by DOTREDUCE.
TEXT ·dot4F32(SB), NOSPLIT, $0-56
	MOVQ   x+0(FP), SI
	MOVQ   b0+8(FP), R8
	MOVQ   b1+16(FP), R9
	MOVQ   b2+24(FP), R10
	MOVQ   b3+32(FP), R11
	MOVQ   k+40(FP), CX
	MOVQ   out+48(FP), DI
	SHLQ   $2, CX
	XORQ   AX, AX
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
	JGE         reduce
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
// dot4F32 with one ZMM register of partial sums per row.
TEXT ·dot4F32x512(SB), NOSPLIT, $0-56
	MOVQ   x+0(FP), SI
	MOVQ   b0+8(FP), R8
	MOVQ   b1+16(FP), R9
	MOVQ   b2+24(FP), R10
	MOVQ   b3+32(FP), R11
	MOVQ   k+40(FP), CX
	MOVQ   out+48(FP), DI
	SHLQ   $2, CX
	XORQ   AX, AX
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4

loopz:
	CMPQ        AX, CX
	JGE         reducez
	VMOVUPS     (SI)(AX*1), Z0
	VFMADD231PS (R8)(AX*1), Z0, Z1
	VFMADD231PS (R9)(AX*1), Z0, Z2
	VFMADD231PS (R10)(AX*1), Z0, Z3
	VFMADD231PS (R11)(AX*1), Z0, Z4
	ADDQ        $64, AX
	JMP         loopz

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
