//go:build cuda || cudaemu

package cuda

import (
	"fmt"

	"github.com/goluon/goluon/nd/backend"
)

// Gemm computes a batch of row-major products C = alpha*op(A)*op(B) +
// beta*C with cuBLAS on the device's stream. A row-major matrix is the
// transpose of the same memory read column-major, so C = op(A)op(B) is
// computed as the column-major Cᵀ = op(B)ᵀop(A)ᵀ: A and B swap places and
// M and N swap. With K == 0 it only scales C by beta (0 gives zeros).
func (b *Backend) Gemm(p backend.GemmParams) {
	if p.M == 0 || p.N == 0 {
		return
	}
	batch := max(p.Batch, 1)
	d := devOf(p.C)
	dt := buf(p.C).dt
	if p.K == 0 {
		var a args
		a.ptr(p.C)
		a.i64(batch)
		a.i64(p.M)
		a.i64(p.N)
		a.i64(p.LDC)
		a.i64(p.StrideC)
		a.f64(p.Beta)
		d.launch("Gemm", "scale_rows"+suffix(dt), batch*p.M*p.N, 0, 0, 0, &a)
		return
	}
	if dt.IsHalf() && !b.GemmHalf(dt) {
		deviceFail("Gemm", d.dev, fmt.Errorf("no %v product on this device (%s)", dt, halfGemmWhy()))
	}
	d.gemm(rowMajor(p, dt, batch))
}

// rowMajor turns row-major GemmParams into the column-major cuBLAS call.
func rowMajor(p backend.GemmParams, dt backend.DType, batch int) gemmCall {
	return gemmCall{
		f64:    dt == backend.Float64,
		half:   cudaDataType(dt),
		transA: p.TransB, transB: p.TransA,
		m: p.N, n: p.M, k: p.K,
		alpha: p.Alpha, beta: p.Beta,
		a: devPtr(p.B), b: devPtr(p.A), c: devPtr(p.C),
		lda: max(p.LDB, 1), ldb: max(p.LDA, 1), ldc: max(p.LDC, 1),
		strideA: p.StrideB, strideB: p.StrideA, strideC: p.StrideC,
		batch: batch,
	}
}

// gemm queues a cuBLAS product on d's stream, creating d's handle on first
// use (on the worker thread, where the context is current).
func (d *device) gemm(g gemmCall) {
	if _, err := loadCublas(); err != nil {
		deviceFail("Gemm", d.dev, err)
	}
	d.async("Gemm", func() error {
		if d.blas == nil {
			h, err := newBlasHandle(d.stream)
			if err != nil {
				return err
			}
			d.blas = h
		}
		return d.blas.run(g)
	})
}

// gemmCall is one column-major (strided-batched) product for cuBLAS.
type gemmCall struct {
	f64              bool
	half             int // A, B and C's cudaDataType for GemmEx (0: float32 or float64)
	transA, transB   bool
	m, n, k          int
	alpha, beta      float64
	a, b, c          dptr
	lda, ldb, ldc    int
	strideA, strideB int
	strideC, batch   int
}
