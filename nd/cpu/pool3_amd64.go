//go:build amd64

package cpu

// maxPool3s2RowF32x512 is the AVX-512 kernel of maxPool3s2Row
// (pool3512_amd64.s): y[i] = the Go max of rows r0, r1, r2 at columns 2i,
// 2i+1 and 2i+2, for i < n.
//
//go:noescape
func maxPool3s2RowF32x512(y, r0, r1, r2 *float32, n int)
