package bench

import (
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

// hybridModes runs a benchmark body eagerly and hybridized (gluon.Hybridize).
func hybridModes(b *testing.B, body func(b *testing.B, wrap func(gluon.Block) gluon.Block)) {
	b.Run("eager", func(b *testing.B) { body(b, func(n gluon.Block) gluon.Block { return n }) })
	b.Run("hybrid", func(b *testing.B) {
		body(b, func(n gluon.Block) gluon.Block { return gluon.Hybridize(n, gluon.HybridOpts{}) })
	})
}

// BenchmarkHybridTrainLeNetB32 is LeNet's training step at batch 32 on
// cpu(0), eager, hybridized, and compiled (gluon.CompileStep: the loss
// and the backward pass in the graph too).
func BenchmarkHybridTrainLeNetB32(b *testing.B) {
	hybridModes(b, func(b *testing.B, wrap func(gluon.Block) gluon.Block) {
		trainStepBench(b, wrap(modelzoo.LeNet()), optimizer.NewSGD(0.04), []int{32, 1, 28, 28}, []ctx.Context{ctx.CPU(0)})
	})
	b.Run("compiled", func(b *testing.B) {
		traintest.CompiledStepBench(b, modelzoo.LeNet(), optimizer.NewSGD(0.04), []int{32, 1, 28, 28}, []ctx.Context{ctx.CPU(0)}, gluon.StepOpts{}, nil)
	})
}

// BenchmarkHybridTrainMLP is the MLP's training step (batch 128) on
// cpu(0), eager, hybridized and compiled.
func BenchmarkHybridTrainMLP(b *testing.B) {
	hybridModes(b, func(b *testing.B, wrap func(gluon.Block) gluon.Block) {
		trainStepBench(b, wrap(modelzoo.MLP(10, 256, 256)), optimizer.NewSGD(0.1), []int{128, 784}, []ctx.Context{ctx.CPU(0)})
	})
	b.Run("compiled", func(b *testing.B) {
		traintest.CompiledStepBench(b, modelzoo.MLP(10, 256, 256), optimizer.NewSGD(0.1), []int{128, 784}, []ctx.Context{ctx.CPU(0)}, gluon.StepOpts{}, nil)
	})
}

// BenchmarkHybridInferLeNetB1 is LeNet's predict-mode forward pass at batch
// 1 on cpu(0) (latency), eager and hybridized, in samples/s.
func BenchmarkHybridInferLeNetB1(b *testing.B) {
	hybridModes(b, func(b *testing.B, wrap func(gluon.Block) gluon.Block) {
		nd.Seed(1)
		inner := modelzoo.LeNet()
		dev := ctx.CPU(0)
		if err := gluon.CollectParams(inner).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
			b.Fatal(err)
		}
		net := wrap(inner)
		x := nd.RandomUniform(dev, nd.Float32, 0, 1, 1, 1, 28, 28)
		out := make([]float32, 10)
		step := func() {
			s := nd.NewScope()
			defer s.Close()
			autograd.PredictMode(func() { net.Forward(x).ReadInto(out) })
		}
		step() // deferred shapes, the trace and the pools outside the timing
		step()
		for b.Loop() {
			step()
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	})
}

// BenchmarkHybridInferResNet18CIFAR is ResNet-18's predict-mode forward
// pass at CIFAR's shape, batch 32, on cpu(0): eager, hybridized, and
// hybridized with the batch normalisations folded into the convolutions
// (HybridOpts.FoldBatchNorm), in samples/s.
func BenchmarkHybridInferResNet18CIFAR(b *testing.B) {
	modes := []struct {
		name string
		wrap func(gluon.Block) gluon.Block
	}{
		{"eager", func(n gluon.Block) gluon.Block { return n }},
		{"hybrid", func(n gluon.Block) gluon.Block { return gluon.Hybridize(n, gluon.HybridOpts{}) }},
		{"hybrid-fold", func(n gluon.Block) gluon.Block {
			return gluon.Hybridize(n, gluon.HybridOpts{FoldBatchNorm: true})
		}},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			nd.Seed(1)
			inner := vision.ResNet18(vision.Options{Classes: 10})
			dev := ctx.CPU(0)
			if err := gluon.CollectParams(inner).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				b.Fatal(err)
			}
			net := m.wrap(inner)
			x := nd.RandomUniform(dev, nd.Float32, 0, 1, 32, 3, 32, 32)
			step := func() {
				s := nd.NewScope()
				defer s.Close()
				autograd.PredictMode(func() { _ = net.Forward(x).Float32s() })
			}
			step() // deferred shapes, the trace and the pools outside the timing
			step()
			for b.Loop() {
				step()
			}
			b.ReportMetric(float64(32*b.N)/b.Elapsed().Seconds(), "samples/s")
			if h, ok := net.(*gluon.HybridBlock); ok {
				b.ReportMetric(float64(h.Stats().Folded), "folded")
			}
		})
	}
}

// smallOps is a block of 32 cheap elementwise ops on its (tiny) input: its
// cost is the per-op cost of whatever runs it.
type smallOps struct{ gluon.BlockMeta }

func (s *smallOps) Forward(x *nd.NDArray) *nd.NDArray {
	for range 16 {
		x = nd.MulScalar(nd.AddScalar(x, 0.5), 0.5)
	}
	return x
}

// BenchmarkHybridSmallOps runs 32 elementwise ops on 16 values in predict
// mode, eager and hybridized, and reports the time per op.
func BenchmarkHybridSmallOps(b *testing.B) {
	hybridModes(b, func(b *testing.B, wrap func(gluon.Block) gluon.Block) {
		net := wrap(&smallOps{BlockMeta: gluon.NewBlockMeta("smallops")})
		x := nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, 16)
		step := func() {
			s := nd.NewScope()
			defer s.Close()
			net.Forward(x)
		}
		step()
		step()
		for b.Loop() {
			step()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(32*b.N), "ns/kernel")
	})
}
