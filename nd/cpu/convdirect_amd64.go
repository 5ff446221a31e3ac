//go:build amd64

package cpu

// The direct-convolution tiles of convdirect_amd64.s: y[i·ldy + j] =
// Σₜ w[ws·t + i] · x[offs[t]/4 + j] over k taps, for rows i < 4 and
// columns j < 24 (convTile4x24), or rows i < 8 and columns j < 48 with
// ws = 8 (convTile8x48, AVX-512).

//go:noescape
func convTile4x24(y *float32, ldy int, x *float32, w *float32, ws int, offs *int, k int)

//go:noescape
func convTile8x48(y *float32, ldy int, x *float32, w *float32, offs *int, k int)
