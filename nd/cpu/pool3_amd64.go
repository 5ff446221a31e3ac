//go:build amd64

package cpu

// maxPool3s2RowF32x512 is the AVX-512 kernel of maxPool3s2Row
// (pool3512_amd64.s): y[i] = the Go max of rows r0, r1, r2 at columns 2i,
// 2i+1 and 2i+2, for i < n.
//
//go:noescape
func maxPool3s2RowF32x512(y, r0, r1, r2 *float32, n int)

// maxPool3s2BackRowF32x512 is the AVX-512 kernel of maxPool3s2BackRow
// (pool3512_amd64.s): for windows i < n over columns 2i … 2i+2 of rows x0,
// x1, x2, it adds dy[i] into dx0…dx2 at the first input equal to y[i], and
// stops before the first block of 16 windows where some window has none;
// it returns the number of windows done.
//
//go:noescape
func maxPool3s2BackRowF32x512(dx0, dx1, dx2, x0, x1, x2, y, dy *float32, n int) int
