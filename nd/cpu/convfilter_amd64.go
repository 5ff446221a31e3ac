//go:build amd64

package cpu

// filterTapsF32x512 is the AVX-512 kernel of directFilter
// (convfilter512_amd64.s): for imgs images, for rows rows of each, for the
// full whole blocks of 16 positions of a row and, when tail is not 0, one
// more block under the lane mask tail, acc[o][t][lane] += dy_o[q+lane] ·
// x[q+lane+offs[t]] for the two output channels o and the eight taps t, q
// the block's first position (acc: 2·8·16 floats). Between rows x
// advances by xrow bytes and dy0, dy1 by dyrow; after an image's last
// row, by ximg and dyimg more. rowc is the kernel's scratch.
//
//go:noescape
func filterTapsF32x512(acc *float32, dy0, dy1, x *float32, offs *int32, rows, full, tail, imgs, xrow, dyrow, ximg, dyimg, rowc int)
