package nd

// Arrays made by the package-level creation functions (Zeros, FromSlice,
// RandomNormal, ...) are not tracked by a scope when they are made: they
// may be made for another session's ops (a server's input built with
// nd.FromSlice inside s.PredictMode, or before it), which the maker's
// default-session scope must not release. Such an array remembers the
// default-session scope that tracked its maker's arrays when it was made
// (its birth scope; tree.go) and joins it at its
// first use by an op that runs in the default session, which shows that it
// is the default tree's. Used first in another session (an op with that
// session's arrays, CopyOf, Adopt, Use), it is that tree's and is never
// tracked by a default-session scope: its maker releases it (on a GPU the
// pool takes memory back only on Release; no garbage collector does). An
// in-place op (Assign, AddTo, FillInPlace, ScaleInPlace, WriteFrom) or a
// host read (Float32s, ReadInto, ...) counts as a use in the default
// session unless another input of the op belongs to another session.
// Arrays made with a session's creation methods, DefaultSession()
// included, are tracked at once as before.

// claimFor settles the birth of a used by an op of session s: in the
// default session it joins its birth scope (if still open), in any other it
// is never tracked by a default-session scope.
func (a *NDArray) claimFor(s *Session) {
	if a.birth.Load() == nil {
		return
	}
	s = s.claimOwner()
	sc := a.birth.Swap(nil)
	if sc == nil || s != defaultSession {
		return
	}
	if a.scope.Load() == nil {
		sc.addIfOpen(a)
	}
}

// claimIn settles the births of arrays used together by an operation that
// does not go through sessionOf (in-place ops, host reads): in the session
// of the first bound array among them, else in the calling goroutine's
// open non-default session scope (scoped.go), else in the default session.
func claimIn(arrs ...*NDArray) {
	var s *Session
	for _, a := range arrs {
		if a != nil && s == nil {
			s = a.sess.Load()
		}
	}
	if s == nil && hasBirth(arrs) {
		s = scoped.current()
	}
	if s == nil {
		s = defaultSession
	}
	for _, a := range arrs {
		if a != nil && a.birth.Load() != nil {
			a.claimFor(s)
		}
	}
}

// hasBirth reports whether any of arrs still has an unsettled birth.
func hasBirth(arrs []*NDArray) bool {
	for _, a := range arrs {
		if a != nil && a.birth.Load() != nil {
			return true
		}
	}
	return false
}
