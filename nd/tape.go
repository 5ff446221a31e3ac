package nd

import (
	"sync"
	"sync/atomic"
)

// GradReq says what Backward does with an array's gradient buffer.
type GradReq uint8

// The gradient requests, as in Gluon.
const (
	GradWrite GradReq = iota // overwrite the buffer with the new gradient
	GradAdd                  // add the new gradient to the buffer
	GradNull                 // compute no gradient for this array
)

// String returns "write", "add" or "null".
func (r GradReq) String() string {
	return [...]string{"write", "add", "null"}[r]
}

// BackwardFunc computes the gradients of an op's inputs from the gradient g
// of its output. need[i] says whether input i wants a gradient; entries for
// inputs that need none may be nil. It must not record (use unrecorded
// computations only) and must return fresh arrays or views.
type BackwardFunc func(g *NDArray, need []bool) []*NDArray

// node is the record of one op on the tape: its inputs and how to send a
// gradient back to them. The tape is nothing more than these nodes, linked
// from each output array to its inputs.
type node struct {
	op       string
	inputs   []*NDArray
	need     []bool
	backward BackwardFunc
	// diff, when set, computes the same gradients as backward with
	// recorded ops, so that GradWith's CreateGraph can differentiate them
	// again (nil: the op has no second derivative here).
	diff BackwardFunc
	// versions are the storage versions of inputs and then of the output
	// when the op was recorded (see storage.version); readsOut says that
	// the backward function reads the output (a traced graph's node whose
	// backward kernels read it; ops are listed in gradReadsOutput).
	versions []uint64
	readsOut bool
	// use counts the backward passes walking the node that keep the graph
	// (retainGraph), or is -1 while a pass that frees it holds it, and
	// after: concurrent passes never free a node under each other (one of
	// them fails with ErrGraph, as in PyTorch).
	use atomic.Int32
}

// agState is an array's autograd state: an attached gradient buffer (for
// leaves) or the node that produced it (for recorded outputs).
type agState struct {
	mu    sync.Mutex
	grad  *NDArray
	req   GradReq
	stamp uint64 // bumped each time Backward writes grad
	node  *node
	// traced marks a leaf of a trace's own backward pass (an input that
	// needs a gradient): its gradient is collected, not stored.
	traced bool
}

func (a *NDArray) state() *agState { return a.ag.Load() }

// requiresGrad reports whether a gradient flows to a: it has a gradient
// buffer that wants one, or it was produced by a recorded op.
func (a *NDArray) requiresGrad() bool {
	s := a.state()
	return s != nil && (s.node != nil || s.traced || (s.grad != nil && s.req != GradNull))
}

// RequiresGrad reports whether a gradient flows to a (PyTorch's
// requires_grad): a has a gradient buffer that wants one, or a recorded op
// produced it.
func (a *NDArray) RequiresGrad() bool { return a.requiresGrad() }

// Record attaches a tape node to out when the session of the inputs (see
// Session) records and some input requires a gradient. Ops call it after
// computing out; custom functions (package autograd) call it with their
// own backward.
func Record(op string, out *NDArray, inputs []*NDArray, backward BackwardFunc) {
	sessionOf(op, inputs...).recordDiff(op, out, inputs, backward, nil)
}

// RecordDiff is Record for an op whose gradient can be differentiated
// again: diff computes the same gradients as backward, but with ordinary
// (recording) ops on g and on the op's inputs and output, so that
// GradWith with CreateGraph records the gradient's own graph (PyTorch's
// create_graph). backward stays what a plain Backward runs.
func RecordDiff(op string, out *NDArray, inputs []*NDArray, backward, diff BackwardFunc) {
	sessionOf(op, inputs...).recordDiff(op, out, inputs, backward, diff)
}

// recordDiff is RecordDiff in a known session.
func (s *Session) recordDiff(op string, out *NDArray, inputs []*NDArray, backward, diff BackwardFunc) {
	if !s.IsRecording() {
		return
	}
	need := make([]bool, len(inputs))
	anyNeed := false
	for i, in := range inputs {
		if in != nil && in.requiresGrad() {
			need[i], anyNeed = true, true
		}
	}
	if !anyNeed {
		return
	}
	if !out.dtype.IsFloat() {
		fail(op, ErrDType, "recorded a %v result from inputs that need a gradient: gradients flow only through floating-point arrays (Detach the inputs, or compute in Float32)", out.dtype)
	}
	versions := make([]uint64, len(inputs)+1)
	for i, in := range inputs {
		if in != nil {
			versions[i] = in.st.version.Load()
		}
	}
	versions[len(inputs)] = out.st.version.Load()
	out.ag.Store(&agState{node: &node{op: op, inputs: inputs, need: need, backward: backward, diff: diff, versions: versions}})
}

// AttachGrad allocates a zeroed gradient buffer for a with the given
// request, making a a leaf whose gradient Backward fills. It replaces any
// earlier buffer and detaches a from the graph that produced it.
func (a *NDArray) AttachGrad(req GradReq) {
	defer checkLive("AttachGrad", a).done()
	if !a.dtype.IsFloat() && req != GradNull {
		fail("AttachGrad", ErrDType, "a %v array (shape %v) cannot have a gradient: gradients flow only through floating-point arrays", a.dtype, a.shape)
	}
	var g *NDArray
	if req != GradNull {
		g = persistentSession.Zeros(a.st.dev, a.dtype, a.shape...) // neutral, never tracked
	}
	a.ag.Store(&agState{grad: g, req: req})
}

// Grad returns a's gradient buffer, or nil when none is attached.
func (a *NDArray) Grad() *NDArray {
	if s := a.state(); s != nil {
		return s.grad
	}
	return nil
}

// GradReq returns a's gradient request (GradNull when none is attached).
func (a *NDArray) GradReq() GradReq {
	if s := a.state(); s != nil && s.grad != nil {
		return s.req
	}
	return GradNull
}

// SetGradReq changes the request of an attached gradient.
func (a *NDArray) SetGradReq(req GradReq) {
	s := a.state()
	if s == nil || s.grad == nil {
		if req != GradNull {
			a.AttachGrad(req)
		}
		return
	}
	s.mu.Lock()
	s.req = req
	s.mu.Unlock()
}

// GradStamp counts how many times Backward has written a's gradient. A
// trainer compares stamps to detect gradients that were not refreshed.
func (a *NDArray) GradStamp() uint64 {
	if s := a.state(); s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.stamp
	}
	return 0
}

// Detach returns a view of a's memory that is not connected to any graph.
func (a *NDArray) Detach() *NDArray {
	defer checkLive("Detach", a).done()
	return a.view(0, a.shape)
}
