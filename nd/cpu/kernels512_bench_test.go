//go:build amd64

package cpu

import (
	"fmt"
	"testing"
)

// BenchmarkZMMKernels times AVX2 kernels against their ZMM twins at
// n = 4096 (every buffer in L1) and n = 1<<20 (4 MiB a buffer: memory
// bound), e.g.
//
//	go test ./nd/cpu/ -run '^$' -bench ZMMKernels -benchtime 200ms -count 3
//
// The bytes reported per op are those read and written.
func BenchmarkZMMKernels(b *testing.B) {
	type kern struct {
		name      string
		buffers   int // float32 buffers read or written
		avx2, zmm func(d, x, y *float32, n int) float64
	}
	kernels := []kern{
		{"addF32", 3,
			func(d, x, y *float32, n int) float64 { addF32(d, x, y, n); return 0 },
			func(d, x, y *float32, n int) float64 { addF32x512(d, x, y, n); return 0 }},
		{"mulScalarF32", 2,
			func(d, x, _ *float32, n int) float64 { mulScalarF32(d, x, 1.5, n); return 0 },
			func(d, x, _ *float32, n int) float64 { mulScalarF32x512(d, x, 1.5, n); return 0 }},
		{"reluF32", 2,
			func(d, x, _ *float32, n int) float64 { reluF32(d, x, n); return 0 },
			func(d, x, _ *float32, n int) float64 { reluF32x512(d, x, n); return 0 }},
		{"sumF32", 1,
			func(_, x, _ *float32, n int) float64 { return sumF32(x, n) },
			func(_, x, _ *float32, n int) float64 { return sumF32x512(x, n) }},
		{"addReluF32", 3,
			func(d, x, y *float32, n int) float64 { addReluF32(d, x, y, n); return 0 },
			func(d, x, y *float32, n int) float64 { addReluF32x512(d, x, y, n); return 0 }},
		{"scaleShiftF32", 2,
			func(d, x, _ *float32, n int) float64 { scaleShiftF32(d, x, n, 1.5, -0.5); return 0 },
			func(d, x, _ *float32, n int) float64 { scaleShiftF32x512(d, x, n, 1.5, -0.5); return 0 }},
	}
	var sink float64
	for _, k := range kernels {
		for _, n := range []int{4096, 1 << 20} {
			d, x, y := make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range x {
				x[i], y[i] = float32(i%7)-3, float32(i%5)-2
			}
			for _, isa := range []string{"avx2", "zmm"} {
				b.Run(fmt.Sprintf("%s/n=%d/%s", k.name, n, isa), func(b *testing.B) {
					run := k.avx2
					if isa == "zmm" {
						needZMM(b)
						run = k.zmm
					} else if DetectedISA() < ISAAVX2 {
						b.Skip("no AVX2")
					}
					b.SetBytes(int64(4 * n * k.buffers))
					for b.Loop() {
						sink += run(&d[0], &x[0], &y[0], n)
					}
				})
			}
		}
	}
	_ = sink
}
