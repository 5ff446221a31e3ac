package cpu

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// Batched Winograd transforms for small planes. The row kernels of
// winograd_rows.go take 8 tiles along one tile row of a plane, so a plane
// with fewer tile columns wastes most of each call: a 4×4 output (2×2
// tiles) uses a quarter of it. These kernels (winobatch512_amd64.s,
// AVX-512) instead take any 16 tiles of a group of images, one per lane,
// with gathers (the input windows, the output gradients) and scatters (the
// outputs) through lane tables, so the planes of ResNet-18's middle stages
// at CIFAR size (8×8, 4×4, 2×2) run as Winograd too. The arithmetic is the
// row kernels', value for value, so the forward and backward-data passes
// give their bits; the filter gradient sums the images in another order
// (TestWinoBatchMatchesRows).
//
// A group's transformed tiles keep winograd.go's layout (image i's tiles
// at columns i·T …), the columns padded to whole entries of 16 lanes.

// useWinoBatch lets tests turn the batched transforms off, to compare the
// two ways, and useWinoStores the stores of whole 8×8 and 4×4 planes
// (winoStoreOut8F32x512, winoStoreOut4F32x512) in place of the scatters.
var useWinoBatch, useWinoStores = true, true

// winoBatchMaxTilesW is the widest tile row (tiles per plane row) that
// takes the batched transforms; wider ones fill the row kernels' groups of
// 8 well enough (BenchmarkConvResNet18, layer1).
var winoBatchMaxTilesW = 4

// winoBatched reports whether p's transforms run batched: AVX-512, tile
// rows narrower than winoBatchMaxTilesW + 1, and offsets that fit the
// tables' int32 lanes.
func winoBatched(p winoProblem) bool {
	return useZMMKernel && useWinoBatch && p.tilesW <= winoBatchMaxTilesW &&
		int64(p.group)*int64(max(p.ci*p.h*p.w, p.co*p.oh*p.ow)) < math.MaxInt32
}

// winoBatchCols is the number of tiles (GEMM columns) a round of the
// batched passes aims at.
var winoBatchCols = 512

// batched returns p with batch set, its rounds of images (group) and
// V and M's stride for them, where winoBatched allows.
func (p winoProblem) batched() winoProblem {
	q := p
	q.group = max(1, min(p.n, winoBatchCols/p.t))
	if q.batch = winoBatched(q); !q.batch {
		return p
	}
	q.ldV = winoBatchLd(q.group * q.t)
	return q
}

// winoEntry is the int32s of one table entry: 16 offsets, 16 masks.
const winoEntry = 32

// winoTables are the lane tables of a group of m images: in for the input
// windows (offset: the window's top-left value from the group's first
// input value; mask 4i+j: position (i, j) lies in the image), out for the
// 2×2 outputs and their gradients (offset: the tile's top-left output;
// mask 2a+b: position (a, b) lies in the output). Lanes past the group's
// m·T tiles have every mask clear.
type winoTables struct {
	in, out []int32
	panels  int
	// permIn and permGrad are the permute entries (winoPermEntry int32s
	// each) of the input windows and the output gradients, nil where some
	// entry's values do not lie in four runs of 16 (buildWinoPerm).
	permIn, permGrad []int32
}

// winoPermEntry is the int32s of a permute entry: four run offsets, four
// unused, 16 positions' 16 indices, 16 pairs of masks, and padding to a
// whole number of cache lines.
const winoPermEntry = 320

// usePermLoads lets tests turn the permute loads off.
var usePermLoads = true

// winoBatchForward is winoForward for a batched problem p (float32). The
// images go in rounds of p.group; each round is three parallel phases:
// the input transform by entries, the 16 products by position ξ (each
// product on one core, reading its U_ξ once for the round), and the output
// transform by entries, then the epilogue by images.
func winoBatchForward(p winoProblem, y, x, u []float32, tA bool, e epilogue[float32]) {
	lda := p.ci
	if tA {
		lda = p.co
	}
	inImg, outImg := p.ci*p.h*p.w, p.co*p.oh*p.ow
	v := scratch[float32](16 * p.ci * p.ldV)
	m := scratch[float32](16 * p.co * p.ldV)
	defer release(v)
	defer release(m)
	for g0 := 0; g0 < p.n; g0 += p.group {
		nb := min(p.group, p.n-g0)
		t := winoBatchTables(p, nb)
		xg, yg := x[g0*inImg:], y[g0*outImg:]
		parallelFor(t.panels, 1, func(lo, hi int) { winoGatherIn(p, t, xg, v, nb, lo, hi) })
		parallelFor(16, 1, func(lo, hi int) {
			for xi := lo; xi < hi; xi++ {
				gemmSlices(tA, false, p.co, nb*p.t, p.ci, 1, u[xi*p.co*p.ci:], lda,
					v[xi*p.ci*p.ldV:], p.ldV, 0, m[xi*p.co*p.ldV:], p.ldV, false)
			}
		})
		parallelFor(t.panels, 1, func(lo, hi int) { winoScatterOut(p, t, m, yg, nb, lo, hi) })
		if e.bias != nil || e.relu {
			parallelFor(nb, 1, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					e.image(yg[i*outImg:][:outImg], p.co, p.oh*p.ow)
				}
			})
		}
	}
}

// winoBatchFilter is winoBackwardFilter for a batched problem p: per round
// of images, the input and output-gradient transforms by entries, then
// dU_ξ += dM_ξ·V_ξᵀ by position ξ, so the sums run in round order whatever
// the number of cores.
func winoBatchFilter(p winoProblem, dw, x, dy []float32) {
	inImg, outImg := p.ci*p.h*p.w, p.co*p.oh*p.ow
	plane := p.co * p.ci
	du := scratch[float32](16 * plane)
	v := scratch[float32](16 * p.ci * p.ldV)
	dm := scratch[float32](16 * p.co * p.ldV)
	defer release(du)
	defer release(v)
	defer release(dm)
	if p.n == 0 {
		clear(du)
	}
	for g0 := 0; g0 < p.n; g0 += p.group {
		nb := min(p.group, p.n-g0)
		t := winoBatchTables(p, nb)
		xg, dyg := x[g0*inImg:], dy[g0*outImg:]
		parallelFor(t.panels, 1, func(lo, hi int) {
			winoGatherIn(p, t, xg, v, nb, lo, hi)
			winoGatherGrad(p, t, dyg, dm, nb, lo, hi)
		})
		beta := float32(1)
		if g0 == 0 {
			beta = 0
		}
		parallelFor(16, 1, func(lo, hi int) {
			for xi := lo; xi < hi; xi++ {
				gemmSlices(false, true, p.co, p.ci, nb*p.t, 1, dm[xi*p.co*p.ldV:], p.ldV,
					v[xi*p.ci*p.ldV:], p.ldV, beta, du[xi*plane:], p.ci, false)
			}
		})
	}
	winoFilterGrad(dw, du, p.co, p.ci)
}

// winoTableKey is what a group's tables depend on.
type winoTableKey struct {
	h, w, ph, pw, oh, ow, inImg, outImg, m int
	perm                                   bool // usePermLoads
}

// winoTableCache keeps the tables made, up to maxWinoTableCache bytes
// (nothing is evicted: past the budget, tables are made per call). A key
// holds the images of a round, so a program that feeds many ragged batch
// sizes fills it sooner.
var (
	winoTableCache    sync.Map
	winoTableCached   atomic.Int64
	maxWinoTableCache = int64(8 << 20)
)

// winoBatchTables returns the tables of m images of p.
func winoBatchTables(p winoProblem, m int) *winoTables {
	key := winoTableKey{p.h, p.w, p.ph, p.pw, p.oh, p.ow, p.ci * p.h * p.w, p.co * p.oh * p.ow, m, usePermLoads}
	if t, ok := winoTableCache.Load(key); ok {
		return t.(*winoTables)
	}
	t := buildWinoTables(p, key.inImg, key.outImg, m)
	t.permIn = buildWinoPerm(t.in, 4, p.h, p.w, key.inImg)
	t.permGrad = buildWinoPerm(t.out, 2, p.oh, p.ow, key.outImg)
	bytes := int64(len(t.in)+len(t.out)+len(t.permIn)+len(t.permGrad)) * 4
	if winoTableCached.Add(bytes) <= maxWinoTableCache {
		if _, loaded := winoTableCache.LoadOrStore(key, t); loaded {
			winoTableCached.Add(-bytes)
		}
	} else {
		winoTableCached.Add(-bytes)
	}
	return t
}

// buildWinoTables makes winoBatchTables' tables.
func buildWinoTables(p winoProblem, inImg, outImg, m int) *winoTables {
	t := &winoTables{panels: ceilDiv(m*p.t, 16)}
	t.in = make([]int32, t.panels*winoEntry)
	t.out = make([]int32, t.panels*winoEntry)
	for q := range m * p.t {
		i, tile := q/p.t, q%p.t
		th, tw := tile/p.tilesW, tile%p.tilesW
		e, lane := (q/16)*winoEntry, q%16
		r0, c0 := 2*th-p.ph, 2*tw-p.pw
		t.in[e+lane] = int32(i*inImg + r0*p.w + c0)
		for a := range 4 {
			for b := range 4 {
				if r, c := r0+a, c0+b; r >= 0 && r < p.h && c >= 0 && c < p.w {
					t.in[e+16+4*a+b] |= 1 << lane
				}
			}
		}
		t.out[e+lane] = int32(i*outImg + 2*th*p.ow + 2*tw)
		for a := range 2 {
			for b := range 2 {
				if 2*th+a < p.oh && 2*tw+b < p.ow {
					t.out[e+16+2*a+b] |= 1 << lane
				}
			}
		}
	}
	return t
}

// buildWinoPerm makes the permute entries of a lane table tab (winoEntry
// int32s per entry) whose positions are the n×n windows of planes h×w, img
// values apart: position q of lane l reads offset tab[e+l] + (q/n)·w +
// q%n, where the entry's mask q allows. It returns nil unless every
// entry's values lie in at most four runs of 16 values, each inside one
// image's first channel plane (so that the runs of every channel stay
// inside the image), and the plane holds at least 16 values.
func buildWinoPerm(tab []int32, n, h, w, img int) []int32 {
	plane := h * w
	if plane < 16 || !usePermLoads {
		return nil
	}
	panels := len(tab) / winoEntry
	out := make([]int32, panels*winoPermEntry)
	for j := range panels {
		e, pe := tab[j*winoEntry:][:winoEntry], out[j*winoPermEntry:][:winoPermEntry]
		var runs []int // run starts, in order of first use
		for q := range n * n {
			r, c := q/n, q%n
			for l := range 16 {
				if e[16+q]&(1<<l) == 0 {
					continue
				}
				off := int(e[l]) + r*w + c
				k := slices.IndexFunc(runs, func(s int) bool { return off >= s && off < s+16 })
				if k < 0 {
					if len(runs) == 4 {
						return nil
					}
					base := off / img * img // the image's first value
					s := min(base+(off-base)/16*16, base+plane-16)
					runs = append(runs, s)
					k = len(runs) - 1
				}
				pe[8+16*q+l] = int32(k%2*16 + off - runs[k])
				pe[264+2*q+k/2] |= 1 << l
			}
		}
		for k := range 4 {
			if k < len(runs) {
				pe[k] = int32(runs[k])
			}
		}
	}
	return out
}

// winoBatchLd is the column stride of a batched problem's V and M: whole
// entries, and not a multiple of 32 values (as newWinoProblem's).
func winoBatchLd(cols int) int {
	ld := ceilDiv(cols, 16) * 16
	if ld%32 == 0 {
		ld += 16
	}
	return ld
}

// winoGatherIn transforms the ci channels of the m images at x (p.ci·h·w
// values apart) into v, as winoInput does image by image, for the table
// entries [lo, hi).
func winoGatherIn(p winoProblem, t *winoTables, x, v []float32, m, lo, hi int) {
	_ = x[(m-1)*p.ci*p.h*p.w+p.ci*p.h*p.w-1]
	_ = v[15*p.ci*p.ldV+(p.ci-1)*p.ldV+16*t.panels-1]
	for j := lo; j < hi; j++ {
		if t.permIn != nil {
			winoPermInF32x512(&x[0], p.h*p.w, &t.permIn[j*winoPermEntry], &v[16*j], p.ldV, p.ci*p.ldV, p.ci)
			continue
		}
		winoGatherInF32x512(&x[0], p.h*p.w, p.w, &t.in[j*winoEntry], &v[16*j], p.ldV, p.ci*p.ldV, p.ci)
	}
}

// winoScatterOut writes the outputs of the m images' transformed tiles mt
// (position ξ of channel oc at mt[ξ·co·ldV + oc·ldV]) into y, as
// winoOutputRow and the copies of winoForward do image by image, for the
// table entries [lo, hi).
func winoScatterOut(p winoProblem, t *winoTables, mt, y []float32, m, lo, hi int) {
	plane := p.oh * p.ow
	_ = y[(m-1)*p.co*plane+p.co*plane-1]
	_ = mt[15*p.co*p.ldV+(p.co-1)*p.ldV+16*t.panels-1]
	outImg := p.co * plane
	for j := lo; j < hi; j++ {
		switch {
		case p.oh == 8 && p.ow == 8 && useWinoStores: // one image per entry
			winoStoreOut8F32x512(&mt[16*j], p.co*p.ldV, p.ldV, &y[j*outImg], plane, p.co)
		case p.oh == 4 && p.ow == 4 && useWinoStores: // four
			winoStoreOut4F32x512(&mt[16*j], p.co*p.ldV, p.ldV, &y[4*j*outImg], plane, outImg, min(4, m-4*j), p.co)
		default:
			winoScatterOutF32x512(&mt[16*j], p.co*p.ldV, p.ldV, &t.out[j*winoEntry], &y[0], plane, p.ow, p.co)
		}
	}
}

// winoGatherGrad transforms the output gradients dy of the m images into
// dm (as winoGradOutRow, image by image), for the table entries [lo, hi).
func winoGatherGrad(p winoProblem, t *winoTables, dy, dm []float32, m, lo, hi int) {
	plane := p.oh * p.ow
	_ = dy[(m-1)*p.co*plane+p.co*plane-1]
	_ = dm[15*p.co*p.ldV+(p.co-1)*p.ldV+16*t.panels-1]
	for j := lo; j < hi; j++ {
		if t.permGrad != nil {
			winoPermGradF32x512(&dy[0], plane, &t.permGrad[j*winoPermEntry], &dm[16*j], p.ldV, p.co*p.ldV, p.co)
			continue
		}
		winoGatherGradF32x512(&dy[0], plane, p.ow, &t.out[j*winoEntry], &dm[16*j], p.ldV, p.co*p.ldV, p.co)
	}
}
