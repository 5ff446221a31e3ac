//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/nd"
)

// TestDeviceGraphGPU: a traced inference graph with TraceOpts.DeviceGraph
// on gpu(0) gives the eager computation's bits on every call (the first
// replays, the second captures, the rest launch the captured graph), with
// new inputs each call, a parameter changed in place between calls and
// the parameters moved into one buffer (captured again);
// meanwhile another goroutine's eager ops on the same device run as
// usual and none of them lands in the graph.
func TestDeviceGraphGPU(t *testing.T) {
	needGPUs(t, 1)
	skipCaptureOff(t)
	dev := ctx.GPU(0)
	nd.Seed(3)
	w1 := nd.RandomUniform(dev, nd.Float32, -0.5, 0.5, 6, 3, 3, 3)
	b1 := nd.RandomUniform(dev, nd.Float32, -0.5, 0.5, 6)
	w2 := nd.RandomUniform(dev, nd.Float32, -0.5, 0.5, 5, 6*4*4)
	b2 := nd.RandomUniform(dev, nd.Float32, -0.5, 0.5, 5)
	f := func(in []*nd.NDArray) []*nd.NDArray {
		h := nd.Relu(nd.Conv2D(in[0], w1, b1, nd.ConvOpts{Pad: [2]int{1, 1}}))
		h = nd.Pool2D(h, nd.PoolOpts{Type: nd.PoolMax, Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}})
		y := nd.FullyConnected(nd.Reshape(h, 2, 6*4*4), w2, b2)
		return []*nd.NDArray{nd.Softmax(y, 1), nd.Tanh(h)}
	}
	x0 := nd.RandomUniform(dev, nd.Float32, -1, 1, 2, 3, 8, 8)
	g := nd.TraceWith("net", f, []*nd.NDArray{x0}, []*nd.NDArray{w1, b1, w2, b2}, nd.TraceOpts{DeviceGraph: true})
	defer g.Release()
	if !g.Stats().DeviceGraph {
		t.Fatalf("stats %+v: no device graph for a one-device inference graph", g.Stats())
	}

	stop, kick := make(chan struct{}), make(chan struct{})
	var once sync.Once
	testAfterBeginCapture = func() { // another goroutine queues eager work during the capture
		once.Do(func() {
			close(kick)
			time.Sleep(20 * time.Millisecond)
		})
	}
	defer func() { testAfterBeginCapture = nil }()
	done := make(chan struct{})
	var bgErr error
	go func() { // eager work on the same device while the graph is captured and launched
		defer close(done)
		a := nd.FromSlice(dev, []float32{1, 2, 3})
		<-kick
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := nd.AddScalar(a, float64(i)).Float32s()
			if v[2] != float32(3+i) {
				bgErr = fmt.Errorf("eager op beside the capture: got %v at %d", v, i)
				return
			}
		}
	}()
	calls := make(chan error, 1)
	go func() { // the calls, watched: a capture that took the other goroutine's work hangs
		for call := range 6 {
			if call == 3 { // in place: the graph reads the parameter's memory
				nd.Assign(w2, nd.MulScalar(w2, -2))
			}
			if call == 4 { // the parameters move (as a Trainer packs them): captured again
				nd.Pack([]*nd.NDArray{w1, b1, w2, b2})
			}
			x := nd.RandomUniform(dev, nd.Float32, -1, 1, 2, 3, 8, 8)
			got := g.Call([]*nd.NDArray{x})
			want := f([]*nd.NDArray{x})
			for i := range want {
				gv, wv := got[i].Float32s(), want[i].Float32s()
				if !slices.EqualFunc(gv, wv, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
					calls <- fmt.Errorf("call %d output %d: graph %v…, eager %v…", call, i, gv[:4], wv[:4])
					return
				}
			}
		}
		calls <- nil
	}()
	select {
	case err := <-calls:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the graph's calls hang: the capture took another goroutine's work")
	}
	close(stop)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the eager goroutine hangs: its work went into the captured graph")
	}
	if bgErr != nil {
		t.Fatal(bgErr)
	}
	if st := g.Stats(); st.Captures != 2 || st.Launches != 5 {
		t.Errorf("stats %+v: want 2 captures and 5 launches over 6 calls (the second captures, then launches; the fifth captures again)", st)
	}

	// Training mode draws dropout masks on the host at each call: no
	// device graph, and the calls replay as usual.
	autograd.TrainMode(func() {
		gd := nd.TraceWith("dropout", func(in []*nd.NDArray) []*nd.NDArray {
			return []*nd.NDArray{nd.Dropout(in[0], 0.5)}
		}, []*nd.NDArray{x0}, nil, nd.TraceOpts{DeviceGraph: true})
		if gd.Stats().DeviceGraph {
			t.Errorf("a graph with dropout in training mode runs as a device graph")
		}
		gd.Release()
	})
}

// TestHybridLeNetDeviceGraphGPU: LeNet hybridized with DeviceGraphs gives
// the eager scores bit for bit in predict mode, the calls after the first
// two launching the captured graph.
func TestHybridLeNetDeviceGraphGPU(t *testing.T) {
	needGPUs(t, 1)
	skipCaptureOff(t)
	dev := ctx.GPU(0)
	run := func(opts *gluon.HybridOpts) [][]float32 {
		nd.Seed(5)
		var net gluon.Block = modelzoo.LeNet()
		if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
			t.Fatal(err)
		}
		if opts != nil {
			net = gluon.Hybridize(net, *opts)
		}
		var out [][]float32
		for range 6 {
			x := nd.RandomUniform(dev, nd.Float32, 0, 1, 3, 1, 28, 28)
			autograd.PredictMode(func() { out = append(out, net.Forward(x).Float32s()) })
		}
		if h, ok := net.(*gluon.HybridBlock); ok && h.Stats().DeviceGraphLaunches < 3 {
			t.Fatalf("stats %+v: the calls did not launch device graphs", h.Stats())
		}
		return out
	}
	eager, graphs := run(nil), run(&gluon.HybridOpts{DeviceGraphs: true})
	for i := range eager {
		if !slices.Equal(eager[i], graphs[i]) {
			t.Fatalf("call %d: eager %v…, device graph %v…", i, eager[i][:4], graphs[i][:4])
		}
	}
}

// TestDeviceGraphRefusedGPU: with capture off (GOLUON_CUDA_GRAPHS=0) the
// graph says why in its stats and its calls replay as usual, still equal
// to eager.
func TestDeviceGraphRefusedGPU(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	defer func(was bool) { graphsOff = was }(graphsOff)
	graphsOff = true
	w := nd.RandomUniform(dev, nd.Float32, -1, 1, 4, 6)
	f := func(in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{nd.Tanh(nd.Dot(in[0], w, false, true))} }
	x := nd.RandomUniform(dev, nd.Float32, -1, 1, 3, 6)
	g := nd.TraceWith("refused", f, []*nd.NDArray{x}, []*nd.NDArray{w}, nd.TraceOpts{DeviceGraph: true})
	defer g.Release()
	for range 3 {
		got, want := g.Call([]*nd.NDArray{x})[0].Float32s(), f([]*nd.NDArray{x})[0].Float32s()
		if !slices.Equal(got, want) {
			t.Fatalf("graph %v, eager %v", got, want)
		}
	}
	if st := g.Stats(); st.Captures != 0 || st.Launches != 0 || !strings.Contains(st.DeviceGraphErr, GraphsEnv+"=0") {
		t.Errorf("stats %+v: want no capture, no launch and the reason", st)
	}
}

// skipCaptureOff skips where the backend refuses captures by design
// (GOLUON_CUDA_SYNC=1, GOLUON_CUDA_PROFILE, GOLUON_CUDA_GRAPHS=0).
func skipCaptureOff(t *testing.T) {
	t.Helper()
	if d := defaultBackend.started(ctx.GPU(0)); (d != nil && d.syncEach) || profileAny || graphsOff {
		t.Skip("no graph capture with GOLUON_CUDA_SYNC=1, GOLUON_CUDA_PROFILE or " + GraphsEnv + "=0")
	}
}

// TestDeviceGraphEdgesGPU: a computation that writes into its input
// leaves the caller's array as a plain replay does; a temporary the
// capture used (im2col's columns) stays the graph's after the capture, so
// new arrays never share its memory; a computation that copies an array
// from another GPU is not captured (the handoff between devices cannot
// be part of a graph): the graph says why and its calls replay.
func TestDeviceGraphEdgesGPU(t *testing.T) {
	needGPUs(t, 1)
	skipCaptureOff(t)
	dev := ctx.GPU(0)
	t.Run("input written", func(t *testing.T) {
		f := func(in []*nd.NDArray) []*nd.NDArray {
			nd.AddTo(in[0], in[1])
			return []*nd.NDArray{nd.MulScalar(in[0], 2)}
		}
		run := func(opts nd.TraceOpts) [][]float32 {
			y := nd.FromSlice(dev, []float32{10, 10, 10})
			g := nd.TraceWith("inplace", f, []*nd.NDArray{nd.FromSlice(dev, []float32{1, 2, 3}), y}, nil, opts)
			defer g.Release()
			var res [][]float32
			for range 4 {
				x := nd.FromSlice(dev, []float32{1, 2, 3})
				out := g.Call([]*nd.NDArray{x, y})
				res = append(res, x.Float32s(), out[0].Float32s())
			}
			return res
		}
		plain, graphs := run(nd.TraceOpts{}), run(nd.TraceOpts{DeviceGraph: true})
		for i := range plain {
			if !slices.Equal(plain[i], graphs[i]) {
				t.Errorf("%d: plain replay %v, device graph %v", i, plain[i], graphs[i])
			}
		}
	})
	t.Run("temporaries held", func(t *testing.T) {
		nd.Seed(3)
		w := nd.RandomUniform(dev, nd.Float32, -0.5, 0.5, 8, 4, 3, 3)
		f := func(in []*nd.NDArray) []*nd.NDArray {
			return []*nd.NDArray{nd.Conv2D(in[0], w, nil, nd.ConvOpts{Pad: [2]int{1, 1}})}
		}
		x := nd.RandomUniform(dev, nd.Float32, -1, 1, 4, 4, 32, 32)
		g := nd.TraceWith("hold", f, []*nd.NDArray{x}, []*nd.NDArray{w}, nd.TraceOpts{DeviceGraph: true})
		defer g.Release()
		g.Call([]*nd.NDArray{x})
		g.Call([]*nd.NDArray{x}) // captures; the columns are a temporary
		var zs []*nd.NDArray
		for range 4 { // arrays of the columns' size: one would get the temporary's block
			zs = append(zs, nd.Zeros(dev, nd.Float32, 4*4*9*1024))
		}
		g.Call([]*nd.NDArray{x})
		for i, z := range zs {
			for j, v := range z.Float32s() {
				if v != 0 {
					t.Fatalf("array %d element %d is %v after a launch: the graph wrote into memory given to it", i, j, v)
				}
			}
		}
		if st := g.Stats(); st.Captures != 1 {
			t.Errorf("stats %+v: want one capture", st)
		}
	})
	t.Run("another GPU", func(t *testing.T) {
		needGPUs(t, 2)
		c := nd.FromSlice(ctx.GPU(1), []float32{5, 6, 7})
		f := func(in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{nd.Add(in[0], c.CopyTo(dev))} }
		x := nd.FromSlice(dev, []float32{1, 1, 1})
		g := nd.TraceWith("xd", f, []*nd.NDArray{x}, nil, nd.TraceOpts{DeviceGraph: true})
		defer g.Release()
		for range 4 {
			if v := g.Call([]*nd.NDArray{x})[0].Float32s(); !slices.Equal(v, []float32{6, 7, 8}) {
				t.Fatalf("got %v, want [6 7 8]", v)
			}
		}
		if st := g.Stats(); st.Launches != 0 || !strings.Contains(st.DeviceGraphErr, "between devices") {
			t.Errorf("stats %+v: want no launch and the reason", st)
		}
		if v := nd.AddScalar(c, 1).Float32s(); !slices.Equal(v, []float32{6, 7, 8}) { // gpu(1) still works
			t.Errorf("gpu(1) after the refused capture: %v", v)
		}
	})
}
