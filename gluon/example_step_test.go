package gluon_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// ExampleCompileStep trains an MLP on two CPU contexts with a compiled
// step: each context's forward, loss and backward pass run as one traced
// graph per context, traced once and then replayed (a context whose
// first call still has deferred shapes runs it eagerly).
func ExampleCompileStep() {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	net := modelzoo.MLP(2, 16)
	params := gluon.CollectParams(net)
	nd.Seed(1)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		panic(err)
	}
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.5), "device", gluon.TrainerOpts{})
	if err != nil {
		panic(err)
	}
	step, err := gluon.CompileStep(net, loss.NewSoftmaxCrossEntropy().Forward, tr, gluon.StepOpts{})
	if err != nil {
		panic(err)
	}
	// Class 1 where the first feature is positive.
	x := nd.RandomNormal(ctx.CPU(0), nd.Float32, 0, 1, 64, 4)
	feats := x.Float32s()
	labels := make([]float32, 64)
	for i := range labels {
		if feats[4*i] > 0 {
			labels[i] = 1
		}
	}
	y := nd.FromSlice(ctx.CPU(0), labels)
	mean := func(res gluon.StepResult) float64 {
		var s float64
		for _, l := range res.Losses {
			for _, v := range l.Float32s() {
				s += float64(v)
			}
		}
		return s / 64
	}
	first, err := step.Run(x, y)
	if err != nil {
		panic(err)
	}
	var last gluon.StepResult
	for range 30 {
		if last, err = step.Run(x, y); err != nil {
			panic(err)
		}
	}
	st := step.Stats()
	fmt.Println("traces:", st.Traces, "calls:", st.Traces+st.Replays+st.Eager)
	fmt.Println("loss fell:", mean(last) < mean(first)/2)
	// Output:
	// traces: 2 calls: 62
	// loss fell: true
}
