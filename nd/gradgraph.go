package nd

import (
	"fmt"
	"slices"
	"strings"
)

// GradOpts configures GradWith.
type GradOpts struct {
	// HeadGrads weights each head (nil, or a nil entry: ones).
	HeadGrads []*NDArray
	// RetainGraph keeps the recorded graph, so that Backward or Grad can
	// run through it again.
	RetainGraph bool
	// CreateGraph records the gradients' own computation (PyTorch's
	// create_graph, Gluon's autograd.grad(create_graph=True)): the
	// returned gradients are recorded arrays, and Backward or GradWith
	// through a function of them gives second (and higher) derivatives —
	// gradient penalties, Hessian-vector products, meta-learning. It
	// implies RetainGraph. Every op on the path from the vars to the heads
	// must have a differentiable backward (the package doc lists them);
	// the pass fails with ErrGraph naming the first op that has none.
	CreateGraph bool
}

// GradWith returns the gradients of heads with respect to vars without
// storing them in any gradient buffer, as Gluon's autograd.grad and
// PyTorch's torch.autograd.grad. A var is a leaf with AttachGrad or any
// recorded result the heads were computed from; a var no head depends on
// gets nil. Only the ops on paths from the vars to the heads are walked.
// Unless o keeps it, the recorded graph is freed, as by Backward.
func GradWith(heads, vars []*NDArray, o GradOpts) []*NDArray {
	const op = "Grad"
	if len(heads) == 0 {
		fail(op, ErrArgument, "no heads")
	}
	if o.HeadGrads != nil && len(o.HeadGrads) != len(heads) {
		fail(op, ErrArgument, "%d heads but %d head gradients", len(heads), len(o.HeadGrads))
	}
	hg := make([]*NDArray, len(heads))
	for i, h := range heads {
		defer checkLive(op, h).done()
		if !h.requiresGrad() {
			fail(op, ErrGraph, "head %d (shape %v) is not part of a recorded graph", i, h.shape)
		}
		if o.HeadGrads != nil && o.HeadGrads[i] != nil {
			defer checkInputs(op, h, o.HeadGrads[i]).done()
			if !slices.Equal(h.shape, o.HeadGrads[i].shape) {
				fail(op, ErrShape, "head %d has shape %v but its gradient has shape %v", i, h.shape, o.HeadGrads[i].shape)
			}
			hg[i] = o.HeadGrads[i]
			if !o.CreateGraph { // (a pass that records keeps the head gradient's own graph, and releases nothing)
				hg[i] = o.HeadGrads[i].view(0, o.HeadGrads[i].shape)
			}
		} else {
			hg[i] = OnesLike(h)
		}
	}
	for i, v := range vars {
		if v == nil || !v.requiresGrad() {
			fail(op, ErrArgument, "var %d is nil or takes no gradient: want a leaf with AttachGrad or a recorded result", i)
		}
		defer checkLive(op, v).done()
	}
	sess := sessionOf(op, heads...)
	if !o.CreateGraph {
		return gradWalk(heads, hg, vars, false, o.RetainGraph)
	}
	// The pass records even inside Pause, and keeps the mode.
	defer sess.open("Grad", false).exit()
	return gradWalk(heads, hg, vars, true, true)
}

// gradWalk backpropagates hg from heads through the ops on paths to vars
// and returns the vars' gradients. With create it runs the ops'
// differentiable backward functions (the caller records) and keeps every
// gradient it made alive, since the recorded graph of the gradients reads
// them; with retain the graph is kept.
func gradWalk(heads, hg, vars []*NDArray, create, retain bool) []*NDArray {
	order, release := topoOrder(heads, !retain)
	defer release()
	at := map[*NDArray][]int{} // a var listed twice gets its gradient twice
	for i, v := range vars {
		at[v] = append(at[v], i)
	}
	reach := reachingVars(order, at)
	out := make([]*NDArray, len(vars))
	capture := func(a, g *NDArray) {
		is := at[a]
		out[is[0]] = g
		for _, i := range is[1:] {
			if create {
				out[i] = g
			} else {
				out[i] = g.Copy()
			}
		}
	}
	grads := map[*NDArray]*NDArray{}
	add := func(a, g *NDArray, from string) {
		if create {
			accumulateRecorded(grads, a, g, from)
		} else {
			accumulateGrad(grads, a, g, from)
		}
	}
	for i, h := range heads {
		add(h, hg[i], "")
	}
	for i := len(order) - 1; i >= 0; i-- {
		a := order[i]
		g := grads[a]
		if g == nil {
			continue
		}
		delete(grads, a)
		_, isVar := at[a]
		if isVar {
			capture(a, g)
		}
		n := a.state().node
		need := make([]bool, len(n.inputs))
		walkOn := false
		for j, in := range n.inputs {
			need[j] = n.need[j] && in != nil && reach[in]
			walkOn = walkOn || need[j]
		}
		if !walkOn {
			if !isVar && !create {
				g.Release()
			}
			continue
		}
		checkVersions(a, n)
		var igs []*NDArray
		if create {
			igs = runDiff(n, g, need)
		} else {
			igs = runBackwardNeed(n, g, need)
			if !isVar {
				g.Release()
			}
			releaseUnneeded(igs, need)
		}
		for j, in := range n.inputs {
			if need[j] && j < len(igs) && igs[j] != nil {
				add(in, igs[j], n.op)
			}
		}
	}
	for a, g := range grads { // leaves
		if _, ok := at[a]; ok {
			capture(a, g)
		} else if !create {
			g.Release()
		}
	}
	if !retain {
		freeNodes(order)
	}
	return out
}

// releaseUnneeded releases the gradients a backward function returned for
// inputs need did not ask for (a traced graph's backward computes every
// input's), unless the same array also serves an input that was asked
// for.
func releaseUnneeded(igs []*NDArray, need []bool) {
	for j, g := range igs {
		if g == nil || (j < len(need) && need[j]) {
			continue
		}
		used := false
		for k, h := range igs {
			used = used || (h == g && k < len(need) && need[k])
		}
		if !used {
			g.Release()
		}
	}
}

// reachingVars marks the arrays of order (and the leaves among vars) from
// which some var can be reached through inputs that want a gradient: the
// only ones a pass towards vars needs to walk.
func reachingVars(order []*NDArray, vars map[*NDArray][]int) map[*NDArray]bool {
	reach := make(map[*NDArray]bool, len(vars))
	for v := range vars {
		reach[v] = true
	}
	for _, a := range order { // inputs come first
		if reach[a] {
			continue
		}
		n := a.state().node
		for j, in := range n.inputs {
			if n.need[j] && in != nil && reach[in] {
				reach[a] = true
				break
			}
		}
	}
	return reach
}

// runBackwardNeed is runBackward with need in place of the node's own.
func runBackwardNeed(n *node, g *NDArray, need []bool) []*NDArray {
	return callBackward(n, n.backward, g, need)
}

// runDiff runs n's differentiable backward function on g, recording.
func runDiff(n *node, g *NDArray, need []bool) []*NDArray {
	if n.diff == nil {
		fail("Grad", ErrGraph, "CreateGraph: the gradient of %s (output shape %v) cannot be differentiated again: its backward function is not made of recorded ops (the nd package doc lists the ops whose gradients are differentiable)", n.op, needShape(n))
	}
	return callBackward(n, n.diff, g, need)
}

// needShape returns the shape of n's first input, for messages.
func needShape(n *node) []int {
	for _, in := range n.inputs {
		if in != nil {
			return in.shape
		}
	}
	return nil
}

// callBackward runs the backward function f of n on g, raising an *Error
// it panics with as Backward's, naming n's op (see runBackward).
func callBackward(n *node, f BackwardFunc, g *NDArray, need []bool) []*NDArray {
	if profEnterOwn(n.op+" backward", nil, true) {
		defer profExit()
	}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*Error); ok && e.Op != "Backward" && e.Op != "Grad" {
				op := e.Op
				if !strings.Contains(op, ".") {
					op = "nd." + op
				}
				panic(&Error{Op: "Backward", Kind: e.Kind, Msg: fmt.Sprintf("in the backward function of %s (%s): %s", n.op, op, e.Msg)})
			}
			panic(r)
		}
	}()
	return f(g, need)
}

// accumulateRecorded is accumulateGrad for a pass that records: the sum is
// a recorded Add, and nothing is released.
func accumulateRecorded(grads map[*NDArray]*NDArray, a, g *NDArray, from string) {
	checkGradFits("Grad", "a differentiable BackwardFunc", "the differentiable backward function of ", a, g, from)
	if old := grads[a]; old != nil {
		grads[a] = Add(old, g)
		return
	}
	grads[a] = g
}
