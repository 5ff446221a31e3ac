package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// gflops runs fn in b.Loop and reports GFLOP/s of wall-clock time and
// GFLOP per CPU-second of the process (all threads; divide by the cores
// used for a per-core figure, multiply for a quiet-machine estimate).
func gflops(b *testing.B, flops float64, fn func()) {
	cpu0 := processCPU()
	for b.Loop() {
		fn()
	}
	total := flops * float64(b.N) / 1e9
	b.ReportMetric(total/b.Elapsed().Seconds(), "GFLOP/s")
	if cpu := processCPU() - cpu0; cpu > time.Millisecond {
		b.ReportMetric(total/cpu.Seconds(), "GFLOP/cpu-s")
	}
}

// sgemmImpls are the float32 GEMMs the benchmarks compare: gonum's
// pure-Go Sgemm (the previous CPU path) and the packed AVX2/FMA one.
var sgemmImpls = []struct {
	name string
	fn   func(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, parallel bool)
}{
	{"gonum", func(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, _ bool) {
		impl.Sgemm(trans(tA), trans(tB), m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
	}},
	{"packed", func(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, parallel bool) {
		sgemm(tA, tB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc, parallel)
	}},
}

func randSlice(n int, rng *rand.Rand) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = rng.Float32() - 0.5
	}
	return s
}

// BenchmarkSgemmSquare is C = A·B for n×n matrices on all cores.
func BenchmarkSgemmSquare(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{128, 256, 512, 1024, 2048} {
		a, bb, c := randSlice(n*n, rng), randSlice(n*n, rng), make([]float32, n*n)
		for _, im := range sgemmImpls {
			b.Run(fmt.Sprintf("n=%d/%s", n, im.name), func(b *testing.B) {
				gflops(b, 2*float64(n*n*n), func() {
					im.fn(false, false, n, n, n, a, n, bb, n, c, n, true)
				})
			})
		}
	}
}

// gemmShape is one product of a layer of the tutorial networks.
type gemmShape struct {
	name    string
	tA, tB  bool
	m, n, k int
	perImg  bool // a per-image convolution GEMM (run images in parallel)
}

// netGemmShapes are the GEMMs of a LeNet and a Keras CIFAR-10 CNN training
// step at batch 128: convolutions per image (forward, data gradient,
// filter gradient), dense layers for the whole batch (x·wᵀ, g·w, gᵀ·x),
// and the same for the MLP 784-256-256-10 of make bench.
var netGemmShapes = []gemmShape{
	{"lenet/conv1/fwd", false, false, 6, 576, 25, true},
	{"lenet/conv1/dfilter", false, true, 6, 25, 576, true},
	{"lenet/conv2/fwd", false, false, 16, 100, 54, true},
	{"lenet/conv2/ddata", true, false, 54, 100, 16, true},
	{"lenet/conv2/dfilter", false, true, 16, 54, 100, true},
	{"lenet/fc1/fwd", false, true, 128, 120, 400, false},
	{"lenet/fc1/ddata", false, false, 128, 400, 120, false},
	{"lenet/fc1/dweight", true, false, 120, 400, 128, false},
	{"lenet/fc1/fwd-b32", false, true, 32, 120, 400, false},
	{"lenet/fc1/ddata-b32", false, false, 32, 400, 120, false},
	{"lenet/fc2/fwd", false, true, 128, 84, 120, false},
	{"lenet/fc1/fwd-b1", false, true, 1, 120, 400, false},
	{"lenet/fc2/fwd-b1", false, true, 1, 84, 120, false},
	{"cifar/conv1/fwd", false, false, 32, 1024, 27, true},
	{"cifar/conv2/fwd", false, false, 32, 900, 288, true},
	{"cifar/conv2/ddata", true, false, 288, 900, 32, true},
	{"cifar/conv2/dfilter", false, true, 32, 288, 900, true},
	{"cifar/conv3/fwd", false, false, 64, 225, 288, true},
	{"cifar/conv4/fwd", false, false, 64, 169, 576, true},
	{"cifar/conv4/ddata", true, false, 576, 169, 64, true},
	{"cifar/conv4/dfilter", false, true, 64, 576, 169, true},
	{"cifar/fc1/fwd", false, true, 128, 512, 2304, false},
	{"cifar/fc1/ddata", false, false, 128, 2304, 512, false},
	{"cifar/fc1/dweight", true, false, 512, 2304, 128, false},
	{"mlp/fc1/fwd", false, true, 128, 256, 784, false},
	{"mlp/fc1/dweight", true, false, 256, 784, 128, false},
	{"mlp/fc2/fwd", false, true, 128, 256, 256, false},
	{"mlp/fc2/ddata", false, false, 128, 256, 256, false},
	{"mlp/fc2/dweight", true, false, 256, 256, 128, false},
	{"mlp/fc3/fwd", false, true, 128, 10, 256, false},
	{"mlp/fc3/ddata", false, false, 128, 256, 10, false},
	{"mlp/fc3/dweight", true, false, 10, 256, 128, false},
}

// BenchmarkSgemmNets runs the GEMMs of netGemmShapes as the layers do:
// per-image products for 16 images spread over the cores (each product on
// one goroutine), dense products one at a time on all cores.
func BenchmarkSgemmNets(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, s := range netGemmShapes {
		lda, ldb := s.k, s.n
		if s.tA {
			lda = s.m
		}
		if s.tB {
			ldb = s.k
		}
		images := 1
		if s.perImg {
			images = 16
		}
		a, bb := randSlice(s.m*s.k*images, rng), randSlice(s.k*s.n*images, rng)
		c := make([]float32, s.m*s.n*images)
		for _, im := range sgemmImpls {
			b.Run(s.name+"/"+im.name, func(b *testing.B) {
				gflops(b, 2*float64(s.m*s.n*s.k*images), func() {
					if !s.perImg {
						im.fn(s.tA, s.tB, s.m, s.n, s.k, a, lda, bb, ldb, c, s.n, true)
						return
					}
					parallelFor(images, 1, func(lo, hi int) {
						for i := lo; i < hi; i++ {
							im.fn(s.tA, s.tB, s.m, s.n, s.k, a[i*s.m*s.k:], lda, bb[i*s.k*s.n:], ldb, c[i*s.m*s.n:], s.n, false)
						}
					})
				})
			})
		}
	}
}

// BenchmarkSgemmKernel is the micro-kernel alone on L1-resident packed
// panels (144×256 block of A, one 256×16 panel of B), on one goroutine:
// the ceiling for everything above.
func BenchmarkSgemmKernel(b *testing.B) {
	if !useAsmKernel {
		b.Skip("no AVX2/FMA kernel on this machine")
	}
	const m, k = 144, 256
	rng := rand.New(rand.NewPCG(3, 3))
	ap, bp := randSlice(m*k, rng), randSlice(sgemmNR*k, rng)
	c := make([]float32, m*sgemmNR)
	gflops(b, 2*m*sgemmNR*k, func() {
		sgemmPanel(k, &ap[0], m, &bp[0], sgemmNR, &c[0], sgemmNR, 1)
	})
}
