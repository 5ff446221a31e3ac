//go:build cuda || cudaemu

package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/backend"
)

// TestHalfCastKernels: the device's Float16 and BFloat16 conversions give
// backend.F16From and BF16From's bits for a spread of float32 patterns
// (every 65537th, the binary16 ties and their neighbours, specials,
// random values), decode every 16-bit pattern as F16.Float32 and
// BF16.Float32 do, and fill and copy (strided, across GPUs) keep the bits.
func TestHalfCastKernels(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	var in []float32
	for b := uint64(0); b < 1<<32; b += 65537 {
		in = append(in, math.Float32frombits(uint32(b)))
	}
	for h := uint32(0); h < 0x7c00; h += 13 {
		mid := math.Float32bits((backend.F16(h).Float32() + backend.F16(h+1).Float32()) / 2)
		for _, d := range []int32{-1, 0, 1} {
			in = append(in, math.Float32frombits(uint32(int32(mid)+d)))
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		in = append(in, float32(r.NormFloat64()*math.Pow(10, float64(r.IntN(16)-8))))
	}
	in = append(in, float32(math.Inf(-1)), math.Float32frombits(0x7fc01234), math.Float32frombits(0xff800001), 65520, 1e-45)
	x := nd.FromSlice(dev, in)
	h16 := make([]backend.F16, len(in))
	x.AsType(nd.Float16).ReadInto(h16)
	hb := make([]backend.BF16, len(in))
	x.AsType(nd.BFloat16).ReadInto(hb)
	for i, v := range in {
		if w := backend.F16From(v); h16[i] != w {
			t.Fatalf("float16 of %v (%#08x) on %v: %#04x, want %#04x", v, math.Float32bits(v), dev, h16[i], w)
		}
		if w := backend.BF16From(v); hb[i] != w {
			t.Fatalf("bfloat16 of %v (%#08x) on %v: %#04x, want %#04x", v, math.Float32bits(v), dev, hb[i], w)
		}
	}
	all := make([]backend.F16, 1<<16)
	allB := make([]backend.BF16, 1<<16)
	for i := range all {
		all[i], allB[i] = backend.F16(i), backend.BF16(i)
	}
	got := nd.FromSlice(dev, all).AsType(nd.Float32).Float32s()
	for i, v := range got {
		if w := all[i].Float32(); math.Float32bits(v) != math.Float32bits(w) {
			t.Fatalf("decoding float16 %#04x: %v, want %v", i, v, w)
		}
	}
	got = nd.FromSlice(dev, allB).AsType(nd.Float32).Float32s()
	for i, v := range got {
		if w := allB[i].Float32(); math.Float32bits(v) != math.Float32bits(w) {
			t.Fatalf("decoding bfloat16 %#04x: %v, want %v", i, v, w)
		}
	}
	// Fill, a strided copy (Transpose) and a copy to another GPU.
	f := nd.Full(dev, nd.Float16, 1.0/3, 3, 5)
	tr := nd.Transpose(f, 1, 0)
	if v := tr.Float32s(); len(v) != 15 || v[7] != backend.F16From(1.0/3).Float32() {
		t.Errorf("Full/Transpose: %v", v)
	}
	if ctx.NumGPUs() > 1 {
		if v := f.CopyTo(ctx.GPU(1)).AsType(nd.Float32).Float32s(); v[14] != backend.F16From(1.0/3).Float32() {
			t.Errorf("copy to gpu(1): %v", v)
		}
	}
}
