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
	// End, when set, runs when the pass that ran Ready is about to return
	// (also when it fails), after the whole graph has been walked. A
	// data-parallel trainer waits there for the reductions its Ready hooks
	// started, so that the gradients hold their sums once Backward
	// returns, as PyTorch's DistributedDataParallel does.
	End func(leaf *NDArray)
}

// hookList is an immutable list of hooks, replaced as a whole on change.
type hookList struct{ hooks []*GradHook }

// AddGradHook registers h on the leaf a, which must have a gradient
// attached (AttachGrad). Hooks run in the goroutine that runs Backward, in
// the order they were added; they survive a later AttachGrad. The
// returned function removes h.
func (a *NDArray) AddGradHook(h GradHook) (remove func()) {
	const op = "AddGradHook"
	defer checkLive(op, a).done()
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

// The hook kinds runHooks calls.
const (
	hookBefore = iota
	hookReady
	hookEnd
)

// runHooks calls a's hooks of one kind and reports whether a has End hooks.
func (a *NDArray) runHooks(kind int) (hasEnd bool) {
	l := a.hooks.Load()
	if l == nil {
		return false
	}
	for _, h := range l.hooks {
		switch {
		case kind == hookBefore && h.Before != nil:
			h.Before(a)
		case kind == hookReady && h.Ready != nil:
			h.Ready(a)
		case kind == hookEnd && h.End != nil:
			h.End(a)
		}
		hasEnd = hasEnd || h.End != nil
	}
	return hasEnd
}

// Pack moves arrays into one new flat array and returns it: array i
// becomes a view of elements [offs[i], offs[i]+size_i) of it, where
// offs[i] is the running sum of the earlier arrays' sizes. Each array keeps
// its identity (whoever holds it sees the move), its values and its
// autograd state; views made of it earlier keep the old memory. The flat
// array is persistent (no scope tracks it); its memory goes back to the
// pool when it and all of the views are released. All arrays must share
// one context and dtype, and nothing may use them while Pack runs. A
// Trainer packs its gradients (PackGrads), weights and optimizer state per
// bucket, so that one op can sum or update a whole bucket.
func Pack(arrs []*NDArray) (flat *NDArray, offs []int) {
	const op = "Pack"
	if len(arrs) == 0 {
		fail(op, ErrArgument, "no arrays")
	}
	total := 0
	offs = make([]int, len(arrs))
	for i, a := range arrs {
		defer checkLive(op, a).done() // unpins the storage a has now, which it leaves below
		if f := arrs[0]; a.st.dev != f.st.dev || a.dtype != f.dtype {
			fail(op, ErrContext, "array %d is %v on %v, array 0 %v on %v", i, a.dtype, a.st.dev, f.dtype, f.st.dev)
		}
		offs[i] = total
		total += a.Size()
	}
	flat = newArray(op, persistentSession, arrs[0].st.dev, arrs[0].dtype, []int{total})
	for i, a := range arrs {
		v := flat.viewIn(persistentSession, offs[i], a.shape)
		transfer(v, a)
		v.Release()
		old := a.st
		flat.st.refs.Add(1)
		a.st, a.off = flat.st, offs[i]
		if old.refs.Add(-1) == 0 {
			old.release() // at the unpin above
		}
	}
	return flat, offs
}

// PackGrads packs the gradient arrays of leaves (see Pack): after it, the
// gradients that Backward writes land in the flat array. Every leaf must
// have a gradient attached.
func PackGrads(leaves []*NDArray) (flat *NDArray, offs []int) {
	const op = "PackGrads"
	if len(leaves) == 0 {
		fail(op, ErrArgument, "no leaves")
	}
	grads := make([]*NDArray, len(leaves))
	for i, a := range leaves {
		defer checkLive(op, a).done()
		if grads[i] = a.Grad(); grads[i] == nil {
			fail(op, ErrGraph, "leaf %d (shape %v) has no gradient attached", i, a.shape)
		}
	}
	return Pack(grads)
}

// Span returns a one-dimensional view of elements [lo, hi) of a's memory
// (a's elements in row-major order), not recorded on the tape and, like
// Persistent's arrays, never tracked by a scope: the caller releases it.
// It is how a flat buffer is cut into the parts that a reduction handles,
// possibly beside other goroutines' scopes.
func (a *NDArray) Span(lo, hi int) *NDArray {
	const op = "Span"
	defer checkLive(op, a).done()
	if lo < 0 || hi < lo || hi > a.Size() {
		fail(op, ErrShape, "span [%d, %d) of an array of %d elements", lo, hi, a.Size())
	}
	return a.viewIn(persistentSession, lo, []int{hi - lo})
}

// SharesMemory reports whether a and b are views of the same memory (the
// same storage, whatever their offsets): whether Pack put both into one
// flat array, say.
func (a *NDArray) SharesMemory(b *NDArray) bool {
	return a != nil && b != nil && a.st == b.st
}
