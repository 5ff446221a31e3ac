// AVX-512 kernels of the batched Winograd F(2×2, 3×3) transforms
// (winobatch.go): 16 tiles at a time, from any images and positions, by
// gathers and scatters through a lane table instead of the row kernels'
// runs of 8 tiles along one row of a plane. A table entry is 16 int32
// offsets (one per lane: where the lane's tile starts) and 16 int32 masks
// (bit l set: lane l's value at that position exists; only the low 16 bits
// are read). Every value gets the float32 operations of winograd_rows.go in
// the same order, so the results equal the row kernels' bit for bit.
// Written by hand; Go declarations in winobatch_amd64.go.

#include "textflag.h"

// WGATHER loads one position of 16 windows: the lanes of the mask word m
// bytes into the entry (AX) from base + col + offset·4 (Z31; col in bytes),
// zero elsewhere. A position no lane has (padding on a small plane: 12 of
// the 16 on a 2×2 one) skips the gather.
#define WGATHER(m, base, col, D) \
	VPXORD     D, D, D;   \
	KMOVW      m(AX), K1; \
	KORTESTW   K1, K1;    \
	JEQ        2(PC);     \
	VGATHERDPS col(base)(Z31*4), K1, D

// WGATHERROW gathers one row of the 16 windows, positions 0–3 (mask
// words m … m+12 of the entry) from the row at R8, into A…D.
#define WGATHERROW(m, A, B, C, D) \
	WGATHER(m, R8, 0, A);      \
	WGATHER((m+4), R8, 4, B);  \
	WGATHER((m+8), R8, 8, C);  \
	WGATHER((m+12), R8, 12, D)

// WIN4 computes d0−d2, d1+d2, d2−d1, d1−d3 from d0…d3 into T0…T3:
// applied to the columns of a 4×4 window it gives the columns of Bᵀ d
// (winoInputRow's first step), then to the rows of that, V = Bᵀ d B.
#define WIN4(d0, d1, d2, d3, T0, T1, T2, T3) \
	VSUBPS d2, d0, T0; \
	VADDPS d2, d1, T1; \
	VSUBPS d1, d2, T2; \
	VSUBPS d3, d1, T3

// WINTILE computes V = Bᵀ d B of the 16 positions d_ij in Z(4i+j), back
// into Z0…Z15 (Z16…Z31 temporaries: t_aj, row a of Bᵀ d, in Z(16+4a+j)).
#define WINTILE \
	WIN4(Z0, Z4, Z8, Z12, Z16, Z20, Z24, Z28);  \
	WIN4(Z1, Z5, Z9, Z13, Z17, Z21, Z25, Z29);  \
	WIN4(Z2, Z6, Z10, Z14, Z18, Z22, Z26, Z30); \
	WIN4(Z3, Z7, Z11, Z15, Z19, Z23, Z27, Z31); \
	WIN4(Z16, Z17, Z18, Z19, Z0, Z1, Z2, Z3);   \
	WIN4(Z20, Z21, Z22, Z23, Z4, Z5, Z6, Z7);   \
	WIN4(Z24, Z25, Z26, Z27, Z8, Z9, Z10, Z11); \
	WIN4(Z28, Z29, Z30, Z31, Z12, Z13, Z14, Z15)

// WSTORE16 stores Z0…Z15 at DI, R11 bytes apart (R8 clobbered).
#define WSTORE16 \
	MOVQ    DI, R8;   \
	VMOVUPS Z0, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z1, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z2, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z3, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z4, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z5, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z6, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z7, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z8, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z9, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z10, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z11, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z12, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z13, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z14, (R8); \
	ADDQ    R11, R8;  \
	VMOVUPS Z15, (R8)

// func winoGatherInF32x512(x *float32, plane, w int, tab *int32, dst *float32, ldd, ldx, nch int)
//
// For each of nch channels (x plane values apart, rows w apart), gathers
// the 4×4 windows of the entry's 16 lanes (offset: the window's top-left
// value; masked positions read as zero) and stores V = Bᵀ d B: position ξ
// of the transformed tiles at dst[ξ·ldx + c·ldd + lane], 16 lanes each.
TEXT ·winoGatherInF32x512(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ plane+8(FP), R9
	MOVQ w+16(FP), R10
	MOVQ tab+24(FP), AX
	MOVQ dst+32(FP), DI
	MOVQ ldd+40(FP), DX
	MOVQ ldx+48(FP), R11
	MOVQ nch+56(FP), CX
	SHLQ $2, R9
	SHLQ $2, R10
	SHLQ $2, DX
	SHLQ $2, R11

inchan:
	TESTQ     CX, CX
	JEQ       indone
	VMOVDQU32 (AX), Z31
	MOVQ      SI, R8
	WGATHERROW(64, Z0, Z1, Z2, Z3)
	ADDQ      R10, R8
	WGATHERROW(80, Z4, Z5, Z6, Z7)
	ADDQ      R10, R8
	WGATHERROW(96, Z8, Z9, Z10, Z11)
	ADDQ      R10, R8
	WGATHERROW(112, Z12, Z13, Z14, Z15)

	WINTILE
	WSTORE16

	ADDQ R9, SI
	ADDQ DX, DI
	DECQ CX
	JMP  inchan

indone:
	VZEROUPPER
	RET

// WOUTCOL computes column j of Aᵀ M from m0j…m3j: m0+m1+m2 (S) and
// m1−m2−m3 (D), as winoOutputRow.
#define WOUTCOL(m0, m1, m2, m3, S, D) \
	VADDPS m1, m0, S; \
	VADDPS m2, S, S;  \
	VSUBPS m2, m1, D; \
	VSUBPS m3, D, D

// WOUTROW computes a row of outputs from s0…s3: s0+s1+s2 (O0) and
// s1−s2−s3 (O1).
#define WOUTROW(s0, s1, s2, s3, O0, O1) \
	VADDPS s1, s0, O0; \
	VADDPS s2, O0, O0; \
	VSUBPS s2, s1, O1; \
	VSUBPS s3, O1, O1

// WLOADM loads the 16 positions of the channel at SI (R11 bytes apart)
// into Z0…Z15 and computes its 2×2 outputs Y = Aᵀ M A, O00, O01, O10,
// O11, into Z24…Z27 (Z16…Z23 temporaries, R8 clobbered).
#define WLOADM \
	MOVQ    SI, R8;                              \
	VMOVUPS (R8), Z0;                            \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z1;                            \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z2;                            \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z3;                            \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z4;                            \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z5;                            \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z6;                            \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z7;                            \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z8;                            \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z9;                            \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z10;                           \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z11;                           \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z12;                           \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z13;                           \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z14;                           \
	ADDQ    R11, R8;                             \
	VMOVUPS (R8), Z15;                           \
	WOUTCOL(Z0, Z4, Z8, Z12, Z16, Z20);          \
	WOUTCOL(Z1, Z5, Z9, Z13, Z17, Z21);          \
	WOUTCOL(Z2, Z6, Z10, Z14, Z18, Z22);         \
	WOUTCOL(Z3, Z7, Z11, Z15, Z19, Z23);         \
	WOUTROW(Z16, Z17, Z18, Z19, Z24, Z25);       \
	WOUTROW(Z20, Z21, Z22, Z23, Z26, Z27)

// WSCATTER stores the lanes of the mask word m bytes into the entry (AX)
// to base + col + offset·4 (Z31; col in bytes), if there are any.
#define WSCATTER(m, S, base, col) \
	KMOVW       m(AX), K1; \
	KORTESTW    K1, K1;    \
	JEQ         2(PC);     \
	VSCATTERDPS S, K1, col(base)(Z31*4)

// func winoScatterOutF32x512(m *float32, ldx, ldc int, tab *int32, y *float32, plane, ow, nch int)
//
// For each of nch channels, reads the 16 positions of 16 transformed tiles
// (position ξ of channel c at m[ξ·ldx + c·ldc]), computes Y = Aᵀ M A and
// stores each lane's 2×2 outputs at y + c·plane + offset (rows ow apart),
// the positions the entry's masks 0…3 allow (row-major).
TEXT ·winoScatterOutF32x512(SB), NOSPLIT, $0-64
	MOVQ      m+0(FP), SI
	MOVQ      ldx+8(FP), R11
	MOVQ      ldc+16(FP), DX
	MOVQ      tab+24(FP), AX
	MOVQ      y+32(FP), DI
	MOVQ      plane+40(FP), R9
	MOVQ      ow+48(FP), R10
	MOVQ      nch+56(FP), CX
	SHLQ      $2, R11
	SHLQ      $2, DX
	SHLQ      $2, R9
	SHLQ      $2, R10
	VMOVDQU32 (AX), Z31

outchan:
	TESTQ CX, CX
	JEQ   outdone
	WLOADM

	WSCATTER(64, Z24, DI, 0)
	WSCATTER(68, Z25, DI, 4)
	LEAQ (DI)(R10*1), R8
	WSCATTER(72, Z26, R8, 0)
	WSCATTER(76, Z27, R8, 4)

	ADDQ DX, SI
	ADDQ R9, DI
	DECQ CX
	JMP  outchan

outdone:
	VZEROUPPER
	RET

// WGOROW stores row i of dM = A dY Aᵀ from row i of A dY, columns a0 and
// a1: a0, a0 + a1, a0 − a1, −a1 (Z30 the sign mask), at R8, advancing R8
// by R11 after each.
#define WGOROW(a0, a1) \
	VMOVUPS a0, (R8);      \
	ADDQ    R11, R8;       \
	VADDPS  a1, a0, Z20;   \
	VMOVUPS Z20, (R8);     \
	ADDQ    R11, R8;       \
	VSUBPS  a1, a0, Z21;   \
	VMOVUPS Z21, (R8);     \
	ADDQ    R11, R8;       \
	VPXORD  Z30, a1, Z22;  \
	VMOVUPS Z22, (R8);     \
	ADDQ    R11, R8

// WGOTILE stores dM = A dY Aᵀ at DI (R11 bytes between positions) from
// y00, y01, y10, y11 in Z0…Z3: the rows of A dY are (y00, y01),
// (y00+y10, y01+y11), (y00−y10, y01−y11) and (−y10, −y11).
#define WGOTILE \
	VADDPS Z2, Z0, Z4;  \
	VADDPS Z3, Z1, Z5;  \
	VSUBPS Z2, Z0, Z6;  \
	VSUBPS Z3, Z1, Z7;  \
	VPXORD Z30, Z2, Z8; \
	VPXORD Z30, Z3, Z9; \
	MOVQ   DI, R8;      \
	WGOROW(Z0, Z1);     \
	WGOROW(Z4, Z5);     \
	WGOROW(Z6, Z7);     \
	WGOROW(Z8, Z9)

// func winoGatherGradF32x512(dy *float32, plane, ow int, tab *int32, dst *float32, ldd, ldx, nch int)
//
// For each of nch channels, gathers the 2×2 output gradients of the
// entry's 16 lanes (as winoScatterOutF32x512 stores outputs; masked ones
// read as zero) and stores dM = A dY Aᵀ: position ξ at dst[ξ·ldx + c·ldd].
TEXT ·winoGatherGradF32x512(SB), NOSPLIT, $0-64
	MOVQ       dy+0(FP), SI
	MOVQ       plane+8(FP), R9
	MOVQ       ow+16(FP), R10
	MOVQ       tab+24(FP), AX
	MOVQ       dst+32(FP), DI
	MOVQ       ldd+40(FP), DX
	MOVQ       ldx+48(FP), R11
	MOVQ       nch+56(FP), CX
	SHLQ       $2, R9
	SHLQ       $2, R10
	SHLQ       $2, DX
	SHLQ       $2, R11
	VMOVDQU32  (AX), Z31
	VPTERNLOGD $0xff, Z30, Z30, Z30
	VPSLLD     $31, Z30, Z30 // 0x80000000 in every lane

gochan:
	TESTQ CX, CX
	JEQ   godone
	WGATHER(64, SI, 0, Z0)
	WGATHER(68, SI, 4, Z1)
	LEAQ  (SI)(R10*1), R8
	WGATHER(72, R8, 0, Z2)
	WGATHER(76, R8, 4, Z3)

	WGOTILE

	ADDQ R9, SI
	ADDQ DX, DI
	DECQ CX
	JMP  gochan

godone:
	VZEROUPPER
	RET

// Outputs of whole planes without scatters. Where a table entry's 16
// tiles cover whole 8×8 planes (one image) or 4×4 planes (four images),
// the 2×2 outputs are interleaved into rows with VPERMI2PS (zmmZipLo,
// zmmZipHi of pool512_amd64.s: O00 with O01 gives output rows 2th, O10
// with O11 rows 2th+1) and the planes stored whole: the values
// winoScatterOutF32x512 would scatter, at the same places.

// WZIP interleaves the outputs: rows 2th of tiles 0–7 (Z0) and 8–15
// (Z1), rows 2th+1 of tiles 0–7 (Z2) and 8–15 (Z3) (Z30, Z31: zmmZipLo,
// zmmZipHi).
#define WZIP \
	VMOVAPS   Z30, Z0;       \
	VPERMI2PS Z25, Z24, Z0;  \
	VMOVAPS   Z31, Z1;       \
	VPERMI2PS Z25, Z24, Z1;  \
	VMOVAPS   Z30, Z2;       \
	VPERMI2PS Z27, Z26, Z2;  \
	VMOVAPS   Z31, Z3;       \
	VPERMI2PS Z27, Z26, Z3

// func winoStoreOut8F32x512(m *float32, ldx, ldc int, y *float32, plane, nch int)
//
// winoScatterOutF32x512 for an entry whose lanes are the 16 tiles of one
// 8×8 output plane in order: y is the image's first output, plane its
// channel stride.
TEXT ·winoStoreOut8F32x512(SB), NOSPLIT, $0-48
	MOVQ    m+0(FP), SI
	MOVQ    ldx+8(FP), R11
	MOVQ    ldc+16(FP), DX
	MOVQ    y+24(FP), DI
	MOVQ    plane+32(FP), R9
	MOVQ    nch+40(FP), CX
	SHLQ    $2, R11
	SHLQ    $2, DX
	SHLQ    $2, R9
	VMOVUPS ·zmmZipLo(SB), Z30
	VMOVUPS ·zmmZipHi(SB), Z31

o8chan:
	TESTQ CX, CX
	JEQ   o8done
	WLOADM
	WZIP
	// Rows 0–1, 2–3 from the first half of the tiles, 4–5, 6–7 from the
	// second: 128-bit lanes 0–1 then 2–3 of each pair of registers.
	VSHUFF32X4 $0x44, Z2, Z0, Z4
	VSHUFF32X4 $0xEE, Z2, Z0, Z5
	VSHUFF32X4 $0x44, Z3, Z1, Z6
	VSHUFF32X4 $0xEE, Z3, Z1, Z7
	VMOVUPS    Z4, (DI)
	VMOVUPS    Z5, 64(DI)
	VMOVUPS    Z6, 128(DI)
	VMOVUPS    Z7, 192(DI)
	ADDQ       DX, SI
	ADDQ       R9, DI
	DECQ       CX
	JMP        o8chan

o8done:
	VZEROUPPER
	RET

// wino4Img0: the 4×4 plane of the first image of a register pair of
// interleaved rows (rows 0 and 2 in lanes 0–7 of the first, rows 1 and 3
// in lanes 0–7 of the second); wino4Img1 the second image's (lanes 8–15).
DATA wino4Img0<>+0(SB)/8, $0x0000000100000000
DATA wino4Img0<>+8(SB)/8, $0x0000000300000002
DATA wino4Img0<>+16(SB)/8, $0x0000001100000010
DATA wino4Img0<>+24(SB)/8, $0x0000001300000012
DATA wino4Img0<>+32(SB)/8, $0x0000000500000004
DATA wino4Img0<>+40(SB)/8, $0x0000000700000006
DATA wino4Img0<>+48(SB)/8, $0x0000001500000014
DATA wino4Img0<>+56(SB)/8, $0x0000001700000016
GLOBL wino4Img0<>(SB), RODATA|NOPTR, $64
DATA wino4Img1<>+0(SB)/8, $0x0000000900000008
DATA wino4Img1<>+8(SB)/8, $0x0000000b0000000a
DATA wino4Img1<>+16(SB)/8, $0x0000001900000018
DATA wino4Img1<>+24(SB)/8, $0x0000001b0000001a
DATA wino4Img1<>+32(SB)/8, $0x0000000d0000000c
DATA wino4Img1<>+40(SB)/8, $0x0000000f0000000e
DATA wino4Img1<>+48(SB)/8, $0x0000001d0000001c
DATA wino4Img1<>+56(SB)/8, $0x0000001f0000001e
GLOBL wino4Img1<>(SB), RODATA|NOPTR, $64

// func winoStoreOut4F32x512(m *float32, ldx, ldc int, y *float32, plane, img, nimg, nch int)
//
// winoScatterOutF32x512 for an entry whose lanes are the 4 tiles of the
// 4×4 output planes of nimg (1–4) images in order, img values apart from
// y, the first image's first output.
TEXT ·winoStoreOut4F32x512(SB), NOSPLIT, $0-64
	MOVQ    m+0(FP), SI
	MOVQ    ldx+8(FP), R11
	MOVQ    ldc+16(FP), DX
	MOVQ    y+24(FP), DI
	MOVQ    plane+32(FP), R9
	MOVQ    img+40(FP), R10
	MOVQ    nimg+48(FP), R12
	MOVQ    nch+56(FP), CX
	SHLQ    $2, R11
	SHLQ    $2, DX
	SHLQ    $2, R9
	SHLQ    $2, R10
	VMOVUPS ·zmmZipLo(SB), Z30
	VMOVUPS ·zmmZipHi(SB), Z31
	VMOVUPS wino4Img0<>(SB), Z28
	VMOVUPS wino4Img1<>(SB), Z29

o4chan:
	TESTQ CX, CX
	JEQ   o4done
	WLOADM
	WZIP
	VMOVAPS   Z28, Z4
	VPERMI2PS Z2, Z0, Z4
	VMOVUPS   Z4, (DI)
	LEAQ      (DI)(R10*1), R8
	CMPQ      R12, $2
	JLT       o4next
	VMOVAPS   Z29, Z5
	VPERMI2PS Z2, Z0, Z5
	VMOVUPS   Z5, (R8)
	ADDQ      R10, R8
	CMPQ      R12, $3
	JLT       o4next
	VMOVAPS   Z28, Z6
	VPERMI2PS Z3, Z1, Z6
	VMOVUPS   Z6, (R8)
	ADDQ      R10, R8
	CMPQ      R12, $4
	JLT       o4next
	VMOVAPS   Z29, Z7
	VPERMI2PS Z3, Z1, Z7
	VMOVUPS   Z7, (R8)

o4next:
	ADDQ DX, SI
	ADDQ R9, DI
	DECQ CX
	JMP  o4chan

o4done:
	VZEROUPPER
	RET

// Loads through permutes. Where the values a table entry's 16 lanes read
// lie in four runs of 16 (an 8×8 plane of one image, the 4×4 planes of four
// images), the kernels below load the four runs and pick each position's
// lanes from them with VPERMI2PS (runs 0–1 and 2–3 as two tables, the two
// results ORed, each zero outside its mask) instead of gathering them. A
// permute entry (winoPermEntry int32s) holds the runs' offsets (0–3), then
// per position p the 16 indices (8+16p …) and the two masks (264+2p,
// 265+2p).

// WPERM sets D to position p's values (idx at byte i, masks at bytes m and
// m+4 of the entry AX) from the runs in Z16…Z19 (Z20 a temporary).
#define WPERM(i, m, D) \
	VMOVDQU32   i(AX), D;          \
	VMOVDQA32   D, Z20;            \
	KMOVW       m(AX), K1;         \
	KMOVW       (m+4)(AX), K2;     \
	VPERMI2PS.Z Z17, Z16, K1, D;   \
	VPERMI2PS.Z Z19, Z18, K2, Z20; \
	VPORD       Z20, D, D

// WRUNS loads the four runs of the channel at SI (offsets R12…R15 bytes).
#define WRUNS \
	VMOVUPS (SI)(R12*1), Z16; \
	VMOVUPS (SI)(R13*1), Z17; \
	VMOVUPS (SI)(R14*1), Z18; \
	VMOVUPS (SI)(R15*1), Z19

// WRUNOFFS reads the four run offsets of the entry AX into R12…R15, in
// bytes.
#define WRUNOFFS \
	MOVLQSX 0(AX), R12;  \
	MOVLQSX 4(AX), R13;  \
	MOVLQSX 8(AX), R14;  \
	MOVLQSX 12(AX), R15; \
	SHLQ    $2, R12;     \
	SHLQ    $2, R13;     \
	SHLQ    $2, R14;     \
	SHLQ    $2, R15

// func winoPermInF32x512(x *float32, plane int, tab *int32, dst *float32, ldd, ldx, nch int)
//
// winoGatherInF32x512 through a permute entry.
TEXT ·winoPermInF32x512(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ plane+8(FP), R9
	MOVQ tab+16(FP), AX
	MOVQ dst+24(FP), DI
	MOVQ ldd+32(FP), DX
	MOVQ ldx+40(FP), R11
	MOVQ nch+48(FP), CX
	SHLQ $2, R9
	SHLQ $2, DX
	SHLQ $2, R11
	WRUNOFFS

pichan:
	TESTQ CX, CX
	JEQ   pidone
	WRUNS
	WPERM(32, 1056, Z0)
	WPERM(96, 1064, Z1)
	WPERM(160, 1072, Z2)
	WPERM(224, 1080, Z3)
	WPERM(288, 1088, Z4)
	WPERM(352, 1096, Z5)
	WPERM(416, 1104, Z6)
	WPERM(480, 1112, Z7)
	WPERM(544, 1120, Z8)
	WPERM(608, 1128, Z9)
	WPERM(672, 1136, Z10)
	WPERM(736, 1144, Z11)
	WPERM(800, 1152, Z12)
	WPERM(864, 1160, Z13)
	WPERM(928, 1168, Z14)
	WPERM(992, 1176, Z15)

	WINTILE
	WSTORE16

	ADDQ R9, SI
	ADDQ DX, DI
	DECQ CX
	JMP  pichan

pidone:
	VZEROUPPER
	RET

// func winoPermGradF32x512(dy *float32, plane int, tab *int32, dst *float32, ldd, ldx, nch int)
//
// winoGatherGradF32x512 through a permute entry (positions 0–3: the 2×2
// output gradients of each lane's tile).
TEXT ·winoPermGradF32x512(SB), NOSPLIT, $0-56
	MOVQ       dy+0(FP), SI
	MOVQ       plane+8(FP), R9
	MOVQ       tab+16(FP), AX
	MOVQ       dst+24(FP), DI
	MOVQ       ldd+32(FP), DX
	MOVQ       ldx+40(FP), R11
	MOVQ       nch+48(FP), CX
	SHLQ       $2, R9
	SHLQ       $2, DX
	SHLQ       $2, R11
	WRUNOFFS
	VPTERNLOGD $0xff, Z30, Z30, Z30
	VPSLLD     $31, Z30, Z30 // 0x80000000 in every lane

pgchan:
	TESTQ CX, CX
	JEQ   pgdone
	WRUNS
	WPERM(32, 1056, Z0)
	WPERM(96, 1064, Z1)
	WPERM(160, 1072, Z2)
	WPERM(224, 1080, Z3)

	WGOTILE

	ADDQ R9, SI
	ADDQ DX, DI
	DECQ CX
	JMP  pgchan

pgdone:
	VZEROUPPER
	RET
