// AVX2 kernels of the contiguous float32 elementwise ops (see vec.go):
// d[i] = a[i] op b[i], d[i] = a[i] op s, relu and its gradient. Each loop
// does 32 values per iteration, then 8, then one at a time, so any n
// works and nothing past the n-th element is read or written. Written by
// hand; Go declarations are in vec_amd64.go.

#include "textflag.h"

// Registers: DI d, SI a, DX b, CX n left; Y15 the scalar or zero.

// BINBODY computes d = a OPPS b, with OPSS for the scalar tail.
#define BINBODY(OPPS, OPSS) \
	MOVQ d+0(FP), DI;  \
	MOVQ a+8(FP), SI;  \
	MOVQ b+16(FP), DX; \
	MOVQ n+24(FP), CX; \
loop32:; \
	CMPQ    CX, $32;       \
	JLT     loop8;         \
	VMOVUPS (SI), Y0;      \
	VMOVUPS 32(SI), Y1;    \
	VMOVUPS 64(SI), Y2;    \
	VMOVUPS 96(SI), Y3;    \
	OPPS    (DX), Y0, Y0;  \
	OPPS    32(DX), Y1, Y1; \
	OPPS    64(DX), Y2, Y2; \
	OPPS    96(DX), Y3, Y3; \
	VMOVUPS Y0, (DI);      \
	VMOVUPS Y1, 32(DI);    \
	VMOVUPS Y2, 64(DI);    \
	VMOVUPS Y3, 96(DI);    \
	ADDQ    $128, SI;      \
	ADDQ    $128, DX;      \
	ADDQ    $128, DI;      \
	SUBQ    $32, CX;       \
	JMP     loop32;        \
loop8:; \
	CMPQ    CX, $8;        \
	JLT     tail;          \
	VMOVUPS (SI), Y0;      \
	OPPS    (DX), Y0, Y0;  \
	VMOVUPS Y0, (DI);      \
	ADDQ    $32, SI;       \
	ADDQ    $32, DX;       \
	ADDQ    $32, DI;       \
	SUBQ    $8, CX;        \
	JMP     loop8;         \
tail:; \
	TESTQ   CX, CX;        \
	JEQ     done;          \
	VMOVSS  (SI), X0;      \
	VMOVSS  (DX), X1;      \
	OPSS    X1, X0, X0;    \
	VMOVSS  X0, (DI);      \
	ADDQ    $4, SI;        \
	ADDQ    $4, DX;        \
	ADDQ    $4, DI;        \
	DECQ    CX;            \
	JMP     tail;          \
done:; \
	VZEROUPPER; \
	RET

// SCALBODY computes d = a OPPS s (s broadcast in Y15), with OPSS for the
// scalar tail.
#define SCALBODY(OPPS, OPSS) \
	MOVQ         d+0(FP), DI;  \
	MOVQ         a+8(FP), SI;  \
	VBROADCASTSS s+16(FP), Y15; \
	MOVQ         n+24(FP), CX; \
loop32:; \
	CMPQ    CX, $32;        \
	JLT     loop8;          \
	VMOVUPS (SI), Y0;       \
	VMOVUPS 32(SI), Y1;     \
	VMOVUPS 64(SI), Y2;     \
	VMOVUPS 96(SI), Y3;     \
	OPPS    Y15, Y0, Y0;    \
	OPPS    Y15, Y1, Y1;    \
	OPPS    Y15, Y2, Y2;    \
	OPPS    Y15, Y3, Y3;    \
	VMOVUPS Y0, (DI);       \
	VMOVUPS Y1, 32(DI);     \
	VMOVUPS Y2, 64(DI);     \
	VMOVUPS Y3, 96(DI);     \
	ADDQ    $128, SI;       \
	ADDQ    $128, DI;       \
	SUBQ    $32, CX;        \
	JMP     loop32;         \
loop8:; \
	CMPQ    CX, $8;         \
	JLT     tail;           \
	VMOVUPS (SI), Y0;       \
	OPPS    Y15, Y0, Y0;    \
	VMOVUPS Y0, (DI);       \
	ADDQ    $32, SI;        \
	ADDQ    $32, DI;        \
	SUBQ    $8, CX;         \
	JMP     loop8;          \
tail:; \
	TESTQ   CX, CX;         \
	JEQ     done;           \
	VMOVSS  (SI), X0;       \
	OPSS    X15, X0, X0;    \
	VMOVSS  X0, (DI);       \
	ADDQ    $4, SI;         \
	ADDQ    $4, DI;         \
	DECQ    CX;             \
	JMP     tail;           \
done:; \
	VZEROUPPER; \
	RET

// func addF32(d, a, b *float32, n int)
TEXT ·addF32(SB), NOSPLIT, $0-32
	BINBODY(VADDPS, VADDSS)

// func subF32(d, a, b *float32, n int)
TEXT ·subF32(SB), NOSPLIT, $0-32
	BINBODY(VSUBPS, VSUBSS)

// func mulF32(d, a, b *float32, n int)
TEXT ·mulF32(SB), NOSPLIT, $0-32
	BINBODY(VMULPS, VMULSS)

// func divF32(d, a, b *float32, n int)
TEXT ·divF32(SB), NOSPLIT, $0-32
	BINBODY(VDIVPS, VDIVSS)

// func addScalarF32(d, a *float32, s float32, n int)
TEXT ·addScalarF32(SB), NOSPLIT, $0-32
	SCALBODY(VADDPS, VADDSS)

// func subScalarF32(d, a *float32, s float32, n int)
TEXT ·subScalarF32(SB), NOSPLIT, $0-32
	SCALBODY(VSUBPS, VSUBSS)

// func mulScalarF32(d, a *float32, s float32, n int)
TEXT ·mulScalarF32(SB), NOSPLIT, $0-32
	SCALBODY(VMULPS, VMULSS)

// func divScalarF32(d, a *float32, s float32, n int)
TEXT ·divScalarF32(SB), NOSPLIT, $0-32
	SCALBODY(VDIVPS, VDIVSS)

// func reluF32(d, a *float32, n int)
// d = max(a, 0) with a as the second source of VMAXPS, so a NaN in a is
// passed through (as Go's max does).
TEXT ·reluF32(SB), NOSPLIT, $0-24
	MOVQ   d+0(FP), DI
	MOVQ   a+8(FP), SI
	MOVQ   n+16(FP), CX
	VXORPS Y15, Y15, Y15

relu32:
	CMPQ    CX, $32
	JLT     relu8
	VMAXPS  (SI), Y15, Y0
	VMAXPS  32(SI), Y15, Y1
	VMAXPS  64(SI), Y15, Y2
	VMAXPS  96(SI), Y15, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     relu32

relu8:
	CMPQ    CX, $8
	JLT     relutail
	VMAXPS  (SI), Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     relu8

relutail:
	TESTQ  CX, CX
	JEQ    reludone
	VMOVSS (SI), X0
	VMAXSS X0, X15, X0
	VMOVSS X0, (DI)
	ADDQ   $4, SI
	ADDQ   $4, DI
	DECQ   CX
	JMP    relutail

reludone:
	VZEROUPPER
	RET

// func sqrtF32(d, a *float32, n int)
// d = sqrt(a), correctly rounded (VSQRTPS), as float32(math.Sqrt(a)):
// the same bits for every input but the NaN of a negative one, which is
// the CPU's default NaN (sign set) here.
TEXT ·sqrtF32(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX

sqrt32:
	CMPQ    CX, $32
	JLT     sqrt8
	VSQRTPS (SI), Y0
	VSQRTPS 32(SI), Y1
	VSQRTPS 64(SI), Y2
	VSQRTPS 96(SI), Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     sqrt32

sqrt8:
	CMPQ    CX, $8
	JLT     sqrttail
	VSQRTPS (SI), Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     sqrt8

sqrttail:
	TESTQ   CX, CX
	JEQ     sqrtdone
	VMOVSS  (SI), X0
	VSQRTSS X0, X0, X0
	VMOVSS  X0, (DI)
	ADDQ    $4, SI
	ADDQ    $4, DI
	DECQ    CX
	JMP     sqrttail

sqrtdone:
	VZEROUPPER
	RET

// func reluGradF32(d, a, b *float32, n int)
// d = b where 0 < a, else 0 (an ordered compare: a NaN a gives 0).
TEXT ·reluGradF32(SB), NOSPLIT, $0-32
	MOVQ   d+0(FP), DI
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DX
	MOVQ   n+24(FP), CX
	VXORPS Y15, Y15, Y15

rg32:
	CMPQ    CX, $32
	JLT     rg8
	VCMPPS  $0x11, (SI), Y15, Y0
	VCMPPS  $0x11, 32(SI), Y15, Y1
	VCMPPS  $0x11, 64(SI), Y15, Y2
	VCMPPS  $0x11, 96(SI), Y15, Y3
	VANDPS  (DX), Y0, Y0
	VANDPS  32(DX), Y1, Y1
	VANDPS  64(DX), Y2, Y2
	VANDPS  96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     rg32

rg8:
	CMPQ    CX, $8
	JLT     rgtail
	VCMPPS  $0x11, (SI), Y15, Y0
	VANDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     rg8

rgtail:
	TESTQ  CX, CX
	JEQ    rgdone
	VMOVSS (SI), X0
	VMOVSS (DX), X1
	VCMPSS $0x1e, X15, X0, X0
	VANDPS X1, X0, X0
	VMOVSS X0, (DI)
	ADDQ   $4, SI
	ADDQ   $4, DX
	ADDQ   $4, DI
	DECQ   CX
	JMP    rgtail

rgdone:
	VZEROUPPER
	RET

// func copyRowsF32(d, s *float32, rows, width, ldd, lds int)
// Copies rows runs of width values (width ≥ 8) from s (rows lds apart) to
// d (rows ldd apart), 8 values per move; the last move of a run is the
// run's last 8 values, overlapping the previous move, so nothing outside
// the runs is read or written.
TEXT ·copyRowsF32(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), DI
	MOVQ s+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ width+24(FP), R11
	MOVQ ldd+32(FP), R9
	MOVQ lds+40(FP), R10
	SHLQ $2, R11
	SUBQ $32, R11          // byte offset of a run's last 8 values
	SHLQ $2, R9
	SHLQ $2, R10

cprow:
	TESTQ R8, R8
	JEQ   cpdone
	XORQ  AX, AX

cpchunk:
	CMPQ    AX, R11
	JGE     cplast
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ    $32, AX
	JMP     cpchunk

cplast:
	VMOVUPS (SI)(R11*1), Y0
	VMOVUPS Y0, (DI)(R11*1)
	ADDQ    R9, DI
	ADDQ    R10, SI
	DECQ    R8
	JMP     cprow

cpdone:
	VZEROUPPER
	RET

// func addRowsF32(d, s *float32, rows, width, ldd, lds int)
// Adds rows runs of width values from s (rows lds apart) into d (rows ldd
// apart): 8 values per step, then one at a time.
TEXT ·addRowsF32(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), DI
	MOVQ s+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ width+24(FP), R11
	MOVQ ldd+32(FP), R9
	MOVQ lds+40(FP), R10
	SHLQ $2, R9
	SHLQ $2, R10

adrow:
	TESTQ R8, R8
	JEQ   addone
	XORQ  AX, AX
	MOVQ  R11, CX

ad8:
	CMPQ    CX, $8
	JLT     adtail
	VMOVUPS (SI)(AX*4), Y0
	VADDPS  (DI)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	SUBQ    $8, CX
	JMP     ad8

adtail:
	TESTQ  CX, CX
	JEQ    adnext
	VMOVSS (SI)(AX*4), X0
	VADDSS (DI)(AX*4), X0, X0
	VMOVSS X0, (DI)(AX*4)
	INCQ   AX
	DECQ   CX
	JMP    adtail

adnext:
	ADDQ R9, DI
	ADDQ R10, SI
	DECQ R8
	JMP  adrow

addone:
	VZEROUPPER
	RET

// func sumF32(s *float32, n int) float64
// Sums n values in float64: 16 per step into four 4-lane accumulators,
// which are then added pairwise, then the tail one at a time.
TEXT ·sumF32(SB), NOSPLIT, $0-24
	MOVQ   s+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

sum16:
	CMPQ      CX, $16
	JLT       sumfold
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ      $64, SI
	SUBQ      $16, CX
	JMP       sum16

sumfold:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VHADDPD      X0, X0, X0

sumtail:
	TESTQ     CX, CX
	JEQ       sumdone
	VMOVSS    (SI), X1
	VCVTSS2SD X1, X1, X1
	VADDSD    X1, X0, X0
	ADDQ      $4, SI
	DECQ      CX
	JMP       sumtail

sumdone:
	VMOVSD X0, ret+16(FP)
	VZEROUPPER
	RET

// func accF32(acc *float64, s *float32, n int)
// acc[i] += float64(s[i]) for i < n: 8 per step, then one at a time.
TEXT ·accF32(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), DI
	MOVQ s+8(FP), SI
	MOVQ n+16(FP), CX

acc8:
	CMPQ      CX, $8
	JLT       acctail
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VADDPD    (DI), Y0, Y0
	VADDPD    32(DI), Y1, Y1
	VMOVUPD   Y0, (DI)
	VMOVUPD   Y1, 32(DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $8, CX
	JMP       acc8

acctail:
	TESTQ     CX, CX
	JEQ       accdone
	VMOVSS    (SI), X0
	VCVTSS2SD X0, X0, X0
	VADDSD    (DI), X0, X0
	VMOVSD    X0, (DI)
	ADDQ      $4, SI
	ADDQ      $8, DI
	DECQ      CX
	JMP       acctail

accdone:
	VZEROUPPER
	RET

// func prefetchF32(p *float32, n int)
// Asks for the cache lines of the n values at p (PREFETCHT0 on each
// 64-byte line they touch, from the line holding p): a hint, which never
// faults.
TEXT ·prefetchF32(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ (SI)(CX*4), CX
	ANDQ $-64, SI

pfloop:
	CMPQ       SI, CX
	JGE        pfdone
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	JMP        pfloop

pfdone:
	RET
