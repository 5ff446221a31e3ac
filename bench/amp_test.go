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

// BenchmarkTrainStepAMP is the training step of LeNet (batch 128), of
// the Keras CIFAR-10 CNN (batch 64) and of the MLP (batch 128) on one CPU
// context in float32 and under autocast to float16 and bfloat16 (without
// loss scaling, which adds one scalar multiply and one finiteness check
// per step). Each variant runs on a context of its own (cpu(4) to
// cpu(12)), so "pool-MiB" is the memory that variant's steps took from the
// system and "peak-MiB" the most its live arrays held at once (saved
// activations included). The MLP's bfloat16 products run on the CPU's
// bfloat16 dot products where it has them (AVX512_BF16).
func BenchmarkTrainStepAMP(b *testing.B) {
	dev := 4
	mlp := traintest.AMPNet{
		Name:  "MLP",
		Net:   func() gluon.Block { return modelzoo.MLP(10, 256, 256) },
		Opt:   func() optimizer.Optimizer { return optimizer.NewSGD(0.1) },
		Shape: []int{128, 784},
	}
	for _, n := range append(traintest.AMPNets(64), mlp) {
		for _, dt := range traintest.AMPDTypes {
			d := ctx.CPU(dev)
			dev++
			b.Run(n.Name+"/"+dt.String(), func(b *testing.B) {
				run, err := traintest.NewStep(n.Net(), n.Opt(), n.Shape, []ctx.Context{d})
				if err != nil {
					b.Fatal(err)
				}
				step := func() {
					if err := traintest.Autocast(dt, run); err != nil {
						b.Fatal(err)
					}
				}
				step()
				step()
				for b.Loop() {
					step()
				}
				b.ReportMetric(float64(n.Shape[0]*b.N)/b.Elapsed().Seconds(), "samples/s")
				b.ReportMetric(float64(nd.MemoryStats(d).Allocated)/(1<<20), "pool-MiB")
				b.ReportMetric(float64(nd.MemoryStats(d).Peak)/(1<<20), "peak-MiB")
			})
		}
	}
}
