package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// TestBiasReluBackwardLongBias gives BiasReluBackward a bias-gradient
// buffer longer than its channels (a traced graph's planned buffers run
// on): it writes the C sums and leaves the rest, also with no rows
// (Outer 0), on the long-run and the row paths.
func TestBiasReluBackwardLongBias(t *testing.T) {
	be := New()
	for _, p := range []backend.ChannelParams{
		{Outer: 3, C: 4, Inner: 1, DType: backend.Float32},
		{Outer: 2, C: 3, Inner: 200, DType: backend.Float32},
		{Outer: 0, C: 5, Inner: 1, DType: backend.Float32},
	} {
		n := p.Outer * p.C * p.Inner
		mk := func(m int, v float64) backend.Arg {
			return newArg(t, be, backend.Float32, m, func(int) float64 { return v })
		}
		dx, g, y := mk(n, 0), mk(n, 1), mk(n, 2)
		db := mk(p.C+16, 9)
		be.BiasReluBackward(p, dx, db, g, y)
		got := slice[float32](db)[:p.C+16]
		for c, v := range got {
			want := float32(9)
			if c < p.C {
				want = float32(p.Outer * p.Inner)
			}
			if v != want {
				t.Fatalf("%+v: db[%d] = %v, want %v", p, c, v, want)
			}
		}
	}
}

// TestBiasReluLongRowPieces runs BiasRelu on a few rows longer than two
// elemGrains with a bias per position (nd.AddRelu's shape), which split
// into pieces over the workers, against the row kernel, bit for bit.
func TestBiasReluLongRowPieces(t *testing.T) {
	be := New()
	r := rand.New(rand.NewPCG(61, 62))
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, outer := range []int{1, 2} {
			c := 2*elemGrain + 37
			p := backend.ChannelParams{Outer: outer, C: c, Inner: 1, DType: dt}
			mk := func(n int) backend.Arg {
				return newArg(t, be, dt, n, func(i int) float64 {
					if v := float64(r.IntN(9)-4) / 4; i%97 != 3 {
						return v
					}
					return math.NaN()
				})
			}
			x, b, got, want := mk(outer*c), mk(c), mk(outer*c), mk(outer*c)
			be.BiasRelu(p, got, x, b)
			for o := range outer {
				if dt == backend.Float32 {
					biasReluRow(p, slice[float32](want), slice[float32](x), slice[float32](b), o)
				} else {
					biasReluRow(p, slice[float64](want), slice[float64](x), slice[float64](b), o)
				}
			}
			for i := range outer * c {
				if g, w := argBits(got, i), argBits(want, i); g != w {
					t.Fatalf("%v outer %d [%d]: pieces %#x, row %#x", dt, outer, i, g, w)
				}
			}
		}
	}
}
