package nd

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/gid"
)

// Session is the autograd state of one goroutine tree: whether ops are
// recorded, training or predict mode, the stack of open Scopes and the
// random generators. Go has no goroutine-local storage, so the state
// travels with the arrays instead:
//
//   - an array made by a Session's creation methods (s.FromSlice,
//     s.Zeros, ...) or handed to s.Adopt belongs to s;
//   - an op whose inputs belong to s runs in s — it is recorded when s
//     records, Dropout and BatchNorm follow s's mode, and its results
//     belong to s and are tracked by s's innermost Scope;
//   - arrays that belong to no session (parameters, gradient buffers,
//     arrays made by the package-level functions) are neutral: they mix
//     with arrays of any one session, and an op whose inputs are all
//     neutral runs in the default session;
//   - except on a goroutine inside a Record, Pause or mode scope of a
//     session s other than the default one (s.PredictMode(func() {...})):
//     there the package-level creation functions make arrays of s and an
//     op on neutral inputs runs in s (scoped.go).
//
// The package-level functions (Zeros, NewScope, EnterRecording, and
// autograd.Record, Pause, TrainMode, PredictMode) act on the default
// session, which is process-wide but keeps its state per goroutine tree
// (tree.go): a learner in autograd.Record and a server in
// autograd.PredictMode on another goroutine each run in their own mode,
// and goroutines started with Go or gluon.ForEachDevice join the tree
// they were started from. A goroutine started with a plain go statement
// belongs to no tree and works in the default state (not recording,
// predict mode), as a new thread does in PyTorch and MXNet. Trees may
// also have sessions of their own (NewSession), whose arrays their
// goroutines inherit through the arrays they work on. An op
// that mixes arrays of two sessions is an error naming both (ErrSession),
// and so is a Record, Pause or mode scope that ends while a scope of
// another kind, opened after it in the same tree, is still open: the
// scopes of one goroutine nest, so that proves two goroutines of one tree
// ran under each other's mode.
//
// A Session is safe for concurrent use by the goroutines of its tree.
type Session struct {
	name       string
	persistent bool // PersistentSession(): arrays neutral and never tracked
	born       bool // the package-level creation functions' (birth.go)

	modeState // every tree's open scopes together (tree.go)

	frameMu sync.Mutex
	frames  []*frame // open Record/Pause/TrainMode/PredictMode scopes, oldest first

	scopeMu sync.Mutex
	top     *Scope // innermost open scope

	rngMu sync.Mutex
	gens  map[ctx.Context]*lockedRand
	epoch uint64   // the call to Seed the generators were derived after
	draws *drawLog // a checkpointed function's session: where its draws come from (checkpoint.go)
	owner *Session // a checkpointed function's session: the caller's, which the births it settles join
}

// claimOwner is the session whose births s settles: its owner's, for a
// checkpointed function's session.
func (s *Session) claimOwner() *Session {
	for s.owner != nil {
		s = s.owner
	}
	return s
}

// defaultSession holds the process-wide state of the package-level
// functions. Arrays never point at it: neutral arrays (nil session) run in
// it.
var defaultSession = &Session{name: "default"}

// bornSession makes the arrays of the package-level creation functions:
// neutral, drawing from the default session's generators, and not tracked
// but born into the default session's innermost scope (birth.go).
var bornSession = &Session{name: "default", born: true}

// persistentSession makes arrays that outlive every scope.
var persistentSession = &Session{name: "persistent", persistent: true}

var sessionCount atomic.Int64

// NewSession returns a new session, not recording and in predict mode,
// with no open scope. name appears in error messages; an empty name is
// replaced by "session<N>". Its random generators are derived from the
// current Seed and the name, so a session draws the same numbers however
// other sessions interleave with it.
func NewSession(name string) *Session {
	n := sessionCount.Add(1)
	if name == "" {
		name = fmt.Sprintf("session%d", n)
	}
	return &Session{name: name}
}

// DefaultSession returns the process-wide session that the package-level
// functions use.
func DefaultSession() *Session { return defaultSession }

// PersistentSession returns the session of the arrays that outlive every
// scope, as NDArray.Persist makes an existing array —
// parameters, optimizer state, kvstore buffers, models built by a
// goroutine tree of its own. Its creation methods (and CopyOf) make
// neutral arrays that no Scope ever tracks, so no closing scope can
// release them between their creation and a call to Persist, as the
// calling goroutine's own default-session scope could release an array
// made with the package-level functions. Its arrays are
// neutral, so ops on them run in the default session (or the session of
// the other inputs); it has no scopes of its own (NewScope panics).
func PersistentSession() *Session { return persistentSession }

// Name returns the session's name.
func (s *Session) Name() string { return s.name }

// String returns the session's name, quoted.
func (s *Session) String() string { return fmt.Sprintf("session %q", s.name) }

// IsRecording reports whether ops of s are being recorded for autograd.
// For the default session: in the calling goroutine's tree (tree.go).
func (s *Session) IsRecording() bool {
	g := trees.gen.Load()
	if m, ok := s.direct(); ok {
		r := m.recordDepth.Load() > 0 && m.pauseDepth.Load() == 0 || m.gradDepth.Load() > 0
		if s != defaultSession || trees.gen.Load() == g {
			return r
		}
	}
	return s.mode().recording()
}

// IsTraining reports whether ops of s run in training mode (dropout
// active, batch norm using batch statistics). For the default session: in
// the calling goroutine's tree (tree.go).
func (s *Session) IsTraining() bool { return s.mode().training() }

// direct returns the counters that hold exactly the calling goroutine's
// state, when one set does: s's own for a session other than the default
// one; the default session's while no tree is open, or one is and the
// caller belongs to it (a read from them must then check that trees.gen
// did not move meanwhile, as mode does). Otherwise ok is false.
func (s *Session) direct() (m *modeState, ok bool) {
	if s != defaultSession {
		return &s.modeState, true
	}
	switch trees.count.Load() {
	case 0:
		return &s.modeState, true
	case 1:
		if t := trees.mine(); t != nil && t == trees.solo.Load() {
			return &s.modeState, true
		}
	}
	return nil, false
}

// mode returns the state an op of s on the calling goroutine sees. For the
// default session that is the calling goroutine's tree's, or the default
// state for a goroutine of none (tree.go), read from the session's
// counters while they hold no other tree's (direct). A tree that opens
// bumps trees.gen before it moves any counter, so a read of the session's
// counters that saw that much before and the same generation after saw
// no other tree's scopes.
func (s *Session) mode() mode {
	if s != defaultSession {
		return s.modeState.load()
	}
	g := trees.gen.Load()
	if m, ok := s.direct(); ok {
		v := m.load()
		if trees.gen.Load() == g {
			return v
		}
	}
	return trees.mode()
}

// EnterRecording starts recording in s (and training mode when train is
// set) and returns the function that ends it. The state is a set of
// counters, not flags, so the goroutines of one tree (per-device workers)
// may each enter and leave recording concurrently.
func (s *Session) EnterRecording(train bool) (exit func()) { return s.enter("Record", train) }

// EnterPause stops recording in s (and sets the mode given by train) until
// the returned function is called.
func (s *Session) EnterPause(train bool) (exit func()) { return s.enter("Pause", train) }

// EnterMode sets training (train) or predict mode in s until the returned
// function is called; predict mode wins while any predict scope is open.
func (s *Session) EnterMode(train bool) (exit func()) { return s.enter("Mode", train) }

// enter opens a scope of the given kind and returns its exit function.
func (s *Session) enter(kind string, train bool) (exit func()) { return s.open(kind, train).exit }

// open opens a scope of the given kind and returns its frame, which exit
// closes.
func (s *Session) open(kind string, train bool) *frame {
	f := s.push(kind, train)
	f.s = s
	f.bump(s, 1)
	return f
}

// exit closes a frame opened by open, once: later calls do nothing.
func (f *frame) exit() {
	if f.done.CompareAndSwap(false, true) {
		f.bump(f.s, -1)
		f.s.pop(f)
	}
}

// frame is an open Record, Pause, mode or autocast scope of a session.
type frame struct {
	kind  string // "Record", "Pause", "Mode", "Autocast" or "Grad"
	train bool
	dt    DType   // Autocast's
	g     uintptr // the goroutine that opened it (gid.Current)
	tree  *tree   // the default session's tree it belongs to (tree.go)
	s     *Session
	done  atomic.Bool // closed (exit)
}

// bump moves the counters that f holds by d, in s and in f's tree.
func (f *frame) bump(s *Session, d int32) {
	f.bumpIn(&s.modeState, d)
	if f.tree != nil {
		f.bumpIn(&f.tree.modeState, d)
	}
}

func (f *frame) bumpIn(m *modeState, d int32) {
	switch f.kind {
	case "Record":
		m.recordDepth.Add(d)
	case "Pause":
		m.pauseDepth.Add(d)
	case "Grad": // records, and leaves the mode alone
		m.gradDepth.Add(d)
		return
	case "Autocast":
		switch f.dt {
		case Float16:
			m.castF16.Add(d)
		case BFloat16:
			m.castBF16.Add(d)
		default:
			m.castOff.Add(d)
		}
		return
	}
	if f.train {
		m.trainDepth.Add(d)
	} else {
		m.predictDepth.Add(d)
	}
}

func (f *frame) String() string {
	switch {
	case f.kind == "Grad":
		return "EnableGrad"
	case f.kind == "Mode" && f.train:
		return "TrainMode"
	case f.kind == "Mode":
		return "PredictMode"
	case f.train:
		return f.kind + "(train)"
	}
	return f.kind + "(predict)"
}

// push opens a scope on the calling goroutine (noted in the scope
// registry for sessions other than the default one, and in the calling
// goroutine's tree for the default one).
func (s *Session) push(kind string, train bool) *frame {
	f := &frame{kind: kind, train: train, g: gid.Current()}
	s.attach(f)
	s.frameMu.Lock()
	s.frames = append(s.frames, f)
	s.frameMu.Unlock()
	if s.registered() {
		scoped.push(f.g, s)
	}
	return f
}

// attach makes f a scope of the calling goroutine's tree, in the default
// session (tree.go).
func (s *Session) attach(f *frame) {
	if s == defaultSession {
		f.tree = trees.enter()
	}
}

// detach ends f's part in its tree.
func (s *Session) detach(f *frame) {
	if f.tree != nil {
		trees.leave(f.tree)
	}
}

// pop removes f, normally the newest open scope. Scopes of one goroutine
// nest, so a scope that ends while a scope of another kind, opened after
// it in the same goroutine tree, is still open proves that two goroutines
// of one tree ran under each other's recording and mode. That is an
// ErrSession error (raised after the counters are restored). Scopes of the
// same kind may end in any order: per-device goroutines of one tree enter
// and leave Record concurrently. The default session's trees (tree.go)
// each have their own state, so their scopes may interleave.
func (s *Session) pop(f *frame) {
	s.frameMu.Lock()
	i := slices.Index(s.frames, f)
	var other *frame
	for _, g := range s.frames[i+1:] {
		if g.tree == f.tree && (g.kind != f.kind || g.train != f.train) {
			other = g
			break
		}
	}
	s.frames = slices.Delete(s.frames, i, i+1)
	s.frameMu.Unlock()
	if s.registered() {
		scoped.pop(f.g, s)
	}
	s.detach(f)
	if other != nil {
		fail("Session", ErrSession, "%v: a %v scope ended while a %v scope opened after it in the same goroutine tree was still open: the goroutines of a tree share its recording and mode, so each ran under the other's; serve with a gluon.Predictor, or give each tree its own Session (autograd.NewSession), or start the second tree with a plain go statement instead of nd.Go", s, f, other)
	}
}

// registered reports whether s's scopes go into the scope registry
// (scoped.go): every session but the default, persistent and born ones.
func (s *Session) registered() bool {
	return s != defaultSession && !s.persistent && !s.born
}

func once(f func()) func() {
	var o sync.Once
	return func() { o.Do(f) }
}

// Record runs f with s recording and in training mode, like Gluon's
// `with autograd.record():` for the arrays of s.
func (s *Session) Record(f func()) { s.RecordMode(true, f) }

// RecordMode runs f with s recording; train selects training mode.
func (s *Session) RecordMode(train bool, f func()) {
	defer s.open("Record", train).exit()
	f()
}

// EnableGrad runs f with s recording even inside Pause scopes, keeping
// the training or predict mode, as torch.enable_grad does inside no_grad:
// for code that needs a graph wherever it is called from (GradWith's
// CreateGraph passes, the derivatives of package autograd).
func (s *Session) EnableGrad(f func()) {
	defer s.open("Grad", false).exit()
	f()
}

// Pause runs f with s not recording and in predict mode, like Gluon's
// `with autograd.pause():`.
func (s *Session) Pause(f func()) { s.PauseMode(false, f) }

// PauseMode runs f with s not recording; train selects training mode.
func (s *Session) PauseMode(train bool, f func()) {
	defer s.open("Pause", train).exit()
	f()
}

// TrainMode runs f with s in training mode, recording unchanged.
func (s *Session) TrainMode(f func()) {
	defer s.open("Mode", true).exit()
	f()
}

// PredictMode runs f with s in predict mode, recording unchanged. Predict
// mode wins over training mode while it is open.
func (s *Session) PredictMode(f func()) {
	defer s.open("Mode", false).exit()
	f()
}

// IsRecording reports whether the default session records.
func IsRecording() bool { return defaultSession.IsRecording() }

// IsTraining reports whether the default session is in training mode.
func IsTraining() bool { return defaultSession.IsTraining() }

// EnterRecording starts recording in the default session; see
// Session.EnterRecording. Package autograd wraps it.
func EnterRecording(train bool) (exit func()) { return defaultSession.EnterRecording(train) }

// EnterPause stops recording in the default session; see
// Session.EnterPause.
func EnterPause(train bool) (exit func()) { return defaultSession.EnterPause(train) }

// EnterMode sets the default session's mode; see Session.EnterMode.
func EnterMode(train bool) (exit func()) { return defaultSession.EnterMode(train) }

// Session returns the session a belongs to: the one that made it, adopted
// it or ran the op that computed it; for a neutral array, the session of
// the innermost non-default scope the calling goroutine has open
// (scoped.go), else the default session. Goroutines that work on a's tree
// make their own arrays with it.
func (a *NDArray) Session() *Session {
	if s := a.sess.Load(); s != nil {
		return s
	}
	s := scoped.current()
	if s == nil {
		s = defaultSession
	}
	a.claimFor(s)
	return s
}

// Bound reports whether a belongs to a session other than the default one.
func (a *NDArray) Bound() bool { return a.sess.Load() != nil }

// sessionOf returns the session an op on arrs runs in: the one session
// their bound arrays share; when all are neutral, the session of the
// innermost scope of a non-default session that the calling goroutine has
// open (scoped.go), else the default session. Arrays of two different
// sessions are an ErrSession error naming both. Nil arrays are skipped
// (callers check liveness first).
func sessionOf(op string, arrs ...*NDArray) *Session {
	var s *Session
	for _, a := range arrs {
		if a == nil {
			continue
		}
		b := a.sess.Load()
		if b == nil || b == s {
			continue
		}
		if s != nil {
			fail(op, ErrSession, "arrays of %v and %v mixed (shapes %v and %v): each goroutine tree keeps to its own session; make an array that trees share neutral with Persist", s, b, firstOf(s, arrs).shape, a.shape)
		}
		s = b
	}
	if s == nil {
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
	return s
}

func firstOf(s *Session, arrs []*NDArray) *NDArray {
	for _, a := range arrs {
		if a != nil && a.sess.Load() == s {
			return a
		}
	}
	return arrs[0]
}

// bind makes a belong to s (nothing for the default and persistent
// sessions, whose arrays are neutral).
func (a *NDArray) bind(s *Session) {
	if s != defaultSession && !s.persistent && !s.born {
		a.sess.Store(s)
	}
}

// Adopt makes arrays made elsewhere (by the package-level functions, a data
// loader, another session's work handed over with Detach) belong to s, and
// tracks each one not already tracked by a Scope in s's innermost Scope.
// It is an ErrSession error to adopt an array of another session, and an
// array tracked by a scope of another session (a default-session scope
// tracks the neutral arrays its tree's goroutines make while it is open:
// make arrays with s's creation methods instead). Adopting into
// the default session is a no-op; adopting into PersistentSession() is Persist.
// Adopt returns its first argument, for
// chaining. Arrays shared with other trees (parameters) stay neutral:
// use Use for an op on them alone.
func (s *Session) Adopt(arrs ...*NDArray) *NDArray {
	for _, a := range arrs {
		defer checkLive("Adopt", a).done()
		if s == defaultSession {
			continue
		}
		if s.persistent {
			a.Persist()
			continue
		}
		if b := a.sess.Load(); b != nil && b != s {
			fail("Adopt", ErrSession, "array of shape %v belongs to %v, not %v (make it neutral with Persist first)", a.shape, b, s)
		}
		a.claimFor(s)
		if sc := a.scope.Load(); sc != nil && sc.sess != s {
			fail("Adopt", ErrSession, "array of shape %v is tracked by a scope of %v: it was made while that scope was open; make it with %v's creation methods", a.shape, sc.sess, s)
		}
		a.sess.Store(s)
		if a.scope.Load() == nil {
			s.track(a)
		}
	}
	if len(arrs) == 0 {
		return nil
	}
	return arrs[0]
}

// lift returns arrs with each neutral array replaced by a view of it in s,
// recorded as an identity so that gradients flow back. A composite op
// whose steps would otherwise run on neutral inputs alone (a matrix
// product with the parameters before the bound bias is added, a copy of
// the running statistics) lifts its inputs first, so that every array it
// makes belongs to its session. Nil entries stay nil; in the default
// session arrs is returned as it is.
func (s *Session) lift(op string, arrs ...*NDArray) []*NDArray {
	if s == defaultSession || s.persistent {
		return arrs
	}
	out := slices.Clone(arrs)
	for i, a := range out {
		if a == nil || a.sess.Load() != nil {
			continue
		}
		a.claimFor(s)
		v := a.viewIn(s, 0, a.shape)
		s.recordDiff(op, v, []*NDArray{a}, func(g *NDArray, _ []bool) []*NDArray {
			return []*NDArray{g.view(0, g.shape)}
		}, identityDiff)
		out[i] = v
	}
	return out
}

// Use returns a view of a that belongs to s, for ops of s whose inputs are
// otherwise neutral — a weight penalty computed from parameters alone
// inside s's Record, say. The view is recorded like an identity op, so
// gradients flow through it to a. a must be neutral or already s's.
func (s *Session) Use(a *NDArray) *NDArray {
	const op = "Use"
	defer checkLive(op, a).done()
	if b := a.sess.Load(); b != nil && b != s {
		fail(op, ErrSession, "array of shape %v belongs to %v, not %v", a.shape, b, s)
	}
	a.claimFor(s)
	v := a.viewIn(s, 0, a.shape)
	s.recordDiff(op, v, []*NDArray{a}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{g.view(0, g.shape)}
	}, identityDiff)
	return v
}

// CopyOf returns a copy of a on dev made in s, not recorded: the copy has
// no history and gradients do not flow back to a (DetachedCopyTo in s).
// nd.PersistentSession().CopyOf makes parameter replicas and kvstore buffers.
func (s *Session) CopyOf(a *NDArray, dev ctx.Context) *NDArray {
	const op = "CopyOf"
	if a != nil {
		a.claimFor(s)
	}
	defer checkLive(op, a).done()
	out := newArray(op, s, dev, a.dtype, a.shape)
	transfer(out, a)
	return out
}
