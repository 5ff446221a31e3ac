package bench

import (
	"fmt"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// BenchmarkTrainStepMLP is the MLP's training step (SGD, batch 128) on one
// context.
func BenchmarkTrainStepMLP(b *testing.B) {
	trainStepBench(b, modelzoo.MLP(10, 256, 256), optimizer.NewSGD(0.1), []int{128, 784}, []ctx.Context{ctx.CPU(0)})
}

// BenchmarkInferLeNet is LeNet's forward pass in predict mode at batch 128
// on one context, in samples/s.
func BenchmarkInferLeNet(b *testing.B) {
	nd.Seed(1)
	net := modelzoo.LeNet()
	dev := ctx.CPU(0)
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		b.Fatal(err)
	}
	const batch = 128
	x := nd.RandomUniform(dev, nd.Float32, 0, 1, batch, 1, 28, 28)
	step := func() {
		s := nd.NewScope()
		defer s.Close()
		autograd.PredictMode(func() {
			out := net.Forward(x)
			_ = out.Float32s()
		})
	}
	step() // deferred shapes and pools warm up outside the timing
	for b.Loop() {
		step()
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkMatMul is nd.MatMul of two n×n float32 matrices on cpu(0), in
// GFLOP/s (2n³ flops per product). CPU ops are synchronous, so the product
// is complete when nd.MatMul returns; it is not copied out to a Go slice
// (PyTorch's side just runs torch.mm) but released, back to the pool, when
// the iteration's scope closes.
func BenchmarkMatMul(b *testing.B) { matMulBench(b, nd.Float32, 128, 256, 512, 1024, 2048) }

// BenchmarkMatMulBF16 is BenchmarkMatMul on bfloat16 matrices: on a CPU
// with AVX512_BF16 the product runs on its bfloat16 dot products (large
// products; smaller ones, and every product elsewhere, widen to float32
// and round the result).
func BenchmarkMatMulBF16(b *testing.B) { matMulBench(b, nd.BFloat16, 128, 256, 512, 1024) }

// matMulBench times nd.MatMul of two n×n matrices of dtype dt per size.
func matMulBench(b *testing.B, dt nd.DType, sizes ...int) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			nd.Seed(1)
			dev := ctx.CPU(0)
			x := nd.RandomUniform(dev, nd.Float32, -1, 1, n, n).AsType(dt)
			y := nd.RandomUniform(dev, nd.Float32, -1, 1, n, n).AsType(dt)
			mm := func() {
				s := nd.NewScope()
				defer s.Close()
				nd.MatMul(x, y)
			}
			mm()
			for b.Loop() {
				mm()
			}
			b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
