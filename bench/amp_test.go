package bench

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
)

// BenchmarkTrainStepAMP is the training step of LeNet (batch 128) and of
// the Keras CIFAR-10 CNN (batch 64) on one CPU context in float32 and
// under autocast to float16 and bfloat16 (without loss scaling, which adds
// one scalar multiply and one finiteness check per step). Each variant
// runs on a context of its own (cpu(4) to cpu(9)), so "pool-MiB" is the
// memory that variant's steps took from the system and "peak-MiB" the
// most its live arrays held at once (saved activations included).
func BenchmarkTrainStepAMP(b *testing.B) {
	nets := []struct {
		name  string
		net   func() gluon.Block
		opt   func() optimizer.Optimizer
		shape []int
	}{
		{"LeNet", func() gluon.Block { return modelzoo.LeNet() }, func() optimizer.Optimizer { return optimizer.NewSGD(0.04) }, []int{128, 1, 28, 28}},
		{"KerasCIFAR", func() gluon.Block { return modelzoo.KerasCIFARCNN() }, func() optimizer.Optimizer { return optimizer.NewRMSProp(1e-4) }, []int{64, 3, 32, 32}},
	}
	dev := 4
	for _, n := range nets {
		for _, dt := range []nd.DType{nd.Float32, nd.Float16, nd.BFloat16} {
			d := ctx.CPU(dev)
			dev++
			b.Run(n.name+"/"+dt.String(), func(b *testing.B) {
				run, err := traintest.NewStep(n.net(), n.opt(), n.shape, []ctx.Context{d})
				if err != nil {
					b.Fatal(err)
				}
				step := func() {
					if dt != nd.Float32 {
						defer nd.EnterAutocast(dt)()
					}
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				step()
				step()
				for b.Loop() {
					step()
				}
				b.ReportMetric(float64(n.shape[0]*b.N)/b.Elapsed().Seconds(), "samples/s")
				b.ReportMetric(float64(nd.MemoryStats(d).Allocated)/(1<<20), "pool-MiB")
				b.ReportMetric(float64(nd.MemoryStats(d).Peak)/(1<<20), "peak-MiB")
			})
		}
	}
}
