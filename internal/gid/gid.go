// Package gid identifies the running goroutine, for the few places where
// the autograd sessions must tell goroutines apart (nd/session.go,
// nd/scope.go, nd/scoped.go): which goroutine opened a Record, mode or
// memory scope, and whether an op runs on it. It is an identity for
// equality checks, not goroutine-local storage.
//
// On amd64 and arm64, Current returns the address of the runtime's
// descriptor of the running goroutine, read from the thread-local slot
// (amd64) or the register (arm64) where Go's own assembly finds it, in
// about a nanosecond: the same for every call on one goroutine, different
// between goroutines alive at the same time, possibly reused once a
// goroutine has exited. Elsewhere Supported is false and Current returns
// 0 for every goroutine; callers then fall back to what they can check
// without it.
package gid
