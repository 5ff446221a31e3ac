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

// filterBcast3F32x512 and filterBcast5F32x512 are the AVX-512 kernels of
// bcastFilter (convfilterb512_amd64.s), for kernel rows of three and five
// taps: for imgs images, for the oh rows of ow output positions of each,
// acc[r][k][lane] += dyt[q][lane] · x[q' + rows[r]/4 + k] for the nine
// (three-tap) or five (five-tap) kernel rows r and their taps k, q the
// position's index in dyt (16 floats each, contiguous over the images)
// and q' its input element. After each output row x advances by xrow
// bytes more, after each image by ximg more. acc holds 27 or 25 vectors;
// hc is the kernels' scratch.
//
//go:noescape
func filterBcast3F32x512(acc *float32, dyt, x *float32, oh, ow, imgs, xrow, ximg, hc int, rows *int64)

//go:noescape
func filterBcast5F32x512(acc *float32, dyt, x *float32, oh, ow, imgs, xrow, ximg, hc int, rows *int64)

// filterFlatF32x512 is the AVX-512 kernel of flatFilter
// (convfilterf512_amd64.s): for the full whole blocks of 16 positions of
// an image's flat plane and, when tail is not 0, one more block under the
// lane mask tail, acc[f][t][lane] += dy_f[q+lane] · xs_t[q+lane] for the
// six filters f and the four taps t, q the block's first position, dy_f =
// dy + foffs[f] and xs_t = xs + toffs[t] (byte offsets). acc holds 6·4·16
// floats.
//
//go:noescape
func filterFlatF32x512(acc, dy, xs *float32, foffs, toffs *int64, full, tail int)

// convFlatF32x512 is the AVX-512 kernel of flatConv (convflat512_amd64.s):
// for the triples whole groups of 48 positions of an image's flat output
// plane and, when tail is not 0, one more group under the 48-lane mask
// tail, y[f][q+lane] = Σ_t wp[t][f] · xs_t[q+lane] for the six filters f
// and the kk taps t, xs_t = xs + toffs[t] (bytes), wp six weights per tap.
//
//go:noescape
func convFlatF32x512(y *[6]*float32, xs, wp *float32, toffs *int64, kk, triples int, tail uint64)
