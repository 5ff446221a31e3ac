package nd

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/gid"
	"github.com/goluon/goluon/nd/backend"
)

// Graph is a traced computation (see Trace): the kernels it ran, with
// their buffers planned, replayed by Call on new inputs of the same shapes
// without the ops' checks, allocations and tape. A Graph is safe for
// concurrent calls: each call in flight has its own set of buffers.
type Graph struct {
	name        string
	recording   bool // traced while recording
	grads       bool // with a backward pass (some output needs a gradient, some input or bound array takes one)
	training    bool
	castDT      DType // autocast at trace time (castOn)
	castOn      bool
	inputs      []inSpec
	bound       []boundSpec
	packN       int // outputs packed into a recorded call's anchor (those that need a gradient)
	boundArrays []*NDArray
	slots       []slot
	fwd, bwd    []step
	outs        []outSpec
	heads       []int32 // per output: the slot of its gradient (-1: no gradient flows)
	results     []resSpec
	phys        []physSpec
	folded      int          // batch normalisations folded (TraceOpts.FoldBatchNorm)
	fusedBwd    int          // pooling and bias + ReLU backward pairs fused (graph_fuse.go)
	capt        *capturePlan // calls run as captured device graphs (TraceOpts.DeviceGraph), or nil
	host        bool         // a step works on the host at each call (recording.host): never captured

	mu       sync.Mutex
	free     []*instance
	released bool
	made     int
}

type inSpec struct {
	absent bool
	shape  []int
	dt     DType
	dev    ctx.Context
	alias  int // an earlier input this one must be (the same array), or -1
	slot   int32
	grad   bool // needs a gradient
}

type boundSpec struct {
	slot int32
	grad bool // takes a gradient
}

// handout is an array a call hands out (an output, a gradient): where the
// trace left it, and whether its slot is its own buffer, fresh per call
// (else it is copied out of the slot).
type handout struct {
	slot  int32
	off   int
	shape []int
	dt    DType
	dev   ctx.Context
	be    backend.Backend
	fresh bool
}

func handoutOf(r *recording, a *NDArray) handout {
	x := r.ref(a.storageArg())
	return handout{slot: x.slot, off: x.off, shape: slices.Clone(a.shape), dt: a.dtype, dev: a.st.dev, be: a.st.be}
}

type outSpec struct {
	handout
	packed int  // offset in a recorded call's anchor (-1: not in it)
	kept   bool // fresh, and read by the backward kernels: pinned until they ran
}

type resSpec struct {
	handout
	target int // index among the inputs, then the bound arrays
}

type physSpec struct {
	be   backend.Backend
	dev  ctx.Context
	dt   DType
	n    int
	busy int // last step of the slot holding it while planning
}

// instance is one set of a graph's planned buffers with the slot bindings
// of the call using it.
type instance struct {
	args []backend.Arg
	bufs []backend.Buffer
	dg   deviceGraph // the set's captured device graph (TraceOpts.DeviceGraph)
}

// hold is a recorded call's claim on an instance until its backward pass
// (or the collection of its output): whichever comes first returns the
// instance, once.
type hold struct {
	in     *instance
	keep   []*NDArray    // views of the outputs the backward kernels read
	device bool          // the forward pass ran as a device graph (graph_capture.go)
	outAt  []backend.Arg // per output the backward kernels read: where the caller's output is
	done   atomic.Bool
}

// GraphStats describes a Graph.
type GraphStats struct {
	Steps         int   // kernels replayed by a call
	BackwardSteps int   // kernels replayed by its backward pass
	Slots         int   // buffers the trace saw
	Buffers       int   // planned buffers per call in flight
	PlannedBytes  int64 // their size
	TracedBytes   int64 // the size of the buffers they replace
	Sets          int   // buffer sets made so far (one per call in flight at once)
	Folded        int   // batch normalisations folded into convolutions (TraceOpts.FoldBatchNorm)
	// FusedBackward counts the backward kernel pairs run as one: a
	// pooling's and the bias + ReLU's before it
	// (backend.PoolReluBackwardKernels).
	FusedBackward int
	DeviceGraph   bool  // calls run as captured device graphs (TraceOpts.DeviceGraph)
	Captures      int64 // device graphs captured so far (forward and backward passes)
	Launches      int64 // passes (calls, backward passes) that launched one
	// DeviceGraphErr is why the backend would not capture a device
	// graph, the first time it would not ("" when it always did); the
	// buffer set it failed for replays as usual.
	DeviceGraphErr string
}

// Stats describes g.
func (g *Graph) Stats() GraphStats {
	st := GraphStats{Steps: len(g.fwd), BackwardSteps: len(g.bwd), Slots: len(g.slots), Buffers: len(g.phys), Folded: g.folded, FusedBackward: g.fusedBwd}
	for _, p := range g.phys {
		st.PlannedBytes += int64(p.n * p.dt.Size())
	}
	for _, s := range g.slots {
		if s.kind == slotPlanned && s.first >= 0 {
			st.TracedBytes += int64(s.n * s.dt.Size())
		}
	}
	g.mu.Lock()
	st.Sets = g.made
	g.mu.Unlock()
	if g.capt != nil {
		st.DeviceGraph = true
		st.Captures, st.Launches = g.capt.captures.Load(), g.capt.launches.Load()
		if err := g.capt.err.Load(); err != nil {
			st.DeviceGraphErr = (*err).Error()
		}
	}
	return st
}

// Trace runs f on inputs as a dry run (nothing is computed) and returns
// the Graph of the kernels it would run. bound lists the arrays f reads
// besides its inputs that calls must keep (a block's parameters): their
// memory is used in place, and they get gradients when the calling
// session records. Inputs may be nil (optional inputs); calls must pass
// nil in the same places.
//
// Inside f, reading values on the host (Float32s, Scalar, Bernoulli's and
// Categorical's reads, a copy to another device) and making persistent
// arrays (Persist, AttachGrad) are ErrTrace errors; Dropout and the random
// creation functions draw again on every call. Arrays f captures other
// than inputs and bound arrays are used by every call as they were at
// trace time: they must stay alive.
//
// A graph with a backward pass runs each pooling's backward kernel and
// the bias + ReLU's before it as one, where the backend has the fused
// kernel and the results are the same bits (GraphStats.FusedBackward).
func Trace(name string, f func(in []*NDArray) []*NDArray, inputs, bound []*NDArray) *Graph {
	return TraceWith(name, f, inputs, bound, TraceOpts{})
}

// TraceWith is Trace with the options opts asks for (see TraceOpts: its
// rewrites apply when the graph has no backward pass; Stats reports how
// many applied).
func TraceWith(name string, f func(in []*NDArray) []*NDArray, inputs, bound []*NDArray, opts TraceOpts) *Graph {
	const op = "Trace"
	if !TraceSupported {
		fail(op, ErrTrace, "tracing needs amd64 or arm64 (it tells goroutines apart)")
	}
	if Tracing() {
		fail(op, ErrTrace, "%s: the calling goroutine is already tracing", name)
	}
	live := nonNil(inputs)
	if len(live) == 0 {
		fail(op, ErrArgument, "%s: no inputs", name)
	}
	defer checkLive(op, live...).done()
	defer checkLive(op, bound...).done()
	sess := sessionOf(op, append(slices.Clone(live), bound...)...)
	g := &Graph{name: name, recording: sess.IsRecording(), training: sess.IsTraining()}
	g.castDT, g.castOn = sess.AutocastDType()
	r := &recording{name: name, sess: sess, slotOf: map[backend.Buffer]int32{},
		ranged: map[backend.Buffer][]int32{}, tracers: map[backend.Backend]*tracer{}}
	defer func() { release(r.views...) }()
	ins := g.bindInputs(r, inputs)
	var leaves []*NDArray
	var targets []int
	for i, x := range ins {
		if x != nil && g.inputs[i].grad && g.inputs[i].alias < 0 {
			leaves, targets = append(leaves, x), append(targets, i)
		}
	}
	g.boundArrays = slices.Clone(bound)
	for j, b := range bound {
		need := g.recording && b.requiresGrad()
		slot := r.addRanged(slot{kind: slotBound, index: j, buf: b.st.buf, dt: b.dtype, n: b.Size(), base: b.off, size: b.Size()})
		g.bound = append(g.bound, boundSpec{slot: slot, grad: need})
		if need {
			leaves, targets = append(leaves, b), append(targets, len(inputs)+j)
		}
	}

	me := gid.Current()
	traceBy.Store(me, r)
	traceCount.Add(1)
	defer func() {
		traceBy.Delete(me)
		traceCount.Add(-1)
		for _, o := range r.owned {
			o.st.be.Free(o.st.dev, o.buf)
			o.st.buf = nil // an array kept from the dry run fails at its next use
		}
	}()
	outs := f(ins)
	if len(outs) == 0 {
		fail(op, ErrArgument, "%s: the computation returned no outputs", name)
	}
	defer checkLive(op, outs...).done()
	var heads, grads []*NDArray
	if g.recording {
		heads = g.bindHeads(r, outs, sess)
	}
	if len(heads) > 0 { // (with no leaves, gradsOf reports the captured array that needs a gradient)
		bwdStart := len(r.steps)
		grads = gradsOf(outsWithHeads(outs, heads), nonNil(heads), leaves, func(a *NDArray) {
			fail("Trace", ErrTrace, "the computation reads an array of shape %v that takes a gradient but is neither an input nor a bound array (a parameter): pass it as one", a.shape)
		})
		g.fwd, g.bwd, g.grads = r.steps[:bwdStart], r.steps[bwdStart:], true
	} else {
		g.fwd, g.heads = r.steps, nil
	}
	g.bindOutputs(r, outs)
	for k, gr := range grads {
		if gr != nil {
			g.results = append(g.results, resSpec{handout: handoutOf(r, gr), target: targets[k]})
		}
	}
	g.slots = r.slots
	for _, o := range r.owned { // the dry run's buffers go back below; planning only needs their sizes
		g.slots[r.slotOf[o.buf]].buf = nil
	}
	for _, sp := range append(slices.Clone(g.inputs), inSpec{slot: -1}) { // bound per call
		if sp.slot >= 0 {
			g.slots[sp.slot].buf = nil
		}
	}
	for _, b := range g.bound {
		g.slots[b.slot].buf = nil
	}
	if g.grads {
		g.fusedBwd = g.fusePoolRelu()
	}
	if opts.FoldBatchNorm && !g.grads {
		g.folded = g.foldBatchNorm()
	}
	g.plan()
	g.host = r.host
	if opts.DeviceGraph && !r.host {
		g.capt = g.capturer()
	}
	return g
}

// bindInputs makes the input slots and returns what f receives: the
// inputs, or, for those that need a gradient while recording, leaf views
// of them (the trace's backward pass stops there). An input that is the
// same array (memory, shape and dtype) as an earlier one is that input's
// alias; inputs that merely share memory get slots of their own.
func (g *Graph) bindInputs(r *recording, inputs []*NDArray) []*NDArray {
	ins := make([]*NDArray, len(inputs))
	for i, x := range inputs {
		spec := inSpec{alias: -1, slot: -1}
		if x == nil {
			spec.absent = true
			g.inputs = append(g.inputs, spec)
			continue
		}
		spec.shape, spec.dt, spec.dev = slices.Clone(x.shape), x.dtype, x.st.dev
		for j, y := range inputs[:i] {
			if y != nil && y.st == x.st && y.off == x.off && y.dtype == x.dtype && slices.Equal(y.shape, x.shape) {
				spec.alias, spec.slot = g.inputs[j].alias, g.inputs[j].slot
				if spec.alias < 0 {
					spec.alias = j
				}
				break
			}
		}
		if spec.alias >= 0 {
			ins[i] = ins[spec.alias]
			g.inputs = append(g.inputs, spec)
			continue
		}
		spec.slot = r.addRanged(slot{kind: slotInput, index: i, buf: x.st.buf, dt: x.dtype, n: x.Size(), base: x.off, size: x.Size()})
		ins[i] = x
		if g.recording && x.requiresGrad() && x.dtype.IsFloat() {
			spec.grad = true
			v := x.view(0, x.shape)
			v.ag.Store(&agState{traced: true})
			r.views = append(r.views, v)
			ins[i] = v
		}
		g.inputs = append(g.inputs, spec)
	}
	return ins
}

// bindHeads makes one head-gradient slot per output that needs a gradient
// (nil for the others). A recorded call packs those outputs into one
// array, so they must share a dtype and a context.
func (g *Graph) bindHeads(r *recording, outs []*NDArray, sess *Session) []*NDArray {
	heads := make([]*NDArray, len(outs))
	g.heads = make([]int32, len(outs))
	any := false
	var first *NDArray
	for i, o := range outs {
		g.heads[i] = -1
		if !o.requiresGrad() {
			continue
		}
		if first == nil {
			first = o
		} else if o.dtype != first.dtype || o.st.dev != first.st.dev {
			r.fail("a recorded call's outputs that need a gradient must share a dtype and a context")
		}
		h := newArray("Trace", sess, o.st.dev, o.dtype, o.shape)
		j := r.slotOf[h.st.buf]
		r.slots[j].kind, r.slots[j].index = slotHead, i
		heads[i], g.heads[i], any = h, j, true
	}
	if !any {
		return nil
	}
	return heads
}

func outsWithHeads(outs, heads []*NDArray) []*NDArray {
	var o []*NDArray
	for i, h := range heads {
		if h != nil {
			o = append(o, outs[i])
		}
	}
	return o
}

// bindOutputs describes the outputs. An output whose slot is its own
// planned buffer, written by this graph and used by no other output, is
// given a fresh buffer per call; any other is copied out of its slot.
func (g *Graph) bindOutputs(r *recording, outs []*NDArray) {
	packed := 0
	for i, o := range outs {
		spec := outSpec{handout: handoutOf(r, o), packed: -1}
		if g.grads && g.heads[i] >= 0 {
			spec.packed = packed
			packed += o.Size()
			g.packN++
		}
		s := &r.slots[spec.slot]
		if s.kind == slotPlanned && spec.off == 0 && o.Size() == s.n {
			s.kind, s.index, spec.fresh = slotOutput, i, true
		}
		g.outs = append(g.outs, spec)
	}
}

// plan marks the results that get fresh buffers and gives the planned
// slots physical buffers: in order of first use, each takes a free buffer
// of its backend, context and dtype (the closest in size, grown when
// short) whose last slot's last use came before its first.
func (g *Graph) plan() {
	// Positions: the forward kernels, the copy of outputs that are not
	// fresh, the backward kernels, the copy of results that are not fresh.
	fwdEnd := len(g.fwd)
	resultCopy := fwdEnd + 1 + len(g.bwd)
	use := func(j int32, at int) {
		s := &g.slots[j]
		if s.first < 0 {
			s.first = at
		}
		s.first, s.last = min(s.first, at), max(s.last, at)
	}
	for i, st := range g.fwd {
		for _, j := range st.uses {
			use(j, i)
		}
	}
	for i, st := range g.bwd {
		for _, j := range st.uses {
			use(j, fwdEnd+1+i)
			if s := g.slots[j]; s.kind == slotOutput {
				g.outs[s.index].kept = true
			}
		}
	}
	for _, o := range g.outs {
		if !o.fresh {
			use(o.slot, fwdEnd)
		}
	}
	for k := range g.results {
		rs := &g.results[k]
		s := &g.slots[rs.slot]
		if s.kind == slotPlanned && rs.off == 0 && numel(rs.shape) == s.n && s.first > fwdEnd {
			s.kind, s.index, rs.fresh = slotResult, k, true
		} else {
			use(rs.slot, resultCopy)
		}
	}
	var order []int
	for i, s := range g.slots {
		if s.kind == slotPlanned && s.first >= 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return g.slots[a].first - g.slots[b].first })
	for _, i := range order {
		s := &g.slots[i]
		best := -1
		for p, ph := range g.phys {
			if ph.busy >= s.first || ph.be != s.be || ph.dev != s.dev || ph.dt != s.dt {
				continue
			}
			if best < 0 || fitsBetter(ph.n, g.phys[best].n, s.n) {
				best = p
			}
		}
		if best < 0 {
			g.phys = append(g.phys, physSpec{be: s.be, dev: s.dev, dt: s.dt})
			best = len(g.phys) - 1
		}
		ph := &g.phys[best]
		ph.n, ph.busy, s.phys = max(ph.n, s.n), s.last, best
	}
}

// fitsBetter reports whether a buffer of a elements suits a slot of n
// better than one of b: the smallest that holds it, else the largest.
func fitsBetter(a, b, n int) bool {
	switch {
	case a >= n && b >= n:
		return a < b
	case a >= n || b >= n:
		return a >= n
	}
	return a > b
}

// claim returns a free buffer set, or makes one.
func (g *Graph) claim() *instance {
	g.mu.Lock()
	if n := len(g.free); n > 0 {
		in := g.free[n-1]
		g.free = g.free[:n-1]
		g.mu.Unlock()
		return in
	}
	g.made++
	g.mu.Unlock()
	in := &instance{args: make([]backend.Arg, len(g.slots)), bufs: make([]backend.Buffer, len(g.phys))}
	for p, ph := range g.phys {
		buf, err := ph.be.Alloc(ph.dev, ph.dt, ph.n)
		if err != nil {
			in.bufs = in.bufs[:p]
			g.drop(in)
			fail(g.name, ErrDevice, "allocating a traced graph's buffer of %d %v on %v: %v", ph.n, ph.dt, ph.dev, err)
		}
		in.bufs[p] = buf
	}
	for i, s := range g.slots {
		switch {
		case s.kind == slotPlanned && s.phys >= 0:
			in.args[i] = backend.Arg{Buf: in.bufs[s.phys]}
		case s.kind == slotCaptured:
			in.args[i] = backend.Arg{Buf: s.buf}
		}
	}
	return in
}

// put returns a buffer set after its call (and backward pass). A graph
// keeps two sets for reuse; more were in flight at once only briefly.
func (g *Graph) put(in *instance) {
	for i, s := range g.slots {
		if s.kind != slotPlanned && s.kind != slotCaptured {
			in.args[i] = backend.Arg{}
		}
	}
	g.mu.Lock()
	if !g.released && len(g.free) < 2 {
		g.free = append(g.free, in)
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	g.drop(in)
}

func (g *Graph) drop(in *instance) {
	g.dropDeviceGraph(in)
	for p, b := range in.bufs {
		g.phys[p].be.Free(g.phys[p].dev, b)
	}
	in.bufs = nil
}

// Release gives g's buffers back to their pools. Calls in flight finish;
// a later call still works, but allocates (and then frees) a buffer set of
// its own.
func (g *Graph) Release() {
	g.mu.Lock()
	free := g.free
	g.free, g.released = nil, true
	g.mu.Unlock()
	for _, in := range free {
		g.drop(in)
	}
}

// BoundTo reports whether bound are the arrays g was traced with (the same
// arrays, not released, with the same gradient requests while recording):
// a parameter replaced (Cast, Initialize with force, ResetContext) or
// frozen since calls for a new trace. Arrays moved to other memory (a
// Trainer packing its parameters) are still bound: calls use them where
// they are.
func (g *Graph) BoundTo(bound []*NDArray) bool {
	if len(bound) != len(g.bound) {
		return false
	}
	for i, b := range bound {
		if b == nil || b != g.boundArrays[i] || b.released.Load() || (g.recording && b.requiresGrad() != g.bound[i].grad) {
			return false
		}
	}
	return true
}
