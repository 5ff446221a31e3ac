package bench

import (
	"fmt"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/traintest"
)

// trainStepBench measures full training steps of net at the given batch
// on devs, in samples/s.
func trainStepBench(b *testing.B, net gluon.Block, opt optimizer.Optimizer, shape []int, devs []ctx.Context) {
	traintest.StepBench(b, net, opt, shape, devs, nil)
}

// BenchmarkTrainStepKerasCIFAR is the CPU training step of the Keras
// CIFAR-10 CNN (RMSprop, batch 128) on one context and on two.
func BenchmarkTrainStepKerasCIFAR(b *testing.B) {
	for _, devs := range [][]ctx.Context{{ctx.CPU(0)}, {ctx.CPU(0), ctx.CPU(1)}} {
		b.Run(fmt.Sprintf("%dctx", len(devs)), func(b *testing.B) {
			trainStepBench(b, modelzoo.KerasCIFARCNN(), optimizer.NewRMSProp(1e-4), []int{128, 3, 32, 32}, devs)
		})
	}
}

// BenchmarkTrainStepLeNet is LeNet's training step (SGD, batch 128) on one
// context and on two.
func BenchmarkTrainStepLeNet(b *testing.B) {
	b.Run("1ctx", func(b *testing.B) {
		trainStepBench(b, modelzoo.LeNet(), optimizer.NewSGD(0.04), []int{128, 1, 28, 28}, []ctx.Context{ctx.CPU(0)})
	})
	b.Run("2ctx", func(b *testing.B) {
		trainStepBench(b, modelzoo.LeNet(), optimizer.NewSGD(0.04), []int{128, 1, 28, 28}, []ctx.Context{ctx.CPU(0), ctx.CPU(1)})
	})
}

// BenchmarkTrainStepLeNetB32 is LeNet's training step at batch 32 on one
// context: small-batch latency, where per-op costs weigh more than
// arithmetic.
func BenchmarkTrainStepLeNetB32(b *testing.B) {
	trainStepBench(b, modelzoo.LeNet(), optimizer.NewSGD(0.04), []int{32, 1, 28, 28}, []ctx.Context{ctx.CPU(0)})
}
