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
func (c *captureState) hold(b *Buffer) bool {
	if c.g.Load() == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.g.Load() == 0 {
		return false
	}
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
	c.rw.Lock()
	c.g.Store(gid.Current())
	if err := d.call("BeginCapture", func() error { return streamBeginCapture(d.stream) }); err != nil {
		c.g.Store(0)
		c.rw.Unlock()
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
	err := d.call("EndCapture", func() (err error) { exec, err = streamEndCapture(d.stream); return err })
	c := &d.cap
	c.mu.Lock()
	held := c.held
	c.held = nil
	c.g.Store(0)
	c.mu.Unlock()
	c.rw.Unlock()
	g := &graph{b: b, d: d, exec: exec, held: held}
	if err != nil {
		g.release(false)
		return nil, err
	}
	return g, nil
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
