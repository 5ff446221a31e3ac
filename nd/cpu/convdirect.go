package cpu

import "github.com/goluon/goluon/nd/backend"

// The direct convolution for few input channels (LeNet's and the CIFAR
// CNN's first layers, LeNet's second). With 1–15 input channels im2col
// + GEMM spends more time copying than multiplying: the column matrix has
// only C·KH·KW rows (27–54), so each image's GEMM is small and its packing
// and the unrolling cost as much as the FMAs. The direct kernel reads the
// input in place instead.
//
// It computes the output on the wide grid: position q = oh·Wp + ow of a
// zero-padded copy of the image (Hp × Wp planes), for ow in [0, Wp) rather
// than [0, OW). Tap (c, kh, kw) of every position then reads the input at
// q + off(c, kh, kw), so consecutive positions read consecutive values and
// one vector load serves a whole row of a tile (convdirect_amd64.s). The
// Wp − OW extra columns of each row are computed and dropped when the
// tile is copied out (12 − 10 of 12 for LeNet's second layer, 2 of 34 for
// the CIFAR CNN's first).

// directMaxChannels bounds the input channels of the convolutions the
// direct kernel computes; from winoMinChannels on, Winograd (3×3) or
// im2col + GEMM are faster.
const directMaxChannels = 16

// directTile is the narrow tile's width (convTile4x24); with AVX-512 the
// kernel also takes tiles of 8 channels by twice the width (convTile8x48).
const directTile = 24

// useDirectConv reports whether Conv2D takes the direct kernel for p.
func useDirectConv(p backend.ConvParams) bool {
	s := newConvShape(p)
	return useAsmKernel && p.DType == backend.Float32 && p.Groups == 1 &&
		p.StrideH == 1 && p.StrideW == 1 && p.InC < directMaxChannels && p.OutC >= 4 && !s.direct() &&
		p.OutH+p.DilateH*(p.KH-1) <= p.InH+2*p.PadH && p.OutW+p.DilateW*(p.KW-1) <= p.InW+2*p.PadW
}

// directPlan holds the sizes and tap offsets of one direct convolution.
type directPlan struct {
	s      convShape
	hp, wp int   // padded plane
	qt     int   // wide positions computed per output channel: OH·Wp rounded up to a tile
	rows   int   // output channels per block of packed weights: 8 with AVX-512, else 4
	ocp    int   // output channels rounded up to a block
	offs   []int // byte offset of each tap (c, kh, kw) from the position
	xlen   int   // the padded copy's length, with the last tile's overreach
}

func newDirectPlan(s convShape) directPlan {
	d := directPlan{s: s, hp: s.InH + 2*s.PadH, wp: s.InW + 2*s.PadW}
	d.qt = ceilDiv(s.OutH*d.wp, directTile) * directTile
	d.rows = 4
	if useZMMKernel {
		d.rows = 8
	}
	d.ocp = ceilDiv(s.OutC, d.rows) * d.rows
	d.offs = make([]int, 0, s.kk)
	for c := 0; c < s.InC; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				d.offs = append(d.offs, 4*((c*d.hp+kh*s.DilateH)*d.wp+kw*s.DilateW))
			}
		}
	}
	d.xlen = max(s.InC*d.hp*d.wp, d.qt+d.offs[len(d.offs)-1]/4)
	return d
}

// packWeights returns w [OC][C·KH·KW] as blocks of d.rows output
// channels, tap-major: the weights of tap k are adjacent. Channels past
// OC are 0.
func (d directPlan) packWeights(w []float32) []float32 {
	k, r := d.s.kk, d.rows
	wp := scratch[float32](d.ocp * k)
	for b := 0; b < d.ocp/r; b++ {
		blk := wp[b*r*k : (b+1)*r*k]
		for i := 0; i < r; i++ {
			oc := r*b + i
			for t := 0; t < k; t++ {
				v := float32(0)
				if oc < d.s.OutC {
					v = w[oc*k+t]
				}
				blk[r*t+i] = v
			}
		}
	}
	return wp
}

// directConv2D computes y = conv(x, w) with the direct kernel, images in
// parallel.
func directConv2D(s convShape, y, x, w []float32) {
	d := newDirectPlan(s)
	wp := d.packWeights(w)
	defer release(wp)
	inImg, outImg, plane := s.InC*s.InH*s.InW, s.OutC*s.ohw, d.hp*d.wp
	parallelFor(s.N, 1, func(lo, hi int) {
		xp := scratch[float32](d.xlen)
		defer release(xp)
		clear(xp) // the padding and the overreach stay zero
		yw := scratch[float32](d.ocp * d.qt)
		defer release(yw)
		for n := lo; n < hi; n++ {
			xn := x[n*inImg:]
			for c := 0; c < s.InC; c++ {
				copyRows(xp[c*plane+s.PadH*d.wp+s.PadW:], xn[c*s.InH*s.InW:], s.InH, s.InW, d.wp, s.InW)
			}
			d.tiles(yw, xp, wp)
			yn := y[n*outImg:]
			for oc := 0; oc < s.OutC; oc++ {
				copyRows(yn[oc*s.ohw:], yw[oc*d.qt:], s.OutH, s.OutW, s.OutW, d.wp)
			}
		}
	})
}

// tiles computes the wide output yw [ocp][qt] of one padded image xp:
// with AVX-512, tiles of 8 channels by 48 positions while they fit, then
// (and without AVX-512, throughout) of 4 by 24.
func (d directPlan) tiles(yw, xp, wp []float32) {
	k, r := d.s.kk, d.rows
	_, _ = yw[d.ocp*d.qt-1], xp[d.xlen-1]
	for q := 0; q < d.qt; {
		if r == 8 && q+2*directTile <= d.qt {
			for b := 0; b < d.ocp/8; b++ {
				convTile8x48(&yw[8*b*d.qt+q], d.qt, &xp[q], &wp[8*b*k], &d.offs[0], k)
			}
			q += 2 * directTile
			continue
		}
		for oc := 0; oc < d.ocp; oc += 4 {
			b, i := oc/r, oc%r // block, first row in it
			convTile4x24(&yw[oc*d.qt+q], d.qt, &xp[q], &wp[b*r*k+i], r, &d.offs[0], k)
		}
		q += directTile
	}
}
