//go:build !amd64

package cpu

// The direct-convolution tiles exist only on amd64; useDirectConv is false
// elsewhere because useAsmKernel is.

func convTile4x24(y *float32, ldy int, x *float32, w *float32, offs *int, k int, bias *float32) {
	panic("unreachable")
}

func convTile8x16z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int) {
	panic("unreachable")
}
func convTile8x32z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int) {
	panic("unreachable")
}
func convTile8x48z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int) {
	panic("unreachable")
}
func convTile6x16z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int) {
	panic("unreachable")
}
func convTile6x32z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int) {
	panic("unreachable")
}
func convTile6x48z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int) {
	panic("unreachable")
}
func convTile6x64z(y *float32, ldy int, x *float32, w *float32, offs *int, k int, cm *uint16, sm *uint16, dst *int, rows int, bias *float32, rs, ts int) {
	panic("unreachable")
}
