package nd

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/internal/gid"
)

// The default session is process-wide, but its state is kept per goroutine
// tree, as PyTorch and MXNet keep autograd state per thread, so that a
// learner and a server that both use the package-level functions
// (autograd.Record in one goroutine, autograd.PredictMode in another) each
// run in their own mode:
//
//   - a goroutine that opens a Record, Pause, mode or autocast scope or a
//     memory Scope of the default session while it belongs to no tree
//     starts one; when the tree's last scope ends, the tree closes and the
//     goroutine belongs to none again;
//   - a goroutine started with Go, or running Tree.Run (gluon.ForEachDevice
//     and the Trainer's and kvstore's worker goroutines do), belongs to the
//     tree it was started from for as long as it runs, open or closed;
//   - an op sees its goroutine's tree's recording, mode and autocast state,
//     and the arrays it makes are tracked by the innermost Scope the
//     goroutine opened, else by the one its starter's arrays went to when
//     it was started, or the nearest enclosing one still open
//     (treeRegistry.innermost);
//   - a goroutine of no tree, or of a closed tree, works in the default
//     state — not recording, predict mode, no autocast but amp.Init's
//     (EnterAutocastAll) — and no scope tracks its arrays, as a new thread
//     starts with the default autograd state in PyTorch and MXNet: a
//     goroutine started with a plain go statement inside autograd.Record
//     does not record (Backward on its loss says so).
//
// Ops read the session's counters directly while they hold no other
// tree's state than the calling goroutine's: while no tree is open, or
// one is and the caller belongs to it (its owner: a gid comparison; its
// Tree.Run members: a map load); otherwise from the caller's tree. Goroutines are told apart by the
// runtime's descriptor, which a new goroutine may reuse once one has
// exited: the goroutine that opens a scope of the default session must not
// exit before the scope ends (the closure forms, autograd.Record and the
// like, guarantee it; a Scope handed to another goroutine to close breaks
// it). Where goroutines cannot be told apart (gid.Supported is false)
// every goroutine belongs to one tree, the session-wide state.

// modeState is a set of open-scope counters: a session's (every tree's
// together) or one tree's.
type modeState struct {
	recordDepth, pauseDepth, trainDepth, predictDepth atomic.Int32
	castF16, castBF16, castOff                        atomic.Int32 // open autocast scopes (autocast.go)
	// gradDepth counts the passes of GradWith with CreateGraph under
	// way: they record whatever Pause scopes are open, as PyTorch's
	// create_graph does under no_grad.
	gradDepth atomic.Int32
}

// mode is a snapshot of a modeState.
type mode struct {
	record, pause, train, predict, f16, bf16, off, grad int32
}

func (m *modeState) load() mode {
	return mode{
		m.recordDepth.Load(), m.pauseDepth.Load(), m.trainDepth.Load(), m.predictDepth.Load(),
		m.castF16.Load(), m.castBF16.Load(), m.castOff.Load(), m.gradDepth.Load(),
	}
}

func (m mode) recording() bool { return m.record > 0 && m.pause == 0 || m.grad > 0 }
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

// tree is one goroutine tree's share of the default session.
type tree struct {
	modeState
	owner  atomic.Uintptr // the goroutine that started it
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
	mu      sync.Mutex
	owners  sync.Map                // goroutine → *tree it started, while the tree is open
	members sync.Map                // goroutine → *member, while it runs Tree.Run
	running atomic.Int32            // Tree.Run calls in progress: members is empty while 0
	active  atomic.Pointer[[]*tree] // open trees (replaced under mu, never modified)
	count   atomic.Int32
	solo    atomic.Pointer[tree] // the open tree while exactly one is
	gen     atomic.Uint64        // bumped whenever a tree opens
	shared  *tree                // every goroutine's tree where goroutines cannot be told apart
}

// member is a goroutine running Tree.Run: in tree t, started from
// goroutine from (whose scopes track its arrays while it opens none).
type member struct {
	t    *tree
	from uintptr
	// scope is the scope that tracked the starter's arrays when it took
	// the tree (CurrentTree): the member's arrays go there, not to scopes
	// the starter opens afterwards (a scope opened in one device's function
	// of ForEachDevice must not take the other devices' arrays).
	scope *Scope
}

var trees = newTreeRegistry()

func newTreeRegistry() *treeRegistry {
	r := &treeRegistry{shared: &tree{}}
	r.active.Store(&[]*tree{})
	return r
}

// mine returns the calling goroutine's tree, or nil.
func (r *treeRegistry) mine() *tree {
	if !gid.Supported {
		return r.shared
	}
	return r.of(gid.Current())
}

// of returns goroutine g's tree, or nil: the one it runs Tree.Run in, else
// the one it started.
func (r *treeRegistry) of(g uintptr) *tree {
	if r.running.Load() > 0 {
		if v, ok := r.members.Load(g); ok {
			return v.(*member).t
		}
	}
	if t := r.solo.Load(); t != nil && t.owner.Load() == g {
		return t
	}
	if v, ok := r.owners.Load(g); ok {
		return v.(*tree)
	}
	return nil
}

// scoping returns the tree whose scopes track the arrays the calling
// goroutine makes (its own while that is open, else nil) and the
// goroutine's identity, for Session.innermost.
func (r *treeRegistry) scoping() (*tree, uintptr) {
	if r.count.Load() == 0 {
		return nil, 0
	}
	g := gid.Current()
	if t := r.mine(); t != nil && t.open.Load() > 0 {
		return t, g
	}
	return nil, g
}

// innermost returns the scope of t that tracks what goroutine g makes:
// the innermost one g opened; for a goroutine that opened none, the one
// its starter's arrays went to when it took the tree (Go, Tree.Run), or
// the nearest enclosing one still open; else nil. Workers of one tree that
// each open a scope so do not release each other's arrays, and a scope
// the starter opens later (in its own device's function) does not take a
// worker's. Held: defaultSession.scopeMu.
func (r *treeRegistry) innermost(t *tree, g uintptr) *Scope {
	if t == nil || len(t.scopes) == 0 {
		return nil
	}
	if !gid.Supported {
		return t.scopes[len(t.scopes)-1]
	}
	for i := len(t.scopes) - 1; i >= 0; i-- {
		if t.scopes[i].g == g {
			return t.scopes[i]
		}
	}
	v, ok := r.members.Load(g)
	if !ok || v.(*member).t != t {
		return nil
	}
	sc := v.(*member).scope
	for sc != nil && sc.closed { // closed since: its enclosing one
		sc = sc.parent
	}
	return sc
}

// enter counts a scope that the calling goroutine opens in its tree,
// starting a tree if it has none, and returns the tree.
func (r *treeRegistry) enter() *tree {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.mine()
	if t == nil {
		t = &tree{}
		t.owner.Store(gid.Current())
		r.owners.Store(gid.Current(), t)
	}
	if t.open.Load() == 0 {
		r.setActive(append(slices.Clone(*r.active.Load()), t))
		r.gen.Add(1) // before any of its counters move: see Session.mode
	}
	t.open.Add(1)
	return t
}

// leave counts the end of a scope of t (on any goroutine). A tree whose
// last scope ends closes and forgets its owner, which belongs to no tree
// again; its Run members stay in it while they run (a bucket's reduction
// that outlives the step's Record), in the default state, and a scope one
// of them opens reopens it without the former owner.
func (r *treeRegistry) leave(t *tree) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.open.Add(-1) > 0 {
		return
	}
	r.setActive(slices.DeleteFunc(slices.Clone(*r.active.Load()), func(a *tree) bool { return a == t }))
	if o := t.owner.Swap(0); o != 0 && gid.Supported {
		r.owners.CompareAndDelete(o, t)
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

// mode returns the state that an op on the calling goroutine sees (see
// the comment at the top of this file): its tree's, else the default one.
func (r *treeRegistry) mode() mode {
	if t := r.mine(); t != nil {
		return t.load()
	}
	return everyTree.add(mode{})
}

// Tree is a goroutine tree of the default session (see Go) as seen from
// the goroutine that took it with CurrentTree, or the zero Tree for a
// goroutine that belongs to none.
type Tree struct {
	t     *tree
	from  uintptr
	scope *Scope // the taker's innermost scope then (member.scope)
	// sess is the session of the innermost Record, Pause or mode scope of a
	// session other than the default one that the taking goroutine has
	// open (scoped.go), or nil: Run makes its goroutine see it too.
	sess *Session
}

// CurrentTree returns the tree of the default session that the calling
// goroutine belongs to: the one it started by opening a Record, Pause, mode
// or memory scope of the default session, or the one it runs in through
// Go or Tree.Run. It is the zero Tree when there is none. It also carries
// the session whose Record, Pause or mode scope the goroutine is inside
// (s.Record(func() {...})), so that Run's goroutines work in it as the
// taker does.
func CurrentTree() Tree {
	sess := scoped.current()
	t := trees.mine()
	if t == nil {
		return Tree{sess: sess}
	}
	g := gid.Current()
	defaultSession.scopeMu.Lock()
	sc := trees.innermost(t, g)
	defaultSession.scopeMu.Unlock()
	return Tree{t, g, sc, sess}
}

// Same reports whether t and o are the same tree (taken on any goroutines).
func (t Tree) Same(o Tree) bool { return t.t == o.t }

// Run runs f on the calling goroutine as a member of t: its ops see t's
// recording and mode, and the arrays they make are tracked by the
// innermost scope it opens itself, else by the one the goroutine that took
// t with CurrentTree used then. gluon.ForEachDevice runs each device's function
// this way. With the zero Tree, Run just calls f.
func (t Tree) Run(f func()) {
	if t.sess != nil && gid.Supported {
		g := gid.Current()
		scoped.push(g, t.sess)
		defer scoped.pop(g, t.sess)
	}
	if t.t == nil || !gid.Supported {
		f()
		return
	}
	g := gid.Current()
	prev, had := trees.members.Swap(g, &member{t.t, t.from, t.scope})
	trees.running.Add(1)
	defer func() {
		if had {
			trees.members.Store(g, prev)
		} else {
			trees.members.Delete(g)
		}
		trees.running.Add(-1)
	}()
	f()
}

// Go runs f in a new goroutine that belongs to the calling goroutine's tree
// of the default session (see CurrentTree and Tree.Run): a goroutine that a
// training step starts inside autograd.Record records, and the arrays it
// makes are tracked by the step's scope. A goroutine started with a plain
// go statement belongs to no tree: it works in the default state (not
// recording, predict mode), as a new thread does in PyTorch and MXNet.
// Wait for f to return before closing the scope it was started in: the
// arrays it makes are that scope's.
func Go(f func()) {
	t := CurrentTree()
	go t.Run(f)
}
