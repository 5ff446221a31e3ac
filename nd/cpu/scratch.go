package cpu

import "sync"

// Kernels stage data (column matrices, padded GEMM outputs) in scratch
// buffers taken from these pools, so that a training step does not
// allocate them afresh in every call. A buffer keeps its capacity; one too
// small for a request is dropped and a larger one made, so the pools settle
// on the largest size a network needs.
var scratchPools = [2]sync.Pool{}

// scratch returns a slice of n elements with unspecified contents.
func scratch[T Float](n int) []T {
	var pool *sync.Pool
	switch any(T(0)).(type) {
	case float32:
		pool = &scratchPools[0]
	default:
		pool = &scratchPools[1]
	}
	if p, ok := pool.Get().(*[]T); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]T, n)
}

// release returns a buffer from scratch to its pool.
func release[T Float](s []T) {
	pool := &scratchPools[1]
	if _, ok := any(s).([]float32); ok {
		pool = &scratchPools[0]
	}
	s = s[:cap(s)]
	pool.Put(&s)
}
