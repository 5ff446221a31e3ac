package nd

import "slices"

// GradHook is told about the writes of one leaf's gradient by Backward,
// as PyTorch's post-accumulate-grad hooks are. A data-parallel trainer
// uses it to start reducing a group of gradients while backward is still
// computing others (see gluon.Trainer).
//
// Backward writes a leaf's gradient as soon as every op that read the
// leaf has sent its gradient back, not at the end of the pass: the hooks
// of the leaves nearest the loss run first.
type GradHook struct {
	// Before, when set, runs just before Backward writes the gradient. It
	// may block, e.g. until a reduction that reads the buffer is done.
	Before func(leaf *NDArray)
	// Ready, when set, runs once the gradient is final for this pass
	// (written, or added to with GradAdd), while the pass goes on.
	Ready func(leaf *NDArray)
}

// hookList is an immutable list of hooks, replaced as a whole on change.
type hookList struct{ hooks []*GradHook }

// AddGradHook registers h on the leaf a, which must have a gradient
// attached (AttachGrad). Hooks run in the goroutine that runs Backward, in
// the order they were added; they survive a later AttachGrad. The
// returned function removes h.
func (a *NDArray) AddGradHook(h GradHook) (remove func()) {
	const op = "AddGradHook"
	checkLive(op, a)
	s := a.state()
	if s == nil || s.grad == nil {
		fail(op, ErrGraph, "array of shape %v has no gradient attached (call AttachGrad first)", a.shape)
	}
	hp := &h
	for {
		old := a.hooks.Load()
		var next hookList
		if old != nil {
			next.hooks = slices.Clone(old.hooks)
		}
		next.hooks = append(next.hooks, hp)
		if a.hooks.CompareAndSwap(old, &next) {
			break
		}
	}
	return func() {
		for {
			old := a.hooks.Load()
			if old == nil {
				return
			}
			next := &hookList{hooks: slices.DeleteFunc(slices.Clone(old.hooks), func(x *GradHook) bool { return x == hp })}
			if a.hooks.CompareAndSwap(old, next) {
				return
			}
		}
	}
}

// runHooks calls the Before (before is set) or Ready hooks of a.
func (a *NDArray) runHooks(before bool) {
	l := a.hooks.Load()
	if l == nil {
		return
	}
	for _, h := range l.hooks {
		if before && h.Before != nil {
			h.Before(a)
		} else if !before && h.Ready != nil {
			h.Ready(a)
		}
	}
}

// PackGrads moves the gradient buffers of leaves into one new flat array
// and returns it: leaf i's gradient becomes a view of elements
// [offs[i], offs[i]+size_i) of it, where offs[i] is the running sum of the
// earlier leaves' sizes. Each gradient array keeps its identity (whoever
// holds it sees the move) and its values. The flat array is persistent
// (no scope tracks it); its memory goes back to the pool when it and all
// of the views are released. Every leaf must have a gradient attached, and
// all must share one context and dtype. PackGrads must not run while a
// Backward may write one of the gradients.
func PackGrads(leaves []*NDArray) (flat *NDArray, offs []int) {
	const op = "PackGrads"
	if len(leaves) == 0 {
		fail(op, ErrArgument, "no leaves")
	}
	grads := make([]*NDArray, len(leaves))
	total := 0
	offs = make([]int, len(leaves))
	for i, a := range leaves {
		checkLive(op, a)
		g := a.Grad()
		if g == nil {
			fail(op, ErrGraph, "leaf %d (shape %v) has no gradient attached", i, a.shape)
		}
		checkLive(op, g)
		if f := grads[0]; f != nil && (g.st.dev != f.st.dev || g.dtype != f.dtype) {
			fail(op, ErrContext, "leaf %d's gradient is %v on %v, leaf 0's %v on %v", i, g.dtype, g.st.dev, f.dtype, f.st.dev)
		}
		grads[i] = g
		offs[i] = total
		total += g.Size()
	}
	flat = newArray(op, persistentSession, grads[0].st.dev, grads[0].dtype, []int{total})
	for i, g := range grads {
		v := flat.viewIn(persistentSession, offs[i], g.shape)
		transfer(v, g)
		v.Release()
		old := g.st
		flat.st.refs.Add(1)
		g.st, g.off = flat.st, offs[i]
		if old.refs.Add(-1) == 0 {
			old.be.Free(old.dev, old.buf)
			old.buf = nil
		}
	}
	return flat, offs
}

// Span returns a one-dimensional view of elements [lo, hi) of a's memory
// (a's elements in row-major order), not recorded on the tape and, like
// Persistent's arrays, never tracked by a scope: the caller releases it.
// It is how a flat buffer is cut into the parts that a reduction handles,
// possibly beside other goroutines' scopes.
func (a *NDArray) Span(lo, hi int) *NDArray {
	const op = "Span"
	checkLive(op, a)
	if lo < 0 || hi < lo || hi > a.Size() {
		fail(op, ErrShape, "span [%d, %d) of an array of %d elements", lo, hi, a.Size())
	}
	return a.viewIn(persistentSession, lo, []int{hi - lo})
}
