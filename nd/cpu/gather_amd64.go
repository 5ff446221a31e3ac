//go:build amd64

package cpu

// gather_amd64.s: the lane-table gathers of im2col_gather.go.

// gatherRowsF32 fills rows rows of 16 columns of a column matrix (rows
// ldd apart in d) from images at s (one channel plane, lds values, further
// per row): lane l of a row takes s[tab[l]] where tab[16+l] is nonzero,
// and 0 where it is zero; only the lanes l < lanes are written.
//
//go:noescape
func gatherRowsF32(d *float32, ldd int, s *float32, lds int, tab *int32, lanes, rows int)

// gatherRowsF32x512 is gatherRowsF32 on ZMM registers.
//
//go:noescape
func gatherRowsF32x512(d *float32, ldd int, s *float32, lds int, tab *int32, lanes, rows int)

// scatterAddRowsF32x512 is the transpose of gatherRowsF32x512: it adds
// lane l of each row of col (rows ldc apart) into dx[tab[l]] (dx advancing
// ldx per row) where tab[16+l] is nonzero and l < lanes. The active
// lanes' offsets must differ.
//
//go:noescape
func scatterAddRowsF32x512(dx *float32, ldx int, col *float32, ldc int, tab *int32, lanes, rows int)
