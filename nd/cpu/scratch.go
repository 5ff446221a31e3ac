package cpu

import (
	"math/bits"
	"sync"
)

// Kernels stage data (column matrices, padded planes, transformed tiles)
// in scratch buffers kept on free lists, so that a training step does not
// allocate them afresh in every call. Buffers are kept by dtype and by
// power-of-two capacity: a kernel that takes several buffers of very
// different sizes then gets back ones of the sizes it asked for (a single
// list per dtype would hand a small buffer to a large request, to be
// dropped, as often as not). The lists keep what they are given, so they
// settle at the most buffers of each class that kernels held at once,
// like the NDArray pools; unlike sync.Pool they allocate nothing to take a
// buffer back.
type scratchLists[T Float] struct {
	mu   sync.Mutex
	free [64][][]T // by class: capacity 1<<class
}

var (
	scratch32 scratchLists[float32]
	scratch64 scratchLists[float64]
)

// scratchClass is the power-of-two capacity class of n elements.
func scratchClass(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// lists returns T's free lists.
func lists[T Float]() *scratchLists[T] {
	var l any = &scratch64
	if _, ok := any(T(0)).(float32); ok {
		l = &scratch32
	}
	return l.(*scratchLists[T])
}

// scratch returns a slice of n elements with unspecified contents.
func scratch[T Float](n int) []T {
	c := scratchClass(n)
	l := lists[T]()
	l.mu.Lock()
	if k := len(l.free[c]); k > 0 {
		s := l.free[c][k-1]
		l.free[c] = l.free[c][:k-1]
		l.mu.Unlock()
		return s[:n]
	}
	l.mu.Unlock()
	return make([]T, n, 1<<c)
}

// release returns a buffer from scratch to its free list.
func release[T Float](s []T) {
	c := scratchClass(cap(s))
	if cap(s) != 1<<c {
		return // not from scratch
	}
	l := lists[T]()
	l.mu.Lock()
	l.free[c] = append(l.free[c], s[:cap(s)])
	l.mu.Unlock()
}
