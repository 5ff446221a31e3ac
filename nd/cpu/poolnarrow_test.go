package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMaxPoolBackwardNarrow checks the narrow kernel against the row path
// over stacked planes of every width it takes (2 to 16; LeNet's 10), bit
// for bit: inputs with ties (−0 against +0), NaN maxima in some groups,
// maxima equal to no input (the window's last input gets the gradient, as
// in the row kernel), plane counts whose rows end inside a group and on
// one; and pool2DBackward, stacking the planes over the cores, against
// the generic loop plane by plane.
func TestMaxPoolBackwardNarrow(t *testing.T) {
	if !useZMMKernel || !useAsmKernel {
		t.Skip("needs AVX-512")
	}
	r := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct{ h, w, planes int }{
		{8, 8, 1}, {8, 8, 37}, {4, 4, 3}, {4, 4, 8}, {2, 2, 5}, {2, 2, 64}, {6, 8, 7}, {2, 8, 9}, {12, 4, 11},
		{10, 10, 1}, {10, 10, 13}, {10, 10, 512}, {6, 6, 9}, {12, 12, 5}, {14, 14, 3}, {16, 16, 4}, {2, 16, 3}, {4, 10, 2},
	} {
		for _, mode := range []string{"forward maxima", "NaN", "other maxima"} {
			t.Run(fmt.Sprintf("%dx%dx%d/%s", tc.planes, tc.h, tc.w, mode), func(t *testing.T) {
				p := poolCase([2]int{tc.h, tc.w}, [2]int{2, 2}, [2]int{2, 2})
				p.N = tc.planes
				if !narrowPool2x2(p) {
					t.Fatal("narrowPool2x2 = false")
				}
				inPlane, outPlane := tc.h*tc.w, p.OutH*p.OutW
				x := make([]float32, tc.planes*inPlane)
				for i := range x {
					x[i] = float32(r.IntN(4))
					switch r.IntN(10) {
					case 0:
						x[i] = float32(math.Copysign(0, -1))
					case 1:
						x[i] = -float32(r.IntN(3) + 1)
					}
				}
				if mode == "NaN" {
					for range 1 + tc.planes/4 {
						x[r.IntN(len(x))] = float32(math.NaN())
					}
				}
				one := p
				one.N = 1
				y := make([]float32, tc.planes*outPlane)
				dy := make([]float32, len(y))
				for pl := range tc.planes {
					poolPlane(one, y[pl*outPlane:][:outPlane], x[pl*inPlane:][:inPlane])
				}
				for i := range dy {
					dy[i] = float32(r.NormFloat64())
				}
				if mode == "other maxima" {
					for i := range y {
						if r.IntN(3) == 0 {
							y[i] = y[i]*0.5 + 0.25
						}
					}
				}
				got, want := make([]float32, len(x)), make([]float32, len(x))
				for i := range got {
					got[i], want[i] = 7, 7 // must be overwritten
				}
				maxPool2x2BackNarrow(p, got, x, y, dy)
				for oh := range tc.planes * p.OutH {
					maxPool2x2BackRow(p, want, x, y, dy, oh)
				}
				if !slices.EqualFunc(got, want, sameBits) {
					t.Fatalf("narrow kernel\n got %v\nwant %v", got, want)
				}
				if mode == "other maxima" {
					return
				}
				pool2DBackward(p, got, x, y, dy)
				for pl := range tc.planes {
					poolBackwardPlane(one, want[pl*inPlane:][:inPlane], x[pl*inPlane:][:inPlane], dy[pl*outPlane:][:outPlane])
				}
				if !slices.EqualFunc(got, want, sameBits) {
					t.Fatalf("pool2DBackward\n got %v\nwant %v", got, want)
				}
			})
		}
	}
}
