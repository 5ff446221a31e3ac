// Gathers for the column matrices of tiny planes (im2col_gather.go): 16
// columns of one row of the column matrix per step, each lane loading the
// input pixel its table entry names, or zero (masked off: padding). Go
// declarations are in gather_amd64.go.

#include "textflag.h"

DATA gatherIota<>+0(SB)/4, $0
DATA gatherIota<>+4(SB)/4, $1
DATA gatherIota<>+8(SB)/4, $2
DATA gatherIota<>+12(SB)/4, $3
DATA gatherIota<>+16(SB)/4, $4
DATA gatherIota<>+20(SB)/4, $5
DATA gatherIota<>+24(SB)/4, $6
DATA gatherIota<>+28(SB)/4, $7
DATA gatherIota<>+32(SB)/4, $8
DATA gatherIota<>+36(SB)/4, $9
DATA gatherIota<>+40(SB)/4, $10
DATA gatherIota<>+44(SB)/4, $11
DATA gatherIota<>+48(SB)/4, $12
DATA gatherIota<>+52(SB)/4, $13
DATA gatherIota<>+56(SB)/4, $14
DATA gatherIota<>+60(SB)/4, $15
GLOBL gatherIota<>(SB), RODATA|NOPTR, $64

// func gatherRowsF32(d *float32, ldd int, s *float32, lds int, tab *int32, lanes, rows int)
// For r in [0, rows): d[r*ldd + l] = s[r*lds + tab[l]] where tab[16+l] is
// nonzero, 0 where it is zero, for the lanes l < lanes (1 ≤ lanes ≤ 16);
// the other lanes of d are not written. Two 8-lane AVX2 gathers per row.
TEXT ·gatherRowsF32(SB), NOSPLIT, $0-56
	MOVQ ldd+8(FP), R9
	MOVQ d+0(FP), DI
	MOVQ s+16(FP), SI
	MOVQ lds+24(FP), R10
	MOVQ tab+32(FP), AX
	MOVQ lanes+40(FP), DX
	MOVQ rows+48(FP), CX
	SHLQ $2, R9
	SHLQ $2, R10

	VMOVDQU (AX), Y1   // offsets, lanes 0-7
	VMOVDQU 32(AX), Y2 // lanes 8-15
	MOVQ    DX, X10
	VPBROADCASTD X10, Y10
	VPCMPGTD gatherIota<>+0(SB), Y10, Y5  // store masks: lane < lanes
	VPCMPGTD gatherIota<>+32(SB), Y10, Y6
	VPXOR    Y11, Y11, Y11
	VPCMPEQD 64(AX), Y11, Y3 // gather masks: table's mask nonzero, within lanes
	VPCMPEQD 96(AX), Y11, Y4
	VPANDN   Y5, Y3, Y3
	VPANDN   Y6, Y4, Y4

grow:
	TESTQ CX, CX
	JEQ   gdone
	VMOVDQU    Y3, Y7
	VMOVDQU    Y4, Y8
	VPXOR      Y0, Y0, Y0
	VPXOR      Y9, Y9, Y9
	VGATHERDPS Y7, (SI)(Y1*4), Y0
	VGATHERDPS Y8, (SI)(Y2*4), Y9
	VMASKMOVPS Y0, Y5, (DI)
	VMASKMOVPS Y9, Y6, 32(DI)
	ADDQ       R9, DI
	ADDQ       R10, SI
	DECQ       CX
	JMP        grow

gdone:
	VZEROUPPER
	RET

// ZLANES reads a table entry (AX) and the lane count (CX): Z1 the offsets,
// K2 the store mask (lane < lanes), K3 and BX the gather mask (the
// entry's mask within the store mask). Uses Z2.
#define ZLANES \
	MOVL      $1, BX;        \
	SHLL      CX, BX;        \
	DECL      BX;            \
	KMOVW     BX, K2;        \
	VMOVDQU32 (AX), Z1;      \
	VMOVDQU32 64(AX), Z2;    \
	VPTESTMD  Z2, Z2, K3;    \
	KANDW     K2, K3, K3;    \
	KMOVW     K3, BX

// func gatherRowsF32x512(d *float32, ldd int, s *float32, lds int, tab *int32, lanes, rows int)
// gatherRowsF32 with one 16-lane gather per row under a K mask.
TEXT ·gatherRowsF32x512(SB), NOSPLIT, $0-56
	MOVQ ldd+8(FP), R9
	MOVQ d+0(FP), DI
	MOVQ s+16(FP), SI
	MOVQ lds+24(FP), R10
	MOVQ tab+32(FP), AX
	MOVQ lanes+40(FP), CX
	SHLQ $2, R9
	SHLQ $2, R10

	ZLANES
	MOVQ      rows+48(FP), CX

zrow:
	TESTQ      CX, CX
	JEQ        zdone
	KMOVW      BX, K1
	VPXORD     Z0, Z0, Z0
	VGATHERDPS (SI)(Z1*4), K1, Z0
	VMOVUPS    Z0, K2, (DI)
	ADDQ       R9, DI
	ADDQ       R10, SI
	DECQ       CX
	JMP        zrow

zdone:
	VZEROUPPER
	RET

// func scatterAddRowsF32x512(dx *float32, ldx int, col *float32, ldc int, tab *int32, lanes, rows int)
// The transpose of gatherRowsF32x512: for r in [0, rows) and the lanes l <
// lanes whose mask tab[16+l] is nonzero, dx[r*ldx + tab[l]] += col[r*ldc + l].
// The offsets of a row's active lanes must differ (the scatter would
// otherwise lose all but one of the sums).
TEXT ·scatterAddRowsF32x512(SB), NOSPLIT, $0-56
	MOVQ ldx+8(FP), R9
	MOVQ dx+0(FP), DI
	MOVQ col+16(FP), SI
	MOVQ ldc+24(FP), R10
	MOVQ tab+32(FP), AX
	MOVQ lanes+40(FP), CX
	SHLQ $2, R9
	SHLQ $2, R10

	ZLANES
	MOVQ      rows+48(FP), CX

srow:
	TESTQ       CX, CX
	JEQ         sdone
	KMOVW       BX, K1
	VPXORD      Z0, Z0, Z0
	VGATHERDPS  (DI)(Z1*4), K1, Z0
	VMOVUPS.Z   (SI), K3, Z4
	VADDPS      Z4, Z0, Z0
	KMOVW       BX, K1
	VSCATTERDPS Z0, K1, (DI)(Z1*4)
	ADDQ        R9, DI
	ADDQ        R10, SI
	DECQ        CX
	JMP         srow

sdone:
	VZEROUPPER
	RET
