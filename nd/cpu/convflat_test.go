package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFlatConv checks the flat forward convolution against im2col + GEMM
// in float64: LeNet's first layer, filter counts that fill six and do not
// (one, two and three groups), planes whose positions end on a group of
// 48, inside its first, second and third vector, and under one vector;
// several channels and padding. Every output is written and nothing past
// it; with a bias and a ReLU the epilogue's bits are the direct path's.
func TestFlatConv(t *testing.T) {
	if !useZMMKernel {
		t.Skip("needs AVX-512")
	}
	r := rand.New(rand.NewPCG(21, 22))
	for _, c := range []directCase{
		{3, 1, 28, 28, 6, 5, 0, 1},  // LeNet's first layer: 576 = 12·48
		{2, 1, 12, 11, 7, 3, 0, 1},  // 90 positions, filters 6 + 1
		{2, 2, 9, 9, 13, 3, 1, 1},   // 81, padding, 6 + 6 + 1
		{1, 3, 6, 6, 4, 2, 0, 1},    // 25, one short group
		{3, 1, 5, 5, 6, 3, 0, 1},    // 9: under one vector
		{2, 2, 10, 10, 12, 4, 0, 1}, // 49: one past a group
		{1, 1, 16, 14, 6, 3, 1, 1},  // 224: inside a group's third vector
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			p := c.params()
			s := newConvShape(p)
			x, w, want, scale := c.reference(r)
			got := writesOnly(t, len(want), r, func(y []float32) { flatConv(s, y, x, w, epilogue[float32]{}) })
			for i, v := range got {
				if d := math.Abs(float64(v) - want[i]); !(d <= 1e-6*scale*float64(s.kk)) {
					t.Fatalf("y[%d] = %g, want %g", i, v, want[i])
				}
			}
			bias := randSlice(c.oc, r)
			e := newEpilogue(bias, c.oc, true)
			withEpi := make([]float32, len(got))
			flatConv(s, withEpi, x, w, e)
			for n := range c.n {
				e.image(got[n*c.oc*s.ohw:(n+1)*c.oc*s.ohw], c.oc, s.ohw)
			}
			for i, v := range withEpi {
				if math.Float32bits(v) != math.Float32bits(got[i]) {
					t.Fatalf("y[%d] with bias and ReLU = %g, want %g", i, v, got[i])
				}
			}
		})
	}
}

// TestFlatConvChoice checks which layers take the flat forward pass.
func TestFlatConvChoice(t *testing.T) {
	for _, c := range []struct {
		name string
		p    directCase
		want bool
	}{
		{"LeNet's first layer (0.86 of the direct FMAs)", directCase{32, 1, 28, 28, 6, 5, 0, 1}, true},
		{"LeNet's second (1.27)", directCase{32, 6, 12, 12, 16, 3, 0, 1}, false},
		{"the CIFAR CNN's first (1.09)", directCase{32, 3, 32, 32, 32, 3, 1, 1}, false},
		{"dilated", directCase{2, 1, 28, 28, 6, 5, 0, 2}, false},
		{"LeNet's second layer's input gradient (48 planes)", directCase{32, 16, 10, 10, 6, 3, 2, 1}, false},
	} {
		if got := useFlatConv(newConvShape(c.p.params())); got != c.want && useZMMKernel {
			t.Errorf("%s: useFlatConv = %v, want %v", c.name, got, c.want)
		}
	}
}
