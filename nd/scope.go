package nd

import (
	"slices"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/gid"
	"github.com/goluon/goluon/nd/backend"
)

// Scope releases the temporaries of a piece of work deterministically.
// Every array made while a scope is the innermost open one of its session
// is tracked by it; Close releases all tracked arrays except those handed
// on with Keep. A typical training step:
//
//	s := nd.NewScope()
//	loss := step(batch) // activations, gradients of intermediates, ...
//	s.Keep(loss)        // loss survives Close; everything else goes back to the pool
//	s.Close()
//
// Scopes nest within a Session. The arrays of a session (see Session) are
// tracked by that session's scopes only, so goroutine trees with their own
// sessions open and close scopes independently. NewScope opens a scope of
// the default session in the calling goroutine's tree (see Go), which
// tracks the neutral arrays that the calling goroutine makes while it is
// the innermost scope it opened, and those of the goroutines it starts
// with Go (gluon.ForEachDevice's) while it is, that open no scope of
// their own.
// Gradient buffers attached with AttachGrad are never tracked.
type Scope struct {
	mu        sync.Mutex
	arrays    []*NDArray
	compactAt int // list length at which released and handed-on arrays are dropped
	parent    *Scope
	closed    bool // removed from its session's chain (under the session's scopeMu)
	done      bool // released its arrays (under mu): addIfOpen adds nothing
	sess      *Session
	tree      *tree   // the default session's tree it belongs to (tree.go)
	g         uintptr // the goroutine that opened it, in the default session
}

// NewScope opens a scope of the default session, nested in its innermost
// one.
func NewScope() *Scope { return defaultSession.NewScope() }

// WithScope runs f inside a new scope of the default session and closes it
// afterwards, keeping the arrays f returns.
func WithScope(f func() []*NDArray) []*NDArray { return defaultSession.WithScope(f) }

// NewScope opens a scope of s nested in s's innermost one. The Persistent
// session has no scopes: calling it there panics with ErrArgument.
func (s *Session) NewScope() *Scope {
	if s.persistent {
		fail("NewScope", ErrArgument, "the persistent session has no scopes: its arrays outlive them all")
	}
	var t *tree
	var g uintptr
	if s == defaultSession {
		t, g = trees.enter(), gid.Current()
	}
	s.scopeMu.Lock()
	defer s.scopeMu.Unlock()
	sc := &Scope{parent: s.innermost(t, g), sess: s, tree: t, g: g}
	if t != nil {
		t.scopes = append(t.scopes, sc)
	} else {
		s.top = sc
	}
	return sc
}

// innermost returns the innermost open scope of s (scopeMu held): in the
// default session, the scope of tree t that tracks goroutine g's arrays
// (treeRegistry.innermost; nil: none).
func (s *Session) innermost(t *tree, g uintptr) *Scope {
	if s != defaultSession {
		return s.top
	}
	return trees.innermost(t, g)
}

// WithScope runs f inside a new scope of s and closes it afterwards,
// keeping the arrays f returns.
func (s *Session) WithScope(f func() []*NDArray) []*NDArray {
	sc := s.NewScope()
	defer sc.Close()
	keep := f()
	sc.Keep(keep...)
	return keep
}

// track registers a with the innermost open scope of s.
func (s *Session) track(a *NDArray) {
	if s.persistent {
		return
	}
	if s.born {
		t, g := trees.scoping()
		defaultSession.scopeMu.Lock()
		sc := defaultSession.innermost(t, g)
		defaultSession.scopeMu.Unlock()
		if sc != nil {
			a.birth.Store(sc)
		}
		return
	}
	var t *tree
	var g uintptr
	if s == defaultSession {
		t, g = trees.scoping()
	}
	s.scopeMu.Lock()
	sc := s.innermost(t, g)
	s.scopeMu.Unlock()
	if sc != nil {
		sc.add(a)
	}
}

func (s *Scope) add(a *NDArray) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(a)
}

// addLocked tracks a (s.mu held).
func (s *Scope) addLocked(a *NDArray) {
	a.scope.Store(s)
	s.arrays = append(s.arrays, a)
	if len(s.arrays) >= s.compactAt {
		// A long-lived scope would otherwise keep every array ever
		// released inside it; dropping them at doubling sizes costs O(1)
		// amortised per array.
		s.arrays = slices.DeleteFunc(s.arrays, func(a *NDArray) bool {
			return a.released.Load() || a.scope.Load() != s
		})
		s.compactAt = max(2*len(s.arrays), 1024)
	}
}

// addIfOpen tracks a in s unless s has released its arrays already.
func (s *Scope) addIfOpen(a *NDArray) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.addLocked(a)
	}
}

// untrack removes a from whatever scope tracks it.
func untrack(a *NDArray) { a.scope.Store(nil) }

// Persist removes a from whatever scope tracks it, so that it lives until
// it is released explicitly (or collected), and makes it neutral (it
// belongs to no Session), so that any goroutine tree may use it.
// Long-lived state created during a step — parameters initialised at the
// first forward pass, optimizer state, kvstore buffers — calls it. It
// returns a.
func (a *NDArray) Persist() *NDArray {
	if a != nil {
		if r := a.st.owner; r != nil && currentTrace() == r {
			r.fail("the computation keeps an array it made (Persist): state a block keeps between calls must be made before it is traced")
		}
		a.birth.Store(nil)
		untrack(a)
		a.sess.Store(nil)
	}
	return a
}

// Keep exempts arrays from this scope's Close. They move to the enclosing
// scope, if any, so an inner step can hand results to an outer one.
func (s *Scope) Keep(arrs ...*NDArray) {
	s.sess.scopeMu.Lock()
	parent := s.parent
	if parent != nil && parent.closed {
		parent = nil
	}
	s.sess.scopeMu.Unlock()
	for _, a := range arrs {
		if a != nil && a.birth.CompareAndSwap(s, parent) && parent == nil {
			a.birth.Store(nil)
		}
		if a == nil || a.scope.Load() != s {
			continue
		}
		if parent != nil {
			parent.add(a)
		} else {
			untrack(a)
		}
	}
}

// Close releases every array still tracked by s and removes s from its
// session's scope stack. Closing twice is harmless. Close a scope only
// once the goroutines started in it with Go have returned, and the ops of
// other goroutines working in its session are done: the arrays they are
// making are the scope's too, and releasing one while its op still writes
// it is not diagnosed (one goroutine tree per session and scope).
func (s *Scope) Close() {
	ss := s.sess
	ss.scopeMu.Lock()
	if s.closed {
		ss.scopeMu.Unlock()
		return
	}
	s.closed = true
	// Remove s wherever it is in the chain (normally the top).
	if t := s.tree; t != nil {
		t.scopes = slices.DeleteFunc(t.scopes, func(c *Scope) bool { return c == s })
		for _, c := range t.scopes {
			if c.parent == s {
				c.parent = s.parent
			}
		}
	} else if ss.top == s {
		ss.top = s.parent
	} else {
		for c := ss.top; c != nil; c = c.parent {
			if c.parent == s {
				c.parent = s.parent
				break
			}
		}
	}
	ss.scopeMu.Unlock()
	if s.tree != nil {
		trees.leave(s.tree)
	}

	s.mu.Lock()
	arrs := s.arrays
	s.arrays, s.done = nil, true
	s.mu.Unlock()
	for _, a := range arrs {
		if a.scope.CompareAndSwap(s, nil) {
			a.Release()
		}
	}
}

// Len reports how many live (unreleased) arrays the scope tracks.
func (s *Scope) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, a := range s.arrays {
		if !a.released.Load() && a.scope.Load() == s {
			n++
		}
	}
	return n
}

// MemStats reports the memory of a context as seen by its backend's pool.
type MemStats = backend.MemStats

// MemoryStats returns dev's memory statistics.
func MemoryStats(dev ctx.Context) MemStats {
	return backendFor("MemoryStats", dev).Stats(dev)
}

// ReleaseCache gives dev's pooled, unused buffers back to the system.
func ReleaseCache(dev ctx.Context) { backendFor("ReleaseCache", dev).ReleaseCache(dev) }
