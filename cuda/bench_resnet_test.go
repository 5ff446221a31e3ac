//go:build cuda || cudaemu

package cuda

import (
	"os"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// The ResNet-50 benchmarks are the GPU side of bench/gpu_compare.sh's
// resnet50 workload (issue 33 item 6): the model zoo's ResNet-50
// (torchvision's layout, 1000 classes) on gpu(0) at 3×224×224, batch 32,
// against torchvision's resnet50 in PyTorch eager
// (bench/pytorch_gpu_bench.py). The training step is that of the CPU's
// BenchmarkTrainStepResNet50 (bench/resnet_test.go: softmax
// cross-entropy, SGD with learning rate 0.01 and momentum 0.9), with the
// batch copied from host memory every step and the clock stopped once the
// GPU's work is done, as in the other GPU benchmarks; inference copies the
// batch in and the scores back every step.
//
// Set CudnnTF32Env (GOLUON_CUDNN_TF32=1) to let cuDNN's convolutions use
// TF32, as PyTorch does by default; both benchmarks report which it was
// as the cudnn-tf32 metric (1 or 0). cuBLAS products stay in full float32
// either way.
//
// resnetSmallEnv set to 1 shrinks the network and its input (width 8, 10
// classes, batch 2 of 3×32×32) so that the code path can be run on the
// host emulator; the figures it gives measure nothing.
const resnetSmallEnv = "GOLUON_BENCH_RESNET_SMALL"

// resnet50Config returns the model zoo options and the input shape of the
// ResNet-50 benchmarks.
func resnet50Config(b *testing.B) (vision.Options, []int) {
	if os.Getenv(resnetSmallEnv) == "1" {
		b.Logf("%s=1: width 8, 10 classes, batch 2 of 3x32x32 (a smoke check, not a measurement)", resnetSmallEnv)
		return vision.Options{Classes: 10, Width: 8}, []int{2, 3, 32, 32}
	}
	return vision.Options{}, []int{32, 3, 224, 224}
}

// reportCudnnTF32 reports whether cuDNN may use TF32 in this run.
func reportCudnnTF32(b *testing.B) {
	v := 0.0
	if os.Getenv(CudnnTF32Env) == "1" {
		v = 1
	}
	b.ReportMetric(v, "cudnn-tf32")
}

// BenchmarkTrainStepResNet50GPU is ResNet-50's training step (softmax
// cross-entropy, SGD with momentum 0.9) at 224×224, batch 32, on gpu(0).
func BenchmarkTrainStepResNet50GPU(b *testing.B) {
	b.Run("gpu0", func(b *testing.B) {
		o, shape := resnet50Config(b)
		opt := optimizer.NewSGD(0.01)
		opt.Momentum = 0.9
		gpuStepBench(b, vision.ResNet50(o), opt, shape, []ctx.Context{ctx.GPU(0)})
		reportCudnnTF32(b)
	})
}

// BenchmarkInferResNet50GPU is ResNet-50's forward pass in predict mode at
// 224×224, batch 32, on gpu(0): the batch is copied from host memory and
// the scores back to it every step.
func BenchmarkInferResNet50GPU(b *testing.B) {
	o, shape := resnet50Config(b)
	inferNetBench(b, vision.ResNet50(o), shape, func(net gluon.Block, x, _ *nd.NDArray) {
		_ = net.Forward(x.CopyTo(ctx.GPU(0))).Float32s()
	})
	reportCudnnTF32(b)
}
