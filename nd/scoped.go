package nd

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/internal/gid"
)

// scopeRegistry records, per goroutine, the sessions other than the default
// one whose Record, Pause or mode scopes that goroutine has open. Inside
// s.PredictMode(func() {...}) (or Record, Pause, TrainMode of s) the
// calling goroutine's arrays belong to s even when the package-level
// functions made them:
//
//   - nd.FromSlice, nd.Zeros and the other package-level creation functions
//     make arrays of s, tracked by s's innermost Scope (and random draws
//     come from s's generators);
//   - an op whose inputs are all neutral (package-made arrays from
//     elsewhere, a data loader's batches, parameters) runs in s.
//
// Goroutines it starts with Go, and the goroutines of gluon.ForEachDevice
// (Tree.Run), work in s too for as long as they run the work handed to
// them; a goroutine started with a plain go statement has no scope of its
// own open: there the arrays' sessions decide. The registry knows
// goroutines by the runtime's descriptor, which a new goroutine may reuse
// once the old one has exited: an Enter* scope must end (its exit
// function called) before the goroutine that opened it exits, as the
// closure forms (Record, PredictMode, ...) guarantee. While no scope of a
// non-default session is open anywhere, the cost is one atomic load per
// package-level creation and per op on neutral inputs; while one is open,
// a lookup of the calling goroutine under a read lock.
type scopeRegistry struct {
	open atomic.Int64 // open frames of non-default sessions, all goroutines
	mu   sync.Mutex   // serialises push and pop
	by   sync.Map     // goroutine → *[]*Session: the sessions of its open frames, oldest first (replaced, never modified)
}

var scoped = &scopeRegistry{}

// push notes that goroutine g opened a scope of s.
func (r *scopeRegistry) push(g uintptr, s *Session) {
	r.mu.Lock()
	var l []*Session
	if v, ok := r.by.Load(g); ok {
		l = *v.(*[]*Session)
	}
	l = append(slices.Clip(l), s)
	r.by.Store(g, &l)
	r.mu.Unlock()
	r.open.Add(1)
}

// pop notes that a scope of s that goroutine g opened has ended (the last
// one g opened, normally; exit functions may run on other goroutines).
func (r *scopeRegistry) pop(g uintptr, s *Session) {
	r.mu.Lock()
	if v, ok := r.by.Load(g); ok {
		l := slices.Clone(*v.(*[]*Session))
		for i := len(l) - 1; i >= 0; i-- {
			if l[i] == s {
				l = slices.Delete(l, i, i+1)
				break
			}
		}
		if len(l) == 0 {
			r.by.Delete(g)
		} else {
			r.by.Store(g, &l)
		}
	}
	r.mu.Unlock()
	r.open.Add(-1)
}

// current returns the session of the innermost scope the calling goroutine
// has open, among sessions other than the default one, or nil. While no
// such scope is open anywhere it is one atomic load; otherwise a lock-free
// lookup of the calling goroutine.
func (r *scopeRegistry) current() *Session {
	if !gid.Supported || r.open.Load() == 0 {
		return nil
	}
	v, ok := r.by.Load(gid.Current())
	if !ok {
		return nil
	}
	l := *v.(*[]*Session)
	if len(l) == 0 {
		return nil
	}
	return l[len(l)-1]
}

// creator returns the session that the package-level creation functions
// make arrays in: the calling goroutine's innermost non-default session
// scope's (see scopeRegistry), else the born session (birth.go).
func creator() *Session {
	if s := scoped.current(); s != nil {
		return s
	}
	return bornSession
}
