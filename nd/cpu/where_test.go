package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// TestWhereRows: the contiguous fast rows of Where (a select without
// branches for float32 and float64) agree with the element-by-element
// form, NaN and infinity payloads included, for every dtype and for
// broadcast (stride 0) operands.
func TestWhereRows(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 64, 1001} {
		c := make([]uint8, n)
		a32, b32 := make([]float32, n), make([]float32, n)
		a64, b64 := make([]float64, n), make([]float64, n)
		for i := range n {
			c[i] = uint8(r.IntN(2))
			a32[i], b32[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			a64[i], b64[i] = r.NormFloat64(), r.NormFloat64()
		}
		a32[0], b64[n-1] = float32(math.NaN()), math.Inf(-1)
		for _, bcast := range []bool{false, true} {
			sb := 1
			if bcast {
				sb = 0
			}
			d32 := make([]float32, n)
			d64 := make([]float64, n)
			whereRow(d32, c, a32, b32, n, [4]int{1, 1, 1, sb})
			whereRow(d64, c, a64, b64, n, [4]int{1, 1, 1, sb})

			for j := range n {
				bj := j * sb
				w32, w64 := b32[bj], b64[bj]
				if c[j] != 0 {
					w32, w64 = a32[j], a64[j]
				}
				if math.Float32bits(d32[j]) != math.Float32bits(w32) || math.Float64bits(d64[j]) != math.Float64bits(w64) {
					t.Fatalf("n %d broadcast %v, element %d: got %v %v, want %v %v", n, bcast, j, d32[j], d64[j], w32, w64)
				}
			}
		}
	}
}

// BenchmarkWhere selects between two float32 arrays of 1M elements by a
// random mask (the LeakyReLU pattern).
func BenchmarkWhere(b *testing.B) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(1, 2))
	c := make([]uint8, n)
	a, bb := make([]float32, n), make([]float32, n)
	for i := range n {
		c[i] = uint8(r.IntN(2))
	}
	be := New()
	arg := func(dt backend.DType) backend.Arg {
		buf, err := be.Alloc(ctx.CPU(0), dt, n)
		if err != nil {
			b.Fatal(err)
		}
		return backend.Arg{Buf: buf}
	}
	d, cond, x, y := arg(backend.Float32), arg(backend.Bool), arg(backend.Float32), arg(backend.Float32)
	copy(slice[uint8](cond), c)
	copy(slice[float32](x), a)
	copy(slice[float32](y), bb)
	for b.Loop() {
		be.Where([]int{n}, d, cond, x, y)
	}
	b.SetBytes(n * 13)
}
