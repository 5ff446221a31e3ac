//go:build amd64

package cpu

// The AVX2 Winograd row kernels of winograd_amd64.s; winograd_rows.go
// documents them (winoInputRow, winoOutputRow, winoGradOutRow) and holds
// their plain Go definitions. groups must be at least 1; leading
// dimensions are in elements.

//go:noescape
func winoInputRowF32(src *float32, lds int, dst *float32, ldd int, groups int)

//go:noescape
func winoOutputRowF32(m *float32, ldm int, out *float32, ldo int, groups int)

//go:noescape
func winoGradOutRowF32(dy *float32, ldy int, dst *float32, ldd int, groups int)
