package nd

import (
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// Rewrites of a traced graph that eager execution cannot make: those of
// TraceOpts, of a forward pass, here; the backward pass's fused pairs in
// graph_fuse.go. Each applies where the trace shows it is safe: the
// intermediate it removes is read by no other kernel and handed out by
// no output, and the operands it moves later are not touched in between.

// TraceOpts are the rewrites TraceWith applies to a graph without a
// backward pass.
type TraceOpts struct {
	// FoldBatchNorm folds a batch normalisation that normalises a
	// convolution's output with given statistics (predict mode) into the
	// convolution: each call scales the filters by gamma·invstd and makes
	// the bias (bias − mean)·gamma·invstd + beta on the device, then runs
	// the convolution with that bias, and with a ReLU that follows, in one
	// pass over the output instead of three. Scaling the filters costs
	// a pass over them on every call (the parameters may have changed), so
	// a convolution folds only when it has no more filter values than
	// output values (early layers, large batches). The results differ from the unfolded ones by rounding: the
	// scale multiplies the filters before the sums rather than the sums
	// (about 1e-6 relative in float32).
	FoldBatchNorm bool
	// DeviceGraph runs the calls of a graph on a backend that captures
	// device graphs (backend.GraphCapturer: CUDA graphs) as captured
	// graphs, one per buffer set: a set's first call replays the kernels
	// as usual (warming up the backend's plans), its second records them
	// into a device graph, and every call from then on copies the inputs
	// into the set's own input buffers, launches the graph and copies the
	// outputs out (and the inputs back, which the computation may have
	// written), with no per-kernel host work. A recorded call's backward
	// pass runs the same way, as a second device graph: the inputs and the
	// output gradients are copied in, the gradients out. A graph is
	// captured again when a bound array has moved. Graphs that draw random
	// numbers or write host data at each call (dropout, a FromSlice inside
	// the computation) or span several devices run as usual. Results are
	// the plain replay's bits.
	DeviceGraph bool
}

// kernelKind names the kernels the rewrites look at.
type kernelKind uint8

const (
	kindUnary       kernelKind = iota + 1 // refs: dst, x
	kindConv                              // Conv2D or Conv2DBias; refs: y, x, w, bias (slot -1: none)
	kindBNApply                           // BatchNormApply (BatchNormApplyRelu when relu); refs: y, x, mean, invstd, gamma, beta
	kindPoolBwd                           // Pool2DBackward; refs: dx, x, y, dy
	kindBiasReluBwd                       // BiasReluBackward; refs: dx, dbias, g, y
)

// kernelInfo describes a recorded kernel call for the rewrites.
type kernelInfo struct {
	kind    kernelKind
	be      backend.Backend // the real backend (kindConv, kindPoolBwd)
	conv    backend.ConvParams
	pool    backend.PoolParams
	channel backend.ChannelParams
	unary   backend.UnaryOp
	relu    bool // kindBNApply: with its ReLU
	n       int  // kindUnary's length
	refs    []ref
}

// describe attaches k to the step just recorded.
func (r *recording) describe(k *kernelInfo) { r.steps[len(r.steps)-1].k = k }

// whole reports whether x is all of its slot from the start, contiguous.
func (g *Graph) whole(x ref, n int) bool {
	return x.slot >= 0 && x.off == 0 && x.strides == nil && g.slots[x.slot].n == n
}

// addPlanned adds a planned slot of n values like slot like's.
func (g *Graph) addPlanned(like int32, n int) ref {
	s := g.slots[like]
	g.slots = append(g.slots, slot{kind: slotPlanned, be: s.be, dev: s.dev, dt: s.dt, n: n, first: -1, last: -1, phys: -1})
	return ref{slot: int32(len(g.slots) - 1)}
}

// strided returns x read with the given element strides.
func strided(x ref, strides ...int) ref {
	x.strides = strides
	return x
}

// foldBatchNorm applies TraceOpts.FoldBatchNorm to g.fwd and returns the
// number of batch normalisations folded.
func (g *Graph) foldBatchNorm() int {
	users, handed := stepUsers(g.fwd), g.handedSlots(false)
	// A slot the rewrite stops writing must be planned, not handed out and
	// read by the listed steps only.
	private := func(x ref, steps ...int) bool {
		return g.slots[x.slot].kind == slotPlanned && !handed[x.slot] && slices.Equal(users[x.slot], steps)
	}
	drop := map[int]bool{}
	repl := map[int][]step{}
	folded := 0
	for j, st := range g.fwd {
		bn := st.k
		if bn == nil || bn.kind != kindBNApply || len(users[bn.refs[1].slot]) != 2 {
			continue
		}
		i := users[bn.refs[1].slot][0]
		cv := g.fwd[i].k
		if cv == nil || cv.kind != kindConv || drop[i] {
			continue
		}
		p, cp := cv.conv, bn.channel
		size := p.N * p.OutC * p.OutH * p.OutW
		y, x := cv.refs[0], bn.refs[1]
		kk := p.InC / p.Groups * p.KH * p.KW
		if p.OutC*kk > size || y.slot != x.slot || !g.whole(x, size) || !private(x, i, j) ||
			cp.Outer != p.N || cp.C != p.OutC || cp.Inner != p.OutH*p.OutW ||
			(p.DType != backend.Float32 && p.DType != backend.Float64) || usedBetween(g.fwd[i+1:j], cv.refs[1:]) {
			continue
		}
		cb, ok := cv.be.(backend.ConvBiasKernels)
		if !ok {
			continue
		}
		out := bn.refs[0]
		relu := bn.relu && g.whole(out, size)
		if bn.relu && !relu {
			continue
		}
		if _, ok := cv.be.(backend.BiasReluKernels); relu && !ok {
			continue
		}
		nextRelu := false // a separate ReLU step follows and joins the fold
		if !relu && j+1 < len(g.fwd) && g.whole(out, size) {
			if k := g.fwd[j+1].k; k != nil && k.kind == kindUnary && k.unary == backend.Relu && k.n == size &&
				sameRef(k.refs[1], out) && g.whole(k.refs[0], size) && (k.refs[0].slot == out.slot || private(out, j, j+1)) {
				if _, ok := cv.be.(backend.BiasReluKernels); ok {
					relu, nextRelu, out = true, true, k.refs[0]
				}
			}
		}
		repl[j] = g.foldSteps(cv, bn, cb, relu, out)
		drop[i] = true
		if nextRelu {
			drop[j+1] = true
		}
		folded++
	}
	if folded == 0 {
		return 0
	}
	var fwd []step
	for i, st := range g.fwd {
		switch {
		case repl[i] != nil:
			fwd = append(fwd, repl[i]...)
		case !drop[i]:
			fwd = append(fwd, st)
		}
	}
	g.fwd = fwd
	return folded
}

// stepUsers maps each slot steps use to the indices of the steps using
// it, in order.
func stepUsers(steps []step) map[int32][]int {
	users := map[int32][]int{}
	for i, st := range steps {
		for _, j := range st.uses {
			users[j] = append(users[j], i)
		}
	}
	return users
}

// handedSlots returns the slots the outputs are handed out from, and with
// results those of the gradients too.
func (g *Graph) handedSlots(results bool) map[int32]bool {
	handed := map[int32]bool{}
	for _, o := range g.outs {
		handed[o.slot] = true
	}
	if results {
		for _, r := range g.results {
			handed[r.slot] = true
		}
	}
	return handed
}

// sameRef reports whether a and b are the same contiguous operand.
func sameRef(a, b ref) bool {
	return a.slot == b.slot && a.off == b.off && a.strides == nil && b.strides == nil
}

// usedBetween reports whether any of steps uses the slot of one of refs.
func usedBetween(steps []step, refs []ref) bool {
	for _, st := range steps {
		for _, x := range refs {
			if x.slot >= 0 && slices.Contains(st.uses, x.slot) {
				return true
			}
		}
	}
	return false
}

// foldSteps returns the steps that replace convolution cv and batch
// normalisation bn (and a ReLU when relu): scale = invstd·gamma, w' =
// w·scale per filter, b' = (bias − mean)·scale + beta, then the
// convolution with w' and b' into out (Conv2DBias or Conv2DBiasRelu,
// whose bias and ReLU the CPU applies to each image while it is in cache).
func (g *Graph) foldSteps(cv, bn *kernelInfo, cb backend.ConvBiasKernels, relu bool, out ref) []step {
	be, p := cv.be, cv.conv
	c, kk := p.OutC, p.InC/p.Groups*p.KH*p.KW
	x, w, bias := cv.refs[1], cv.refs[2], cv.refs[3]
	mean, invstd, gamma, beta := bn.refs[2], bn.refs[3], bn.refs[4], bn.refs[5]
	var steps []step
	add := func(run func(e *replay), refs ...ref) {
		steps = append(steps, step{run: run, uses: slotsOf(refs...)})
	}
	binary := func(op backend.BinaryOp, shape []int, d, a, b ref) {
		add(func(e *replay) { be.Binary(op, shape, d.arg(e), a.arg(e), b.arg(e)) }, d, a, b)
	}
	vec := []int{c}
	scale := strided(invstd, 1)
	if gamma.slot >= 0 {
		scale = g.addPlanned(out.slot, c)
		binary(backend.Mul, vec, scale, strided(invstd, 1), strided(gamma, 1))
		scale = strided(scale, 1)
	}
	w2 := g.addPlanned(out.slot, c*kk)
	binary(backend.Mul, []int{c, kk}, w2, strided(w, kk, 1), strided(scale, 1, 0))
	b2 := g.addPlanned(out.slot, c)
	if bias.slot >= 0 {
		binary(backend.Sub, vec, b2, strided(bias, 1), strided(mean, 1))
	} else {
		add(func(e *replay) { be.Unary(backend.Neg, b2.arg(e), mean.arg(e), c, 0, 0) }, b2, mean)
	}
	binary(backend.Mul, vec, b2, strided(b2, 1), scale)
	if beta.slot >= 0 {
		binary(backend.Add, vec, b2, strided(b2, 1), strided(beta, 1))
	}
	if !relu {
		add(func(e *replay) { cb.Conv2DBias(p, out.arg(e), x.arg(e), w2.arg(e), b2.arg(e)) }, out, x, w2, b2)
		return steps
	}
	if cr, ok := be.(backend.ConvBiasReluKernels); ok { // bias and ReLU on each image while it is in cache
		add(func(e *replay) { cr.Conv2DBiasRelu(p, out.arg(e), x.arg(e), w2.arg(e), b2.arg(e)) }, out, x, w2, b2)
		return steps
	}
	br := be.(backend.BiasReluKernels)
	ch := backend.ChannelParams{Outer: p.N, C: c, Inner: p.OutH * p.OutW, DType: p.DType, Device: p.Device}
	add(func(e *replay) {
		y := out.arg(e)
		be.Conv2D(p, y, x.arg(e), w2.arg(e))
		br.BiasRelu(ch, y, y, b2.arg(e))
	}, out, x, w2, b2)
	return steps
}
