package cpu

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/nd/backend"
)

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
// Wp − OW extra columns of each row are computed and dropped at the store
// (2 of 12 for LeNet's second layer, 2 of 34 for the CIFAR CNN's first):
// AVX-512 tiles store only their valid lanes into the output, AVX2 tiles
// write a scratch row whose valid columns are copied out.

// directMaxChannels bounds the input channels of the convolutions the
// direct kernel computes; from winoMinChannels on, Winograd (3×3) or
// im2col + GEMM are faster.
const directMaxChannels = 16

// directTile is the AVX2 tile's width (convTile4x24); the AVX-512 tiles
// are 16, 32 or 48 wide (convTile8x16z … 8x48z).
const directTile = 24

// useDirectConv reports whether Conv2D takes the direct kernel for p.
func useDirectConv(p backend.ConvParams) bool {
	return p.InC < directMaxChannels && directShape(p)
}

// directShape reports whether the direct kernel can compute p: float32,
// stride 1, one group, at least 4 filters, not a plain 1×1 product, and
// an output that fits the padded input.
func directShape(p backend.ConvParams) bool {
	s := newConvShape(p)
	return useAsmKernel && p.DType == backend.Float32 && p.Groups == 1 &&
		p.StrideH == 1 && p.StrideW == 1 && p.OutC >= 4 && !s.direct() &&
		p.OutH+p.DilateH*(p.KH-1) <= p.InH+2*p.PadH && p.OutW+p.DilateW*(p.KW-1) <= p.InW+2*p.PadW
}

// directMaxBackFilters bounds the filters of the convolutions whose
// backward-data pass runs on the direct kernel (useDirectBackwardData).
const directMaxBackFilters = 64

// useDirectBackwardData reports whether Conv2DBackwardData computes p's
// input gradient as the direct forward pass of transposedParams(p): 4–15
// input channels (the transposed pass's filters), at most
// directMaxBackFilters filters (its input channels), stride 1.
func useDirectBackwardData(p backend.ConvParams) bool {
	if p.InC < 4 || p.InC >= directMaxChannels || p.OutC > directMaxBackFilters ||
		p.StrideH != 1 || p.StrideW != 1 || p.Groups != 1 {
		return false
	}
	q := transposedParams(p)
	return q.PadH >= 0 && q.PadW >= 0 && directShape(q)
}

// transposedParams returns the convolution whose forward pass is p's
// backward-data pass, for stride 1 and one group: dy (OC channels, padded
// by dilation·(K−1) − pad) is its input, dx its output, and its filters
// are p's with input and output channels swapped and rotated by 180°
// (transposeFilters).
func transposedParams(p backend.ConvParams) backend.ConvParams {
	q := p
	q.InC, q.OutC = p.OutC, p.InC
	q.InH, q.InW, q.OutH, q.OutW = p.OutH, p.OutW, p.InH, p.InW
	q.PadH, q.PadW = p.DilateH*(p.KH-1)-p.PadH, p.DilateW*(p.KW-1)-p.PadW
	return q
}

// transposeFilters writes into wt [C][OC][KH][KW] the filters w
// [OC][C][KH][KW] with their channels swapped, each rotated by 180°: the
// filters of the convolution that computes p's input gradient (here and
// in winoBackwardData).
func transposeFilters[T Float](p backend.ConvParams, wt, w []T) {
	kk := p.KH * p.KW
	for oc := 0; oc < p.OutC; oc++ {
		for c := 0; c < p.InC; c++ {
			src, dst := w[(oc*p.InC+c)*kk:][:kk], wt[(c*p.OutC+oc)*kk:][:kk]
			for i, v := range src {
				dst[kk-1-i] = v
			}
		}
	}
}

// directBackwardData computes dx = convᵀ(dy, w) as the direct forward
// pass of transposedParams.
func directBackwardData(p backend.ConvParams, dx, dy, w []float32) {
	wt := scratch[float32](p.OutC * p.InC * p.KH * p.KW)
	defer release(wt)
	transposeFilters(p, wt, w)
	directConv2D(newConvShape(transposedParams(p)), dx, dy, wt, nil)
}

// directPlan holds the sizes and tap offsets of one direct convolution.
type directPlan struct {
	key    directKey
	s      convShape
	hp, wp int   // padded plane
	qt     int   // wide positions computed per output channel: OH·Wp rounded up to a tile (24) or vector (16)
	rows   int   // output channels per block of packed weights: 8 with AVX-512, else 4
	ocp    int   // output channels rounded up to a block
	offs   []int // byte offset of each tap (c, kh, kw) from the position
	xlen   int   // the padded copy's length, with the last tile's overreach
	// With AVX-512 the tiles store into y through these, one per vector
	// of 16 wide positions: the lanes that are outputs (cm), as many low
	// lanes as there are (sm), and the byte offset in an output channel
	// of the first (dst).
	zmm    bool
	cm, sm []uint16
	dst    []int
}

// directKey is what a directPlan depends on besides the batch size.
type directKey struct {
	inC, inH, inW, outC, outH, outW, kh, kw, ph, pw, dh, dw int
	zmm                                                     bool
}

// directPlans keeps the plans of the convolutions seen (a network has a
// few), read-only once built, up to maxDirectPlans of them: building one
// walks every wide position, which at batch 1 cost as much as the tiles.
var (
	directPlans    sync.Map
	directCached   atomic.Int32
	maxDirectPlans = int32(256)
	// directRecent holds the plans used last, looked up by comparing keys
	// before the map (whose hash of a 13-field key cost a few percent of
	// a batch-1 LeNet call); directNext is where the next one goes.
	directRecent [8]atomic.Pointer[directPlan]
	directNext   atomic.Uint32
)

// directPlanFor returns s's plan, from the cache when it holds it. A
// plan does not depend on the batch size: its shape has N = 0.
func directPlanFor(s convShape) *directPlan {
	key := directKey{s.InC, s.InH, s.InW, s.OutC, s.OutH, s.OutW, s.KH, s.KW, s.PadH, s.PadW, s.DilateH, s.DilateW, useZMMKernel}
	for i := range directRecent {
		if p := directRecent[i].Load(); p != nil && p.key == key {
			return p
		}
	}
	if d, ok := directPlans.Load(key); ok {
		directRecent[directNext.Add(1)%uint32(len(directRecent))].Store(d.(*directPlan))
		return d.(*directPlan)
	}
	s.N = 0
	d := newDirectPlan(s)
	d.key = key
	if directCached.Add(1) <= maxDirectPlans {
		if _, loaded := directPlans.LoadOrStore(key, &d); loaded {
			directCached.Add(-1)
		}
	} else {
		directCached.Add(-1)
	}
	return &d
}

func newDirectPlan(s convShape) directPlan {
	d := directPlan{s: s, hp: s.InH + 2*s.PadH, wp: s.InW + 2*s.PadW, zmm: useZMMKernel, rows: 4}
	wide := s.OutH * d.wp
	d.qt = ceilDiv(wide, directTile) * directTile
	if d.zmm {
		d.rows = 8
		d.qt = ceilDiv(wide, 16) * 16
		nv := d.qt / 16
		d.cm, d.sm, d.dst = make([]uint16, 0, nv), make([]uint16, 0, nv), make([]int, 0, nv)
		for q0 := 0; q0 < d.qt; q0 += 16 {
			var cm uint16
			first := -1
			for j := 0; j < 16; j++ {
				if q := q0 + j; q < wide && q%d.wp < s.OutW {
					cm |= 1 << j
					if first < 0 {
						first = 4 * ((q/d.wp)*s.OutW + q%d.wp)
					}
				}
			}
			n := bits.OnesCount16(cm)
			d.cm, d.sm, d.dst = append(d.cm, cm), append(d.sm, uint16(1<<n-1)), append(d.dst, max(first, 0))
		}
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

// inPlaceWeights reports whether the tiles read the filters as they are
// ([OC][C·KH·KW], rows k apart): the AVX-512 tiles when the channels fill
// whole blocks of 8. Otherwise packWeights lays them out.
func (d *directPlan) inPlaceWeights() bool { return d.zmm && d.s.OutC%8 == 0 }

// packWeights returns w [OC][C·KH·KW] as blocks of d.rows output
// channels, tap-major: the weights of tap k are adjacent. Channels past
// OC are 0.
func (d directPlan) packWeights(w []float32) []float32 {
	k, r := d.s.kk, d.rows
	wp := scratch[float32](d.ocp * k)
	for oc := 0; oc < d.ocp; oc++ {
		blk := wp[oc/r*r*k:][:r*k][oc%r:]
		if oc >= d.s.OutC {
			for t := 0; t < k; t++ {
				blk[r*t] = 0
			}
			continue
		}
		for t, v := range w[oc*k : (oc+1)*k] {
			blk[r*t] = v
		}
	}
	return wp
}

// directConv2D computes y = conv(x, w) with the direct kernel, images in
// parallel, plus bias[channel] unless bias is nil (added to each sum once
// it is complete, as a separate Add would). The tiles read a zero-padded copy of each image, or the
// image in place when it has no padding and the last tile's reads stay
// inside x's capacity. With AVX-512 they store into y; with AVX2 into a wide scratch
// output, whose columns past OW are then dropped by copying the rows out.
func directConv2D(s convShape, y, x, w, bias []float32) {
	directConv2DEpi(s, y, x, w, bias, epilogue[float32]{})
}

// directConv2DEpi is directConv2D followed by e on each image's output as
// it is completed (with bias nil when e adds one: BiasRelu adds the bias
// to the sum in its own operand order).
func directConv2DEpi(s convShape, y, x, w, bias []float32, e epilogue[float32]) {
	d := directPlanFor(s)
	_ = w[s.OutC*d.s.kk-1]
	wp := w // AVX-512 tiles read whole blocks of 8 filters in place
	if !d.inPlaceWeights() {
		wp = d.packWeights(w)
		defer release(wp)
	}
	var bp []float32 // the bias, padded to whole blocks
	if bias != nil {
		bp = scratch[float32](d.ocp)
		defer release(bp)
		clear(bp)
		copy(bp, bias[:s.OutC])
	}
	if numChunks(s.N, 1) <= 1 { // no closure, no job
		d.images(y, x, wp, bp, e, 0, s.N)
		return
	}
	parallelFor(s.N, 1, func(lo, hi int) { d.images(y, x, wp, bp, e, lo, hi) })
}

// images computes images [lo, hi) of directConv2DEpi, reading the plan's
// shape (d.s: without the batch size). It takes its scratch once and
// returns it at the end (no defer in the loop: those are allocated).
func (d *directPlan) images(y, x, wp, bp []float32, e epilogue[float32], lo, hi int) {
	inImg, outImg, plane := d.s.InC*d.s.InH*d.s.InW, d.s.OutC*d.s.ohw, d.hp*d.wp
	inPlace := d.s.PadH == 0 && d.s.PadW == 0
	var xp, yw []float32
	for n := lo; n < hi; n++ {
		xn := x[n*inImg:]
		if inPlace && len(xn) < d.xlen && cap(xn) >= d.xlen {
			// The overreach only feeds lanes that are never stored (wide
			// columns past OW, positions past OH·Wp): it may read
			// whatever the buffer holds past its length.
			xn = xn[:d.xlen]
		}
		if !inPlace || len(xn) < d.xlen {
			if xp == nil {
				xp = scratch[float32](d.xlen)
				clear(xp) // the padding and the overreach stay zero
			}
			for c := 0; c < d.s.InC; c++ {
				copyRows(xp[c*plane+d.s.PadH*d.wp+d.s.PadW:], xn[c*d.s.InH*d.s.InW:], d.s.InH, d.s.InW, d.wp, d.s.InW)
			}
			xn = xp
		}
		yn := y[n*outImg : (n+1)*outImg]
		if d.zmm {
			d.tilesZ(yn, xn, wp, bp)
			e.image(yn, d.s.OutC, d.s.ohw)
			continue
		}
		if yw == nil {
			yw = scratch[float32](d.ocp * d.qt)
		}
		d.tiles(yw, xn, wp, bp)
		for oc := 0; oc < d.s.OutC; oc++ {
			copyRows(yn[oc*d.s.ohw:], yw[oc*d.qt:], d.s.OutH, d.s.OutW, d.s.OutW, d.wp)
		}
		e.image(yn, d.s.OutC, d.s.ohw)
	}
	if xp != nil {
		release(xp)
	}
	if yw != nil {
		release(yw)
	}
}

// tiles computes the wide output yw [ocp][qt] of one image xp (AVX2):
// tiles of 4 channels by 24 positions, plus bp's biases unless bp is nil.
func (d directPlan) tiles(yw, xp, wp, bp []float32) {
	k := d.s.kk
	_, _ = yw[d.ocp*d.qt-1], xp[d.xlen-1]
	for q := 0; q < d.qt; q += directTile {
		for oc := 0; oc < d.ocp; oc += 4 {
			convTile4x24(&yw[oc*d.qt+q], d.qt, &xp[q], &wp[oc*k], &d.offs[0], k, biasAt(bp, oc))
		}
	}
}

// biasAt returns &bp[oc], or nil when bp is.
func biasAt(bp []float32, oc int) *float32 {
	if bp == nil {
		return nil
	}
	return &bp[oc]
}

// tilesZ computes one image's output y [OC][OH·OW] from xp (AVX-512):
// tiles of 8 channels by 48 positions, the last by 16 or 32, plus bp's
// biases unless bp is nil. A last block of 5 or 6 channels takes the
// 6-channel tiles (64 positions, the last 16 to 48), which compute at
// most one unused channel where an 8-channel tile would compute three;
// each output is the same sum over the taps in either tile. Such a block
// exists only when OutC is not a multiple of 8, so the 6-channel tiles
// always read packed blocks (inPlaceWeights), never past the filters.
func (d directPlan) tilesZ(y, xp, wp, bp []float32) {
	k, ohw := d.s.kk, d.s.ohw
	_ = xp[d.xlen-1]
	rs, ts := 1, 8 // packed blocks
	if d.inPlaceWeights() {
		rs, ts = k, 1
	}
	full := d.ocp // channels in 8-channel tiles
	if r := d.s.OutC % 8; r == 5 || r == 6 {
		full -= 8
	}
	for q := 0; q < d.qt; {
		nv := min(3, (d.qt-q)/16)
		u := q / 16
		for oc := 0; oc < full; oc += 8 {
			rows := min(8, d.s.OutC-oc)
			yp, xq, wb, bb := &y[oc*ohw], &xp[q], &wp[oc*k], biasAt(bp, oc)
			switch nv {
			case 3:
				convTile8x48z(yp, ohw, xq, wb, &d.offs[0], k, &d.cm[u], &d.sm[u], &d.dst[u], rows, bb, rs, ts)
			case 2:
				convTile8x32z(yp, ohw, xq, wb, &d.offs[0], k, &d.cm[u], &d.sm[u], &d.dst[u], rows, bb, rs, ts)
			default:
				convTile8x16z(yp, ohw, xq, wb, &d.offs[0], k, &d.cm[u], &d.sm[u], &d.dst[u], rows, bb, rs, ts)
			}
		}
		q += 16 * nv
	}
	if full == d.ocp {
		return
	}
	oc := full
	rows := d.s.OutC - oc
	yp, wb, bb := &y[oc*ohw], &wp[oc*k], biasAt(bp, oc)
	for q := 0; q < d.qt; {
		nv := min(4, (d.qt-q)/16)
		u, xq := q/16, &xp[q]
		switch nv {
		case 4:
			convTile6x64z(yp, ohw, xq, wb, &d.offs[0], k, &d.cm[u], &d.sm[u], &d.dst[u], rows, bb, rs, ts)
		case 3:
			convTile6x48z(yp, ohw, xq, wb, &d.offs[0], k, &d.cm[u], &d.sm[u], &d.dst[u], rows, bb, rs, ts)
		case 2:
			convTile6x32z(yp, ohw, xq, wb, &d.offs[0], k, &d.cm[u], &d.sm[u], &d.dst[u], rows, bb, rs, ts)
		default:
			convTile6x16z(yp, ohw, xq, wb, &d.offs[0], k, &d.cm[u], &d.sm[u], &d.dst[u], rows, bb, rs, ts)
		}
		q += 16 * nv
	}
}
