// AVX-512 (ZMM) versions of the 2×2, stride-2 max-pooling kernels of
// pool_amd64.s (pool_fast.go). They keep the groups of 8 windows of the
// AVX2 kernels and do two groups (16 windows) per iteration, then a last
// odd group in the low halves of the registers. The 32 inputs of a row
// under 16 windows split into their even and odd columns with VPERMI2PS,
// which leaves the windows in order (no lane fix-up as in the AVX2
// kernels), and the backward pass interleaves its results back with
// VPERMI2PS too; its masks are K registers. Every window gets the same
// operations as in the AVX2 kernels, so the results are the same bit for
// bit. Uses AVX-512 F only. Written by hand; Go declarations in
// kernels512_amd64.go.
//
// The permutation indices below are also used by winograd512_amd64.s.

#include "textflag.h"

// zmmEven: 0, 2, …, 30, the even lanes of two ZMM registers.
DATA ·zmmEven+0(SB)/8, $0x0000000200000000
DATA ·zmmEven+8(SB)/8, $0x0000000600000004
DATA ·zmmEven+16(SB)/8, $0x0000000a00000008
DATA ·zmmEven+24(SB)/8, $0x0000000e0000000c
DATA ·zmmEven+32(SB)/8, $0x0000001200000010
DATA ·zmmEven+40(SB)/8, $0x0000001600000014
DATA ·zmmEven+48(SB)/8, $0x0000001a00000018
DATA ·zmmEven+56(SB)/8, $0x0000001e0000001c
GLOBL ·zmmEven(SB), RODATA|NOPTR, $64

// zmmOdd: 1, 3, …, 31, the odd lanes.
DATA ·zmmOdd+0(SB)/8, $0x0000000300000001
DATA ·zmmOdd+8(SB)/8, $0x0000000700000005
DATA ·zmmOdd+16(SB)/8, $0x0000000b00000009
DATA ·zmmOdd+24(SB)/8, $0x0000000f0000000d
DATA ·zmmOdd+32(SB)/8, $0x0000001300000011
DATA ·zmmOdd+40(SB)/8, $0x0000001700000015
DATA ·zmmOdd+48(SB)/8, $0x0000001b00000019
DATA ·zmmOdd+56(SB)/8, $0x0000001f0000001d
GLOBL ·zmmOdd(SB), RODATA|NOPTR, $64

// zmmZipLo: 0, 16, 1, 17, …, 7, 23, lanes 0–7 of two registers
// interleaved.
DATA ·zmmZipLo+0(SB)/8, $0x0000001000000000
DATA ·zmmZipLo+8(SB)/8, $0x0000001100000001
DATA ·zmmZipLo+16(SB)/8, $0x0000001200000002
DATA ·zmmZipLo+24(SB)/8, $0x0000001300000003
DATA ·zmmZipLo+32(SB)/8, $0x0000001400000004
DATA ·zmmZipLo+40(SB)/8, $0x0000001500000005
DATA ·zmmZipLo+48(SB)/8, $0x0000001600000006
DATA ·zmmZipLo+56(SB)/8, $0x0000001700000007
GLOBL ·zmmZipLo(SB), RODATA|NOPTR, $64

// zmmZipHi: 8, 24, 9, 25, …, 15, 31, lanes 8–15 interleaved.
DATA ·zmmZipHi+0(SB)/8, $0x0000001800000008
DATA ·zmmZipHi+8(SB)/8, $0x0000001900000009
DATA ·zmmZipHi+16(SB)/8, $0x0000001a0000000a
DATA ·zmmZipHi+24(SB)/8, $0x0000001b0000000b
DATA ·zmmZipHi+32(SB)/8, $0x0000001c0000000c
DATA ·zmmZipHi+40(SB)/8, $0x0000001d0000000d
DATA ·zmmZipHi+48(SB)/8, $0x0000001e0000000e
DATA ·zmmZipHi+56(SB)/8, $0x0000001f0000000f
GLOBL ·zmmZipHi(SB), RODATA|NOPTR, $64

// Registers of both kernels: Z13 and Z14 the even and odd indices; SI and
// DX the input rows r0 and r1.

// PSPLIT splits the 32 values lo:hi into their even (E) and odd (O)
// columns, 16 windows in order.
#define PSPLIT(lo, hi, E, O) \
	VMOVAPS   Z13, E;    \
	VPERMI2PS hi, lo, E; \
	VMOVAPS   Z14, O;    \
	VPERMI2PS hi, lo, O

// PLOAD2 loads 16 windows: a, b (row 0 even, odd) in Z4, Z5 and c, d
// (row 1) in Z6, Z7.
#define PLOAD2 \
	VMOVUPS (SI), Z0;          \
	VMOVUPS 64(SI), Z1;        \
	VMOVUPS (DX), Z2;          \
	VMOVUPS 64(DX), Z3;        \
	PSPLIT(Z0, Z1, Z4, Z5);    \
	PSPLIT(Z2, Z3, Z6, Z7)

// PLOAD1 is PLOAD2 for 8 windows, in the low halves of Z4…Z7 (the high
// halves come from whatever Z1 and Z3 hold and are not used).
#define PLOAD1 \
	VMOVUPS (SI), Z0;          \
	VMOVUPS (DX), Z2;          \
	PSPLIT(Z0, Z1, Z4, Z5);    \
	PSPLIT(Z2, Z3, Z6, Z7)

// PLOADM is PLOAD2 for the last 1–15 windows of a row: only the inputs
// under the masks lo (the first 16) and hi (the next 16) are loaded, the
// other lanes are zero.
#define PLOADM(lo, hi) \
	VMOVUPS.Z (SI), lo, Z0;   \
	VMOVUPS.Z 64(SI), hi, Z1; \
	VMOVUPS.Z (DX), lo, Z2;   \
	VMOVUPS.Z 64(DX), hi, Z3; \
	PSPLIT(Z0, Z1, Z4, Z5);   \
	PSPLIT(Z2, Z3, Z6, Z7)

// PMAX computes the maxima of the windows in Z4…Z7 into Z8 as
// maxPool2x2RowF32 does: VMAXPS in the same operand order, the sign of a
// zero maximum negative only if every input's is (Z12 = 0x7FFFFFFF), and
// all ones (a NaN) where any input is NaN (Z11 = all ones).
#define PMAX \
	VMAXPS     Z5, Z4, Z8;       \
	VMAXPS     Z7, Z6, Z9;       \
	VMAXPS     Z9, Z8, Z8;       \
	VPANDD     Z5, Z4, Z10;      \
	VPANDD     Z6, Z10, Z10;     \
	VPANDD     Z7, Z10, Z10;     \
	VPORD      Z12, Z10, Z10;    \
	VPANDD     Z10, Z8, Z8;      \
	VCMPPS     $3, Z5, Z4, K1;   \
	VCMPPS     $3, Z7, Z6, K2;   \
	KORW       K2, K1, K1;       \
	VMOVDQU32  Z11, K1, Z8

// func maxPool2x2RowF32x512(y, r0, r1 *float32, groups int)
//
// y[i] = max(r0[2i], r0[2i+1], r1[2i], r1[2i+1]) for i < 8·groups, with
// Go's max: NaN if any input is NaN, and +0 over −0.
TEXT ·maxPool2x2RowF32x512(SB), NOSPLIT, $0-32
	MOVQ       y+0(FP), DI
	MOVQ       r0+8(FP), SI
	MOVQ       r1+16(FP), DX
	MOVQ       groups+24(FP), CX
	VMOVUPS    ·zmmEven(SB), Z13
	VMOVUPS    ·zmmOdd(SB), Z14
	VPTERNLOGD $0xff, Z11, Z11, Z11 // all ones
	VPSRLD     $1, Z11, Z12         // 0x7FFFFFFF

fwd2:
	CMPQ    CX, $2
	JLT     fwd1
	PLOAD2
	PMAX
	VMOVUPS Z8, (DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $64, DI
	SUBQ    $2, CX
	JMP     fwd2

fwd1:
	TESTQ   CX, CX
	JEQ     fwddone
	PLOAD1
	PMAX
	VMOVUPS Y8, (DI)

fwddone:
	VZEROUPPER
	RET

// PBACK computes the gradients of the windows in Z4…Z7 from their maxima
// y (Z8) and gradients g (Z9), as maxPool2x2BackRowF32 does with vector
// masks: K1 = a == y, K2 = (b == y) &^ K1, K4 = (c == y) &^ (K1|K2) and
// K5 the rest; each input gets g under its mask, else +0. The gradients
// of row 0 interleaved are then in Z0 (windows 0–7) and Z1 (8–15), those
// of row 1 in Z2 and Z3 (Z15 = zmmZipLo, Z10 = zmmZipHi).
#define PBACK \
	VCMPPS    $0, Z8, Z4, K1;    \
	VCMPPS    $0, Z8, Z5, K2;    \
	KANDNW    K2, K1, K2;        \
	KORW      K2, K1, K3;        \
	VCMPPS    $0, Z8, Z6, K4;    \
	KANDNW    K4, K3, K4;        \
	KORW      K4, K3, K3;        \
	KNOTW     K3, K5;            \
	VMOVAPS.Z Z9, K1, Z4;        \
	VMOVAPS.Z Z9, K2, Z5;        \
	VMOVAPS.Z Z9, K4, Z6;        \
	VMOVAPS.Z Z9, K5, Z7;        \
	VMOVAPS   Z15, Z0;           \
	VPERMI2PS Z5, Z4, Z0;        \
	VMOVAPS   Z10, Z1;           \
	VPERMI2PS Z5, Z4, Z1;        \
	VMOVAPS   Z15, Z2;           \
	VPERMI2PS Z7, Z6, Z2;        \
	VMOVAPS   Z10, Z3;           \
	VPERMI2PS Z7, Z6, Z3

// PBACKSTORE2 stores PBACK's gradients of 16 windows into d0 (DI) and d1
// (R8) and moves every pointer past those windows.
#define PBACKSTORE2 \
	VMOVUPS Z0, (DI);   \
	VMOVUPS Z1, 64(DI); \
	VMOVUPS Z2, (R8);   \
	VMOVUPS Z3, 64(R8); \
	ADDQ    $128, SI;   \
	ADDQ    $128, DX;   \
	ADDQ    $128, DI;   \
	ADDQ    $128, R8;   \
	ADDQ    $64, R9;    \
	ADDQ    $64, R10

// func maxPool2x2BackRowF32x512(d0, d1, r0, r1, y, dy *float32, groups int) int
//
// For each of 8·groups windows, writes dy[i] to the first of its inputs
// r0[2i], r0[2i+1], r1[2i], r1[2i+1] that equals y[i] (into the same
// places of d0 and d1) and 0 to the other three. It stops before the first
// group of 8 whose y holds a NaN and returns how many windows it did, as
// maxPool2x2BackRowF32 does: a pair of groups with a NaN is retried one
// group at a time.
TEXT ·maxPool2x2BackRowF32x512(SB), NOSPLIT, $0-64
	MOVQ    d0+0(FP), DI
	MOVQ    d1+8(FP), R8
	MOVQ    r0+16(FP), SI
	MOVQ    r1+24(FP), DX
	MOVQ    y+32(FP), R9
	MOVQ    dy+40(FP), R10
	MOVQ    groups+48(FP), CX
	XORQ    BX, BX
	VMOVUPS ·zmmEven(SB), Z13
	VMOVUPS ·zmmOdd(SB), Z14
	VMOVUPS ·zmmZipLo(SB), Z15
	VMOVUPS ·zmmZipHi(SB), Z10

bwd2:
	CMPQ     CX, $2
	JLT      bwd1
	VMOVUPS  (R9), Z8
	VCMPPS   $3, Z8, Z8, K1
	KORTESTW K1, K1
	JNE      bwd1 // a NaN among the 16: one group at a time
	VMOVUPS  (R10), Z9
	PLOAD2
	PBACK
	PBACKSTORE2
	ADDQ     $16, BX
	SUBQ     $2, CX
	JMP      bwd2

bwd1:
	TESTQ    CX, CX
	JEQ      bwddone
	VMOVUPS  (R9), Y8 // the high half is zeroed
	VCMPPS   $3, Z8, Z8, K1
	KORTESTW K1, K1
	JNE      bwddone
	VMOVUPS  (R10), Y9
	PLOAD1
	PBACK
	VMOVUPS  Z0, (DI)
	VMOVUPS  Z2, (R8)
	ADDQ     $64, SI
	ADDQ     $64, DX
	ADDQ     $64, DI
	ADDQ     $64, R8
	ADDQ     $32, R9
	ADDQ     $32, R10
	ADDQ     $8, BX
	DECQ     CX
	JMP      bwd2

bwddone:
	MOVQ BX, ret+56(FP)
	VZEROUPPER
	RET

// ROWMASKS sets, for the w = CX (0–15) last windows of a row, K5 to
// their w outputs and K3 and K4 to the low and high 16 of their 2w inputs:
// (1 << 2w) − 1 split in two. Clobbers BX and CX.
#define ROWMASKS \
	MOVL  $1, BX;  \
	SHLL  CX, BX;  \
	DECL  BX;      \
	KMOVW BX, K5;  \
	SHLL  $1, CX;  \
	MOVL  $1, BX;  \
	SHLL  CX, BX;  \
	DECL  BX;      \
	KMOVW BX, K3;  \
	SHRL  $16, BX; \
	KMOVW BX, K4

// func maxPool2x2RowsF32x512(y, x *float32, rows, outW, inW int)
//
// maxPool2x2RowF32x512 over rows output rows of outW windows each: output
// row r (outW values from y + r·outW) pools input rows 2r and 2r+1 of x
// (inW values apart). Full groups of 16 windows as in
// maxPool2x2RowF32x512; the last 1–15 windows of a row load only their
// inputs (masked, zeroing) and store only their outputs, so nothing past
// 2·outW inputs of a row nor past outW outputs is touched.
TEXT ·maxPool2x2RowsF32x512(SB), NOSPLIT, $0-40
	MOVQ       y+0(FP), DI
	MOVQ       x+8(FP), R9
	MOVQ       rows+16(FP), R8
	MOVQ       outW+24(FP), R10
	MOVQ       inW+32(FP), R11
	SHLQ       $2, R11
	VMOVUPS    ·zmmEven(SB), Z13
	VMOVUPS    ·zmmOdd(SB), Z14
	VPTERNLOGD $0xff, Z11, Z11, Z11 // all ones
	VPSRLD     $1, Z11, Z12         // 0x7FFFFFFF

	MOVQ R10, AX
	ANDQ $15, AX
	MOVQ AX, CX
	ROWMASKS

rowsLoop:
	TESTQ R8, R8
	JEQ   rowsDone
	MOVQ  R9, SI
	LEAQ  (R9)(R11*1), DX
	MOVQ  R10, BX
	SHRQ  $4, BX

rowsGroup:
	TESTQ   BX, BX
	JEQ     rowsTail
	PLOAD2
	PMAX
	VMOVUPS Z8, (DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $64, DI
	DECQ    BX
	JMP     rowsGroup

rowsTail:
	TESTQ     AX, AX
	JEQ       rowsNext
	PLOADM(K3, K4)
	PMAX
	VMOVUPS   Z8, K5, (DI)
	LEAQ      (DI)(AX*4), DI

rowsNext:
	LEAQ (R9)(R11*2), R9
	DECQ R8
	JMP  rowsLoop

rowsDone:
	VZEROUPPER
	RET

// func maxPool2x2BackRowsF32x512(dx, x, y, dy *float32, rows, outW, inW int) int
//
// maxPool2x2BackRowF32x512 over rows rows of outW windows: output row r
// (y and dy from r·outW) routes its gradients into input rows 2r and
// 2r+1 of dx (from x's, inW values apart). Full groups of 16 windows,
// then the last 1–15 windows of a row with masked loads and stores, so
// nothing past a row's 2·outW inputs or outW outputs is touched. It stops
// before the first row whose y holds a NaN and returns the rows it did.
TEXT ·maxPool2x2BackRowsF32x512(SB), NOSPLIT, $24-64
	MOVQ    dx+0(FP), R11
	MOVQ    x+8(FP), R12
	MOVQ    y+16(FP), R9
	MOVQ    dy+24(FP), R10
	MOVQ    rows+32(FP), AX
	MOVQ    inW+48(FP), R13
	SHLQ    $2, R13
	VMOVUPS ·zmmEven(SB), Z13
	VMOVUPS ·zmmOdd(SB), Z14
	VMOVUPS ·zmmZipLo(SB), Z15
	VMOVUPS ·zmmZipHi(SB), Z10

	// The tail masks (ROWMASKS) wait in memory: PBACK uses K1–K5.
	MOVQ  outW+40(FP), CX
	ANDQ  $15, CX
	ROWMASKS
	KMOVW K5, wm-8(SP)
	KMOVW K3, lm-16(SP)
	KMOVW K4, hm-24(SP)

brows:
	TESTQ AX, AX
	JEQ   bdone

	// A NaN maximum in the row: stop before it (the caller takes it).
	MOVQ R9, SI
	MOVQ outW+40(FP), CX
	SHRQ $4, CX

bscan:
	TESTQ    CX, CX
	JEQ      bscanTail
	VMOVUPS  (SI), Z8
	VCMPPS   $3, Z8, Z8, K1
	KORTESTW K1, K1
	JNE      bdone
	ADDQ     $64, SI
	DECQ     CX
	JMP      bscan

bscanTail:
	KMOVW     wm-8(SP), K6
	VMOVUPS.Z (SI), K6, Z8
	VCMPPS    $3, Z8, Z8, K1
	KORTESTW  K1, K1
	JNE       bdone

	MOVQ R11, DI
	LEAQ (R11)(R13*1), R8
	MOVQ R12, SI
	LEAQ (R12)(R13*1), DX
	MOVQ outW+40(FP), CX
	SHRQ $4, CX

bgroup:
	TESTQ   CX, CX
	JEQ     btail
	VMOVUPS (R9), Z8
	VMOVUPS (R10), Z9
	PLOAD2
	PBACK
	PBACKSTORE2
	DECQ    CX
	JMP     bgroup

btail:
	MOVQ      outW+40(FP), BX
	ANDQ      $15, BX
	JEQ       bnext
	KMOVW     wm-8(SP), K6
	VMOVUPS.Z (R9), K6, Z8
	VMOVUPS.Z (R10), K6, Z9
	KMOVW     lm-16(SP), K6
	KMOVW     hm-24(SP), K7
	PLOADM(K6, K7)
	PBACK
	VMOVUPS   Z0, K6, (DI)
	VMOVUPS   Z1, K7, 64(DI)
	VMOVUPS   Z2, K6, (R8)
	VMOVUPS   Z3, K7, 64(R8)
	LEAQ      (R9)(BX*4), R9
	LEAQ      (R10)(BX*4), R10

bnext:
	LEAQ (R11)(R13*2), R11
	LEAQ (R12)(R13*2), R12
	DECQ AX
	JMP  brows

bdone:
	MOVQ rows+32(FP), BX
	SUBQ AX, BX
	MOVQ BX, ret+56(FP)
	VZEROUPPER
	RET

// NPERM permutes a group's maxima (Z16) and output gradients (Z17) to
// the window lanes of one of its first three input vectors (index vector
// IDX; the vector at byte offset off of R12): the maxima into Z18, the
// gradients into G; it loads the inputs into Z19 and sets mask K to the
// lanes equal to their window's maximum. (The fourth vector, partly
// past the group's inputs for some widths, is loaded under a mask.)
#define NPERM(IDX, G, off, K) \
	VPERMPS Z16, IDX, Z18;     \
	VPERMPS Z17, IDX, G;       \
	VMOVUPS off(R12), Z19;     \
	VCMPPS  $0, Z18, Z19, K

// NSTORE stores the gradients G of input vector r (GPR AX's low 16 bits
// the lanes that win) at byte offset off of R11 and moves to the next 16
// lanes of AX.
#define NSTORE(G, off) \
	KMOVW     AX, K6;   \
	VMOVAPS.Z G, K6, G; \
	VMOVUPS   G, off(R11); \
	SHRQ      $16, AX

// func maxPool2x2BackNarrowF32x512(dx, x, y, dy *float32, groups, w, nin, nout int, tab *narrowPoolTable) int
//
// The backward pass of 2×2, stride-2 max pooling over stacked input rows
// w wide (even, 2–16; outputs w/2 wide), one group of 32/w row pairs at a
// time: its nout outputs y, dy have their windows in its nin inputs x
// (at most 64, at least 48), and dx gets, per window, dy at the first
// input equal to the maximum and 0 at the three others; when none equals
// it, the bottom-right input gets dy (as maxPool2x2BackRowF32x512). tab
// holds the four index vectors mapping each input lane to its window's
// output and the 64-lane masks of bottom rows, their even and odd lanes,
// and of the valid lanes. It stops before the first group whose y holds
// a NaN and returns how many groups it did.
TEXT ·maxPool2x2BackNarrowF32x512(SB), NOSPLIT, $8-80
	MOVQ    dx+0(FP), R11
	MOVQ    x+8(FP), R12
	MOVQ    y+16(FP), R9
	MOVQ    dy+24(FP), R10
	MOVQ    tab+64(FP), AX
	VMOVUPS 0(AX), Z24
	VMOVUPS 64(AX), Z25
	VMOVUPS 128(AX), Z26
	VMOVUPS 192(AX), Z27
	MOVQ    256(AX), DI
	MOVQ    264(AX), R8
	MOVQ    272(AX), R13
	MOVQ    280(AX), BX
	SHRQ    $48, BX
	KMOVW   BX, K7
	MOVQ    $0xAAAAAAAAAAAAAAAA, BX
	MOVQ    BX, odd-8(SP)
	MOVQ    nout+56(FP), CX
	MOVQ    $1, BX
	SHLQ    CX, BX
	DECQ    BX
	KMOVW   BX, K5
	MOVQ    w+40(FP), CX
	DECQ    CX
	XORQ    R14, R14

ngroup:
	CMPQ      R14, groups+32(FP)
	JGE       ndone
	VMOVUPS.Z (R9), K5, Z16
	VMOVUPS.Z (R10), K5, Z17
	VCMPPS    $3, Z16, Z16, K1
	KORTESTW  K1, K1
	JNE       ndone
	NPERM(Z24, Z20, 0, K1)
	NPERM(Z25, Z21, 64, K2)
	NPERM(Z26, Z22, 128, K3)
	VPERMPS   Z16, Z27, Z18
	VPERMPS   Z17, Z27, Z23
	VMOVUPS.Z 192(R12), K7, Z19
	VCMPPS    $0, Z18, Z19, K4

	// m (AX): the 64 lanes equal to their window's maximum.
	KMOVW K4, AX
	SHLQ  $16, AX
	KMOVW K3, BX
	ORQ   BX, AX
	SHLQ  $16, AX
	KMOVW K2, BX
	ORQ   BX, AX
	SHLQ  $16, AX
	KMOVW K1, BX
	ORQ   BX, AX

	// prior (BX): lanes with an earlier lane of their window in m.
	MOVQ AX, DX
	SHLQ CL, DX
	MOVQ DX, BX
	ANDQ R8, BX
	SHLQ $1, DX
	MOVQ DX, SI
	ANDQ DI, SI
	ORQ  SI, BX
	SHLQ $1, DX
	ANDQ R13, DX
	ORQ  DX, BX
	MOVQ AX, SI
	SHLQ $1, SI
	ANDQ odd-8(SP), SI
	ORQ  SI, BX

	// win = (m | bottom-right) &^ prior (the last vector's store keeps
	// to the valid lanes).
	ORQ  R13, AX
	NOTQ BX
	ANDQ BX, AX
	NSTORE(Z20, 0)
	NSTORE(Z21, 64)
	NSTORE(Z22, 128)
	KMOVW     AX, K6
	VMOVAPS.Z Z23, K6, Z23
	VMOVUPS   Z23, K7, 192(R11)

	MOVQ nout+56(FP), BX
	LEAQ (R9)(BX*4), R9
	LEAQ (R10)(BX*4), R10
	MOVQ nin+48(FP), BX
	LEAQ (R11)(BX*4), R11
	LEAQ (R12)(BX*4), R12
	INCQ R14
	JMP  ngroup

ndone:
	MOVQ R14, ret+72(FP)
	VZEROUPPER
	RET
