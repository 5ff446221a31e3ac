//go:build amd64

package cpu

// qQuantizeT16x512 quantizes 16 channels of 16 pixels, the rows at src
// hw floats apart, as quantizeU8Go does, and stores pixel p's 16 channel
// bytes at dst[p·ld:] (qconv512_amd64.s). It needs AVX-512 F.
//
//go:noescape
func qQuantizeT16x512(dst *uint8, ld int, src *float32, hw int, inv float32, zero int32)
