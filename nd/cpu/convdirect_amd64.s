// The AVX2 direct-convolution tile for convolutions with few input
// channels (convdirect.go): 4 output channels by 24 positions of the wide
// grid, accumulated over the k = (c, kh, kw) taps in order (the AVX-512
// tiles are in convdirect512_amd64.s). Written by hand.
//
// Tap k adds w[k][i] · x[offs[k] + j] to row i, column j of the tile: the
// input of consecutive wide positions is consecutive in memory, so each
// tap costs three vector loads of x, one broadcast of a packed weight per
// row and three FMAs per row (12 YMM accumulators).

#include "textflag.h"

// func convTile4x24(y *float32, ldy int, x *float32, w *float32, offs *int, k int, bias *float32)
//
// DI the tile's first row, DX its row stride in bytes, SI x, BX the packed
// weights (4 per tap), R8 the byte offsets, CX taps left; bias, when not
// nil, holds the 4 rows' biases, added to the sums before the store.
TEXT ·convTile4x24(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), DX
	SHLQ $2, DX
	MOVQ x+16(FP), SI
	MOVQ w+24(FP), BX
	MOVQ offs+32(FP), R8
	MOVQ k+40(FP), CX
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

tap24:
	MOVQ         (R8), AX
	VMOVUPS      (SI)(AX*1), Y0
	VMOVUPS      32(SI)(AX*1), Y1
	VMOVUPS      64(SI)(AX*1), Y2
	VBROADCASTSS (BX), Y3
	VFMADD231PS  Y0, Y3, Y4
	VFMADD231PS  Y1, Y3, Y5
	VFMADD231PS  Y2, Y3, Y6
	VBROADCASTSS 4(BX), Y3
	VFMADD231PS  Y0, Y3, Y7
	VFMADD231PS  Y1, Y3, Y8
	VFMADD231PS  Y2, Y3, Y9
	VBROADCASTSS 8(BX), Y3
	VFMADD231PS  Y0, Y3, Y10
	VFMADD231PS  Y1, Y3, Y11
	VFMADD231PS  Y2, Y3, Y12
	VBROADCASTSS 12(BX), Y3
	VFMADD231PS  Y0, Y3, Y13
	VFMADD231PS  Y1, Y3, Y14
	VFMADD231PS  Y2, Y3, Y15
	ADDQ         $8, R8
	ADDQ         $16, BX
	DECQ         CX
	JNZ          tap24

	MOVQ         bias+48(FP), AX
	TESTQ        AX, AX
	JZ           store24
	VBROADCASTSS (AX), Y0
	VADDPS       Y0, Y4, Y4
	VADDPS       Y0, Y5, Y5
	VADDPS       Y0, Y6, Y6
	VBROADCASTSS 4(AX), Y0
	VADDPS       Y0, Y7, Y7
	VADDPS       Y0, Y8, Y8
	VADDPS       Y0, Y9, Y9
	VBROADCASTSS 8(AX), Y0
	VADDPS       Y0, Y10, Y10
	VADDPS       Y0, Y11, Y11
	VADDPS       Y0, Y12, Y12
	VBROADCASTSS 12(AX), Y0
	VADDPS       Y0, Y13, Y13
	VADDPS       Y0, Y14, Y14
	VADDPS       Y0, Y15, Y15

store24:
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, 32(DI)
	VMOVUPS Y6, 64(DI)
	ADDQ    DX, DI
	VMOVUPS Y7, (DI)
	VMOVUPS Y8, 32(DI)
	VMOVUPS Y9, 64(DI)
	ADDQ    DX, DI
	VMOVUPS Y10, (DI)
	VMOVUPS Y11, 32(DI)
	VMOVUPS Y12, 64(DI)
	ADDQ    DX, DI
	VMOVUPS Y13, (DI)
	VMOVUPS Y14, 32(DI)
	VMOVUPS Y15, 64(DI)
	VZEROUPPER
	RET
