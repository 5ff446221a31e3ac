package bench

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// BenchmarkTrainStepResNet18CIFAR is the model zoo's ResNet-18
// (torchvision's layout, 10 classes) training step at CIFAR's shape,
// batch 128, SGD with momentum 0.9, on cpu(0).
func BenchmarkTrainStepResNet18CIFAR(b *testing.B) {
	opt := optimizer.NewSGD(0.01)
	opt.Momentum = 0.9
	trainStepBench(b, vision.ResNet18(vision.Options{Classes: 10}), opt, []int{128, 3, 32, 32}, []ctx.Context{ctx.CPU(0)})
}

// BenchmarkInferResNet18CIFAR is its inference (predict mode, batch 128,
// scores read back).
func BenchmarkInferResNet18CIFAR(b *testing.B) {
	inferBench(b, vision.ResNet18(vision.Options{Classes: 10}), []int{128, 3, 32, 32})
}

// BenchmarkTrainStepResNet50 is ResNet-50's training step at 224×224,
// batch 32 (not in make bench's default groups: about 3 s a step here).
func BenchmarkTrainStepResNet50(b *testing.B) {
	opt := optimizer.NewSGD(0.01)
	opt.Momentum = 0.9
	trainStepBench(b, vision.ResNet50(vision.Options{}), opt, []int{32, 3, 224, 224}, []ctx.Context{ctx.CPU(0)})
}

// BenchmarkInferResNet50 is ResNet-50's inference at 224×224, batch 32.
func BenchmarkInferResNet50(b *testing.B) {
	inferBench(b, vision.ResNet50(vision.Options{}), []int{32, 3, 224, 224})
}

// inferBench measures predict-mode forward passes of net on cpu(0), in
// samples/s, reading the scores back each time.
func inferBench(b *testing.B, net gluon.Block, shape []int) {
	nd.Seed(1)
	dev := ctx.CPU(0)
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		b.Fatal(err)
	}
	x := nd.RandomUniform(dev, nd.Float32, 0, 1, shape...)
	step := func() {
		s := nd.NewScope()
		defer s.Close()
		autograd.PredictMode(func() { _ = net.Forward(x).Float32s() })
	}
	step()
	for b.Loop() {
		step()
	}
	b.ReportMetric(float64(shape[0]*b.N)/b.Elapsed().Seconds(), "samples/s")
}
