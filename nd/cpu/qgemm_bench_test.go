package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// BenchmarkGemmU8S8F32 times the dequantizing int8 product of a linear
// layer's shapes on each kernel this CPU runs, in multiply-adds per second
// (GMAC/s).
func BenchmarkGemmU8S8F32(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, nk := range []int{512, 1024} {
		for _, m := range []int{1, 32, 128} {
			for _, kern := range qKernels() {
				if kern.name == qKernGo.name && nk > 512 {
					continue
				}
				b.Run(fmt.Sprintf("%dx%d/batch=%d/%s", nk, nk, m, kern.name), func(b *testing.B) {
					a := randU8(r, m*nk, 127)
					p := PackInt8(randS8(r, nk*nk), nk, nk)
					c := make([]float32, m*nk)
					v := qVectors(p, 64, []float32{1e-4}, randF32(r, nk))
					for b.Loop() {
						qgemm(kern, m, a, nk, p, unsafe.Pointer(&c[0]), nk, v)
					}
					b.ReportMetric(float64(m*nk*nk)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
				})
			}
		}
	}
}
