//go:build !amd64 && !arm64

package gid

// Supported reports whether Current tells goroutines apart: not on this
// architecture.
const Supported = false

// Current returns 0: goroutines cannot be told apart here.
func Current() uintptr { return 0 }
