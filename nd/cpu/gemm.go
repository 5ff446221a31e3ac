package cpu

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/goluon/goluon/nd/backend"
)

var impl gonum.Implementation

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// Gemm computes a batch of row-major matrix products: float32 with the
// packed AVX2/FMA sgemm (sgemm.go), float64 with gonum's Dgemm. Small
// products of a large batch run in parallel over the batch, each on one
// goroutine; large ones run one after the other, each split over the
// cores by sgemm itself, so the two levels never nest.
func (*Backend) Gemm(p backend.GemmParams) {
	if p.Batch <= 1 { // one product: no closure to allocate
		gemm(p, p.A, p.B, p.C, true)
		return
	}
	gemmBatch(p)
}

// gemmBatch is Gemm for p.Batch > 1.
func gemmBatch(p backend.GemmParams) {
	batch := p.Batch
	one := func(i int, parallel bool) {
		a, b, c := p.A, p.B, p.C
		a.Off += i * p.StrideA
		b.Off += i * p.StrideB
		c.Off += i * p.StrideC
		gemm(p, a, b, c, parallel)
	}
	if batch > 1 && p.M*p.N*p.K < 1<<18 {
		parallelFor(batch, 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				one(i, false)
			}
		})
		return
	}
	for i := 0; i < batch; i++ {
		one(i, true)
	}
}

// gemm runs one product; operands are described by offset and leading
// dimension. parallel allows the float32 path to use several goroutines.
func gemm(p backend.GemmParams, a, b, c backend.Arg, parallel bool) {
	if p.M == 0 || p.N == 0 {
		return
	}
	if p.K == 0 {
		// C = beta*C; BLAS would do the same, but some implementations
		// reject k == 0 with zero-length operands.
		scaleRows(p, c)
		return
	}
	if c.Buf.DType() == backend.BFloat16 {
		bf16Gemm(p, a, b, c, parallel)
		return
	}
	if isF64(c) {
		impl.Dgemm(trans(p.TransA), trans(p.TransB), p.M, p.N, p.K, p.Alpha,
			slice[float64](a), p.LDA, slice[float64](b), p.LDB, p.Beta, slice[float64](c), p.LDC)
		return
	}
	sgemm(p.TransA, p.TransB, p.M, p.N, p.K, float32(p.Alpha),
		slice[float32](a), p.LDA, slice[float32](b), p.LDB, float32(p.Beta), slice[float32](c), p.LDC, parallel)
}

func scaleRows(p backend.GemmParams, c backend.Arg) {
	for i := 0; i < p.M; i++ {
		if c.Buf.DType() == backend.BFloat16 { // beta 0 does not read C
			r := storageSlice[backend.BF16](c)[i*p.LDC : i*p.LDC+p.N]
			for j := range r {
				v := float32(0)
				if p.Beta != 0 {
					v = float32(p.Beta) * r[j].Float32()
				}
				r[j] = backend.BF16From(v)
			}
			continue
		}
		if isF64(c) {
			r := slice[float64](c)[i*p.LDC : i*p.LDC+p.N]
			for j := range r {
				r[j] *= p.Beta
			}
		} else {
			r := slice[float32](c)[i*p.LDC : i*p.LDC+p.N]
			for j := range r {
				r[j] *= float32(p.Beta)
			}
		}
	}
}

// gemmSlices is Gemm on plain slices, used by the convolution kernels.
// They call it from inside parallelFor over images, so parallel should be
// true only when that outer loop runs on a single goroutine (see
// innerParallel); the float32 product then splits itself over the cores.
func gemmSlices[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, parallel bool) {
	switch a := any(a).(type) {
	case []float32:
		sgemm(tA, tB, m, n, k, float32(alpha), a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc, parallel)
	case []float64:
		impl.Dgemm(trans(tA), trans(tB), m, n, k, float64(alpha), a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// innerParallel reports whether a kernel that runs parallelFor(n, 1, ...)
// leaves cores idle (a single chunk), so that the GEMMs inside it may
// split themselves over the cores without oversubscribing them.
func innerParallel(n int) bool { return numChunks(n, 1) == 1 }
