//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"os"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/backend"
)

// These benchmarks are the GPU side of bench/train_test.go: full training
// steps at batch 128 (forward, backward, trainer step through the device
// kvstore), timed up to the completion of the last step's GPU work. Run
// them with -test.bench TrainStep -test.run '^$'; compare with
// bench/pytorch_bench.py on the same machine.

func gpuStepBench(b *testing.B, net gluon.Block, opt optimizer.Optimizer, shape []int, devs []ctx.Context) {
	needContexts(b, devs)
	traintest.StepBench(b, net, opt, shape, devs, gpuWait(b, devs))
	b.ReportMetric(float64(nd.MemoryStats(devs[0]).Allocated)/(1<<20), "MiB-gpu0")
}

// gpuCompiledBench is gpuStepBench through gluon.CompileStep with opts.
func gpuCompiledBench(b *testing.B, net gluon.Block, opt optimizer.Optimizer, shape []int, devs []ctx.Context, opts gluon.StepOpts) {
	needContexts(b, devs)
	traintest.CompiledStepBench(b, net, opt, shape, devs, opts, gpuWait(b, devs))
	b.ReportMetric(float64(nd.MemoryStats(devs[0]).Allocated)/(1<<20), "MiB-gpu0")
}

// needContexts skips b where the GPU contexts devs do not all exist.
func needContexts(b *testing.B, devs []ctx.Context) {
	for _, d := range devs {
		if d.ID >= ctx.NumGPUs() {
			b.Skipf("needs %d GPU contexts (GOLUON_VIRTUAL_GPUS)", len(devs))
		}
	}
}

// gpuWait returns the wait of a training-step benchmark on devs: called
// after the warm-up and after the timed loop, it waits for the devices'
// work, and reports the timed loop's counters per step (reportPerStep)
// and, with GOLUON_CUDA_PROFILE, its kernel profile.
func gpuWait(b *testing.B, devs []ctx.Context) func() {
	warm := true
	var start []nd.DeviceStats
	return func() {
		if !warm { // the timed loop's counters, before the final wait
			reportPerStep(b, devs, start)
		}
		for _, d := range devs {
			if err := Synchronize(d); err != nil {
				b.Fatal(err)
			}
		}
		if warm {
			start = countersOf(devs)
		}
		if profileAny { // after the warm-up: reset; after the timed loop: print
			if warm {
				ResetProfile()
			} else {
				writeBenchProfile(b)
			}
		}
		warm = false
	}
}

// countersOf returns nd.Counters of each device.
func countersOf(devs []ctx.Context) []nd.DeviceStats {
	out := make([]nd.DeviceStats, len(devs))
	for i, d := range devs {
		out[i] = nd.Counters(d)
	}
	return out
}

// reportPerStep reports the host synchronisations, worker round trips and
// copies between contexts per step, summed over devs, since start.
func reportPerStep(b *testing.B, devs []ctx.Context, start []nd.DeviceStats) {
	var syncs, calls, copies int64
	for i, c := range countersOf(devs) {
		d := c.Sub(start[i])
		syncs, calls, copies = syncs+d.HostSyncs, calls+d.WorkerCalls, copies+d.CopiesIn
	}
	n := float64(b.N)
	b.ReportMetric(float64(syncs)/n, "syncs/step")
	b.ReportMetric(float64(calls)/n, "calls/step")
	b.ReportMetric(float64(copies)/n, "copies/step")
}

// fourGPUs are the contexts of the 4-GPU benchmarks.
var fourGPUs = []ctx.Context{ctx.GPU(0), ctx.GPU(1), ctx.GPU(2), ctx.GPU(3)}

// BenchmarkTrainStepLeNetGPU is LeNet's training step (SGD, batch 128) on
// gpu(0) and split over 4 GPU contexts.
func BenchmarkTrainStepLeNetGPU(b *testing.B) {
	for _, devs := range [][]ctx.Context{{ctx.GPU(0)}, fourGPUs} {
		b.Run(devName(devs), func(b *testing.B) {
			gpuStepBench(b, modelzoo.LeNet(), optimizer.NewSGD(0.04), []int{128, 1, 28, 28}, devs)
		})
	}
}

// BenchmarkTrainStepLeNetGPUCompiled is BenchmarkTrainStepLeNetGPU through
// gluon.CompileStep, each context's forward and backward passes replayed
// from a traced graph, and with device graphs (the two passes launched as
// CUDA graphs).
func BenchmarkTrainStepLeNetGPUCompiled(b *testing.B) {
	for _, m := range []struct {
		name string
		opts gluon.StepOpts
	}{{"compiled", gluon.StepOpts{}}, {"cudagraph", gluon.StepOpts{DeviceGraphs: true}}} {
		for _, devs := range [][]ctx.Context{{ctx.GPU(0)}, fourGPUs} {
			b.Run(m.name+"/"+devName(devs), func(b *testing.B) {
				gpuCompiledBench(b, modelzoo.LeNet(), optimizer.NewSGD(0.04), []int{128, 1, 28, 28}, devs, m.opts)
			})
		}
	}
}

// devName names a benchmark's contexts: gpu0 or 4gpu.
func devName(devs []ctx.Context) string {
	if len(devs) == 1 {
		return "gpu0"
	}
	return fmt.Sprintf("%dgpu", len(devs))
}

// BenchmarkTrainStepKerasCIFARGPU is the Keras CIFAR-10 CNN's training step
// (RMSprop, batch 128) on gpu(0) and split over 4 GPU contexts.
func BenchmarkTrainStepKerasCIFARGPU(b *testing.B) {
	for _, devs := range [][]ctx.Context{{ctx.GPU(0)}, fourGPUs} {
		b.Run(devName(devs), func(b *testing.B) {
			gpuStepBench(b, modelzoo.KerasCIFARCNN(), optimizer.NewRMSProp(1e-4), []int{128, 3, 32, 32}, devs)
		})
	}
}

// BenchmarkTrainStepMLPGPU is the MLP's training step (SGD, batch 128) on
// gpu(0) and split over 4 GPU contexts.
func BenchmarkTrainStepMLPGPU(b *testing.B) {
	for _, devs := range [][]ctx.Context{{ctx.GPU(0)}, fourGPUs} {
		b.Run(devName(devs), func(b *testing.B) {
			gpuStepBench(b, modelzoo.MLP(10, 256, 256), optimizer.NewSGD(0.1), []int{128, 784}, devs)
		})
	}
}

// BenchmarkInferLeNetGPU is LeNet's forward pass in predict mode at batch
// 128 on gpu(0): the batch is copied from host memory and the scores back
// to it every step, as an inference server would.
func BenchmarkInferLeNetGPU(b *testing.B) {
	inferBench(b, func(net gluon.Block, x, _ *nd.NDArray) { _ = net.Forward(x.CopyTo(ctx.GPU(0))).Float32s() })
}

// BenchmarkInferLeNetGPUParts takes BenchmarkInferLeNetGPU's step apart:
// the batch's copy alone, the forward pass on a batch already on the GPU
// (waited for, the scores left there), and that pass with the scores read
// back.
func BenchmarkInferLeNetGPUParts(b *testing.B) {
	sync := func() {
		if err := Synchronize(ctx.GPU(0)); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("copy", func(b *testing.B) {
		inferBench(b, func(_ gluon.Block, x, _ *nd.NDArray) { x.CopyTo(ctx.GPU(0)); sync() })
	})
	b.Run("forward", func(b *testing.B) {
		inferBench(b, func(net gluon.Block, _, xd *nd.NDArray) { net.Forward(xd); sync() })
	})
	b.Run("forward+read", func(b *testing.B) {
		inferBench(b, func(net gluon.Block, _, xd *nd.NDArray) { _ = net.Forward(xd).Float32s() })
	})
}

// inferBench times step on LeNet in predict mode, given a batch of 128 in
// host memory (x) and its copy on gpu(0) (xd).
func inferBench(b *testing.B, step func(net gluon.Block, x, xd *nd.NDArray)) {
	inferNetBench(b, modelzoo.LeNet(), []int{128, 1, 28, 28}, step)
}

// inferNetBench times step on net in predict mode, given a batch of shape
// (the batch first) in host memory (x) and its copy on gpu(0) (xd), and
// reports samples/s.
func inferNetBench(b *testing.B, net gluon.Block, shape []int, step func(net gluon.Block, x, xd *nd.NDArray)) {
	needGPUs(b, 1)
	nd.Seed(1)
	dev := ctx.GPU(0)
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		b.Fatal(err)
	}
	batch := shape[0]
	x := nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, shape...)
	xd := x.CopyTo(dev)
	run := func() {
		s := nd.NewScope()
		defer s.Close()
		autograd.PredictMode(func() { step(net, x, xd) })
	}
	run() // deferred shapes and pools warm up outside the timing
	run()
	ResetProfile()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "samples/s")
	writeBenchProfile(b)
}

// writeBenchProfile prints the profile per step of b to standard error
// when GOLUON_CUDA_PROFILE is on.
func writeBenchProfile(b *testing.B) {
	if profileAny {
		fmt.Fprintf(os.Stderr, "%s: time per step (%s=%s)\n", b.Name(), ProfileEnv, profileMode)
		WriteProfile(os.Stderr, b.N)
	}
}

// BenchmarkOpLatency is one small elementwise op from launch to its result
// in host memory: nd.Add of two 64-element arrays on gpu(0), read back.
func BenchmarkOpLatency(b *testing.B) {
	needGPUs(b, 1)
	dev := ctx.GPU(0)
	x := nd.Ones(dev, nd.Float32, 64)
	defer x.Release()
	for b.Loop() {
		y := nd.Add(x, x)
		_ = y.Float32s()
		y.Release()
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "us/op")
}

// BenchmarkOpOverhead measures the host cost of one small elementwise op
// (allocation, launch, release) with the device kept busy: the per-op
// overhead that dominates small models.
func BenchmarkOpOverhead(b *testing.B) {
	needGPUs(b, 1)
	dev := ctx.GPU(0)
	x := nd.Ones(dev, nd.Float32, 64)
	defer x.Release()
	for b.Loop() {
		nd.Add(x, x).Release()
	}
	if err := Synchronize(dev); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "us/op")
}

// BenchmarkRoundTrip takes apart an op's latency on gpu(0) (the whole is
// BenchmarkOpLatency): a no-op task on the device's worker and back, a
// stream synchronisation, a read and a write of 64 elements.
func BenchmarkRoundTrip(b *testing.B) {
	needGPUs(b, 1)
	dev := ctx.GPU(0)
	d := Default().started(dev)
	if d == nil {
		b.Fatal("gpu(0) not started")
	}
	host := make([]float32, 64)
	buf, err := Default().Alloc(dev, backend.Float32, 64)
	if err != nil {
		b.Fatal(err)
	}
	defer Default().Free(dev, buf)
	for _, c := range []struct {
		name string
		fn   func()
	}{
		{"call", func() { _ = d.call("nop", func() error { return nil }) }},
		{"sync", func() { _ = Synchronize(dev) }},
		{"read", func() { Default().Read(buf, 0, host) }},
		{"write", func() { Default().Write(buf, 0, host) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.fn()
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "us/op")
		})
	}
}
