//go:build !amd64

package cpu

// qQuantizeT16x512 is never called off amd64 (useZMMKernel is false).
func qQuantizeT16x512(dst *uint8, ld int, src *float32, hw int, inv float32, zero int32) {
	panic("unreachable")
}
