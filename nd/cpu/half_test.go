package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// halfInputs returns float32 bit patterns for the rounding checks: every
// 2039th pattern over the whole 32-bit range, the neighbourhood of every
// binary16 tie and of the bfloat16 ties near 1, ±0, ±Inf, NaNs with
// payloads, subnormals, and random values.
func halfInputs() []float32 {
	var v []float32
	for b := uint64(0); b < 1<<32; b += 2039 {
		v = append(v, math.Float32frombits(uint32(b)))
	}
	for h := uint32(0); h < 0x7c00; h += 7 { // ties between binary16 neighbours, and one ulp either side
		lo := backend.F16(h).Float32()
		hi := backend.F16(h + 1).Float32()
		mid := math.Float32bits((lo + hi) / 2)
		for _, d := range []int32{-1, 0, 1} {
			v = append(v, math.Float32frombits(uint32(int32(mid)+d)), -math.Float32frombits(uint32(int32(mid)+d)))
		}
	}
	for b := uint32(0x3f7f0000); b < 0x3f810000; b += 0x4000 { // bfloat16 ties near 1
		for _, d := range []uint32{0x7fff, 0x8000, 0x8001} {
			v = append(v, math.Float32frombits(b+d))
		}
	}
	v = append(v, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xff812345), math.Float32frombits(0x7f800001),
		65504, 65520, 65519.99, 1e-45, 5.96e-8, 2.98e-8, 2.99e-8)
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		v = append(v, float32(r.NormFloat64()*math.Pow(10, float64(r.IntN(20)-10))))
	}
	return v
}

// TestHalfConversionsMatch: the assembly conversions (and the Go ones the
// generic path uses) give backend.F16From/BF16From's results bit for bit
// on the inputs of halfInputs, and decode every 16-bit pattern exactly.
func TestHalfConversionsMatch(t *testing.T) {
	f16, bf16 := halfAsm()
	t.Logf("assembly: float16 %v, bfloat16 %v", f16, bf16)
	in := halfInputs()
	in = in[:len(in)&^7]
	h := make([]backend.F16, len(in))
	b := make([]backend.BF16, len(in))
	f32sToF16(h, in)
	f32sToBF16(b, in)
	for i, x := range in {
		if w := backend.F16From(x); h[i] != w {
			t.Fatalf("float16 of %v (%#08x): %#04x, want %#04x", x, math.Float32bits(x), h[i], w)
		}
		if w := backend.BF16From(x); b[i] != w {
			t.Fatalf("bfloat16 of %v (%#08x): %#04x, want %#04x", x, math.Float32bits(x), b[i], w)
		}
	}
	all := make([]backend.F16, 1<<16)
	allB := make([]backend.BF16, 1<<16)
	for i := range all {
		all[i], allB[i] = backend.F16(i), backend.BF16(i)
	}
	got := make([]float32, 1<<16)
	f16sToF32(got, all)
	for i, x := range got {
		if w := all[i].Float32(); math.Float32bits(x) != math.Float32bits(w) && !(x != x && w != w) {
			t.Fatalf("decoding float16 %#04x: %v, want %v", i, x, w)
		}
	}
	bf16sToF32(got, allB)
	for i, x := range got {
		if w := allB[i].Float32(); math.Float32bits(x) != math.Float32bits(w) {
			t.Fatalf("decoding bfloat16 %#04x: %v, want %v", i, x, w)
		}
	}
	// Lengths that leave tails for the Go loop.
	for _, n := range []int{1, 7, 9, 17} {
		d := make([]backend.F16, n)
		f32sToF16(d, in[:n])
		for i := range d {
			if d[i] != backend.F16From(in[i]) {
				t.Fatalf("length %d, element %d", n, i)
			}
		}
	}
}

func BenchmarkHalfConversion(b *testing.B) {
	const n = 1 << 16
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(i) / n
	}
	h := make([]backend.F16, n)
	bf := make([]backend.BF16, n)
	back := make([]float32, n)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"f32-to-f16", func() { f32sToF16(h, src) }},
		{"f16-to-f32", func() { f16sToF32(back, h) }},
		{"f32-to-bf16", func() { f32sToBF16(bf, src) }},
		{"bf16-to-f32", func() { bf16sToF32(back, bf) }},
		{"f32-to-f16-go", func() {
			for i, v := range src {
				h[i] = backend.F16From(v)
			}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(n * 4)
			for b.Loop() {
				c.f()
			}
		})
	}
}
