// AVX-512 (ZMM) versions of the elementwise kernels of vec_amd64.s (see
// vec.go): the same operations on each element, with the same operand
// order, so the results are those of the AVX2 kernels bit for bit (sumF32
// apart, which adds in another order). Each loop does 64 values per
// iteration, then 16, then the last 1 to 15 under a K-register mask, so
// any n works and nothing past the n-th element is read or written (masked
// loads suppress faults on the masked-out lanes). Uses AVX-512 F, and VL
// for the masked YMM loads of sumF32x512 and accF32x512. Written by hand;
// Go declarations are in kernels512_amd64.go.

#include "textflag.h"

// TAILMASK sets K1 to the low n bits (n in CX, 0 ≤ n < 16), using AX.
#define TAILMASK \
	MOVL  $1, AX;  \
	SHLL  CX, AX;  \
	DECL  AX;      \
	KMOVW AX, K1

// Registers: DI d, SI a, DX b, CX n left; Z15 the scalar or zero; K1 the
// tail mask.

// ZBINBODY computes d = a OPPS b.
#define ZBINBODY(OPPS) \
	MOVQ d+0(FP), DI;  \
	MOVQ a+8(FP), SI;  \
	MOVQ b+16(FP), DX; \
	MOVQ n+24(FP), CX; \
loop64:; \
	CMPQ    CX, $64;         \
	JLT     loop16;          \
	VMOVUPS (SI), Z0;        \
	VMOVUPS 64(SI), Z1;      \
	VMOVUPS 128(SI), Z2;     \
	VMOVUPS 192(SI), Z3;     \
	OPPS    (DX), Z0, Z0;    \
	OPPS    64(DX), Z1, Z1;  \
	OPPS    128(DX), Z2, Z2; \
	OPPS    192(DX), Z3, Z3; \
	VMOVUPS Z0, (DI);        \
	VMOVUPS Z1, 64(DI);      \
	VMOVUPS Z2, 128(DI);     \
	VMOVUPS Z3, 192(DI);     \
	ADDQ    $256, SI;        \
	ADDQ    $256, DX;        \
	ADDQ    $256, DI;        \
	SUBQ    $64, CX;         \
	JMP     loop64;          \
loop16:; \
	CMPQ    CX, $16;         \
	JLT     tail;            \
	VMOVUPS (SI), Z0;        \
	OPPS    (DX), Z0, Z0;    \
	VMOVUPS Z0, (DI);        \
	ADDQ    $64, SI;         \
	ADDQ    $64, DX;         \
	ADDQ    $64, DI;         \
	SUBQ    $16, CX;         \
	JMP     loop16;          \
tail:; \
	TESTQ     CX, CX;          \
	JEQ       done;            \
	TAILMASK;                  \
	VMOVUPS.Z (SI), K1, Z0;    \
	VMOVUPS.Z (DX), K1, Z1;    \
	OPPS      Z1, Z0, Z0;      \
	VMOVUPS   Z0, K1, (DI);    \
done:; \
	VZEROUPPER; \
	RET

// ZSCALBODY computes d = a OPPS s (s broadcast in Z15).
#define ZSCALBODY(OPPS) \
	MOVQ         d+0(FP), DI;   \
	MOVQ         a+8(FP), SI;   \
	VBROADCASTSS s+16(FP), Z15; \
	MOVQ         n+24(FP), CX;  \
loop64:; \
	CMPQ    CX, $64;        \
	JLT     loop16;         \
	VMOVUPS (SI), Z0;       \
	VMOVUPS 64(SI), Z1;     \
	VMOVUPS 128(SI), Z2;    \
	VMOVUPS 192(SI), Z3;    \
	OPPS    Z15, Z0, Z0;    \
	OPPS    Z15, Z1, Z1;    \
	OPPS    Z15, Z2, Z2;    \
	OPPS    Z15, Z3, Z3;    \
	VMOVUPS Z0, (DI);       \
	VMOVUPS Z1, 64(DI);     \
	VMOVUPS Z2, 128(DI);    \
	VMOVUPS Z3, 192(DI);    \
	ADDQ    $256, SI;       \
	ADDQ    $256, DI;       \
	SUBQ    $64, CX;        \
	JMP     loop64;         \
loop16:; \
	CMPQ    CX, $16;        \
	JLT     tail;           \
	VMOVUPS (SI), Z0;       \
	OPPS    Z15, Z0, Z0;    \
	VMOVUPS Z0, (DI);       \
	ADDQ    $64, SI;        \
	ADDQ    $64, DI;        \
	SUBQ    $16, CX;        \
	JMP     loop16;         \
tail:; \
	TESTQ     CX, CX;       \
	JEQ       done;         \
	TAILMASK;               \
	VMOVUPS.Z (SI), K1, Z0; \
	OPPS      Z15, Z0, Z0;  \
	VMOVUPS   Z0, K1, (DI); \
done:; \
	VZEROUPPER; \
	RET

// func addF32x512(d, a, b *float32, n int)
TEXT ·addF32x512(SB), NOSPLIT, $0-32
	ZBINBODY(VADDPS)

// func subF32x512(d, a, b *float32, n int)
TEXT ·subF32x512(SB), NOSPLIT, $0-32
	ZBINBODY(VSUBPS)

// func mulF32x512(d, a, b *float32, n int)
TEXT ·mulF32x512(SB), NOSPLIT, $0-32
	ZBINBODY(VMULPS)

// func divF32x512(d, a, b *float32, n int)
TEXT ·divF32x512(SB), NOSPLIT, $0-32
	ZBINBODY(VDIVPS)

// func addScalarF32x512(d, a *float32, s float32, n int)
TEXT ·addScalarF32x512(SB), NOSPLIT, $0-32
	ZSCALBODY(VADDPS)

// func subScalarF32x512(d, a *float32, s float32, n int)
TEXT ·subScalarF32x512(SB), NOSPLIT, $0-32
	ZSCALBODY(VSUBPS)

// func mulScalarF32x512(d, a *float32, s float32, n int)
TEXT ·mulScalarF32x512(SB), NOSPLIT, $0-32
	ZSCALBODY(VMULPS)

// func divScalarF32x512(d, a *float32, s float32, n int)
TEXT ·divScalarF32x512(SB), NOSPLIT, $0-32
	ZSCALBODY(VDIVPS)

// func reluF32x512(d, a *float32, n int)
// d = max(a, 0) with a as the second source of VMAXPS, so a NaN or −0 in a
// is passed through, as in reluF32.
TEXT ·reluF32x512(SB), NOSPLIT, $0-24
	MOVQ   d+0(FP), DI
	MOVQ   a+8(FP), SI
	MOVQ   n+16(FP), CX
	VPXORD Z15, Z15, Z15

relu64:
	CMPQ    CX, $64
	JLT     relu16
	VMAXPS  (SI), Z15, Z0
	VMAXPS  64(SI), Z15, Z1
	VMAXPS  128(SI), Z15, Z2
	VMAXPS  192(SI), Z15, Z3
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, SI
	ADDQ    $256, DI
	SUBQ    $64, CX
	JMP     relu64

relu16:
	CMPQ    CX, $16
	JLT     relutail
	VMAXPS  (SI), Z15, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     relu16

relutail:
	TESTQ     CX, CX
	JEQ       reludone
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	VMAXPS    Z0, Z15, Z0
	VMOVUPS   Z0, K1, (DI)

reludone:
	VZEROUPPER
	RET

// func sqrtF32x512(d, a *float32, n int)
// sqrtF32 on ZMM registers (the same bits); the tail through a mask.
TEXT ·sqrtF32x512(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX

sqrt64:
	CMPQ    CX, $64
	JLT     sqrt16
	VSQRTPS (SI), Z0
	VSQRTPS 64(SI), Z1
	VSQRTPS 128(SI), Z2
	VSQRTPS 192(SI), Z3
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, SI
	ADDQ    $256, DI
	SUBQ    $64, CX
	JMP     sqrt64

sqrt16:
	CMPQ    CX, $16
	JLT     sqrttail
	VSQRTPS (SI), Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     sqrt16

sqrttail:
	TESTQ     CX, CX
	JEQ       sqrtdone
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	VSQRTPS   Z0, Z0
	VMOVUPS   Z0, K1, (DI)

sqrtdone:
	VZEROUPPER
	RET

// func reluGradF32x512(d, a, b *float32, n int)
// d = b where 0 < a, else +0 (an ordered compare: a NaN a gives 0): the
// compare sets K1 and a zero-masked load of b does the rest.
TEXT ·reluGradF32x512(SB), NOSPLIT, $0-32
	MOVQ   d+0(FP), DI
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DX
	MOVQ   n+24(FP), CX
	VPXORD Z15, Z15, Z15

rg64:
	CMPQ      CX, $64
	JLT       rg16
	VCMPPS    $0x11, (SI), Z15, K2
	VCMPPS    $0x11, 64(SI), Z15, K3
	VCMPPS    $0x11, 128(SI), Z15, K4
	VCMPPS    $0x11, 192(SI), Z15, K5
	VMOVUPS.Z (DX), K2, Z0
	VMOVUPS.Z 64(DX), K3, Z1
	VMOVUPS.Z 128(DX), K4, Z2
	VMOVUPS.Z 192(DX), K5, Z3
	VMOVUPS   Z0, (DI)
	VMOVUPS   Z1, 64(DI)
	VMOVUPS   Z2, 128(DI)
	VMOVUPS   Z3, 192(DI)
	ADDQ      $256, SI
	ADDQ      $256, DX
	ADDQ      $256, DI
	SUBQ      $64, CX
	JMP       rg64

rg16:
	CMPQ      CX, $16
	JLT       rgtail
	VCMPPS    $0x11, (SI), Z15, K2
	VMOVUPS.Z (DX), K2, Z0
	VMOVUPS   Z0, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DX
	ADDQ      $64, DI
	SUBQ      $16, CX
	JMP       rg16

rgtail:
	TESTQ     CX, CX
	JEQ       rgdone
	TAILMASK
	VMOVUPS.Z (SI), K1, Z1 // the lanes past n are 0: not above 0
	VCMPPS    $0x11, Z1, Z15, K2
	VMOVUPS.Z (DX), K2, Z0
	VMOVUPS   Z0, K1, (DI)

rgdone:
	VZEROUPPER
	RET

// func copyRowsF32x512(d, s *float32, rows, width, ldd, lds int)
// Copies rows runs of width values (width ≥ 1) from s (rows lds apart) to
// d (rows ldd apart): 16 values per move, the last 1 to 15 of a run under
// the mask K1.
TEXT ·copyRowsF32x512(SB), NOSPLIT, $0-48
	MOVQ  d+0(FP), DI
	MOVQ  s+8(FP), SI
	MOVQ  rows+16(FP), R8
	MOVQ  width+24(FP), R11
	MOVQ  ldd+32(FP), R9
	MOVQ  lds+40(FP), R10
	SHLQ  $2, R9
	SHLQ  $2, R10
	MOVQ  R11, CX
	ANDQ  $15, CX
	TAILMASK
	SHRQ  $4, R11
	SHLQ  $6, R11 // bytes in a run's whole groups of 16

cprow:
	TESTQ R8, R8
	JEQ   cpdone
	XORQ  AX, AX

cpchunk:
	CMPQ    AX, R11
	JGE     cplast
	VMOVUPS (SI)(AX*1), Z0
	VMOVUPS Z0, (DI)(AX*1)
	ADDQ    $64, AX
	JMP     cpchunk

cplast:
	VMOVUPS.Z (SI)(AX*1), K1, Z0
	VMOVUPS   Z0, K1, (DI)(AX*1)
	ADDQ      R9, DI
	ADDQ      R10, SI
	DECQ      R8
	JMP       cprow

cpdone:
	VZEROUPPER
	RET

// func addRowsF32x512(d, s *float32, rows, width, ldd, lds int)
// Adds rows runs of width values from s (rows lds apart) into d (rows ldd
// apart): 16 values per step, the last 1 to 15 of a run under K1; each sum
// is s + d, as in addRowsF32.
TEXT ·addRowsF32x512(SB), NOSPLIT, $0-48
	MOVQ  d+0(FP), DI
	MOVQ  s+8(FP), SI
	MOVQ  rows+16(FP), R8
	MOVQ  width+24(FP), R11
	MOVQ  ldd+32(FP), R9
	MOVQ  lds+40(FP), R10
	SHLQ  $2, R9
	SHLQ  $2, R10
	MOVQ  R11, CX
	ANDQ  $15, CX
	TAILMASK
	SHRQ  $4, R11
	SHLQ  $6, R11

adrow:
	TESTQ R8, R8
	JEQ   addone
	XORQ  AX, AX

ad16:
	CMPQ    AX, R11
	JGE     adlast
	VMOVUPS (SI)(AX*1), Z0
	VADDPS  (DI)(AX*1), Z0, Z0
	VMOVUPS Z0, (DI)(AX*1)
	ADDQ    $64, AX
	JMP     ad16

adlast:
	VMOVUPS.Z (SI)(AX*1), K1, Z0
	VMOVUPS.Z (DI)(AX*1), K1, Z1
	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (DI)(AX*1)
	ADDQ      R9, DI
	ADDQ      R10, SI
	DECQ      R8
	JMP       adrow

addone:
	VZEROUPPER
	RET

// func sumF32x512(s *float32, n int) float64
// Sums n values in float64: 32 per step into four 8-lane accumulators, then
// 8 per step, then the last 1 to 7 under a mask; the accumulators are then
// added pairwise. The order differs from sumF32's (8-lane instead of
// 4-lane accumulators, the tail in a vector), so the two agree only to
// within the rounding of float64 sums: |sumF32x512 − Σ| ≤ (n+8)·2⁻⁵³·Σ|s|
// (kernels512_test.go checks 1e-12 relative to Σ|s|).
TEXT ·sumF32x512(SB), NOSPLIT, $0-24
	MOVQ   s+0(FP), SI
	MOVQ   n+8(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3

sum32:
	CMPQ      CX, $32
	JLT       sum8
	VCVTPS2PD (SI), Z4
	VCVTPS2PD 32(SI), Z5
	VCVTPS2PD 64(SI), Z6
	VCVTPS2PD 96(SI), Z7
	VADDPD    Z4, Z0, Z0
	VADDPD    Z5, Z1, Z1
	VADDPD    Z6, Z2, Z2
	VADDPD    Z7, Z3, Z3
	ADDQ      $128, SI
	SUBQ      $32, CX
	JMP       sum32

sum8:
	CMPQ      CX, $8
	JLT       sumtail
	VCVTPS2PD (SI), Z4
	VADDPD    Z4, Z0, Z0
	ADDQ      $32, SI
	SUBQ      $8, CX
	JMP       sum8

sumtail:
	TESTQ     CX, CX
	JEQ       sumfold
	TAILMASK
	VMOVUPS.Z (SI), K1, Y4 // +0 past n
	VCVTPS2PD Y4, Z4
	VADDPD    Z4, Z1, Z1

sumfold:
	VADDPD        Z1, Z0, Z0
	VADDPD        Z3, Z2, Z2
	VADDPD        Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPD        X1, X0, X0
	VHADDPD       X0, X0, X0
	VMOVSD        X0, ret+16(FP)
	VZEROUPPER
	RET

// func accF32x512(acc *float64, s *float32, n int)
// acc[i] += float64(s[i]) for i < n, each sum float64(s[i]) + acc[i] as in
// accF32: 16 per step, then 8, then the last 1 to 7 under a mask.
TEXT ·accF32x512(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), DI
	MOVQ s+8(FP), SI
	MOVQ n+16(FP), CX

acc16:
	CMPQ      CX, $16
	JLT       acc8
	VCVTPS2PD (SI), Z0
	VCVTPS2PD 32(SI), Z1
	VADDPD    (DI), Z0, Z0
	VADDPD    64(DI), Z1, Z1
	VMOVUPD   Z0, (DI)
	VMOVUPD   Z1, 64(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	SUBQ      $16, CX
	JMP       acc16

acc8:
	CMPQ      CX, $8
	JLT       acctail
	VCVTPS2PD (SI), Z0
	VADDPD    (DI), Z0, Z0
	VMOVUPD   Z0, (DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $8, CX

acctail:
	TESTQ     CX, CX
	JEQ       accdone
	TAILMASK
	VMOVUPS.Z (SI), K1, Y0
	VCVTPS2PD Y0, Z0
	VMOVUPD.Z (DI), K1, Z1
	VADDPD    Z1, Z0, Z0
	VMOVUPD   Z0, K1, (DI)

accdone:
	VZEROUPPER
	RET
