package gluon_test

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

// BenchmarkTrainerStep is the Trainer's share of a training step: LeNet's
// parameters (60,170 values) on 1 and 2 CPU contexts, SGD, with each
// iteration's gradients written by the cheapest backward pass that
// writes them all (the sum of every parameter, on every context
// concurrently) and then Step: the sums over the contexts and the
// updates. Compare it with BenchmarkGradientsOnly, the same backward
// passes without Step.
func BenchmarkTrainerStep(b *testing.B) { trainerStepBench(b, true) }

// BenchmarkGradientsOnly is BenchmarkTrainerStep's backward passes alone.
func BenchmarkGradientsOnly(b *testing.B) { trainerStepBench(b, false) }

func trainerStepBench(b *testing.B, step bool) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("%dctx", n), func(b *testing.B) {
			devs := cpus(n)
			nd.Seed(1)
			net := modelzoo.LeNet()
			params := gluon.CollectParams(net)
			if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
				b.Fatal(err)
			}
			autograd.Pause(func() {
				for _, d := range devs {
					net.Forward(nd.Zeros(d, nd.Float32, 1, 1, 28, 28)).Release()
				}
			})
			tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.01), "device", gluon.TrainerOpts{})
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			list := params.List()
			grads := func() {
				autograd.Record(func() {
					err := gluon.ForEachDevice(devs, func(_ int, d ctx.Context) error {
						var sum *nd.NDArray
						for _, p := range list {
							s := nd.Sum(p.Data(d))
							if sum == nil {
								sum = s
							} else {
								sum = nd.Add(sum, s)
							}
						}
						autograd.Backward(sum)
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				})
			}
			iter := func() {
				s := nd.NewScope()
				defer s.Close()
				grads()
				if step {
					if err := tr.Step(32); err != nil {
						b.Fatal(err)
					}
				}
			}
			for range 3 {
				iter()
			}
			for b.Loop() {
				iter()
			}
		})
	}
}
