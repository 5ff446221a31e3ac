package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// winoBatchCases are small planes (tile rows of at most
// winoBatchMaxTilesW tiles) with each padding, odd and even sizes, one-row
// and one-column planes, channel counts around the micro-kernel's and an
// entry's 16 lanes.
var winoBatchCases = []winoCase{
	{1, 1, 3, 3, 1, 0, 0},
	{3, 2, 1, 1, 3, 1, 1},
	{5, 3, 2, 2, 4, 1, 1},
	{4, 16, 4, 4, 16, 1, 1},
	{7, 5, 3, 3, 6, 1, 1},
	{2, 7, 8, 8, 9, 1, 1},
	{3, 4, 6, 5, 17, 2, 0},
	{6, 17, 4, 5, 5, 0, 2},
	{9, 3, 2, 3, 2, 2, 2},
	{2, 6, 7, 1, 3, 1, 2},
	// Whole 8×8 and 4×4 planes (stored without scatters), ragged groups
	// of images.
	{7, 5, 4, 4, 6, 1, 1},
	{3, 4, 8, 8, 5, 1, 1},
	{5, 2, 6, 6, 3, 0, 0},
	{6, 3, 10, 10, 4, 0, 0},
}

// TestWinoBatchMatchesRows checks the batched passes against the row
// kernels' with NaN and ±Inf among the values, for rounds of several
// images, of one, and ragged last rounds: the forward and backward-data
// passes bit for bit, the filter gradient (whose sums over the images run
// in another order) to float32 rounding. Each batched way runs: the
// permute loads and whole-plane stores where they apply, and the gathers
// and scatters everywhere. Nothing may be written before or after the
// outputs.
func TestWinoBatchMatchesRows(t *testing.T) {
	if !useZMMKernel {
		t.Skip("no AVX-512: the batched transforms are not used on this CPU")
	}
	defer func(v, b int) { winoTargetCols, winoBatchCols = v, b }(winoTargetCols, winoBatchCols)
	defer func(b, st, pe bool) { useWinoBatch, useWinoStores, usePermLoads = b, st, pe }(useWinoBatch, useWinoStores, usePermLoads)
	type way struct{ batch, stores, perm bool }
	for _, cols := range []int{1, 20, 256} {
		winoTargetCols, winoBatchCols = cols, cols
		for _, c := range winoBatchCases {
			t.Run(fmt.Sprintf("cols=%d/%v", cols, c), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(c.n*100+c.c), uint64(c.h*10+c.w)))
				useWinoBatch, useWinoStores, usePermLoads = true, true, true
				s := newConvShape(c.params())
				p := newWinoProblem(s.N, s.InC, s.InH, s.InW, s.PadH, s.PadW, s.OutC).batched()
				if !p.batch {
					t.Fatalf("not batched: %+v", p)
				}
				// Whole 8×8 and 4×4 planes take the permute loads
				// (winoPermInF32x512, winoPermGradF32x512).
				tabs := winoBatchTables(p, min(p.group, c.n))
				if whole := c.h == c.w && (c.h == 8 || c.h == 4) && c.ph == 1 && c.pw == 1; whole && (tabs.permIn == nil || tabs.permGrad == nil) {
					t.Errorf("no permute loads: input %v, gradients %v", tabs.permIn != nil, tabs.permGrad != nil)
				}
				x := withSpecials(r, randSlice(c.n*c.c*c.h*c.w, r))
				w := randSlice(c.oc*c.c*9, r)
				dy := withSpecials(r, randSlice(c.n*c.oc*s.ohw, r))
				const pad = 64 // sentinels before and after y and dx
				run := func(wy way) (y, dx, dw []float32) {
					useWinoBatch, useWinoStores, usePermLoads = wy.batch, wy.stores, wy.perm
					yb, dxb := make([]float32, len(dy)+2*pad), make([]float32, len(x)+2*pad)
					for _, b := range [][]float32{yb, dxb} {
						for i := range b {
							b[i] = 42
						}
					}
					y, dx, dw = yb[pad:pad+len(dy)], dxb[pad:pad+len(x)], make([]float32, len(w))
					winoConv2D(s, y, x, w)
					winoBackwardData(s, dx, dy, w)
					winoBackwardFilter(s, dw, x, dy)
					for _, b := range [][]float32{yb[:pad], yb[pad+len(dy):], dxb[:pad], dxb[pad+len(x):]} {
						for i, v := range b {
							if v != 42 {
								t.Fatalf("%+v: written outside the outputs (%d): %v", wy, i, v)
							}
						}
					}
					return y, dx, dw
				}
				yRow, dxRow, dwRow := run(way{false, true, true})
				for _, wy := range []way{{true, true, true}, {true, false, false}} {
					y, dx, dw := run(wy)
					for _, pass := range []struct {
						name      string
						got, want []float32
					}{{"forward", y, yRow}, {"data", dx, dxRow}} {
						for i := range pass.want {
							if !sameBits(pass.got[i], pass.want[i]) {
								t.Fatalf("%+v %s [%d]: batched %v, rows %v", wy, pass.name, i, pass.got[i], pass.want[i])
							}
						}
					}
					for i, want := range dwRow {
						got := dw[i]
						if math.IsNaN(float64(want)) != math.IsNaN(float64(got)) ||
							!math.IsNaN(float64(want)) && math.Abs(float64(got-want)) > 1e-4*(1+math.Abs(float64(want))) {
							t.Fatalf("%+v filter [%d]: batched %v, rows %v", wy, i, got, want)
						}
					}
				}
			})
		}
	}
}

// TestWinoBatchEpilogue checks the forward pass with a bias and ReLU
// epilogue against the plain pass followed by the epilogue's operations.
func TestWinoBatchEpilogue(t *testing.T) {
	if !useZMMKernel {
		t.Skip("no AVX-512: the batched transforms are not used on this CPU")
	}
	r := rand.New(rand.NewPCG(3, 4))
	c := winoCase{6, 8, 4, 4, 19, 1, 1}
	s := newConvShape(c.params())
	x, w, bias := randSlice(c.n*c.c*c.h*c.w, r), randSlice(c.oc*c.c*9, r), randSlice(c.oc, r)
	y, want := make([]float32, c.n*c.oc*s.ohw), make([]float32, c.n*c.oc*s.ohw)
	winoConv2DEpi(s, y, x, w, newEpilogue(bias, c.oc, true))
	winoConv2D(s, want, x, w)
	for i := range want {
		if v := float32(math.Max(float64(want[i]+bias[i/s.ohw%c.oc]), 0)); !sameBits(y[i], v) {
			t.Fatalf("[%d]: %v, want %v", i, y[i], v)
		}
	}
}

// withSpecials puts a NaN, +Inf, −Inf and −0 at random places of v (when
// it is long enough) and returns it.
func withSpecials(r *rand.Rand, v []float32) []float32 {
	if len(v) < 40 {
		return v
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)} {
		v[r.IntN(len(v))] = float32(x)
	}
	return v
}
