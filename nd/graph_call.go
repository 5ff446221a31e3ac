package nd

import (
	"runtime"
	"slices"
	"strconv"

	"github.com/goluon/goluon/nd/backend"
)

// Call replays g on inputs, which must match the traced ones in number,
// nil places, shapes, dtypes and contexts, with the calling session in the
// mode g was traced in (recording and training alike, the same autocast)
// and its bound arrays unchanged (BoundTo). It returns fresh output arrays
// in the inputs' session, tracked by its innermost Scope as an op's
// results are. When g was traced while recording, the outputs carry one
// tape node whose backward pass replays g's backward kernels, once: a
// second Backward through it (retainGraph) is an ErrGraph error.
func (g *Graph) Call(inputs []*NDArray) []*NDArray {
	op := g.name
	if Tracing() {
		fail(op, ErrTrace, "a traced graph cannot be called while the goroutine traces (call the computation itself)")
	}
	g.checkInputs(inputs)
	live := nonNil(inputs)
	defer pin(op, live).done()          // the replay reads them
	defer pin(op, g.boundArrays).done() // and these
	sess := sessionOf(op, live...)
	if sess.IsRecording() != g.recording || sess.IsTraining() != g.training {
		fail(op, ErrTrace, "traced with recording=%v training=%v, called with recording=%v training=%v: trace again for this mode",
			g.recording, g.training, sess.IsRecording(), sess.IsTraining())
	}
	if dt, on := sess.AutocastDType(); on != g.castOn || (on && dt != g.castDT) {
		fail(op, ErrTrace, "traced with autocast %v (%v), called with %v (%v): trace again", g.castDT, g.castOn, dt, on)
	}
	in := g.claim()
	e := &replay{args: in.args, sess: sess}
	outs, anchor := g.makeOutputs(e, sess)
	launched := false
	if g.capt != nil && in.dg.warm && !in.dg.fwd.off {
		launched = g.callDeviceGraph(in, e, inputs, outs)
	} else {
		in.dg.warm = true
		g.bindCallInputs(e, inputs)
		g.bindBound(e)
		for _, s := range g.fwd {
			s.run(e)
		}
		for i, o := range g.outs {
			if !o.fresh {
				src := e.args[o.slot]
				o.be.Copy([]int{numel(o.shape)}, outs[i].storageArg(), backend.Arg{Buf: src.Buf, Off: src.Off + o.off})
			}
		}
	}
	if !g.grads || !g.recordNode(e, in, inputs, live, outs, anchor, launched) {
		g.put(in)
	}
	if g.packN > 1 { // views of the packed anchor, recorded
		for i, o := range g.outs {
			if o.packed >= 0 {
				outs[i].Release()
				outs[i] = Reshape(SliceAxis(anchor, o.packed, o.packed+numel(o.shape), 0), o.shape...)
			}
		}
	}
	return outs
}

// bindCallInputs binds the input slots to the inputs' memory.
func (g *Graph) bindCallInputs(e *replay, inputs []*NDArray) {
	for i, x := range inputs {
		if x != nil && g.inputs[i].alias < 0 {
			e.args[g.inputs[i].slot] = backend.Arg{Buf: x.st.buf, Off: x.off}
		}
	}
}

// bindBound binds the bound arrays' slots to where their memory is now
// (a Trainer may have packed them since the trace, or since the call).
func (g *Graph) bindBound(e *replay) {
	for i, b := range g.boundArrays {
		e.args[g.bound[i].slot] = backend.Arg{Buf: b.st.buf, Off: b.off}
	}
}

// checkInputs validates a call's inputs against the traced ones.
func (g *Graph) checkInputs(inputs []*NDArray) {
	op := g.name
	if len(inputs) != len(g.inputs) {
		fail(op, ErrArgument, "traced with %d inputs, called with %d", len(g.inputs), len(inputs))
	}
	for i, x := range inputs {
		s := g.inputs[i]
		switch {
		case s.absent != (x == nil):
			fail(op, ErrTrace, "input %d: traced absent=%v, called absent=%v", i, s.absent, x == nil)
		case x == nil:
			continue
		case x.released.Load():
			fail(op, ErrReleased, "input %d (shape %v on %v) was released", i, x.shape, x.st.dev)
		case !slices.Equal(x.shape, s.shape) || x.dtype != s.dt || x.st.dev != s.dev:
			fail(op, ErrTrace, "input %d is %v %v on %v, traced as %v %v on %v: a replay cannot change shapes; trace again",
				i, x.shape, x.dtype, x.st.dev, s.shape, s.dt, s.dev)
		case s.alias >= 0 && (inputs[s.alias] == nil || inputs[s.alias].st != x.st || inputs[s.alias].off != x.off):
			fail(op, ErrTrace, "input %d was traced as the same array as input %d: trace again", i, s.alias)
		case g.recording && s.alias < 0 && s.grad != (x.requiresGrad() && x.dtype.IsFloat()):
			fail(op, ErrTrace, "input %d: traced with needs-gradient=%v: trace again", i, s.grad)
		}
	}
}

// makeOutputs allocates the call's outputs in sess and binds the fresh
// ones' slots. A recorded call packs its outputs that need a gradient into
// one array (its anchor, which carries the tape node) when there are
// several, binding each to its region, and anchors on the one otherwise.
func (g *Graph) makeOutputs(e *replay, sess *Session) (outs []*NDArray, anchor *NDArray) {
	outs = make([]*NDArray, len(g.outs))
	if g.packN > 1 {
		total, first := 0, -1
		for i, o := range g.outs {
			if o.packed >= 0 {
				total += numel(o.shape)
				if first < 0 {
					first = i
				}
			}
		}
		anchor = newArray(g.name, sess, g.outs[first].dev, g.outs[first].dt, []int{total})
	}
	for i, o := range g.outs {
		if o.packed >= 0 && g.packN > 1 {
			outs[i] = anchor.view(o.packed, o.shape)
			if o.fresh {
				e.args[o.slot] = backend.Arg{Buf: anchor.st.buf, Off: o.packed}
			}
			continue
		}
		outs[i] = newArray(g.name, sess, o.dev, o.dt, o.shape)
		if o.fresh {
			e.args[o.slot] = backend.Arg{Buf: outs[i].st.buf}
		}
		if o.packed >= 0 { // the one output that needs a gradient
			anchor = outs[i]
		}
	}
	return outs, anchor
}

// recordNode records the call's tape node on anchor, its inputs being the
// call's inputs and then the bound arrays. It reports whether a node was
// recorded (no input wanting a gradient records none); the buffer set is
// then held until the node's backward pass, or until anchor is collected
// without one. launched says that the forward pass ran as a device graph
// (the backward pass then runs as one too).
func (g *Graph) recordNode(e *replay, in *instance, inputs, live, outs []*NDArray, anchor *NDArray, launched bool) bool {
	nodeIn := slices.Concat(inputs, g.boundArrays)
	// Outputs the backward kernels read stay alive as a view each (as an
	// eager op's node keeps its output while the caller may release a
	// detached copy); released after the backward pass or with the hold.
	h := &hold{in: in, device: launched, outAt: make([]backend.Arg, len(g.outs))}
	var packedKeep *NDArray
	for i, o := range g.outs {
		if !o.kept {
			continue
		}
		if o.packed >= 0 && g.packN > 1 {
			if packedKeep == nil {
				packedKeep = anchor.viewIn(persistentSession, 0, anchor.shape)
				h.keep = append(h.keep, packedKeep)
			}
			h.outAt[i] = backend.Arg{Buf: packedKeep.st.buf, Off: packedKeep.off + o.packed}
			continue
		}
		k := outs[i].viewIn(persistentSession, 0, outs[i].shape)
		h.keep = append(h.keep, k)
		h.outAt[i] = k.storageArg()
	}
	reads := slices.Concat(live, g.boundArrays, h.keep) // what the backward replay reads
	Record(g.name, anchor, nodeIn, func(gr *NDArray, need []bool) []*NDArray {
		return g.backward(e, h, inputs, reads, gr, need)
	})
	if anchor.state() == nil {
		release(h.keep...)
		return false
	}
	anchor.state().node.readsOut = len(h.keep) > 0 // the backward kernels read outputs
	runtime.AddCleanup(anchor, func(h *hold) {
		if h.done.CompareAndSwap(false, true) {
			release(h.keep...)
			g.put(h.in)
		}
	}, h)
	return true
}

// backward replays the backward kernels of the call bound in e with the
// output gradient gr (packed as the outputs are).
func (g *Graph) backward(e *replay, h *hold, inputs, reads []*NDArray, gr *NDArray, need []bool) []*NDArray {
	op := g.name
	if !h.done.CompareAndSwap(false, true) {
		fail(op, ErrGraph, "a hybridized call's graph was already backpropagated: it supports one backward pass (run the block without Hybridize to backpropagate twice)")
	}
	defer g.put(h.in)
	defer release(h.keep...)
	defer pin(op, reads).done()
	res := make([]*NDArray, len(need))
	sess := gr.Session()
	for _, r := range g.results {
		res[r.target] = newArray(op, sess, r.dev, r.dt, r.shape)
	}
	if h.device {
		g.backwardDeviceGraph(e, h, inputs, gr, res)
	} else {
		g.bindCallInputs(e, inputs) // where they are now, as eager reads them
		g.bindBound(e)
		for i, o := range g.outs { // the caller's outputs, as they are now
			if o.kept {
				e.args[o.slot] = h.outAt[i]
			}
		}
		for i, h := range g.heads {
			if h >= 0 {
				e.args[h] = backend.Arg{Buf: gr.st.buf, Off: gr.off + g.outs[i].packed}
			}
		}
		for _, r := range g.results {
			if r.fresh {
				e.args[r.slot] = backend.Arg{Buf: res[r.target].st.buf}
			}
		}
		for _, s := range g.bwd {
			s.run(e)
		}
		for _, r := range g.results {
			if !r.fresh {
				src := e.args[r.slot]
				r.be.Copy([]int{numel(r.shape)}, res[r.target].storageArg(), backend.Arg{Buf: src.Buf, Off: src.Off + r.off})
			}
		}
		h.in.dg.bwdWarm = true
	}
	for i, a := range res {
		if a != nil && !need[i] {
			a.Release()
			res[i] = nil
		}
	}
	return res
}

// Signature returns a key for a call on inputs: their shapes, dtypes,
// contexts, which need a gradient and which are the same array, with the
// calling session's recording and training modes and autocast. Calls with
// equal signatures can replay one Graph (whose bound arrays are still
// BoundTo the call's); gluon.Hybridize keys its graphs by it.
func Signature(inputs []*NDArray) string {
	sess := sessionOf("Signature", nonNil(inputs)...)
	b := make([]byte, 0, 64)
	b = strconv.AppendBool(b, sess.IsRecording())
	b = strconv.AppendBool(b, sess.IsTraining())
	if dt, on := sess.AutocastDType(); on {
		b = append(b, dt.String()...)
	}
	for i, x := range inputs {
		b = append(b, '|')
		if x == nil {
			b = append(b, '-')
			continue
		}
		for j, y := range inputs[:i] {
			if y != nil && y.st == x.st && y.off == x.off && slices.Equal(y.shape, x.shape) {
				b = append(b, '=')
				b = strconv.AppendInt(b, int64(j), 10)
				break
			}
		}
		for _, d := range x.shape {
			b = strconv.AppendInt(b, int64(d), 10)
			b = append(b, ',')
		}
		b = append(b, x.dtype.String()...)
		b = append(b, x.st.dev.Kind.String()...) // as Context.String, without its allocation
		b = append(b, '(')
		b = strconv.AppendInt(b, int64(x.st.dev.ID), 10)
		b = append(b, ')')
		if x.requiresGrad() {
			b = append(b, 'g')
		}
	}
	return string(b)
}
