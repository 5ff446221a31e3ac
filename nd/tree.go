package nd

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/internal/gid"
)

// The default session is process-wide, but its state is kept per goroutine
// tree, so that a learner and a server that both use the package-level
// functions (autograd.Record in one goroutine, autograd.PredictMode in
// another) each run in their own mode:
//
//   - a goroutine that opens a Record, Pause, mode or autocast scope or a
//     memory Scope of the default session while it belongs to no open tree
//     starts one; the tree ends when its last open scope ends;
//   - a goroutine started with Go, or running Tree.Run (gluon.ForEachDevice
//     and the Trainer's and kvstore's worker goroutines do), belongs to the
//     tree it was started from for as long as it runs;
//   - an op on a goroutine of an open tree sees that tree's recording, mode
//     and autocast state (not recording and predict mode while it has only
//     memory scopes open), and the arrays it makes are tracked by the
//     tree's innermost Scope;
//   - an op on a goroutine of no open tree (started with a plain go
//     statement) sees the state of the open trees when they agree — in a
//     program with one tree, that tree's, so goroutines started inside a
//     Record record and their arrays are tracked by its innermost scope, as
//     before trees existed — and fails with ErrSession when they disagree;
//     while two or more trees are open its arrays are tracked by no scope;
//   - EnterAutocastAll (amp.Init) applies to every tree.
//
// While at most one tree is open — every program with one goroutine tree —
// ops read the session's counters directly; the per-tree lookup (the
// goroutine's identity, a map load, and for a goroutine of no tree a walk
// over the open trees) runs only while two or more are open. Goroutines
// are told apart by the runtime's descriptor, which a new goroutine may
// reuse once one has exited: the goroutine that opens a scope of the
// default session must not exit before the scope ends (the closure forms,
// autograd.Record and the like, guarantee it; a Scope handed to another
// goroutine to close breaks it). Where goroutines cannot be told apart
// (gid.Supported is false) every goroutine belongs to one tree, the
// session-wide state.

// modeState is a set of open-scope counters: a session's (every tree's
// together) or one tree's.
type modeState struct {
	recordDepth, pauseDepth, trainDepth, predictDepth atomic.Int32
	castF16, castBF16, castOff                        atomic.Int32 // open autocast scopes (autocast.go)
}

// mode is a snapshot of a modeState.
type mode struct {
	record, pause, train, predict, f16, bf16, off int32
}

func (m *modeState) load() mode {
	return mode{
		m.recordDepth.Load(), m.pauseDepth.Load(), m.trainDepth.Load(), m.predictDepth.Load(),
		m.castF16.Load(), m.castBF16.Load(), m.castOff.Load(),
	}
}

func (m mode) recording() bool { return m.record > 0 && m.pause == 0 }
func (m mode) training() bool  { return m.predict == 0 && m.train > 0 }

func (m mode) autocast() (DType, bool) {
	switch {
	case m.off > 0:
		return Float32, false
	case m.f16 > 0:
		return Float16, true
	case m.bf16 > 0:
		return BFloat16, true
	}
	return Float32, false
}

// same reports whether ops see the same state in m and o.
func (m mode) same(o mode) bool {
	d1, c1 := m.autocast()
	d2, c2 := o.autocast()
	return m.recording() == o.recording() && m.training() == o.training() && d1 == d2 && c1 == c2
}

func (m mode) String() string {
	s := "not recording"
	if m.recording() {
		s = "recording"
	}
	if m.training() {
		s += ", training mode"
	} else {
		s += ", predict mode"
	}
	if dt, ok := m.autocast(); ok {
		s += ", autocast to " + dt.String()
	}
	return s
}

// tree is one goroutine tree's share of the default session.
type tree struct {
	modeState
	id     int64
	owner  atomic.Uintptr // the goroutine that started it, while it is open (0 after)
	open   atomic.Int32   // open scopes of every kind (changed under trees.mu)
	scopes []*Scope       // open memory scopes, oldest first (under defaultSession.scopeMu)
}

// load returns the tree's state, with the autocast that applies to every
// tree (EnterAutocastAll) added.
func (t *tree) load() mode { return everyTree.add(t.modeState.load()) }

// everyTree holds the default session's autocast scopes that apply to
// every tree (amp.Init).
var everyTree modeState

// add returns m with every tree's autocast scopes added.
func (m *modeState) add(to mode) mode {
	to.f16 += m.castF16.Load()
	to.bf16 += m.castBF16.Load()
	to.off += m.castOff.Load()
	return to
}

// treeRegistry knows the trees of the default session and which goroutine
// belongs to which.
type treeRegistry struct {
	mu     sync.Mutex
	by     sync.Map                // goroutine → *tree: owners while their tree is open, Run members while they run
	active atomic.Pointer[[]*tree] // open trees (replaced under mu, never modified)
	count  atomic.Int32
	solo   atomic.Pointer[tree] // the open tree while exactly one is
	gen    atomic.Uint64        // bumped whenever a tree opens
	ids    int64
	shared *tree        // every goroutine's tree where goroutines cannot be told apart
	shadow atomic.Int32 // Runs on a goroutine that owns another tree: solo's owner may be in one
}

var trees = newTreeRegistry()

func newTreeRegistry() *treeRegistry {
	r := &treeRegistry{shared: &tree{id: 1}}
	r.active.Store(&[]*tree{})
	return r
}

// mine returns the calling goroutine's tree, or nil.
func (r *treeRegistry) mine() *tree {
	if !gid.Supported {
		return r.shared
	}
	g := gid.Current()
	if t := r.solo.Load(); t != nil && t.owner.Load() == g && r.shadow.Load() == 0 {
		return t
	}
	if v, ok := r.by.Load(g); ok {
		return v.(*tree)
	}
	return nil
}

// scoping returns the tree whose innermost scope tracks the arrays the
// calling goroutine makes: its own while that is open; for a goroutine of
// no open tree, the only open tree (as before trees existed, so that plain
// go statements inside a one-tree program's scope stay tracked), or nil
// while two or more are.
func (r *treeRegistry) scoping() *tree {
	if r.count.Load() == 0 {
		return nil
	}
	if t := r.mine(); t != nil && t.open.Load() > 0 {
		return t
	}
	return r.solo.Load()
}

// enter counts a scope that the calling goroutine opens in its tree,
// starting a tree if it has none, and returns the tree.
func (r *treeRegistry) enter() *tree {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.mine()
	if t == nil {
		r.ids++
		t = &tree{id: r.ids + 1}
		t.owner.Store(gid.Current())
		r.by.Store(gid.Current(), t)
	}
	if t.open.Load() == 0 {
		r.setActive(append(slices.Clone(*r.active.Load()), t))
		r.gen.Add(1) // before any of its counters move: see Session.mode
	}
	t.open.Add(1)
	return t
}

// leave counts the end of a scope of t (on any goroutine). A tree whose
// last scope ends forgets its owner: a goroutine of it that opens a scope
// again (a Run member) reopens it without pulling the owner back in.
func (r *treeRegistry) leave(t *tree) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.open.Add(-1) > 0 {
		return
	}
	r.setActive(slices.DeleteFunc(slices.Clone(*r.active.Load()), func(a *tree) bool { return a == t }))
	if o := t.owner.Swap(0); o != 0 && gid.Supported {
		r.by.CompareAndDelete(o, t)
	}
}

// setActive publishes the open trees, their count and solo (mu held).
func (r *treeRegistry) setActive(a []*tree) {
	r.active.Store(&a)
	r.count.Store(int32(len(a)))
	if len(a) == 1 {
		r.solo.Store(a[0])
	} else {
		r.solo.Store(nil)
	}
}

// mode returns the state that an op on the calling goroutine sees while
// two or more trees are open (see the comment at the top of this file):
// its own tree's; for a goroutine of no open tree, the state the open
// trees share, or an ErrSession failure naming op when they differ.
func (r *treeRegistry) mode(op string) mode {
	if t := r.mine(); t != nil && t.open.Load() > 0 {
		return t.load()
	}
	act := *r.active.Load()
	if len(act) == 0 {
		return everyTree.add(mode{})
	}
	m := act[0].load()
	for _, t := range act[1:] {
		if !t.load().same(m) {
			var desc []string
			for _, t := range act {
				desc = append(desc, fmt.Sprintf("tree %d: %v", t.id, t.load()))
			}
			fail(op, ErrSession, "the default session is used by goroutine trees in different states (%s), and this goroutine belongs to none of them: start it from its tree with nd.Go or gluon.ForEachDevice (or Tree.Run), open a scope of its own, or serve with a gluon.Predictor", strings.Join(desc, "; "))
		}
	}
	return m
}

// Tree is a goroutine tree of the default session (see Go), or the zero
// Tree for a goroutine that belongs to none.
type Tree struct{ t *tree }

// CurrentTree returns the tree of the default session that the calling
// goroutine belongs to: the one it started by opening a Record, Pause, mode
// or memory scope of the default session, or the one it runs in through
// Go or Tree.Run. It is the zero Tree when there is none.
func CurrentTree() Tree { return Tree{trees.mine()} }

// Run runs f on the calling goroutine as a member of t: its ops see t's
// recording and mode, and the arrays they make are tracked by t's
// innermost memory scope. gluon.ForEachDevice runs each device's function
// this way. With the zero Tree, Run just calls f.
func (t Tree) Run(f func()) {
	if t.t == nil || !gid.Supported {
		f()
		return
	}
	g := gid.Current()
	prev, had := trees.by.Swap(g, t.t)
	shadowing := had && prev.(*tree).owner.Load() == g
	if shadowing {
		trees.shadow.Add(1)
	}
	defer func() {
		trees.mu.Lock() // against the previous tree's closing (leave)
		if had && prev.(*tree).open.Load() > 0 {
			trees.by.Store(g, prev)
		} else {
			trees.by.CompareAndDelete(g, t.t)
		}
		trees.mu.Unlock()
		if shadowing {
			trees.shadow.Add(-1)
		}
	}()
	f()
}

// Go runs f in a new goroutine that belongs to the calling goroutine's tree
// of the default session (see CurrentTree and Tree.Run): a goroutine that a
// training step starts inside autograd.Record records, even while another
// goroutine tree serves predictions in the default session. A goroutine
// started with a plain go statement belongs to no tree: it follows the
// state of the open trees while they agree, and its ops fail with
// ErrSession when they do not.
func Go(f func()) {
	t := CurrentTree()
	go t.Run(f)
}
