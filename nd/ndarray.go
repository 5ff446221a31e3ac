package nd

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// DType is an element type: Float32 (the default), Float64, Int32, Int64,
// Uint8 or Bool. The rules for mixing them are in the package doc.
type DType = backend.DType

// storage is a device buffer shared by an array and its views. It goes
// back to the device's pool when the last array using it is released.
type storage struct {
	be   backend.Backend
	dev  ctx.Context
	buf  backend.Buffer
	refs atomic.Int32
	// owner is the trace (trace.go) that allocated buf during its dry run:
	// the trace frees it, Release does not.
	owner *recording
	pins  atomic.Int32 // ops working on it now (pin.go)
	dead  atomic.Bool  // its last array was released
	freed atomic.Bool
	// version counts the writes of the in-place APIs (Assign, AddTo,
	// ScaleInPlace, FillInPlace) into buf: a recorded op notes its
	// arrays' versions, and Backward refuses to run its backward function
	// on values changed since (PyTorch's version counter).
	version atomic.Uint64
}

// NDArray is an n-dimensional array of one DType on one context.
// Arrays are row-major and contiguous; Reshape and leading-axis slices are
// views that share memory with their source.
//
// An NDArray is safe for concurrent reads. Writing to an array (in-place
// ops, gradient accumulation) while another goroutine reads it is a race,
// as for Go slices.
type NDArray struct {
	st       *storage
	off      int
	shape    []int
	dtype    DType
	released atomic.Bool
	scope    atomic.Pointer[Scope]
	birth    atomic.Pointer[Scope] // made by a package-level creation function in this scope, not yet used (birth.go)
	ag       atomic.Pointer[agState]
	sess     atomic.Pointer[Session]  // nil: neutral (runs in the default session)
	hooks    atomic.Pointer[hookList] // gradient hooks (AddGradHook); kept by AttachGrad
}

// Shape returns a copy of the array's shape.
func (a *NDArray) Shape() []int { return slices.Clone(a.shape) }

// NDim returns the number of dimensions.
func (a *NDArray) NDim() int { return len(a.shape) }

// Size returns the number of elements.
func (a *NDArray) Size() int { return numel(a.shape) }

// DType returns the element type.
func (a *NDArray) DType() DType { return a.dtype }

// Context returns the context the array lives on.
func (a *NDArray) Context() ctx.Context { return a.st.dev }

// Released reports whether Release was called on a.
func (a *NDArray) Released() bool { return a.released.Load() }

func numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

func backendFor(op string, dev ctx.Context) backend.Backend {
	be := backend.For(dev)
	if be == nil {
		if dev.Kind == ctx.KindGPU {
			fail(op, ErrDevice, "%v: %s", dev, ctx.ErrNoGPUBackend)
		}
		fail(op, ErrDevice, "no backend registered for %v", dev)
	}
	if dev.Kind == ctx.KindGPU {
		if err := ctx.Check(dev); err != nil {
			fail(op, ErrDevice, "%v", err)
		}
	}
	if dev.ID < 0 {
		fail(op, ErrArgument, "invalid context %v", dev)
	}
	return be
}

func checkShape(op string, shape []int) {
	for _, s := range shape {
		if s < 0 {
			fail(op, ErrShape, "negative dimension in shape %v", shape)
		}
	}
}

// newArray allocates an uninitialised array of session s and registers it
// with s's innermost open Scope.
func newArray(op string, s *Session, dev ctx.Context, dt DType, shape []int) *NDArray {
	checkShape(op, shape)
	be := backendFor(op, dev)
	buf, err := be.Alloc(dev, dt, numel(shape))
	if err != nil {
		fail(op, ErrDevice, "allocating %v %v on %v: %v", shape, dt, dev, err)
	}
	st := &storage{be: be, dev: dev, buf: buf}
	st.refs.Store(1)
	// The array and (up to inlineDims axes) its shape in one allocation:
	// an eager op makes one per output. (The storage stays an allocation
	// of its own: views and a traced graph's cleanup arguments hold it,
	// and must not keep the first array's header reachable.)
	m := &arrayAlloc{}
	a := &m.a
	a.st, a.shape, a.dtype = st, m.dims.hold(shape), dt
	if r := currentTrace(); r != nil {
		r.own(st, s)
	}
	a.bind(s)
	s.track(a)
	return a
}

// inlineDims is how many axes an array's shape holds without an
// allocation of its own.
const inlineDims = 4

// dims holds a shape of up to inlineDims axes.
type dims [inlineDims]int

// hold returns a copy of shape in d when it fits (capped, so that an
// append copies), else a fresh copy.
func (d *dims) hold(shape []int) []int {
	if len(shape) > inlineDims {
		return slices.Clone(shape)
	}
	n := copy(d[:], shape)
	return d[:n:n]
}

// arrayAlloc is an array header with room for its shape, allocated at
// once.
type arrayAlloc struct {
	a    NDArray
	dims dims
}

// view returns a new array header sharing a's memory, in a's session.
func (a *NDArray) view(off int, shape []int) *NDArray { return a.viewIn(a.Session(), off, shape) }

// viewIn is view with the result in session s.
func (a *NDArray) viewIn(s *Session, off int, shape []int) *NDArray {
	if a.released.Load() || !a.st.addRef() {
		fail("view", ErrReleased, "array of shape %v on %v was released (is it still needed by a recorded graph?)", a.shape, a.st.dev)
	}
	m := &arrayAlloc{}
	v := &m.a
	v.st, v.off, v.shape, v.dtype = a.st, a.off+off, m.dims.hold(shape), a.dtype
	v.bind(s)
	s.track(v)
	return v
}

// addRef counts one more array on st, unless its count has reached zero:
// a storage whose last array was released stays dead, even for a view
// taken by an op that checked its array just before that Release.
func (st *storage) addRef() bool {
	for {
		r := st.refs.Load()
		if r <= 0 {
			return false
		}
		if st.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// Release gives the array's memory back to its context's pool at once,
// instead of waiting for the garbage collector. The array (but not other
// views of the same memory) must not be used afterwards: doing so panics
// with an ErrReleased *Error. Release is idempotent and safe on nil.
func (a *NDArray) Release() {
	if a == nil || a.released.Swap(true) {
		return
	}
	if a.st.refs.Add(-1) == 0 {
		a.st.release() // at once, or when the last op using it returns (pin.go)
	}
}

// arg returns a as a kernel operand. Backends compute on Float32 and
// Float64; ops convert half-precision arrays before their kernels
// (half.go), so one reaching here is an op without that conversion
// (storageArg is the operand of the ops that only move or convert data).
func (a *NDArray) arg() backend.Arg {
	if a.dtype.IsHalf() {
		fail("nd", ErrDType, "this op does not take %v arrays (shape %v): convert with AsType(Float32)", a.dtype, a.shape)
	}
	return a.storageArg()
}

// gemmArg returns a as an operand of Gemm, which takes half arrays on a
// backend that multiplies them itself (backend.HalfGemmer).
func (a *NDArray) gemmArg() backend.Arg {
	if a.dtype.IsHalf() && nativeHalfGemm(a, a.dtype) {
		return a.storageArg()
	}
	return a.arg()
}

// storageArg returns a as a kernel operand for Copy, Cast and Fill, which
// take every dtype.
func (a *NDArray) storageArg() backend.Arg { return backend.Arg{Buf: a.st.buf, Off: a.off} }

// be returns the backend that runs a's kernels: its own, or, while the
// calling goroutine traces, the tracer that records them (trace.go).
func (a *NDArray) be() backend.Backend {
	if traceCount.Load() != 0 {
		if r := currentTrace(); r != nil {
			return r.tracerFor(a.st.be)
		}
	}
	return a.st.be
}

// checkLive panics if any array is nil or released, and pins them (pin.go):
// the caller defers the result's done.
func checkLive(op string, arrs ...*NDArray) pins { return pin(op, arrs) }

// checkInputs validates that all inputs are live, on one context and of one
// dtype, and pins them as checkLive does. It runs before any op does work.
func checkInputs(op string, arrs ...*NDArray) (p pins) {
	p = checkLiveSameContext(op, arrs...)
	defer func() {
		if r := recover(); r != nil {
			p.done()
			panic(r)
		}
	}()
	a := arrs[0]
	for _, b := range arrs[1:] {
		if b.dtype != a.dtype {
			fail(op, ErrDType, "%v vs %v (shapes %v and %v); convert with AsType first",
				a.dtype, b.dtype, a.shape, b.shape)
		}
	}
	return p
}

// checkLiveSameContext is checkInputs without its rule of one dtype.
func checkLiveSameContext(op string, arrs ...*NDArray) (p pins) {
	p = checkLive(op, arrs...)
	defer func() {
		if r := recover(); r != nil {
			p.done()
			panic(r)
		}
	}()
	checkContexts(op, arrs...)
	return p
}

// checkContexts validates that the live arrays all sit on one context and
// belong to at most one session.
func checkContexts(op string, arrs ...*NDArray) {
	sessionOf(op, arrs...)
	a := arrs[0]
	for _, b := range arrs[1:] {
		if b.st.dev != a.st.dev {
			fail(op, ErrContext, "%v vs %v (shapes %v and %v); copy one input with CopyTo or AsIn first",
				a.st.dev, b.st.dev, a.shape, b.shape)
		}
	}
}

// Float32s copies the array's elements to a new Go slice, converting if the
// array holds float64.
func (a *NDArray) Float32s() []float32 {
	defer checkLive("Float32s", a).done()
	claimIn(a)
	out := make([]float32, a.Size())
	a.be().Read(a.st.buf, a.off, out)
	return out
}

// Float64s copies the array's elements to a new Go slice, converting if the
// array holds float32.
func (a *NDArray) Float64s() []float64 {
	defer checkLive("Float64s", a).done()
	claimIn(a)
	out := make([]float64, a.Size())
	a.be().Read(a.st.buf, a.off, out)
	return out
}

// Scalar returns the value of a one-element array.
func (a *NDArray) Scalar() float64 {
	defer checkLive("Scalar", a).done()
	if a.Size() != 1 {
		fail("Scalar", ErrShape, "array of shape %v has %d elements, want 1", a.shape, a.Size())
	}
	return a.Float64s()[0]
}

// String prints the shape, dtype, context and (up to 20) values.
func (a *NDArray) String() string {
	if a == nil {
		return "<nil NDArray>"
	}
	head := fmt.Sprintf("NDArray%v %v @%v", a.shape, a.dtype, a.st.dev)
	if a.released.Load() {
		return head + " (released)"
	}
	var v []string
	switch {
	case a.dtype == Bool:
		for _, x := range a.Bools() {
			v = append(v, fmt.Sprint(x))
		}
	case a.dtype.IsInt():
		for _, x := range a.Int64s() {
			v = append(v, fmt.Sprint(x))
		}
	default:
		for _, x := range a.Float64s() {
			v = append(v, fmt.Sprintf("%.6g", x))
		}
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(" [")
	for i, x := range v {
		if i == 20 {
			fmt.Fprintf(&b, " … (%d more)", len(v)-20)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x)
	}
	b.WriteString("]")
	return b.String()
}
