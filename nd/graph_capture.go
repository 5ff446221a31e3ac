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

// deviceGraph is a buffer set's captured device graph, with the buffers
// that take the calls' inputs and fresh outputs: a device graph runs on
// the memory it was captured with.
type deviceGraph struct {
	warm    bool // the set made a plain call (the backend's plans exist)
	off     bool // capturing failed: the set replays as usual
	exec    backend.CapturedGraph
	inBufs  []backend.Buffer // per input: its copy (nil: absent or an alias)
	outBufs []backend.Buffer // per output: its buffer when the output is fresh
	boundAt []backend.Arg    // where the bound arrays were at the capture
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

// callDeviceGraph is a call of a warm buffer set of a graph with a
// capture plan: the inputs are copied into the set's input buffers, the
// set's device graph is launched (captured first when there is none, or
// when a bound array has moved since) and the outputs are copied out.
func (g *Graph) callDeviceGraph(in *instance, inputs []*NDArray, sess *Session) []*NDArray {
	c, dg := g.capt, &in.dg
	e := &replay{args: in.args, sess: sess}
	if dg.inBufs == nil {
		dg.inBufs = make([]backend.Buffer, len(g.inputs))
		dg.outBufs = make([]backend.Buffer, len(g.outs))
	}
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
	g.bindBound(e)
	bound := make([]backend.Arg, len(g.bound))
	for i, b := range g.bound {
		bound[i] = e.args[b.slot]
	}
	if dg.exec != nil && !slices.EqualFunc(bound, dg.boundAt, func(a, b backend.Arg) bool { return a.Buf == b.Buf && a.Off == b.Off }) {
		dg.exec.Release() // a bound array moved (a Trainer packed the parameters): capture again
		dg.exec = nil
	}
	for i, o := range g.outs {
		if o.fresh {
			if dg.outBufs[i] == nil {
				dg.outBufs[i] = g.allocFixed(o.be, o.dt, numel(o.shape))
			}
			e.args[o.slot] = backend.Arg{Buf: dg.outBufs[i]}
		}
	}
	switch {
	case dg.exec != nil:
		dg.exec.Launch()
		c.launches.Add(1)
	case g.captureInto(dg, e, bound):
		dg.exec.Launch()
		c.launches.Add(1)
	default: // the backend would not capture: replay as usual from now on
		dg.off = true
		for _, s := range g.fwd {
			s.run(e)
		}
	}
	outs := make([]*NDArray, len(g.outs))
	for i, o := range g.outs {
		outs[i] = newArray(g.name, sess, o.dev, o.dt, o.shape)
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
	return outs
}

// captureInto records g's kernels on e's buffers into a device graph for
// dg, reporting whether the backend captured them (nothing has run).
func (g *Graph) captureInto(dg *deviceGraph, e *replay, bound []backend.Arg) bool {
	c := g.capt
	if err := c.be.BeginCapture(c.dev); err != nil {
		c.err.CompareAndSwap(nil, &err)
		return false
	}
	// A step that fails while capturing with an nd error (work a graph
	// cannot hold: a copy between devices) ends the capture; the set then
	// replays, which raises a genuine error again. Any other panic ends
	// the capture on its way out.
	ended := false
	defer func() {
		if !ended {
			if cg, err := c.be.EndCapture(c.dev); err == nil {
				cg.Release()
			}
		}
	}()
	if err := Catch(func() {
		for _, s := range g.fwd {
			s.run(e)
		}
	}); err != nil {
		ended = true
		if cg, endErr := c.be.EndCapture(c.dev); endErr == nil {
			cg.Release()
		}
		c.err.CompareAndSwap(nil, &err)
		return false
	}
	ended = true
	cg, err := c.be.EndCapture(c.dev)
	if err != nil {
		c.err.CompareAndSwap(nil, &err)
		return false
	}
	dg.exec, dg.boundAt = cg, bound
	c.captures.Add(1)
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
	if dg.exec != nil {
		dg.exec.Release()
		dg.exec = nil
	}
	for _, bufs := range [][]backend.Buffer{dg.inBufs, dg.outBufs} {
		for _, b := range bufs {
			if b != nil {
				g.capt.be.(backend.Backend).Free(g.capt.dev, b)
			}
		}
	}
	dg.inBufs, dg.outBufs = nil, nil
}
