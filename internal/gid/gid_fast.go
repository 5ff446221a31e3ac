//go:build amd64 || arm64

package gid

// getg returns the address of the running goroutine's descriptor
// (gid_amd64.s, gid_arm64.s).
func getg() uintptr

// Supported reports whether Current tells goroutines apart.
const Supported = true

// Current identifies the running goroutine (see the package doc).
func Current() uintptr { return getg() }
