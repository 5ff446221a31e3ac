package nd

import (
	"slices"
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// capturePlan is how a graph's calls run as captured device graphs
// (TraceOpts.DeviceGraph): the one device every buffer of the graph is on
// and its backend.
type capturePlan struct {
	be                 backend.GraphCapturer
	dev                ctx.Context
	captures, launches atomic.Int64
	err                atomic.Pointer[error] // the first capture's failure, if one failed
}

// deviceGraph is a buffer set's captured device graphs (the forward
// pass's and, for a recorded graph, the backward pass's), with the
// buffers that take the calls' inputs, fresh outputs, output gradients
// and fresh gradient results: a device graph runs on the memory it was
// captured with.
type deviceGraph struct {
	warm    bool // the set made a plain call (the backend's plans exist)
	bwdWarm bool // the set ran a backward pass without a device graph
	fwd     captured
	bwd     captured
	inBufs  []backend.Buffer // per input: its copy (nil: absent or an alias)
	outBufs []backend.Buffer // per output: its buffer when the output is fresh
	headBuf backend.Buffer   // the output gradients (packed as the outputs are)
	resBufs []backend.Buffer // per gradient result: its buffer when it is fresh
}

// captured is one captured device graph of a buffer set.
type captured struct {
	exec    backend.CapturedGraph
	boundAt []backend.Arg // where the bound arrays were at the capture
	off     bool          // capturing failed: the pass replays as usual
}

func (c *captured) release() {
	if c.exec != nil {
		c.exec.Release()
		c.exec = nil
	}
}

// capturer returns the capture plan of g, or nil when g's buffers span
// several devices or their backend captures no device graphs.
func (g *Graph) capturer() *capturePlan {
	if len(g.outs) == 0 {
		return nil
	}
	dev, be := g.outs[0].dev, g.outs[0].be
	same := func(d ctx.Context, b backend.Backend) bool { return d == dev && b == be }
	for _, s := range g.inputs {
		if !s.absent && s.dev != dev {
			return nil
		}
	}
	for _, p := range g.phys {
		if !same(p.dev, p.be) {
			return nil
		}
	}
	for _, o := range g.outs {
		if !same(o.dev, o.be) {
			return nil
		}
	}
	for _, r := range g.results {
		if !same(r.dev, r.be) {
			return nil
		}
	}
	for _, b := range g.boundArrays {
		if !same(b.st.dev, b.st.be) {
			return nil
		}
	}
	c, ok := be.(backend.GraphCapturer)
	if !ok {
		return nil
	}
	return &capturePlan{be: c, dev: dev}
}

// callDeviceGraph is the forward pass of a call on a warm buffer set of a
// graph with a capture plan: the inputs are copied into the set's input
// buffers, the set's device graph is launched (captured first when there
// is none, or when a bound array has moved since) and the outputs are
// copied into outs. It reports whether a device graph ran (else the
// kernels ran as usual, on the set's buffers, and the set's later calls
// replay as usual).
func (g *Graph) callDeviceGraph(in *instance, e *replay, inputs, outs []*NDArray) bool {
	dg := &in.dg
	if dg.inBufs == nil {
		dg.inBufs = make([]backend.Buffer, len(g.inputs))
		dg.outBufs = make([]backend.Buffer, len(g.outs))
	}
	g.copyInputsIn(dg, e, inputs)
	g.bindBound(e)
	for i, o := range g.outs {
		if o.fresh {
			if dg.outBufs[i] == nil {
				dg.outBufs[i] = g.allocFixed(o.be, o.dt, numel(o.shape))
			}
			e.args[o.slot] = backend.Arg{Buf: dg.outBufs[i]}
		}
	}
	launched := g.runCaptured(&dg.fwd, g.fwd, e)
	for i, o := range g.outs {
		src := e.args[o.slot]
		o.be.Copy([]int{numel(o.shape)}, outs[i].storageArg(), backend.Arg{Buf: src.Buf, Off: src.Off + o.off})
	}
	// A computation may write into an input, as a plain replay would into
	// the caller's array: the copies go back (one copy each way per call;
	// which inputs a graph writes is not recorded).
	for i, x := range inputs {
		if x != nil && g.inputs[i].alias < 0 {
			x.st.be.Copy([]int{x.Size()}, x.storageArg(), backend.Arg{Buf: dg.inBufs[i]})
		}
	}
	return launched
}

// copyInputsIn copies the call's inputs into the set's input buffers and
// binds their slots there.
func (g *Graph) copyInputsIn(dg *deviceGraph, e *replay, inputs []*NDArray) {
	for i, x := range inputs {
		sp := g.inputs[i]
		if x == nil || sp.alias >= 0 {
			continue
		}
		if dg.inBufs[i] == nil {
			dg.inBufs[i] = g.allocFixed(x.st.be, x.dtype, x.Size())
		}
		dst := backend.Arg{Buf: dg.inBufs[i]}
		x.st.be.Copy([]int{x.Size()}, dst, x.storageArg())
		e.args[sp.slot] = dst
	}
}

// backwardDeviceGraph is the backward pass of a call whose forward pass
// launched a device graph: the inputs are copied into the set's input
// buffers again (a backward pass reads them as they are now, as eager
// does), the output gradient gr into the set's head buffer, and the set's
// backward device graph is launched (captured first; its first backward
// pass runs as usual, on the same buffers, when no plain one has warmed
// the backend's plans); the gradients are copied out into res.
func (g *Graph) backwardDeviceGraph(e *replay, h *hold, inputs []*NDArray, gr *NDArray, res []*NDArray) {
	dg := &h.in.dg
	g.copyInputsIn(dg, e, inputs)
	g.bindBound(e)
	for i, o := range g.outs { // the caller's outputs, as they are now
		if o.kept {
			o.be.Copy([]int{numel(o.shape)}, backend.Arg{Buf: dg.outBufs[i]}, h.outAt[i])
		}
	}
	if dg.headBuf == nil {
		dg.headBuf = g.allocFixed(gr.st.be, gr.dtype, gr.Size())
	}
	gr.st.be.Copy([]int{gr.Size()}, backend.Arg{Buf: dg.headBuf}, gr.storageArg())
	for i, h := range g.heads {
		if h >= 0 {
			e.args[h] = backend.Arg{Buf: dg.headBuf, Off: g.outs[i].packed}
		}
	}
	if dg.resBufs == nil {
		dg.resBufs = make([]backend.Buffer, len(g.results))
	}
	for j, r := range g.results {
		if r.fresh {
			if dg.resBufs[j] == nil {
				dg.resBufs[j] = g.allocFixed(r.be, r.dt, numel(r.shape))
			}
			e.args[r.slot] = backend.Arg{Buf: dg.resBufs[j]}
		}
	}
	if dg.bwdWarm {
		g.runCaptured(&dg.bwd, g.bwd, e)
	} else {
		for _, s := range g.bwd {
			s.run(e)
		}
		dg.bwdWarm = true
	}
	for _, r := range g.results {
		src := e.args[r.slot]
		r.be.Copy([]int{numel(r.shape)}, res[r.target].storageArg(), backend.Arg{Buf: src.Buf, Off: src.Off + r.off})
	}
}

// runCaptured runs steps on e's buffers through c: it launches c's device
// graph, capturing it first when there is none or when a bound array has
// moved since (a Trainer packed the parameters). Where the backend will
// not capture, the steps run as usual, and c is off from then on. It
// reports whether a device graph ran.
func (g *Graph) runCaptured(c *captured, steps []step, e *replay) bool {
	if c.off {
		for _, s := range steps {
			s.run(e)
		}
		return false
	}
	bound := make([]backend.Arg, len(g.bound))
	for i, b := range g.bound {
		bound[i] = e.args[b.slot]
	}
	if c.exec != nil && !slices.EqualFunc(bound, c.boundAt, func(a, b backend.Arg) bool { return a.Buf == b.Buf && a.Off == b.Off }) {
		c.release() // a bound array moved: capture again
	}
	if c.exec == nil && !g.captureInto(c, steps, e) {
		c.off = true
		for _, s := range steps {
			s.run(e)
		}
		return false
	}
	c.boundAt = bound
	c.exec.Launch()
	g.capt.launches.Add(1)
	return true
}

// captureInto records steps on e's buffers into a device graph for c,
// reporting whether the backend captured them (nothing has run).
func (g *Graph) captureInto(c *captured, steps []step, e *replay) bool {
	p := g.capt
	if err := p.be.BeginCapture(p.dev); err != nil {
		p.err.CompareAndSwap(nil, &err)
		return false
	}
	// A step that fails while capturing with an nd error (work a graph
	// cannot hold: a copy between devices) ends the capture; the set then
	// replays, which raises a genuine error again. Any other panic ends
	// the capture on its way out.
	ended := false
	defer func() {
		if !ended {
			if cg, err := p.be.EndCapture(p.dev); err == nil {
				cg.Release()
			}
		}
	}()
	if err := Catch(func() {
		for _, s := range steps {
			s.run(e)
		}
	}); err != nil {
		ended = true
		if cg, endErr := p.be.EndCapture(p.dev); endErr == nil {
			cg.Release()
		}
		p.err.CompareAndSwap(nil, &err)
		return false
	}
	ended = true
	cg, err := p.be.EndCapture(p.dev)
	if err != nil {
		p.err.CompareAndSwap(nil, &err)
		return false
	}
	c.exec = cg
	p.captures.Add(1)
	return true
}

// allocFixed allocates one of a buffer set's input or output buffers.
func (g *Graph) allocFixed(be backend.Backend, dt DType, n int) backend.Buffer {
	buf, err := be.Alloc(g.capt.dev, dt, n)
	if err != nil {
		fail(g.name, ErrDevice, "allocating a device graph's buffer of %d %v on %v: %v", n, dt, g.capt.dev, err)
	}
	return buf
}

// dropDeviceGraph releases a buffer set's device graph and its buffers.
func (g *Graph) dropDeviceGraph(in *instance) {
	dg := &in.dg
	dg.fwd.release()
	dg.bwd.release()
	if dg.headBuf != nil {
		g.capt.be.(backend.Backend).Free(g.capt.dev, dg.headBuf)
		dg.headBuf = nil
	}
	for _, bufs := range [][]backend.Buffer{dg.inBufs, dg.outBufs, dg.resBufs} {
		for _, b := range bufs {
			if b != nil {
				g.capt.be.(backend.Backend).Free(g.capt.dev, b)
			}
		}
	}
	dg.inBufs, dg.outBufs, dg.resBufs = nil, nil, nil
}
