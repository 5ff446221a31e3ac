package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// TestDirectConv checks the direct convolution against im2col + GEMM in
// float64 over channel counts, output channels that are and are not
// multiples of the tile's 4, padding, dilation, rectangular planes, and
// wide grids that end inside, at and past a tile, with both tile widths
// where the CPU has AVX-512.
func TestDirectConv(t *testing.T) {
	if !useAsmKernel {
		t.Skipf("the direct kernel needs AVX2 (%s)", ISAReport())
	}
	r := rand.New(rand.NewPCG(11, 12))
	cases := []directCase{
		{3, 1, 28, 28, 6, 5, 0, 1},  // lenet1: OC 6 pads to 8
		{3, 6, 12, 12, 16, 3, 0, 1}, // lenet2: 120 wide positions, 48+48+24
		{2, 3, 32, 32, 32, 3, 1, 1}, // cifar1
		{2, 15, 7, 9, 4, 3, 1, 1},
		{1, 2, 5, 5, 5, 5, 2, 1},
		{2, 4, 11, 6, 12, 3, 0, 2},
		{1, 1, 3, 3, 4, 3, 0, 1}, // one output position
		{1, 3, 9, 13, 8, 2, 1, 1},
		{4, 5, 10, 10, 7, 1, 1, 1},  // 1×1 with padding
		{2, 3, 7, 7, 9, 3, 1, 1},    // 4 vectors (48 + 16) whose last one starts on a column to drop
		{2, 3, 10, 10, 14, 3, 0, 1}, // 8 channels, then 6 in 6-channel tiles of 64 + 16 positions
	}
	for _, c := range cases {
		p := c.params()
		if !useDirectConv(p) {
			t.Fatalf("%+v: useDirectConv is false", c)
		}
		s := newConvShape(p)
		x, w, want, scale := c.reference(r)
		bias := randSlice(c.oc, r)
		for _, zmm := range tileWidths() {
			t.Run(fmt.Sprintf("%v/zmm=%v", c, zmm), func(t *testing.T) {
				defer func(old bool) { useZMMKernel = old }(useZMMKernel)
				useZMMKernel = zmm
				got := writesOnly(t, len(want), r, func(got []float32) { directConv2D(s, got, x, w, nil) })
				for i, v := range got {
					if d := math.Abs(float64(v) - want[i]); !(d <= 1e-6*scale*float64(s.kk)) {
						t.Fatalf("y[%d] = %g, want %g (scale %g)", i, v, want[i], scale)
					}
				}
				// With a bias: the same sums, each plus its channel's bias
				// in one float32 addition.
				withBias := make([]float32, len(got))
				directConv2D(s, withBias, x, w, bias)
				for i, v := range withBias {
					if want := got[i] + bias[i/s.ohw%c.oc]; math.Float32bits(v) != math.Float32bits(want) {
						t.Fatalf("y[%d] with bias = %g, want %g", i, v, want)
					}
				}
				// An input with room past its end (a pooled buffer) is
				// read in place, its overreach landing in NaNs that only
				// unstored lanes see: the same bits as the copied input.
				roomy := make([]float32, len(x), len(x)+64)
				copy(roomy, x)
				for i := len(x); i < cap(roomy); i++ {
					roomy[:cap(roomy)][i] = float32(math.NaN())
				}
				inPlace := make([]float32, len(got))
				directConv2D(s, inPlace, roomy, w, nil)
				for i, v := range inPlace {
					if math.Float32bits(v) != math.Float32bits(got[i]) {
						t.Fatalf("y[%d] read in place = %g, copied %g", i, v, got[i])
					}
				}
			})
		}
	}
}

// TestDirectConvChoice checks which convolutions take the direct kernel:
// few input channels, stride 1, one group, at least 4 output channels.
func TestDirectConvChoice(t *testing.T) {
	if !useAsmKernel {
		t.Skipf("the direct kernel needs AVX2 (%s)", ISAReport())
	}
	strided := convP(1, 3, 32, 32, 3, 1)
	strided.StrideH, strided.StrideW, strided.OutH, strided.OutW = 2, 2, 16, 16
	grouped := convP(1, 4, 8, 8, 3, 1)
	grouped.Groups = 2
	f64 := convP(1, 3, 8, 8, 3, 1)
	f64.DType = backend.Float64
	for _, c := range []struct {
		name string
		p    backend.ConvParams
		want bool
	}{
		{"lenet2", convP(128, 6, 12, 16, 3, 0), true},
		{"cifar1", convP(128, 3, 32, 32, 3, 1), true},
		{"16 channels", convP(1, 16, 8, 16, 3, 1), false},
		{"3 filters", convP(1, 3, 8, 3, 3, 1), false},
		{"1x1", convP(1, 3, 8, 8, 1, 0), false},
		{"stride 2", strided, false},
		{"groups", grouped, false},
		{"float64", f64, false},
	} {
		if got := useDirectConv(c.p); got != c.want {
			t.Errorf("%s: useDirectConv = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestDirectBackwardData checks the input gradient computed as the direct
// forward pass of the transposed convolution against im2col's in float64,
// over padding (none, some, the most the transposed pass allows),
// dilation, rectangular planes and filter counts, with both tile widths
// where the CPU has AVX-512.
func TestDirectBackwardData(t *testing.T) {
	if !useAsmKernel {
		t.Skipf("the direct kernel needs AVX2 (%s)", ISAReport())
	}
	r := rand.New(rand.NewPCG(13, 14))
	cases := []directCase{
		{3, 6, 12, 12, 16, 3, 0, 1}, // lenet2
		{2, 4, 9, 7, 5, 3, 1, 1},
		{2, 8, 8, 8, 12, 5, 2, 1},
		{1, 15, 6, 11, 64, 3, 4, 2},
		{2, 5, 10, 6, 7, 2, 1, 1},
	}
	for _, c := range cases {
		p := c.params()
		if !useDirectBackwardData(p) {
			t.Fatalf("%+v: useDirectBackwardData is false", c)
		}
		s := newConvShape(p)
		dy := randSlice(c.n*c.oc*s.ohw, r)
		w := randSlice(c.oc*s.kk, r)
		want := make([]float64, c.n*c.c*c.h*c.w)
		convBackwardData(s, want, widen(dy), widen(w))
		var scale float64
		for _, v := range want {
			scale = max(scale, math.Abs(v))
		}
		for _, zmm := range tileWidths() {
			t.Run(fmt.Sprintf("%v/zmm=%v", c, zmm), func(t *testing.T) {
				defer func(old bool) { useZMMKernel = old }(useZMMKernel)
				useZMMKernel = zmm
				got := writesOnly(t, len(want), r, func(got []float32) { directBackwardData(p, got, dy, w) })
				for i, v := range got {
					if d := math.Abs(float64(v) - want[i]); !(d <= 1e-6*scale*float64(c.oc*c.k*c.k)) {
						t.Fatalf("dx[%d] = %g, want %g (scale %g)", i, v, want[i], scale)
					}
				}
			})
		}
	}
	for _, c := range []struct {
		name string
		p    backend.ConvParams
		want bool
	}{
		{"cifar1 (3 channels)", convP(128, 3, 32, 32, 3, 1), false},
		{"16 channels", convP(1, 16, 8, 16, 3, 1), false},
		{"65 filters", convP(1, 8, 8, 65, 3, 1), false},
		{"padding beyond the kernel", convP(1, 8, 8, 8, 3, 3), false},
	} {
		if got := useDirectBackwardData(c.p); got != c.want {
			t.Errorf("%s: useDirectBackwardData = %v, want %v", c.name, got, c.want)
		}
	}
}

// directCase is a stride-1 convolution of the direct kernel's tests: n
// images of c×h×w, oc filters of k×k.
type directCase struct {
	n, c, h, w, oc, k, pad, dilate int
}

// reference returns random input and weights for the case and their
// convolution in float64 (im2col + GEMM), with its largest magnitude.
func (c directCase) reference(r *rand.Rand) (x, w []float32, want []float64, scale float64) {
	s := newConvShape(c.params())
	x = randSlice(c.n*c.c*c.h*c.w, r)
	w = randSlice(c.oc*s.kk, r)
	want = make([]float64, c.n*c.oc*s.ohw)
	convForward(s, want, widen(x), widen(w))
	for _, v := range want {
		scale = max(scale, math.Abs(v))
	}
	return x, w, want, scale
}

// params returns the case's convolution.
func (c directCase) params() backend.ConvParams {
	p := convP(c.n, c.c, 0, c.oc, c.k, c.pad)
	p.InH, p.InW, p.DilateH, p.DilateW = c.h, c.w, c.dilate, c.dilate
	p.OutH = c.h + 2*c.pad - c.dilate*(c.k-1)
	p.OutW = c.w + 2*c.pad - c.dilate*(c.k-1)
	return p
}

// tileWidths lists the tile kinds to test: AVX2's, and AVX-512's where
// the CPU runs them.
func tileWidths() []bool {
	if useZMMKernel {
		return []bool{false, true}
	}
	return []bool{false}
}

// writesOnly runs fill on n random values followed by 64 more and fails t if
// fill changed any of the 64: every value must be written, and nothing
// after them.
func writesOnly(t *testing.T, n int, r *rand.Rand, fill func([]float32)) []float32 {
	t.Helper()
	buf := randSlice(n+64, r)
	guard := slices.Clone(buf[n:])
	fill(buf[:n])
	if !slices.Equal(buf[n:], guard) {
		t.Fatalf("wrote past the output")
	}
	return buf[:n]
}
