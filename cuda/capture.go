//go:build cuda || cudaemu

package cuda

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/gid"
	"github.com/goluon/goluon/nd/backend"
)

// captureState is a device's graph capture (backend.GraphCapturer). The
// capturing goroutine holds rw for writing from BeginCapture to
// EndCapture; every other goroutine holds it for reading while it queues
// work, so none of its work lands in the graph. Buffers freed meanwhile
// are held for the graph: its launches will still use them.
type captureState struct {
	rw   sync.RWMutex
	g    atomic.Uintptr // the capturing goroutine (gid.Current), 0 when none
	mu   sync.Mutex
	held []*Buffer // freed during the capture, given back when the graph goes
}

// active reports whether a capture is in progress on the device.
func (c *captureState) active() bool { return c.g.Load() != 0 }

// forbid fails op when the calling goroutine is capturing on one of devs:
// its work (an event handoff between devices, a collective) cannot be part
// of a graph, and queueing it would leave another stream waiting for an
// event that only a launch records. Package nd then replays the graph's
// kernels instead.
func forbid(op string, devs ...*device) {
	me := gid.Current()
	for _, d := range devs {
		if d.cap.g.Load() == me {
			deviceFail(op, d.dev, errors.New("work between devices cannot be captured into a graph"))
		}
	}
}

// enter waits until no other goroutine captures on the device and keeps
// captures out until the returned function runs (deferred by async and
// call around their queueing).
func (c *captureState) enter() func() {
	if g := c.g.Load(); g != 0 && g == gid.Current() {
		return func() {}
	}
	c.rw.RLock()
	return c.rw.RUnlock
}

// hold keeps b for the graph being captured, reporting whether it did.
// Only the capturing goroutine's frees are kept: only its work is in the
// graph (memory another goroutine frees may then be allocated by the
// capture, and its free is kept).
func (c *captureState) hold(b *Buffer) bool {
	if g := c.g.Load(); g == 0 || g != gid.Current() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	held := *b // the block stays the graph's; b itself is spent
	c.held = append(c.held, &held)
	b.ptr = 0
	return true
}

// BeginCapture starts recording the work the calling goroutine queues on
// dev into a CUDA graph (backend.GraphCapturer). gid must tell goroutines
// apart on this architecture.
func (b *Backend) BeginCapture(dev ctx.Context) error {
	if !gid.Supported {
		return errors.New("cuda: graph capture needs goroutine identities (amd64 or arm64)")
	}
	d := b.started(dev)
	if d == nil {
		return fmt.Errorf("cuda: %v is not started", dev)
	}
	switch {
	case graphsOff:
		return errors.New("cuda: graph capture is off (" + GraphsEnv + "=0)")
	case d.syncEach || profileAny: // both wait or record events after every task
		return errors.New("cuda: no graph capture with GOLUON_CUDA_SYNC=1 or GOLUON_CUDA_PROFILE")
	}
	c := &d.cap
	if c.g.Load() == gid.Current() {
		return errors.New("cuda: this goroutine is already capturing on " + dev.String())
	}
	c.rw.Lock()
	c.g.Store(gid.Current())
	var beginErr error
	if err := d.call("BeginCapture", func() error { beginErr = streamBeginCapture(d.stream); return beginErr }); err != nil {
		held := c.end()
		for _, h := range held {
			b.Free(d.dev, h)
		}
		if beginErr == nil { // an earlier asynchronous failure: the device's error, not the capture's
			deviceFail("BeginCapture", d.dev, err)
		}
		return err
	}
	if testAfterBeginCapture != nil {
		testAfterBeginCapture()
	}
	return nil
}

// GraphsEnv names the environment variable that, set to 0, turns graph
// capture off: graphs that would run as CUDA graphs replay kernel by
// kernel instead (nd.GraphStats.DeviceGraphErr says so).
const GraphsEnv = "GOLUON_CUDA_GRAPHS"

// graphsOff is GraphsEnv set to 0 (tests set it too).
var graphsOff = os.Getenv(GraphsEnv) == "0"

// testAfterBeginCapture, when set by a test, runs once a capture has begun.
var testAfterBeginCapture func()

// EndCapture stops the recording and instantiates the graph
// (backend.GraphCapturer).
func (b *Backend) EndCapture(dev ctx.Context) (backend.CapturedGraph, error) {
	d := b.started(dev)
	if d == nil || d.cap.g.Load() != gid.Current() {
		return nil, fmt.Errorf("cuda: EndCapture on %v without BeginCapture on this goroutine", dev)
	}
	var exec graphExec
	var endErr error
	err := d.call("EndCapture", func() error { exec, endErr = streamEndCapture(d.stream); return endErr })
	g := &graph{b: b, d: d, exec: exec, held: d.cap.end()}
	switch {
	case err != nil && endErr == nil: // an earlier asynchronous failure: the device's error
		g.release(exec.valid())
		deviceFail("EndCapture", d.dev, err)
	case err != nil:
		g.release(false)
		return nil, err
	}
	return g, nil
}

// end finishes a capture's bookkeeping: it lets other goroutines queue
// work again and returns the buffers kept for the graph.
func (c *captureState) end() []*Buffer {
	c.mu.Lock()
	held := c.held
	c.held = nil
	c.g.Store(0)
	c.mu.Unlock()
	c.rw.Unlock()
	return held
}

// graph is a captured CUDA graph and the buffers its kernels use that
// were freed during the capture.
type graph struct {
	b    *Backend
	d    *device
	exec graphExec
	held []*Buffer
	once sync.Once
}

// Launch queues the graph on the device's stream.
func (g *graph) Launch() {
	g.d.async("GraphLaunch", func() error { return graphLaunch(g.exec, g.d.stream) })
}

// Release destroys the graph after its queued launches and gives its held
// buffers back to the pool.
func (g *graph) Release() { g.once.Do(func() { g.release(true) }) }

func (g *graph) release(destroy bool) {
	if destroy {
		g.d.async("GraphRelease", func() error { return graphDestroy(g.exec) })
	}
	for _, h := range g.held {
		g.b.Free(g.d.dev, h) // after the launches in stream order, as every Free
	}
	g.held = nil
}
