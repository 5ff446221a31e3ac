package nd

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/gid"
	"github.com/goluon/goluon/nd/backend"
)

// Tracing turns a computation into a Graph that replays its kernels
// without the ops' bookkeeping (gluon.Hybridize is built on it).
//
// While a goroutine traces, every op it runs goes through the usual checks
// and allocations, but its kernels are recorded instead of run: the trace
// is a dry run that computes nothing, so it draws no random numbers and
// changes no array (a BatchNorm's running statistics are updated by the
// replays, once per call, as eagerly). Each buffer a kernel touches
// becomes a slot of the graph:
//
//   - an input's memory, bound to the call's input on each replay;
//   - a bound array's (a block's parameter, passed to Trace as bound),
//     bound on each replay (and again for its backward pass) to where the
//     same array's memory is then;
//   - a buffer the computation allocated: planned (below), or, for the
//     outputs and the gradients Backward hands out, fresh on every call;
//   - any other buffer that existed before the trace (an array the
//     computation captured), used as it is.
//
// Recording: when the session records and an output needs a gradient,
// the trace also runs the backward pass of the computation, from one head
// gradient per output to the gradients of the inputs and parameters that
// need one, and records its kernels too. A replay then records one tape
// node whose backward function replays those kernels.
//
// Planning: the buffers the computation allocated are given to a few
// physical buffers by liveness (from a slot's first kernel to its last,
// forward and backward together), so a replay allocates only its outputs
// and gradients. A graph keeps one set of these buffers per call in
// flight (a recorded call holds its set until its backward pass).

// traceCount is the number of goroutines tracing: while it is 0 the ops
// pay one atomic load for tracing.
var traceCount atomic.Int32

// traceBy maps a tracing goroutine (gid) to its recording.
var traceBy sync.Map

// currentTrace returns the calling goroutine's recording, or nil.
func currentTrace() *recording {
	if traceCount.Load() == 0 {
		return nil
	}
	v, ok := traceBy.Load(gid.Current())
	if !ok {
		return nil
	}
	return v.(*recording)
}

// Tracing reports whether the calling goroutine is inside Trace.
func Tracing() bool { return currentTrace() != nil }

// TraceSupported reports whether Trace works on this architecture (it
// tells goroutines apart with internal/gid: amd64 and arm64).
const TraceSupported = gid.Supported

// slotKind says how a slot gets its buffer on a replay.
type slotKind uint8

const (
	slotPlanned  slotKind = iota // allocated by the computation: a physical buffer of the plan
	slotCaptured                 // existed before the trace: used as it is
	slotInput                    // input i of the call
	slotBound                    // bound array i (a parameter)
	slotOutput                   // output i: a fresh array per call
	slotHead                     // the gradient of output i, bound per backward
	slotResult                   // gradient result i: a fresh array per backward
)

// slot is one buffer of the recording.
type slot struct {
	kind  slotKind
	index int // input, bound, output, head or result number
	buf   backend.Buffer
	be    backend.Backend
	dev   ctx.Context
	dt    DType
	n     int // elements
	base  int // element offset of the array bound to it (inputs, bound arrays)
	size  int // the size of that array: an input or bound slot covers [base, base+size) of buf
	first int // index of the first and last step using it (-1: none)
	last  int
	phys  int // planned slots: the physical buffer
}

// owned is a buffer the dry run allocated, and the storage holding it.
type owned struct {
	st  *storage
	buf backend.Buffer
}

// step is one recorded kernel call.
type step struct {
	run  func(e *replay)
	uses []int32
	k    *kernelInfo // what the rewrites (graph_fold.go, graph_fuse.go) need to know of the call, or nil
}

// replay is what a step runs against: one Arg per slot, and the session
// whose generators the random steps draw from.
type replay struct {
	args []backend.Arg
	sess *Session
}

// ref is a kernel operand as a slot, an offset relative to the slot's
// base and the operand's strides. Slot -1 is an absent operand.
type ref struct {
	slot    int32
	off     int
	strides []int
}

func (x ref) arg(e *replay) backend.Arg {
	if x.slot < 0 {
		return backend.Arg{}
	}
	s := e.args[x.slot]
	return backend.Arg{Buf: s.Buf, Off: s.Off + x.off, Strides: x.strides}
}

// recording is a trace in progress on one goroutine.
type recording struct {
	name    string
	sess    *Session                   // the session the computation runs in
	slotOf  map[backend.Buffer]int32   // planned and captured slots
	ranged  map[backend.Buffer][]int32 // input and bound slots: several arrays may share a buffer
	views   []*NDArray                 // leaf views of the inputs (released when the trace ends)
	slots   []slot
	steps   []step
	tracers map[backend.Backend]*tracer
	owned   []owned // what the computation allocated
	host    bool    // a step works on the host at each replay (a write, a random draw)
}

func (r *recording) fail(what string) {
	fail("Trace", ErrTrace, "%s: %s", r.name, what)
}

func (r *recording) hostRead() {
	r.fail("the computation reads array values on the host (Float32s, Scalar, Int64s, a copy to another device...); " +
		"a traced computation must be a function of its inputs and parameters that stays on its device: " +
		"compute with array ops instead, or run it without tracing (no Hybridize)")
}

func (r *recording) tracerFor(be backend.Backend) backend.Backend {
	t := r.tracers[be]
	if t == nil {
		t = &tracer{real: be, r: r}
		r.tracers[be] = t
	}
	return t
}

func (r *recording) addSlot(s slot) int32 {
	s.first, s.last, s.phys = -1, -1, -1
	r.slots = append(r.slots, s)
	i := int32(len(r.slots) - 1)
	r.slotOf[s.buf] = i
	return i
}

// addRanged adds an input or bound slot: the region [s.base,
// s.base+s.size) of s.buf. Regions must not overlap: a kernel operand in
// two of them could not be told apart (a parameter passed as an input, an
// input and a slice of it).
func (r *recording) addRanged(s slot) int32 {
	for _, j := range r.ranged[s.buf] {
		if o := r.slots[j]; s.size > 0 && o.size > 0 && s.base < o.base+o.size && o.base < s.base+s.size {
			r.fail("two inputs, or an input and a bound array (a parameter), overlap in memory without being the same array: a replay cannot tell them apart; pass a copy")
		}
	}
	s.first, s.last, s.phys = -1, -1, -1
	r.slots = append(r.slots, s)
	i := int32(len(r.slots) - 1)
	r.ranged[s.buf] = append(r.ranged[s.buf], i)
	return i
}

// ref turns a kernel operand into a slot reference: the input or bound
// array whose region holds it, else its buffer's slot; a buffer the trace
// has not seen is one the computation captured.
func (r *recording) ref(a backend.Arg) ref {
	if a.Buf == nil {
		return ref{slot: -1}
	}
	for _, j := range r.ranged[a.Buf] {
		if s := r.slots[j]; a.Off >= s.base && a.Off < s.base+s.size {
			return ref{slot: j, off: a.Off - s.base, strides: slices.Clone(a.Strides)}
		}
	}
	i, ok := r.slotOf[a.Buf]
	if !ok {
		i = r.addSlot(slot{kind: slotCaptured, buf: a.Buf, dt: a.Buf.DType(), n: a.Buf.Len()})
	}
	return ref{slot: i, off: a.Off - r.slots[i].base, strides: slices.Clone(a.Strides)}
}

func (r *recording) refsOf(args []backend.Arg) []ref {
	out := make([]ref, len(args))
	for i, a := range args {
		out[i] = r.ref(a)
	}
	return out
}

func (r *recording) add(run func(e *replay), refs ...ref) {
	r.steps = append(r.steps, step{run: run, uses: slotsOf(refs...)})
}

// slotsOf returns the slots of refs, each once, absent operands left out:
// a step's uses.
func slotsOf(refs ...ref) []int32 {
	var uses []int32
	for _, x := range refs {
		if x.slot >= 0 && !slices.Contains(uses, x.slot) {
			uses = append(uses, x.slot)
		}
	}
	return uses
}

// write records a host write of constant data (FromSlice, Arange inside
// the computation): the replay writes the same values again.
func (r *recording) write(be backend.Backend, dst backend.Buffer, off int, src any) {
	r.host = true
	data := cloneHost(src)
	d := r.ref(backend.Arg{Buf: dst, Off: off})
	r.add(func(e *replay) {
		a := d.arg(e)
		be.Write(a.Buf, a.Off, data)
	}, d)
}

// cloneHost copies a host slice that Write accepts.
func cloneHost(src any) any {
	switch v := src.(type) {
	case []float32:
		return slices.Clone(v)
	case []float64:
		return slices.Clone(v)
	case []int32:
		return slices.Clone(v)
	case []int64:
		return slices.Clone(v)
	case []uint8:
		return slices.Clone(v)
	case []bool:
		return slices.Clone(v)
	case []F16:
		return slices.Clone(v)
	case []BF16:
		return slices.Clone(v)
	}
	panic(fmt.Sprintf("nd: trace: host data of type %T", src))
}

// dropout records a dropout mask: each replay draws its seed from the
// replaying session's generator for dev, as an eager call draws it, so a
// replayed step uses the masks the eager step would.
func (r *recording) dropout(a *NDArray, n int, thr uint32, keep float64) {
	r.host = true
	be, dev, dt := a.st.be, a.st.dev, a.dtype
	d := r.ref(a.storageArg())
	r.add(func(e *replay) {
		seed := e.sess.drawSeed(dev)
		dst := d.arg(e)
		if k, ok := be.(backend.DropoutKernels); ok {
			k.DropoutMask(dst, n, seed, thr, keep)
			return
		}
		writeMaskTo(be, dst, dt, n, seed, thr, keep)
	}, d)
}

// seed records the seed array of an applied dropout (dropoutSeed): each
// replay draws a fresh seed from the replaying call's session, as the
// eager call would, and writes it into the array's buffer.
func (r *recording) seed(a *NDArray) {
	r.host = true
	be, dev := a.st.be, a.st.dev
	d := r.ref(a.storageArg())
	r.add(func(e *replay) {
		dst := d.arg(e)
		be.Write(dst.Buf, dst.Off, []int64{int64(e.sess.drawSeed(dev))})
	}, d)
}

// random records a host-drawn random array (RandomNormal, RandomUniform,
// RandomInt, Permutation inside the computation): each replay draws again,
// as the eager call would: from the replaying call's session where the
// trace drew from the traced call's, from the package-level functions'
// session on the replaying goroutine where the trace drew from theirs, and
// from a session the computation named otherwise.
func (r *recording) random(a *NDArray, s *Session, draw func(s *Session) any) {
	r.host = true
	be := a.st.be
	d := r.ref(a.storageArg())
	r.add(func(e *replay) {
		from := s // a session the computation named
		switch {
		case s == r.sess: // the computation's own: the replaying call's
			from = e.sess
		case s == bornSession || s == defaultSession:
			from = creator()
		}
		dst := d.arg(e)
		be.Write(dst.Buf, dst.Off, draw(from))
	}, d)
}

// own registers an array the computation allocates: its buffer is a slot
// of the plan, and the recording frees it when the trace ends.
func (r *recording) own(st *storage, s *Session) {
	if s.persistent {
		r.fail("the computation makes a persistent array (Persist, AttachGrad, PersistentSession): " +
			"state a block keeps between calls must be made before it is traced")
	}
	st.owner = r
	r.owned = append(r.owned, owned{st, st.buf})
	r.addSlot(slot{kind: slotPlanned, buf: st.buf, be: st.be, dev: st.dev, dt: st.buf.DType(), n: st.buf.Len()})
}
