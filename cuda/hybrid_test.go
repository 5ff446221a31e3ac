//go:build cuda || cudaemu

package cuda

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
)

// hybridLeNetRun runs LeNet (Xavier, seed 5) on gpu(0) four times while
// recording, backpropagating a fixed weighting of the scores, then once in
// predict mode, and returns the scores and gradients of every call.
func hybridLeNetRun(t *testing.T, hybrid bool) [][]float32 {
	t.Helper()
	dev := ctx.GPU(0)
	nd.Seed(5)
	var net gluon.Block = modelzoo.LeNet()
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	if hybrid {
		net = gluon.Hybridize(net, gluon.HybridOpts{})
	}
	var got [][]float32
	for range 4 { // the first call infers the deferred shapes eagerly
		x := nd.RandomUniform(dev, nd.Float32, 0, 1, 4, 1, 28, 28)
		var y, loss *nd.NDArray
		autograd.Record(func() {
			y = net.Forward(x)
			loss = nd.Sum(nd.Mul(y, nd.RandomUniform(dev, nd.Float32, -1, 1, y.Shape()...)))
		})
		autograd.Backward(loss)
		got = append(got, y.Float32s())
		for _, p := range params.List() {
			got = append(got, p.Grad(dev).Float32s())
		}
	}
	x := nd.RandomUniform(dev, nd.Float32, 0, 1, 1, 1, 28, 28)
	autograd.PredictMode(func() { got = append(got, net.Forward(x).Float32s()) })
	if h, ok := net.(*gluon.HybridBlock); ok && h.Stats().Replays < 2 {
		t.Fatalf("stats %+v: the calls did not replay", h.Stats())
	}
	return got
}

// TestHybridLeNetGPU compares LeNet hybridized against eager on gpu(0):
// scores and gradients of recorded calls and a predict-mode call, bit for
// bit (the replay launches the same kernels on the same buffers' values).
func TestHybridLeNetGPU(t *testing.T) {
	needGPUs(t, 1)
	eager, hybrid := hybridLeNetRun(t, false), hybridLeNetRun(t, true)
	if len(eager) != len(hybrid) {
		t.Fatalf("%d arrays eager, %d hybridized", len(eager), len(hybrid))
	}
	for i := range eager {
		if !slices.Equal(eager[i], hybrid[i]) {
			t.Fatalf("array %d differs: eager %v…, hybridized %v…", i, eager[i][:min(4, len(eager[i]))], hybrid[i][:min(4, len(hybrid[i]))])
		}
	}
}

// gpuHybridModes runs a benchmark body on LeNet eagerly, hybridized, and,
// for inference, hybridized with device graphs (which calls that record
// do not use).
func gpuHybridModes(b *testing.B, inference bool, body func(b *testing.B, net gluon.Block)) {
	b.Run("eager", func(b *testing.B) { body(b, modelzoo.LeNet()) })
	b.Run("hybrid", func(b *testing.B) { body(b, gluon.Hybridize(modelzoo.LeNet(), gluon.HybridOpts{})) })
	if inference {
		b.Run("cudagraph", func(b *testing.B) {
			body(b, gluon.Hybridize(modelzoo.LeNet(), gluon.HybridOpts{DeviceGraphs: true}))
		})
	}
}

// BenchmarkHybridInferLeNetGPUB1 is LeNet's predict-mode forward pass at
// batch 1 on gpu(0) as a latency-bound server runs it (the sample copied
// from host memory, the scores read back), eager and hybridized.
func BenchmarkHybridInferLeNetGPUB1(b *testing.B) {
	gpuHybridModes(b, true, func(b *testing.B, net gluon.Block) {
		inferNetBench(b, net, []int{1, 1, 28, 28}, func(net gluon.Block, x, _ *nd.NDArray) {
			_ = net.Forward(x.CopyTo(ctx.GPU(0))).Float32s()
		})
	})
}

// BenchmarkHybridTrainLeNetGPU is LeNet's training step (SGD, batch 32)
// on gpu(0): eager, hybridized, compiled (gluon.CompileStep: the loss and
// the backward pass in the graph too), and compiled with device graphs
// (the forward and backward passes as two CUDA graphs).
func BenchmarkHybridTrainLeNetGPU(b *testing.B) {
	devs := []ctx.Context{ctx.GPU(0)}
	shape := []int{32, 1, 28, 28}
	gpuHybridModes(b, false, func(b *testing.B, net gluon.Block) {
		gpuStepBench(b, net, optimizer.NewSGD(0.04), shape, devs)
	})
	for _, m := range []struct {
		name string
		opts gluon.StepOpts
	}{{"compiled", gluon.StepOpts{}}, {"compiled-cudagraph", gluon.StepOpts{DeviceGraphs: true}}} {
		b.Run(m.name, func(b *testing.B) {
			gpuCompiledBench(b, modelzoo.LeNet(), optimizer.NewSGD(0.04), shape, devs, m.opts)
		})
	}
}

// BenchmarkTrainStepAMPGPU is the Keras CIFAR-10 CNN's training step
// (RMSprop, batch 128), LeNet's (SGD, batch 128) and the model zoo's
// ResNet-18 at CIFAR's shape (SGD with momentum, batch 128) in float32 and
// under autocast to float16 (dynamic loss scaling) and bfloat16 on gpu(0),
// as PyTorch's side in bench/pytorch_gpu_bench.py runs them.
// "peak-MiB" is the most the process's live arrays on gpu(0) held at once
// so far: run one variant per process (-test.bench
// 'TrainStepAMPGPU/KerasCIFAR/float16$') for that variant's own peak.
func BenchmarkTrainStepAMPGPU(b *testing.B) {
	resnet18 := traintest.AMPNet{
		Name: "ResNet18",
		Net:  func() gluon.Block { return vision.ResNet18(vision.Options{Classes: 10}) },
		Opt: func() optimizer.Optimizer {
			o := optimizer.NewSGD(0.01)
			o.Momentum = 0.9
			return o
		},
		Shape: []int{128, 3, 32, 32},
	}
	for _, n := range append(traintest.AMPNets(128), resnet18) {
		for _, dt := range traintest.AMPDTypes {
			b.Run(n.Name+"/"+dt.String(), func(b *testing.B) {
				needGPUs(b, 1)
				d := ctx.GPU(0)
				run, err := traintest.NewAMPStep(n.Net(), n.Opt(), n.Shape, []ctx.Context{d}, dt)
				if err != nil {
					b.Fatal(err)
				}
				step := func() {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				step()
				step()
				if err := Synchronize(d); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					step()
				}
				if err := Synchronize(d); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(n.Shape[0]*b.N)/b.Elapsed().Seconds(), "samples/s")
				b.ReportMetric(float64(nd.MemoryStats(d).Peak)/(1<<20), "peak-MiB")
			})
		}
	}
}
