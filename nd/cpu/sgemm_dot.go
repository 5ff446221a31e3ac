package cpu

// Products of a few rows by a transposed matrix: C = alpha·A·Bᵀ + beta·C
// with A m×k for m ≤ dotMaxM and B n×k row-major (a Dense layer's forward
// pass at batch 1–4: x·Wᵀ). Packing B into column panels, as sgemmSerial
// does, reads and writes all of B to use each value m times; here each
// element of C is the dot product of a row of A and a row of B, read in
// place (dot4F32: four rows of B per pass over the row of A).

// dotMaxM is the most rows of A computed as dot products.
const dotMaxM = 4

// useDotRows reports whether sgemm computes the product as dot products:
// B transposed, A not, at most dotMaxM rows and a row long enough for one
// vector step. It is decided for the whole product (sgemm), never for the
// row chunks of a split one, so the split does not change the bits; a
// product of 1–4 rows does differ in rounding from the same rows inside a
// larger product (summed in 16 lanes rather than in order of k).
func useDotRows(tA, tB bool, m, k int) bool {
	return tB && !tA && m <= dotMaxM && k >= 16
}

// sgemmDotRows computes C = alpha·A·Bᵀ + beta·C for beta 0 or 1. Each
// element is the kernel's sum (all k values, in 16 lanes), times alpha,
// plus C when beta is 1.
func sgemmDotRows(m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	var out [4]float32
	_ = b[(n-1)*ldb+k-1]
	for i := range m {
		x := a[i*lda:][:k]
		cr := c[i*ldc:][:n]
		for j := 0; j < n; j += 4 {
			// Past n: the last row again, its sum unused.
			b0, b1, b2, b3 := &b[j*ldb], &b[min(j+1, n-1)*ldb], &b[min(j+2, n-1)*ldb], &b[min(j+3, n-1)*ldb]
			if useZMMKernel { // direct calls: through a variable out would escape
				dot4F32x512(&x[0], b0, b1, b2, b3, k, &out[0])
			} else {
				dot4F32(&x[0], b0, b1, b2, b3, k, &out[0])
			}
			for r, s := range out[:min(4, n-j)] {
				v := alpha * s
				if beta == 1 {
					v += cr[j+r]
				}
				cr[j+r] = v
			}
		}
	}
}
