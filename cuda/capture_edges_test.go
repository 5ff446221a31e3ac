//go:build cuda || cudaemu

package cuda

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// graphCaller calls f eagerly, through a traced graph replayed as usual,
// or through one with device graphs (traced at the first call).
type graphCaller struct {
	mode  int // 0 eager, 1 plain replay, 2 device graphs
	f     func(in []*nd.NDArray) []*nd.NDArray
	bound []*nd.NDArray
	g     *nd.Graph
}

var graphModes = []string{"eager", "plain replay", "device graphs"}

func (c *graphCaller) call(in ...*nd.NDArray) []*nd.NDArray {
	if c.mode == 0 {
		return c.f(in)
	}
	if c.g == nil {
		c.g = nd.TraceWith("edge", c.f, in, c.bound, nd.TraceOpts{DeviceGraph: c.mode == 2})
	}
	return c.g.Call(in)
}

// sameAsEager runs scenario eagerly, through the plain replay and through
// device graphs, and compares every array it returns bit for bit.
func sameAsEager(t *testing.T, scenario func(c *graphCaller) [][]float32) {
	t.Helper()
	var res [3][][]float32
	for m := range res {
		c := &graphCaller{mode: m}
		res[m] = scenario(c)
		if c.g != nil {
			c.g.Release()
		}
	}
	for m := 1; m < 3; m++ {
		if len(res[m]) != len(res[0]) {
			t.Fatalf("%s: %d arrays, eager %d", graphModes[m], len(res[m]), len(res[0]))
		}
		for i := range res[0] {
			if !slices.EqualFunc(res[m][i], res[0][i], func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
				n := min(4, len(res[0][i]))
				t.Fatalf("array %d: %s %v…, eager %v…", i, graphModes[m], res[m][i][:n], res[0][i][:n])
			}
		}
	}
}

// TestDeviceGraphBackwardEdgesGPU: recorded calls through device graphs
// give the eager outputs and gradients bit for bit where a call's two
// passes are apart (and refuse, as eager does, an output the backward
// pass reads written in place in between, with the forward pass captured
// and with its capture refused): two calls in flight backpropagated in reverse order with a
// third dropped unused, head gradients that are views at an offset of
// several packed outputs (with nil, aliased and gradient-free inputs, and
// an input as an output), capture refused for one pass only, and the
// parameters moved between the passes.
func TestDeviceGraphBackwardEdgesGPU(t *testing.T) {
	needGPUs(t, 1)
	skipCaptureOff(t)
	dev := ctx.GPU(0)
	u := func(lo, hi float64, shape ...int) *nd.NDArray {
		return nd.RandomUniform(dev, nd.Float32, lo, hi, shape...)
	}
	defer func(was bool) { graphsOff = was }(graphsOff)
	// tanhDot is one recorded call a round: off(call, pass) says whether
	// capture is refused for the forward (pass 0) or backward pass (1),
	// between(call, y, w) runs between the passes.
	tanhDot := func(off func(call, pass int) bool, between func(call int, y *nd.NDArray, bound []*nd.NDArray)) func(c *graphCaller) [][]float32 {
		return func(c *graphCaller) [][]float32 {
			nd.Seed(5)
			w, b := u(-1, 1, 4, 6), u(-1, 1, 4)
			w.AttachGrad(nd.GradWrite)
			b.AttachGrad(nd.GradWrite)
			c.bound = []*nd.NDArray{w, b}
			c.f = func(in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{nd.Tanh(nd.FullyConnected(in[0], w, b))} }
			var got [][]float32
			for call := range 6 {
				x := u(-1, 1, 3, 6)
				x.AttachGrad(nd.GradWrite)
				graphsOff = off(call, 0)
				exit := nd.EnterRecording(true)
				outs := c.call(x)
				exit()
				graphsOff = off(call, 1)
				between(call, outs[0], c.bound)
				nd.Backward(outs, nil, false)
				graphsOff = false
				got = append(got, outs[0].Float32s(), x.Grad().Float32s(), w.Grad().Float32s(), b.Grad().Float32s())
			}
			return got
		}
	}
	never := func(int, int) bool { return false }
	halve := func(_ int, y *nd.NDArray, _ []*nd.NDArray) { nd.Assign(y, nd.MulScalar(y, 0.5)) }
	// An output the backward pass reads, written in place in between: the
	// backward pass refuses it (nd's version counter) in every mode.
	for _, c := range []struct {
		name string
		off  func(call, pass int) bool
	}{
		{"output written between the passes", never},
		{"output written, forward capture refused", func(call, pass int) bool { return call == 1 && pass == 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			for m := range graphModes {
				gc := &graphCaller{mode: m}
				err := nd.Catch(func() { tanhDot(c.off, halve)(gc) })
				graphsOff = false
				if gc.g != nil {
					gc.g.Release()
				}
				if !errors.Is(err, &nd.Error{Kind: nd.ErrGraph}) {
					t.Fatalf("%s: %v, want ErrGraph", graphModes[m], err)
				}
			}
		})
	}
	t.Run("capture refused for one pass", func(t *testing.T) {
		sameAsEager(t, tanhDot(func(call, pass int) bool { return (call == 1 || call == 2) && pass == 1 || call == 3 && pass == 0 },
			func(int, *nd.NDArray, []*nd.NDArray) {}))
	})
	t.Run("parameters moved between the passes", func(t *testing.T) {
		sameAsEager(t, tanhDot(never, func(call int, _ *nd.NDArray, bound []*nd.NDArray) {
			if call == 2 || call == 4 {
				nd.Pack(bound)
			}
		}))
	})
	t.Run("calls in flight", func(t *testing.T) {
		sameAsEager(t, func(c *graphCaller) [][]float32 {
			nd.Seed(6)
			w, b := u(-1, 1, 4, 6), u(-1, 1, 4)
			w.AttachGrad(nd.GradAdd)
			b.AttachGrad(nd.GradAdd)
			c.bound = []*nd.NDArray{w, b}
			c.f = func(in []*nd.NDArray) []*nd.NDArray {
				h := nd.Tanh(nd.FullyConnected(in[0], w, b))
				return []*nd.NDArray{nd.Sigmoid(h), nd.Mul(h, h)}
			}
			record := func() (*nd.NDArray, []*nd.NDArray) {
				x := u(-1, 1, 3, 6)
				x.AttachGrad(nd.GradWrite)
				exit := nd.EnterRecording(true)
				defer exit()
				return x, c.call(x)
			}
			var got [][]float32
			for round := range 4 {
				x0, o0 := record()
				x1, o1 := record()
				if round == 2 { // a third call in flight, collected without a backward pass
					_, o := record()
					got = append(got, o[0].Float32s())
					o = nil
					runtime.GC()
					time.Sleep(10 * time.Millisecond)
					runtime.GC()
				}
				for _, k := range []struct {
					x    *nd.NDArray
					outs []*nd.NDArray
				}{{x1, o1}, {x0, o0}} {
					nd.Backward(k.outs, []*nd.NDArray{u(-1, 1, 3, 4), u(-1, 1, 3, 4)}, false)
					got = append(got, k.outs[0].Float32s(), k.outs[1].Float32s(), k.x.Grad().Float32s())
				}
				got = append(got, w.Grad().Float32s(), b.Grad().Float32s())
			}
			return got
		})
	})
	t.Run("packed outputs and offset heads", func(t *testing.T) {
		sameAsEager(t, func(c *graphCaller) [][]float32 {
			nd.Seed(7)
			w := u(-1, 1, 5, 5)
			w.AttachGrad(nd.GradWrite)
			c.bound = []*nd.NDArray{w}
			c.f = func(in []*nd.NDArray) []*nd.NDArray { // x (gradient), nil, x again, z (no gradient)
				h := nd.Dot(nd.Add(in[0], in[2]), w, false, false)
				return []*nd.NDArray{nd.Tanh(h), nd.Mul(h, in[3]), in[0], nd.Exp(in[3])}
			}
			var got [][]float32
			for range 5 {
				x, z := u(-1, 1, 2, 5), u(-1, 1, 2, 5)
				x.AttachGrad(nd.GradWrite)
				exit := nd.EnterRecording(true)
				outs := c.call(x, nil, x, z)
				exit()
				big := u(-1, 1, 40)
				heads := make([]*nd.NDArray, 3)
				for i := range heads {
					heads[i] = nd.Reshape(nd.SliceAxis(big, 3+10*i, 13+10*i, 0), 2, 5)
				}
				nd.Backward(outs[:3], heads, false)
				for _, o := range outs {
					got = append(got, o.Float32s())
				}
				got = append(got, x.Grad().Float32s(), w.Grad().Float32s())
			}
			return got
		})
	})
}
