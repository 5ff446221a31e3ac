//go:build amd64

package cpu

// The batched Winograd kernels of winobatch512_amd64.s (AVX-512 F);
// winobatch.go documents their tables and calls them. Leading dimensions
// and planes are in elements.

//go:noescape
func winoGatherInF32x512(x *float32, plane, w int, tab *int32, dst *float32, ldd, ldx, nch int)

//go:noescape
func winoScatterOutF32x512(m *float32, ldx, ldc int, tab *int32, y *float32, plane, ow, nch int)

//go:noescape
func winoGatherGradF32x512(dy *float32, plane, ow int, tab *int32, dst *float32, ldd, ldx, nch int)

//go:noescape
func winoStoreOut8F32x512(m *float32, ldx, ldc int, y *float32, plane, nch int)

//go:noescape
func winoStoreOut4F32x512(m *float32, ldx, ldc int, y *float32, plane, img, nimg, nch int)

//go:noescape
func winoPermInF32x512(x *float32, plane int, tab *int32, dst *float32, ldd, ldx, nch int)

//go:noescape
func winoPermGradF32x512(dy *float32, plane int, tab *int32, dst *float32, ldd, ldx, nch int)
