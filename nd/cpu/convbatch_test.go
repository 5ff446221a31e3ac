package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// TestBatchedConv: the batched kernels (several images per GEMM, tiny
// planes, pruned taps) compute in float64 what the per-image kernels do,
// forward, backward data and backward filter.
func TestBatchedConv(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ n, c, h, w, oc, k, stride, pad int }{
		{5, 4, 1, 1, 6, 3, 1, 1},   // a 1×1 plane: the centre tap alone
		{4, 3, 2, 2, 5, 3, 2, 1},   // stride 2 to 1×1: 4 of 9 taps
		{3, 6, 2, 2, 4, 3, 1, 1},   // 2×2: every tap, tiny planes
		{3, 2, 6, 6, 3, 3, 1, 1},   // 36 pixels: batched, not tiny
		{300, 2, 2, 2, 3, 1, 1, 0}, // 1×1 convolution, several GEMMs per worker
		{7, 3, 5, 4, 2, 3, 2, 0},   // stride 2, ragged
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			p := backend.ConvParams{
				N: c.n, InC: c.c, InH: c.h, InW: c.w, OutC: c.oc, KH: c.k, KW: c.k,
				OutH: (c.h+2*c.pad-c.k)/c.stride + 1, OutW: (c.w+2*c.pad-c.k)/c.stride + 1,
				StrideH: c.stride, StrideW: c.stride, PadH: c.pad, PadW: c.pad, DilateH: 1, DilateW: 1, Groups: 1,
			}
			s := newConvShape(p)
			if !useBatched(s) {
				t.Fatalf("useBatched is false for %+v", c)
			}
			x, w := widen(randSlice(c.n*c.c*c.h*c.w, r)), widen(randSlice(c.oc*s.kk, r))
			dy := widen(randSlice(c.n*c.oc*s.ohw, r))
			y1, y2 := make([]float64, len(dy)), make([]float64, len(dy))
			convForward(s, y1, x, w)
			convForwardBatched(s, y2, x, w)
			near(t, "forward", y1, y2)
			dx1, dx2 := make([]float64, len(x)), make([]float64, len(x))
			convBackwardData(s, dx1, dy, w)
			convBackwardDataBatched(s, dx2, dy, w)
			near(t, "backward data", dx1, dx2)
			dw1, dw2 := make([]float64, len(w)), widen(randSlice(len(w), r)) // dw2 starts as garbage
			convBackwardFilter(s, dw1, x, dy)
			convBackwardFilterBatched(s, dw2, x, dy)
			near(t, "backward filter", dw1, dw2)
		})
	}
}

func near(t *testing.T, what string, want, got []float64) {
	t.Helper()
	for i := range want {
		if d := math.Abs(want[i] - got[i]); d > 1e-12*(1+math.Abs(want[i])) {
			t.Fatalf("%s [%d] = %v, per image %v", what, i, got[i], want[i])
		}
	}
}
