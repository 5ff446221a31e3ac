package cpu

import (
	"fmt"
	"math"
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
		{8, 2, 2, 3, 1, 1, 1}, // tiny planes (im2colTiny): 2×2, 1×1, 2×4
		{4, 1, 1, 3, 1, 1, 1},
		{3, 4, 4, 3, 1, 2, 1},
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
					im2colUnitStride(s, x64, len(x), 1, g64)
					im2colStrided(s, x64, len(x), 1, w64)
					if !slices.Equal(g64, w64) {
						t.Fatalf("float64: unit-stride im2col differs")
					}
					continue
				}
				im2colUnitStride(s, x, len(x), 1, got)
				im2colStrided(s, x, len(x), 1, want)
				if !slices.Equal(got, want) {
					t.Fatalf("float32: unit-stride im2col differs\n got %v\nwant %v", got, want)
				}
				if s.ohw <= tinyPlane {
					tiny := append([]float32(nil), want...)
					im2colTiny(s, x, len(x), 1, tiny, nil)
					if !slices.Equal(tiny, want) {
						t.Fatalf("im2colTiny differs\n got %v\nwant %v", tiny, want)
					}
					d1, d2 := randSlice(len(x), r), make([]float32, len(x))
					copy(d2, d1)
					col2imTiny(s, want, d1, len(x), 1, nil)
					col2imStrided(s, want, d2, len(x), 1)
					for i := range d1 { // the same terms, perhaps in another order
						if math.Abs(float64(d1[i]-d2[i])) > 1e-5 {
							t.Fatalf("col2imTiny differs at %d: %v vs %v", i, d1[i], d2[i])
						}
					}
				}
				// col2im: the same column matrix added into the same
				// starting values; sums of the same terms in the same order.
				dx, dxWant := randSlice(len(x), r), make([]float32, len(x))
				copy(dxWant, dx)
				col2imUnitStride(s, got, dx, len(x), 1)
				col2imStrided(s, got, dxWant, len(x), 1)
				if !slices.Equal(dx, dxWant) {
					t.Fatalf("float32: unit-stride col2im differs\n got %v\nwant %v", dx, dxWant)
				}
				// Three images side by side (convbatch.go) give each
				// image's own column matrix, and col2im each image's sum.
				const m = 3
				bs := s
				bs.ld = m * s.ohw
				xs := randSlice(m*len(x), r)
				cols := make([]float32, s.kk*bs.ld)
				im2colImages(bs, xs, len(x), m, cols)
				dxs := make([]float32, m*len(x))
				col2imImages(bs, cols, dxs, len(x), m)
				for i := range m {
					one := make([]float32, s.kk*s.ld)
					im2col(s, xs[i*len(x):], one)
					dxOne := make([]float32, len(x))
					col2im(s, one, dxOne)
					for row := range s.kk {
						if !slices.Equal(cols[row*bs.ld+i*s.ohw:][:s.ohw], one[row*s.ld:][:s.ohw]) {
							t.Fatalf("image %d of %d side by side: row %d differs from its own im2col", i, m, row)
						}
					}
					if !slices.Equal(dxs[i*len(x):][:len(x)], dxOne) {
						t.Fatalf("image %d of %d side by side: col2im differs from its own", i, m)
					}
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
