package gluon

import (
	"container/list"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// HybridOpts configure Hybridize.
type HybridOpts struct {
	// CacheSize is how many traced graphs the block keeps, one per call
	// signature; the least recently used goes when a new one comes. 0
	// means 8.
	CacheSize int
	// FoldBatchNorm folds each batch normalisation that follows a
	// convolution into it in the graphs of predict-mode calls that do not
	// record (inference): see nd.TraceOpts.FoldBatchNorm. Outputs then
	// differ from the eager block's by rounding (about 1e-6 relative in
	// float32) instead of being equal bit for bit.
	FoldBatchNorm bool
	// DeviceGraphs runs the graphs as captured device graphs on a GPU
	// (CUDA graphs), a recorded call's backward pass as a second one: see
	// nd.TraceOpts.DeviceGraph. Outputs and gradients stay equal to the
	// eager block's.
	DeviceGraphs bool
}

// HybridBlock runs a Block or MultiBlock through traced graphs, Gluon's
// hybridize: the first call with a given signature (the inputs' shapes,
// dtypes and contexts, which need a gradient, the session's recording and
// training modes and autocast) traces the block's ops into an nd.Graph,
// and later calls with that signature replay the graph, without the ops'
// checks, allocations and tape. While recording, a call records one tape
// node whose backward pass replays the traced backward kernels; the
// parameters get their gradients as eagerly, hooks included. Outputs and
// gradients equal the eager block's bit for bit, dropout masks included
// (unless HybridOpts.FoldBatchNorm).
//
// The contract, as in Gluon and JAX: a hybridized block is a function of
// its inputs and its parameters. Its Forward must not read values on the
// host (Float32s, Scalar, branching on data), must not keep arrays it
// makes between calls, and must do the same ops for inputs of the same
// signature; arrays it holds besides its parameters must stay alive.
// Reading on the host is an nd.ErrTrace panic at the trace. A
// replay does the traced ops, so Forward code whose ops depend on
// anything but the signature (a counter, the time) must not be
// hybridized.
//
// A call runs eagerly instead while a parameter is not initialised yet
// (deferred shapes: the first call infers them), inside another block's
// trace (which records its ops), and when an input shares memory with a
// parameter or with another input that is not the same array. A parameter replaced by another
// array since the trace (Cast, Initialize with force, ResetContext) or
// frozen makes a new trace; one whose memory moved (a Trainer packing it)
// does not. A block added, removed or replaced anywhere in the network
// (Add, ReplaceChild, ReplaceHead) makes the next call trace again; a
// layer's settings changed in place (a Dropout's Rate, an Activation's
// Name) need Clear. A recorded call supports one backward pass. A block
// must read only parameters of its own network: a parameter of another
// block (weights tied across separately hybridized blocks) is captured as
// the memory it had at the trace, which a Trainer's packing or a Cast
// leaves behind; hybridize their common parent instead.
//
// A network containing a block that implements EagerOnly (SyncBatchNorm,
// which meets the other contexts while it runs) runs eagerly.
//
// HybridBlock shares the wrapped block's Meta: its parameters, children,
// name, saving and loading are the block's.
type HybridBlock struct {
	inner Component
	size  int
	opts  nd.TraceOpts

	mu     sync.Mutex
	walked bool
	walkAt uint64      // structureGen when params was collected
	tree   []Component // the blocks the graphs were traced from (blockTree)
	params []*Parameter
	last   atomic.Pointer[boundSet] // the replicas the last call found
	why    string                   // why every call runs eagerly ("" for none)
	graphs map[string]*list.Element // of *hybridGraph
	lru    list.List
	stats  HybridStats
}

// EagerOnly is implemented by blocks that cannot be traced, such as those
// that synchronise with other contexts or processes while they run
// (nn.SyncBatchNorm). EagerOnly says why; Hybridize runs a network that
// contains one eagerly.
type EagerOnly interface {
	EagerOnly() string
}

type hybridGraph struct {
	key string
	g   *nd.Graph
}

// HybridStats counts a HybridBlock's calls.
type HybridStats struct {
	Traces  int // calls that traced a graph
	Replays int // calls that replayed one
	Eager   int // calls run eagerly (deferred parameters, inside another trace)
	Graphs  int // graphs held now
	Folded  int // batch normalisations folded in them (HybridOpts.FoldBatchNorm)
	// FusedBackward counts their backward kernel pairs run as one
	// (nd.GraphStats.FusedBackward: a pooling's and the bias + ReLU's
	// before it).
	FusedBackward int
	// DeviceGraphLaunches counts the passes (calls and their backward
	// passes) of the graphs held now that launched a captured device
	// graph (HybridOpts.DeviceGraphs).
	DeviceGraphLaunches int64
}

// Hybridize wraps b (a Block or a MultiBlock) so that its calls run
// through traced graphs (see HybridBlock). On architectures where nd
// cannot trace (nd.TraceSupported is false) every call runs eagerly.
func Hybridize(b Component, opts HybridOpts) *HybridBlock {
	if h, ok := b.(*HybridBlock); ok {
		b = h.inner
	}
	size := opts.CacheSize
	if size <= 0 {
		size = 8
	}
	return &HybridBlock{inner: b, size: size, opts: nd.TraceOpts{FoldBatchNorm: opts.FoldBatchNorm, DeviceGraph: opts.DeviceGraphs}, graphs: map[string]*list.Element{}}
}

// Meta returns the wrapped block's Meta.
func (h *HybridBlock) Meta() *BlockMeta { return h.inner.Meta() }

// Unwrap returns the wrapped block.
func (h *HybridBlock) Unwrap() Component { return h.inner }

// Forward runs the block on x.
func (h *HybridBlock) Forward(x *nd.NDArray) *nd.NDArray { return h.call([]*nd.NDArray{x})[0] }

// ForwardMulti runs the block on inputs (a Block takes one).
func (h *HybridBlock) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray { return h.call(inputs) }

// ExportONNX writes the wrapped block's form.
func (h *HybridBlock) ExportONNX(g ONNXGraph, input string) (string, error) {
	return g.Block(h.inner, input)
}

// Stats returns the block's call counts.
func (h *HybridBlock) Stats() HybridStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stats
	s.Graphs = h.lru.Len()
	for e := h.lru.Front(); e != nil; e = e.Next() {
		gs := e.Value.(*hybridGraph).g.Stats()
		s.Folded += gs.Folded
		s.FusedBackward += gs.FusedBackward
		s.DeviceGraphLaunches += gs.Launches
	}
	return s
}

// blockTree appends c and its descendants, depth first, to out: the
// network's structure, which a hybridized block's graphs were traced from.
func blockTree(c Component, out []Component) []Component {
	out = append(out, c)
	if d, ok := c.(Delegator); ok && d.Delegated() != nil { // a new delegate is a new computation
		out = blockTree(d.Delegated(), out)
	}
	for _, ch := range c.Meta().Children() {
		out = blockTree(ch, out)
	}
	return out
}

// Delegator is a block whose Forward may hand its calls to another block
// (nn.Dense.Delegate, nn.Conv2D.Delegate: a quantized layer, a
// calibration observer): hybridized networks trace the delegate in its
// place, and run eagerly when it is EagerOnly.
type Delegator interface {
	Delegated() Block
}

// releaseGraphs releases every traced graph (h.mu held).
func (h *HybridBlock) releaseGraphs() {
	for e := h.lru.Front(); e != nil; e = e.Next() {
		e.Value.(*hybridGraph).g.Release()
	}
	h.lru.Init()
	clear(h.graphs)
}

// Clear releases every traced graph; the next calls collect the
// network's parameters and trace again. Call it after changing a layer's
// settings (a Dropout's Rate, an Activation's Name, a layer's Act):
// the graphs replay the ops traced with the old ones.
func (h *HybridBlock) Clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.walked, h.tree = false, nil
	h.last.Store(nil)
	h.releaseGraphs()
}

func (h *HybridBlock) eager(inputs []*nd.NDArray) []*nd.NDArray {
	h.mu.Lock()
	h.stats.Eager++
	h.mu.Unlock()
	return Call(h.inner, inputs...)
}

func (h *HybridBlock) call(inputs []*nd.NDArray) []*nd.NDArray {
	if !nd.TraceSupported || nd.Tracing() {
		return h.eager(inputs)
	}
	dev, ok := firstContext(inputs)
	if !ok {
		return h.eager(inputs)
	}
	bound, why, ready := h.bound(dev)
	if !ready || why != "" || sharedInputs(inputs, bound) {
		return h.eager(inputs)
	}
	key := nd.Signature(inputs)
	h.mu.Lock()
	var g *nd.Graph
	if e, ok := h.graphs[key]; ok {
		hg := e.Value.(*hybridGraph)
		if hg.g.BoundTo(bound) {
			h.lru.MoveToFront(e)
			g = hg.g
			h.stats.Replays++
		} else {
			hg.g.Release()
			h.lru.Remove(e)
			delete(h.graphs, key)
		}
	}
	h.mu.Unlock()
	if g == nil {
		g = nd.TraceWith(h.name(), func(in []*nd.NDArray) []*nd.NDArray { return Call(h.inner, in...) }, inputs, bound, h.opts)
		h.mu.Lock()
		h.stats.Traces++
		if e, ok := h.graphs[key]; ok { // traced meanwhile by another goroutine
			e.Value.(*hybridGraph).g.Release()
			h.lru.Remove(e)
		}
		h.graphs[key] = h.lru.PushFront(&hybridGraph{key: key, g: g})
		for h.lru.Len() > h.size {
			old := h.lru.Remove(h.lru.Back()).(*hybridGraph)
			delete(h.graphs, old.key)
			old.g.Release()
		}
		h.mu.Unlock()
	}
	return g.Call(inputs)
}

func (h *HybridBlock) name() string {
	if n := h.inner.Meta().Name(); n != "" {
		return "gluon.Hybridize(" + n + ")"
	}
	return "gluon.Hybridize(" + h.inner.Meta().Kind() + ")"
}

// bound returns the parameters' replicas on dev and why the block runs
// eagerly (see EagerReason), or false while some parameter is not
// initialised there yet.
func (h *HybridBlock) bound(dev ctx.Context) ([]*nd.NDArray, string, bool) {
	gen := structureGen.Load()
	if b := h.last.Load(); b != nil && b.dev == dev && b.structure == gen && b.current() {
		return b.arrays, b.why, true
	}
	h.mu.Lock()
	if !h.walked || h.walkAt != gen { // first call, or a block gained or swapped a child
		h.walked, h.walkAt = true, gen
		h.params = CollectParams(h.inner).List()
		h.why = eagerOnly(h.inner)
		if tree := blockTree(h.inner, nil); !slices.Equal(tree, h.tree) {
			if h.tree != nil { // a block was added, removed or replaced: the graphs ran the old network
				h.releaseGraphs()
			}
			h.tree = tree
		}
	}
	params, why := h.params, h.why
	h.mu.Unlock()
	b := &boundSet{dev: dev, why: why, structure: gen, params: params, gens: make([]uint64, len(params)), arrays: make([]*nd.NDArray, len(params))}
	for i, p := range params {
		b.gens[i] = p.replicas.Load() // before the lookup: a replacement after it shows at the next call
		a, ok := p.replicaIfReady(dev)
		if !ok {
			return nil, why, false
		}
		b.arrays[i] = a
	}
	h.last.Store(b)
	return b.arrays, why, true
}

// boundSet is what HybridBlock.bound found on a context: each parameter's
// replica there, and the parameter's replica count (Parameter.replicas)
// at the time, so that a later call takes the same arrays without
// locking each parameter while no replica was replaced.
type boundSet struct {
	dev       ctx.Context
	why       string
	structure uint64 // structureGen when it was made
	params    []*Parameter
	gens      []uint64
	arrays    []*nd.NDArray // read only
}

// current reports whether no parameter's replicas were replaced since b
// was made.
func (b *boundSet) current() bool {
	for i, p := range b.params {
		if p.replicas.Load() != b.gens[i] {
			return false
		}
	}
	return true
}

// EagerReason returns why the block runs eagerly on every call (it holds
// an EagerOnly block), or "" when it is traced. It is known after the
// first call.
func (h *HybridBlock) EagerReason() string { return h.eagerReason() }

func (h *HybridBlock) eagerReason() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.why
}

// eagerOnly returns the reason of the first EagerOnly block in c's tree.
func eagerOnly(c Component) string {
	if h, ok := c.(*HybridBlock); ok { // its Meta is the wrapped block's
		c = h.inner
	}
	if s, ok := c.(*stepBlock); ok { // so is a compiled step's: the network decides
		return eagerOnly(s.net)
	}
	if d, ok := c.(Delegator); ok && d.Delegated() != nil {
		if r := eagerOnly(d.Delegated()); r != "" {
			return r
		}
	}
	if e, ok := c.(EagerOnly); ok {
		return c.Meta().Name() + ": " + e.EagerOnly()
	}
	for _, ch := range c.Meta().Children() {
		if r := eagerOnly(ch); r != "" {
			return r
		}
	}
	return ""
}

// sharedInputs reports whether an input shares memory with a parameter
// (a block called on its own weight) or with another input that is not
// the same array (a slice of it): a trace cannot tell such operands apart,
// so these calls run eagerly.
func sharedInputs(inputs, bound []*nd.NDArray) bool {
	for i, x := range inputs {
		if x == nil {
			continue
		}
		for _, y := range inputs[:i] {
			if y != x && x.SharesMemory(y) {
				return true
			}
		}
		for _, b := range bound {
			if x.SharesMemory(b) {
				return true
			}
		}
	}
	return false
}

func firstContext(inputs []*nd.NDArray) (ctx.Context, bool) {
	for _, x := range inputs {
		if x != nil {
			return x.Context(), true
		}
	}
	return ctx.Context{}, false
}
