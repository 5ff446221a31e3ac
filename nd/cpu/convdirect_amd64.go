//go:build amd64

package cpu

// The AVX2 direct-convolution tile of convdirect_amd64.s: y[i·ldy + j] =
// Σₜ w[4t + i] · x[offs[t]/4 + j] over k taps, for rows i < 4 and
// columns j < 24, plus bias[i] when bias is not nil.

//go:noescape
func convTile4x24(y *float32, ldy int, x *float32, w *float32, offs *int, k int, bias *float32)

// The tiles of convdirect512_amd64.s (AVX-512): 8 output channels by 16,
// 32 or 48 wide positions, stored into the output y (channels ldy apart)
// through the compress masks cm, store masks sm and byte offsets dst of
// each 16-position vector; rows limits the channels stored (1–8); bias,
// when not nil, holds 8 biases added to the sums. The weight of row i and
// tap t is w[i·rs + t·ts]: rs = 1, ts = 8 reads packed blocks, rs = k,
// ts = 1 the filters [OC][C·KH·KW] in place. The convTile6x…z tiles are
// the same for 6 channels (rows 1–6) by 16 to 64 positions; they read six
// weight rows whatever rows is, so they are given packed blocks only.

//go:noescape
func convTile8x16z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int)

//go:noescape
func convTile8x32z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int)

//go:noescape
func convTile8x48z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int)

//go:noescape
func convTile6x16z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int)

//go:noescape
func convTile6x32z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int)

//go:noescape
func convTile6x48z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int)

//go:noescape
func convTile6x64z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int)
