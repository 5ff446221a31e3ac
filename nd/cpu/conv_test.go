package cpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestIm2colUnitStride checks the unit-column-stride im2col and col2im
// against the general ones over padding, row stride, dilation, channel counts and
// widths below, at and above the kernel's 8-value moves.
func TestIm2colUnitStride(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct{ c, h, w, k, pad, strideH, dilate int }{
		{1, 28, 28, 5, 0, 1, 1},
		{6, 12, 12, 3, 0, 1, 1},
		{3, 32, 32, 3, 1, 1, 1},
		{2, 9, 7, 3, 1, 2, 1},
		{2, 10, 11, 3, 2, 1, 2},
		{1, 5, 5, 5, 2, 1, 1},
		{4, 8, 8, 1, 0, 3, 1},
		{1, 3, 20, 3, 4, 1, 1}, // rows entirely in the padding
		{2, 17, 9, 4, 3, 2, 3},
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			p := convP(1, c.c, 0, 1, c.k, c.pad)
			p.InH, p.InW, p.StrideH, p.DilateH, p.DilateW = c.h, c.w, c.strideH, c.dilate, c.dilate
			p.OutH = (c.h+2*c.pad-c.dilate*(c.k-1)-1)/c.strideH + 1
			p.OutW = c.w + 2*c.pad - c.dilate*(c.k-1)
			s := newConvShape(p)
			x := randSlice(c.c*c.h*c.w, r)
			for _, f64 := range []bool{false, true} {
				// Both start from the same values: the padding columns past
				// OH*OW (rows are s.ld apart) must be left alone by both.
				got := randSlice(s.kk*s.ld, r)
				want := append([]float32(nil), got...)
				if f64 {
					x64, g64, w64 := widen(x), widen(got), widen(want)
					im2colUnitStride(s, x64, g64)
					im2colStrided(s, x64, w64)
					if !slices.Equal(g64, w64) {
						t.Fatalf("float64: unit-stride im2col differs")
					}
					continue
				}
				im2colUnitStride(s, x, got)
				im2colStrided(s, x, want)
				if !slices.Equal(got, want) {
					t.Fatalf("float32: unit-stride im2col differs\n got %v\nwant %v", got, want)
				}
				// col2im: the same column matrix added into the same
				// starting values; sums of the same terms in the same order.
				dx, dxWant := randSlice(len(x), r), make([]float32, len(x))
				copy(dxWant, dx)
				col2imUnitStride(s, got, dx)
				col2imStrided(s, got, dxWant)
				if !slices.Equal(dx, dxWant) {
					t.Fatalf("float32: unit-stride col2im differs\n got %v\nwant %v", dx, dxWant)
				}
			}
		})
	}
}

func widen(s []float32) []float64 {
	d := make([]float64, len(s))
	for i, v := range s {
		d[i] = float64(v)
	}
	return d
}
