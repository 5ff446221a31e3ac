//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// TestDeviceGraphBackwardGPU: a traced graph called while recording, with
// TraceOpts.DeviceGraph, gives the eager outputs, gradients and running
// statistics bit for bit on every call: the first call replays, the
// second captures its forward and backward passes as two device graphs,
// and the calls after launch them. The cases in between: a parameter
// changed in place between calls, and the parameters moved into one
// buffer (both captured again). (An input changed between the forward and
// the backward pass is refused, eagerly as through graphs:
// TestDeviceGraphBackwardEdgesGPU.)
func TestDeviceGraphBackwardGPU(t *testing.T) {
	needGPUs(t, 1)
	skipCaptureOff(t)
	dev := ctx.GPU(0)
	run := func(traced bool) ([][]float32, nd.GraphStats) {
		nd.Seed(3)
		u := func(lo, hi float64, shape ...int) *nd.NDArray {
			return nd.RandomUniform(dev, nd.Float32, lo, hi, shape...)
		}
		w1, b1, gamma, beta := u(-0.5, 0.5, 6, 3, 3, 3), u(-0.5, 0.5, 6), u(0.5, 1.5, 6), u(-0.5, 0.5, 6)
		w2, b2 := u(-0.5, 0.5, 5, 6*4*4), u(-0.5, 0.5, 5)
		params := []*nd.NDArray{w1, b1, gamma, beta, w2, b2}
		for _, p := range params {
			p.AttachGrad(nd.GradWrite)
		}
		rm, rv := nd.Zeros(dev, nd.Float32, 6), nd.Ones(dev, nd.Float32, 6)
		bound := append(slices.Clone(params), rm, rv)
		f := func(in []*nd.NDArray) []*nd.NDArray {
			h := nd.Conv2D(nd.Mul(in[0], in[0]), w1, b1, nd.ConvOpts{Pad: [2]int{1, 1}})
			h = nd.BatchNorm(h, gamma, beta, rm, rv, nd.BatchNormOpts{Relu: true})
			h = nd.Pool2D(h, nd.PoolOpts{Type: nd.PoolMax, Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}})
			y := nd.FullyConnected(nd.Reshape(h, 2, 6*4*4), w2, b2)
			return []*nd.NDArray{nd.LogSoftmax(y, 1), nd.Tanh(h)}
		}
		var g *nd.Graph
		var got [][]float32
		for call := range 6 {
			switch call {
			case 3: // in place: the graphs read the parameter's memory
				nd.Assign(w2, nd.MulScalar(w2, -2))
			case 5: // the arrays move (as a Trainer packs them): captured again
				nd.Pack(bound)
			}
			x := u(-1, 1, 2, 3, 8, 8)
			x.AttachGrad(nd.GradWrite)
			exit := nd.EnterRecording(true)
			var outs []*nd.NDArray
			if traced {
				if g == nil {
					g = nd.TraceWith("train", f, []*nd.NDArray{x}, bound, nd.TraceOpts{DeviceGraph: true})
				}
				outs = g.Call([]*nd.NDArray{x})
			} else {
				outs = f([]*nd.NDArray{x})
			}
			exit()
			heads := make([]*nd.NDArray, len(outs))
			for i, o := range outs {
				heads[i] = u(-1, 1, o.Shape()...)
			}
			nd.Backward(outs, heads, false)
			for _, a := range outs {
				got = append(got, a.Float32s())
			}
			for _, a := range append([]*nd.NDArray{x}, params...) {
				got = append(got, a.Grad().Float32s())
			}
			got = append(got, rm.Float32s(), rv.Float32s())
		}
		if g == nil {
			return got, nd.GraphStats{}
		}
		st := g.Stats()
		g.Release()
		return got, st
	}
	want, _ := run(false)
	got, st := run(true)
	for i := range want {
		if !slices.EqualFunc(got[i], want[i], func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
			t.Fatalf("array %d (of %d per call) of call %d: device graphs %v…, eager %v…", i%18, 18, i/18, got[i][:3], want[i][:3])
		}
	}
	if st.Captures != 4 || st.Launches != 10 || st.DeviceGraphErr != "" {
		t.Errorf("stats %+v: want 4 captures (the second call's two passes, and again after the move) and 10 launches (two per call after the first)", st)
	}
}

// TestCompileStepDeviceGraphGPU: LeNet trained four steps with
// CompileStep and DeviceGraphs, on one GPU and on two, gives the eager
// step's losses, outputs and parameters bit for bit; after each
// context's traced call, the forward and backward passes launch device
// graphs.
func TestCompileStepDeviceGraphGPU(t *testing.T) {
	needGPUs(t, 1)
	skipCaptureOff(t)
	for n := 1; n <= min(2, ctx.NumGPUs()); n++ {
		devs := make([]ctx.Context, n)
		for i := range devs {
			devs[i] = ctx.GPU(i)
		}
		t.Run(fmt.Sprintf("%dgpu", n), func(t *testing.T) {
			train := func(opts gluon.StepOpts) ([][]float32, gluon.HybridStats) {
				net := modelzoo.LeNet()
				params := gluon.CollectParams(net)
				nd.Seed(1)
				if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
					t.Fatal(err)
				}
				opt := optimizer.NewSGD(0.05)
				opt.Momentum = 0.9
				tr, err := gluon.NewTrainer(params, opt, "device", gluon.TrainerOpts{})
				if err != nil {
					t.Fatal(err)
				}
				step, err := gluon.CompileStep(net, loss.NewSoftmaxCrossEntropy().Forward, tr, opts)
				if err != nil {
					t.Fatal(err)
				}
				var got [][]float32
				for it := range 4 {
					nd.Seed(uint64(10 + it))
					x := nd.RandomNormal(ctx.CPU(0), nd.Float32, 0, 1, 8, 1, 28, 28)
					y := nd.RandomInt(ctx.CPU(0), nd.Int32, 0, 10, 8).AsType(nd.Float32)
					res, err := step.Run(x, y)
					if err != nil {
						t.Fatal(err)
					}
					for i := range res.Losses {
						got = append(got, res.Losses[i].Float32s(), res.Outputs[i].Float32s())
					}
				}
				for _, name := range params.Names() {
					got = append(got, params.Get(name).Data(devs[0]).Float32s())
				}
				return got, step.Stats()
			}
			want, _ := train(gluon.StepOpts{Eager: true})
			got, st := train(gluon.StepOpts{DeviceGraphs: true})
			for i := range want {
				if !slices.Equal(got[i], want[i]) {
					t.Fatalf("array %d: device graphs %v…, eager %v…", i, got[i][:3], want[i][:3])
				}
			}
			// Every replay launches the forward and backward graphs (the
			// call that traced ran them as usual, warming the backend's
			// plans). A context usually runs the first step eagerly (the
			// shapes are deferred); one that finds the parameters
			// initialised by another context's eager call traces at once.
			if want := 2 * int64(st.Replays); st.Replays < 2*n || st.DeviceGraphLaunches != want {
				t.Errorf("stats %+v: want %d device-graph launches (forward and backward of every replay)", st, want)
			}
		})
	}
}
