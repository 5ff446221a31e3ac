//go:build !amd64

package cpu

// The gathers exist only on amd64; im2col_gather.go never calls these
// because useAsmKernel is false elsewhere.

func gatherRowsF32(d *float32, ldd int, s *float32, lds int, tab *int32, lanes, rows int) {
	panic("unreachable")
}

func gatherRowsF32x512(d *float32, ldd int, s *float32, lds int, tab *int32, lanes, rows int) {
	panic("unreachable")
}

func scatterAddRowsF32x512(dx *float32, ldx int, col *float32, ldc int, tab *int32, lanes, rows int) {
	panic("unreachable")
}
