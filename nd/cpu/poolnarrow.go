package cpu

import "github.com/goluon/goluon/nd/backend"

// The backward pass of 2×2, stride-2 max pooling on narrow planes: input
// rows of at most 16 (LeNet's second pooling, 10×10 to 5×5). The row
// kernel takes one output row per vector, so a row of 5 windows fills 5
// of 16 lanes and its fixed cost per row dominates. Where the input's
// height and width are twice the output's, the planes are row pairs
// stacked in memory, and 32/w consecutive row pairs of width w (their
// outputs, at most 16, and their inputs, 48 to 64) form a group: the
// narrow kernel routes a group's four input vectors at once, each lane's
// window found by a permutation of the outputs and its first maximum by
// shifts of a 64-lane mask.

// narrowPoolTable is what the narrow kernel needs for one input width w
// (its layout is the kernel's): per input vector of a group, the output
// (0–15) of each lane's window; and the 64-lane masks of the bottom rows'
// lanes, of their even lanes, of their odd lanes, and of the lanes that
// hold inputs.
type narrowPoolTable struct {
	idx   [64]int32
	masks [4]uint64
}

// narrowPoolTables holds the tables for w = 2, 4, ..., 16 (index w/2−1).
var narrowPoolTables = func() (t [8]narrowPoolTable) {
	for i := range t {
		w := 2 * (i + 1)
		nin := 32 / w * 2 * w
		for pos := range nin {
			q := pos % (2 * w)
			t[i].idx[pos] = int32(pos/(2*w)*(w/2) + q%w/2)
			t[i].masks[3] |= 1 << pos
			if q >= w {
				t[i].masks[0] |= 1 << pos
				t[i].masks[1+pos%2] |= 1 << pos
			}
		}
	}
	return t
}()

// narrowPool2x2 reports whether maxPool2x2BackNarrow takes p's planes:
// 2×2 windows at stride 2 inside an input twice the output's height and
// width, rows of at most 16 inputs, on AVX-512.
func narrowPool2x2(p backend.PoolParams) bool {
	return useAsmKernel && useZMMKernel && pool2x2(p) && p.InH == 2*p.OutH && p.InW == 2*p.OutW && p.InW <= 16
}

// maxPool2x2BackNarrow is the backward pass of whole planes of p
// (narrowPool2x2) stacked: y and dy hold a whole number of output rows,
// x and dx their inputs. A group whose maxima hold a NaN, and the rows
// after the last whole group, go through the row path.
func maxPool2x2BackNarrow(p backend.PoolParams, dx, x, y, dy []float32) {
	t := &narrowPoolTables[p.InW/2-1]
	pairs := 32 / p.InW // row pairs per group
	nin, nout := 2*p.InW*pairs, p.OutW*pairs
	rows := len(y) / p.OutW
	groups := rows / pairs
	for g := 0; g < groups; g++ {
		g += maxPool2x2BackNarrowF32x512(&dx[nin*g], &x[nin*g], &y[nout*g], &dy[nout*g], groups-g, p.InW, nin, nout, t)
		if g < groups {
			for oh := g * pairs; oh < (g+1)*pairs; oh++ {
				maxPool2x2BackRow(p, dx, x, y, dy, oh)
			}
		}
	}
	for oh := groups * pairs; oh < rows; oh++ {
		maxPool2x2BackRow(p, dx, x, y, dy, oh)
	}
}

// narrowPlanes runs planes [lo, hi) of p (narrowPool2x2) through
// maxPool2x2BackNarrow, stacked; it reports false, doing nothing, for
// float64.
func narrowPlanes[T Float](p backend.PoolParams, dx, x, y, dy []T, lo, hi int) bool {
	d32, ok := asF32(dx)
	if !ok {
		return false
	}
	in, out := p.InH*p.InW, p.OutH*p.OutW
	maxPool2x2BackNarrow(p, d32[lo*in:hi*in], asF32s(x)[lo*in:hi*in], asF32s(y)[lo*out:hi*out], asF32s(dy)[lo*out:hi*out])
	return true
}

// narrowBackwardPlane is the backward pass of one plane of p
// (narrowPool2x2): float32 through the narrow kernel, float64 through the
// 2×2 plane loop.
func narrowBackwardPlane[T Float](p backend.PoolParams, dxp, xp, yp, dyp []T) {
	if !narrowPlanes(p, dxp, xp, yp, dyp, 0, 1) {
		maxPool2x2BackwardPlane(p, dxp, xp, yp, dyp)
	}
}
