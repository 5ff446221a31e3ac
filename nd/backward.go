package nd

import (
	"slices"
)

// Backward computes the gradients of heads with respect to every leaf array
// (one with AttachGrad) they were computed from, and stores them in the
// leaves' gradient buffers according to their GradReq.
//
// headGrads gives the gradient of each head; nil (or a nil entry) means
// ones, as for a scalar loss. Several heads are summed, as in Gluon's
// autograd.backward. Unless retainGraph is set, the recorded graph is freed
// as it is walked: a second Backward through it panics with ErrGraph.
//
// Intermediate gradients are released as soon as they have been used, so a
// backward pass holds at most the gradients of one frontier of the graph.
func Backward(heads, headGrads []*NDArray, retainGraph bool) {
	const op = "Backward"
	if len(heads) == 0 {
		fail(op, ErrArgument, "no heads")
	}
	if headGrads != nil && len(headGrads) != len(heads) {
		fail(op, ErrArgument, "%d heads but %d head gradients", len(heads), len(headGrads))
	}
	for i, h := range heads {
		defer checkLive(op, h).done()
		if !h.requiresGrad() {
			fail(op, ErrGraph, "head %d (shape %v) is not part of a recorded graph: attach a gradient to an input with AttachGrad and compute the head inside autograd.Record (a goroutine that opens a scope of its own is a goroutine tree of its own and does not record with its parent: start workers with nd.Go or gluon.ForEachDevice)", i, h.shape)
		}
	}
	sessionOf(op, heads...)
	order, release := topoOrder(heads, !retainGraph)
	defer release()
	grads := map[*NDArray]*NDArray{}
	for i, h := range heads {
		var g *NDArray
		if headGrads != nil && headGrads[i] != nil {
			hg := headGrads[i]
			defer checkInputs(op, h, hg).done()
			if !slices.Equal(h.shape, hg.shape) {
				fail(op, ErrShape, "head %d has shape %v but its gradient has shape %v", i, h.shape, hg.shape)
			}
			g = hg.view(0, hg.shape)
		} else {
			g = OnesLike(h)
		}
		accumulateGrad(grads, h, g, "")
	}
	var ended []*NDArray // leaves whose Ready hooks ran, with End hooks
	defer func() {
		for _, a := range ended {
			a.runHooks(hookEnd)
		}
	}()
	walk(order, grads, func(a, g *NDArray) {
		if finishLeaf(a, g) {
			ended = append(ended, a)
		}
	})
	if !retainGraph {
		freeNodes(order)
	}
}

// freeNodes frees the recorded graph of order, which a backward pass
// holds (topoOrder with free set): its nodes keep use -1, so that a later
// pass fails as through a freed graph.
func freeNodes(order []*NDArray) {
	for _, a := range order {
		n := a.state().node
		n.backward, n.diff, n.inputs = nil, nil, nil
	}
}

// walk runs the backward functions of the recorded arrays in order, last
// first, from the gradients in grads, and hands each leaf's gradient to
// finish as soon as every op that read the leaf has been walked.
func walk(order []*NDArray, grads map[*NDArray]*NDArray, finish func(a, g *NDArray)) {
	pending := leafEdges(order)
	for i := len(order) - 1; i >= 0; i-- {
		a := order[i]
		n := a.state().node
		if g := grads[a]; g != nil {
			delete(grads, a)
			checkVersions(a, n)
			igs := runBackward(n, g)
			g.Release()
			for j, in := range n.inputs {
				if n.need[j] && j < len(igs) && igs[j] != nil {
					accumulateGrad(grads, in, igs[j], n.op)
				}
			}
		}
		// A leaf's gradient is final once every op that read it has been
		// walked: write it now, so that its hooks run while the pass goes on.
		for j, in := range n.inputs {
			if !n.need[j] || in == nil || !isLeaf(in) {
				continue
			}
			if pending[in]--; pending[in] == 0 {
				if g := grads[in]; g != nil {
					delete(grads, in)
					finish(in, g)
				}
			}
		}
	}
	for a, g := range grads { // leaves that are heads themselves
		finish(a, g)
	}
}

// runBackward runs n's backward function on g. An *Error it panics with
// (a released array it reads, a wrong shape) is raised again as
// Backward's, naming n's op, so that the message says where in the
// backward pass it happened rather than naming only an inner op the user
// never called.
func runBackward(n *node, g *NDArray) []*NDArray {
	return callBackward(n, n.backward, g, n.need)
}

// checkVersions fails when an input or the output of a's op that its
// backward function reads was changed in place (Assign, AddTo,
// ScaleInPlace, FillInPlace) after the op was recorded: it would read the
// new values and give a wrong gradient without a word. As in PyTorch,
// only the values a backward function reads count: ops in
// gradReadsNoValues read none (an activation overwritten after a
// MulScalar, say, is fine), and only ops in gradReadsOutput read their
// output.
func checkVersions(a *NDArray, n *node) {
	if len(n.versions) != len(n.inputs)+1 || gradReadsNoValues[n.op] {
		return
	}
	for j, in := range n.inputs {
		if in != nil && in.st.version.Load() != n.versions[j] {
			fail("Backward", ErrGraph, "input %d of %s (shape %v) was changed in place (Assign, AddTo, ScaleInPlace or FillInPlace) after %s was recorded, so its gradient cannot be computed: change a copy instead, or change it after Backward", j, n.op, in.shape, n.op)
		}
	}
	if (gradReadsOutput[n.op] || n.readsOut) && a.st.version.Load() != n.versions[len(n.inputs)] {
		fail("Backward", ErrGraph, "the output of %s (shape %v) was changed in place (Assign, AddTo, ScaleInPlace or FillInPlace) after it was recorded, and its gradient reads it: change a copy instead", n.op, a.shape)
	}
}

// gradReadsNoValues names the ops whose backward functions read no
// values of their inputs or output (only shapes, and the scalar).
var gradReadsNoValues = map[string]bool{
	"Neg": true, "AddScalar": true, "MulScalar": true, "RSubScalar": true, "DivScalar": true,
	"Add": true, "Sub": true, "Sum": true, "SumKeepDims": true, "Mean": true, "MeanKeepDims": true,
	"Reshape": true, "SliceAxis": true, "Slice": true, "Concat": true, "Stack": true, "Split": true,
	"Transpose": true, "SwapAxes": true, "Flatten": true, "ExpandDims": true, "Squeeze": true,
	"BroadcastTo": true, "Tile": true, "Repeat": true, "Flip": true,
}

// gradReadsOutput names the ops whose backward functions read their
// output's values.
var gradReadsOutput = map[string]bool{
	"Exp": true, "Expm1": true, "Sqrt": true, "Rsqrt": true, "Reciprocal": true, "Tanh": true,
	"Sigmoid": true, "RDivScalar": true, "RPowScalar": true, "Clip": true, "MaximumScalar": true,
	"MinimumScalar": true, "Softmax": true, "LogSoftmax": true, "Tan": true, "Exp2": true, "Erfinv": true,
	"Hypot": true, "Div": true, "Pow": true,
}

// gradsOf backpropagates headGrads from heads like Backward, without
// retaining the graph, and returns the gradients of leaves (nil where none
// flows) instead of storing them. other is called on each leaf outside
// leaves that wants a gradient (nil: such leaves get nothing): Trace uses
// it for its backward pass, where such a leaf (an array with AttachGrad
// that a block captured) would silently get none, and fails there.
func gradsOf(heads, headGrads, leaves []*NDArray, other func(a *NDArray)) []*NDArray {
	order, release := topoOrder(heads, true)
	defer release()
	grads := map[*NDArray]*NDArray{}
	for i, h := range heads {
		accumulateGrad(grads, h, headGrads[i], "")
	}
	at := map[*NDArray][]int{} // a leaf listed twice gets its gradient twice
	for i, l := range leaves {
		at[l] = append(at[l], i)
	}
	out := make([]*NDArray, len(leaves))
	walk(order, grads, func(a, g *NDArray) {
		is, ok := at[a]
		if !ok {
			g.Release()
			if other != nil && a.requiresGrad() {
				other(a)
			}
			return
		}
		out[is[0]] = g
		for _, i := range is[1:] {
			out[i] = g.Copy()
		}
	})
	freeNodes(order)
	return out
}

// Grad returns the gradients of heads with respect to vars without storing
// them in any gradient buffer (PyTorch's torch.autograd.grad): headGrads
// weights each head (nil, or a nil entry: ones), and a var no head depends
// on gets nil. The graph is freed, as by Backward without retainGraph.
// GradWith takes options (keeping the graph, recording the gradients'
// graph for higher derivatives).
func Grad(heads, headGrads, vars []*NDArray) []*NDArray {
	return GradWith(heads, vars, GradOpts{HeadGrads: headGrads})
}

// isLeaf reports whether a was not produced by a recorded op.
func isLeaf(a *NDArray) bool {
	s := a.state()
	return s == nil || s.node == nil
}

// leafEdges counts, for each leaf, the inputs of the ops in order that
// read it and want its gradient.
func leafEdges(order []*NDArray) map[*NDArray]int {
	pending := map[*NDArray]int{}
	for _, a := range order {
		n := a.state().node
		for j, in := range n.inputs {
			if n.need[j] && in != nil && isLeaf(in) {
				pending[in]++
			}
		}
	}
	return pending
}

// finishLeaf writes g, the leaf a's final gradient of this pass, into a's
// gradient buffer between a's Before and Ready hooks, and releases g. It
// reports whether a has End hooks to run when the pass returns.
func finishLeaf(a, g *NDArray) (hasEnd bool) {
	defer g.Release()
	s := a.state()
	if s == nil || s.grad == nil || s.req == GradNull {
		return false
	}
	a.runHooks(hookBefore)
	writeLeafGrad(a, g)
	return a.runHooks(hookReady)
}

// topoOrder lists the recorded arrays reachable from heads, each after
// all of its inputs, and claims their nodes for the pass: exclusively when
// free is set (the pass frees them), shared otherwise. It fails before any
// gradient work if part of the graph was already freed or is held by a
// concurrent pass that frees it (or, when free is set, walked by any
// concurrent pass), and if a leaf's gradient buffer was released. release
// gives the claims back: after a freeing pass that completed, its nodes
// stay held (freed).
func topoOrder(heads []*NDArray, free bool) (order []*NDArray, release func()) {
	type frame struct {
		a *NDArray
		i int
	}
	var claimed []*node
	done := false
	release = func() {
		for _, n := range claimed {
			switch {
			case !free:
				n.use.Add(-1)
			case !done || n.backward != nil: // a pass that failed: the graph is intact
				n.use.Store(0)
			}
		}
		claimed = nil
	}
	defer func() {
		if !done { // failed: give back what was claimed
			release()
		}
	}()
	visited := map[*NDArray]bool{}
	var stack []frame
	push := func(a *NDArray) {
		s := a.state()
		if s == nil || visited[a] {
			return
		}
		if s.node == nil { // a leaf
			if g := s.grad; g != nil && s.req != GradNull && g.released.Load() {
				fail("Backward", ErrReleased, "the gradient buffer of a leaf of shape %v was released; attach a new one with AttachGrad", a.shape)
			}
			return
		}
		n := s.node
		if !claim(n, free) {
			fail("Backward", ErrGraph, "the graph through %s (output shape %v) was already freed by an earlier Backward, or is being backpropagated by another goroutine's; pass retainGraph=true to backpropagate through it twice", n.op, a.shape)
		}
		claimed = append(claimed, n)
		if n.backward == nil {
			fail("Backward", ErrGraph, "the graph through %s (output shape %v) was already freed by an earlier Backward; pass retainGraph=true to backpropagate through it twice", n.op, a.shape)
		}
		visited[a] = true
		stack = append(stack, frame{a: a})
	}
	for _, h := range heads {
		push(h)
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			n := top.a.state().node
			if top.i < len(n.inputs) {
				in := n.inputs[top.i]
				top.i++
				if in != nil && n.need[top.i-1] {
					push(in)
				}
				continue
			}
			order = append(order, top.a)
			stack = stack[:len(stack)-1]
		}
	}
	done = true
	return order, release
}

// claim takes n for a backward pass: exclusively (use 0 → -1) for one
// that frees the graph, shared (use +1) for one that keeps it.
func claim(n *node, free bool) bool {
	if free {
		return n.use.CompareAndSwap(0, -1)
	}
	for {
		u := n.use.Load()
		if u < 0 {
			return false
		}
		if n.use.CompareAndSwap(u, u+1) {
			return true
		}
	}
}

// accumulateGrad adds g to the gradient collected for a, releasing what it
// replaces. from names the op whose backward function returned g ("" for
// a head's gradient).
func accumulateGrad(grads map[*NDArray]*NDArray, a, g *NDArray, from string) {
	checkGradFits("Backward", "a BackwardFunc", "the backward function of ", a, g, from)
	old := grads[a]
	if old == nil {
		grads[a] = g
		return
	}
	grads[a] = binaryRaw("Backward", bAdd, old, g)
	old.Release()
	g.Release()
}

// checkGradFits fails (as op) unless g, the gradient a backward function
// returned for a (anon when from is "", else prefix+from), has a's shape,
// dtype and context.
func checkGradFits(op, anon, prefix string, a, g *NDArray, from string) {
	if slices.Equal(a.shape, g.shape) && g.dtype == a.dtype && g.st.dev == a.st.dev {
		return
	}
	who := anon
	if from != "" {
		who = prefix + from
	}
	fail(op, ErrShape, "%s returned a gradient %v %v on %v for an input %v %v on %v: it must match the input's shape, dtype and context",
		who, g.shape, g.dtype, g.st.dev, a.shape, a.dtype, a.st.dev)
}

// writeLeafGrad stores g in a's gradient buffer as its GradReq says.
func writeLeafGrad(a, g *NDArray) {
	s := a.state()
	if s == nil || s.grad == nil || s.req == GradNull {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.req == GradAdd:
		addInPlace(s.grad, g)
	case !swapBuffers(s.grad, g):
		copyInto(s.grad, g)
	}
	s.stamp++
}

// swapBuffers exchanges the memory of dst and src, arrays of one shape,
// dtype and context, instead of copying src into dst, when nothing else
// can see either buffer: each array is the only one on its storage (no
// views) and starts at its beginning. Backward uses it to hand a freshly
// computed gradient to the leaf's gradient array, which keeps its identity
// (users and trainers hold it) and gets the new values without a copy;
// src, about to be released, takes the old buffer back to the pool.
func swapBuffers(dst, src *NDArray) bool {
	d, s := dst.st, src.st
	if d == s || d.owner != nil || s.owner != nil || d.be != s.be || d.dev != s.dev || dst.dtype != src.dtype ||
		dst.off != 0 || src.off != 0 || d.refs.Load() != 1 || s.refs.Load() != 1 ||
		!slices.Equal(dst.shape, src.shape) {
		return false
	}
	d.buf, s.buf = s.buf, d.buf
	return true
}
