package gluon_test

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/amp"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// TestCompileStepGradScaler: with a loss scaler on the Trainer, a compiled
// step (traced or eager) trains as the written-out loop that scales its
// loss (Record, Scale, Backward, Step) does, as the scale grows; the
// compiled step used to back-propagate the unscaled loss, so the Trainer's
// division shrank every update by the scale.
func TestCompileStepGradScaler(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	x := nd.RandomUniform(dev[0], nd.Float32, -1, 1, 8, 3)
	y := nd.FromSlice(dev[0], []float32{0, 1, 2, 0, 1, 2, 0, 1}, 8)
	lf := loss.NewSoftmaxCrossEntropy()
	build := func() (*nn.Sequential, *gluon.Trainer, *amp.LossScaler) {
		nd.Seed(4)
		net := nn.NewSequential(nn.NewDense(5, nn.DenseOpts{InUnits: 3, Act: "relu"}), nn.NewDense(3, nn.DenseOpts{InUnits: 5}))
		if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, dev, false); err != nil {
			t.Fatal(err)
		}
		tr, err := gluon.NewTrainer(gluon.CollectParams(net), optimizer.NewSGD(0.5), "local", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		sc := amp.NewLossScaler(amp.ScalerOpts{InitScale: 4, GrowthInterval: 1})
		tr.SetGradScaler(sc)
		return net, tr, sc
	}
	weights := func(net *nn.Sequential) []float32 {
		return gluon.CollectParams(net).Get("dense0.weight").Data(dev[0]).Float32s()
	}
	ref, rtr, rsc := build()
	for range 4 {
		autograd.Record(func() { autograd.Backward(rsc.Scale(lf.Forward(ref.Forward(x), y))) })
		if err := rtr.Step(8); err != nil {
			t.Fatal(err)
		}
	}
	for _, eager := range []bool{false, true} {
		net, tr, _ := build()
		st, err := gluon.CompileStep(net, lf.Forward, tr, gluon.StepOpts{Eager: eager})
		if err != nil {
			t.Fatal(err)
		}
		for range 4 {
			if _, err := st.Run(x, y); err != nil {
				t.Fatal(err)
			}
		}
		got, want := weights(net), weights(ref)
		for i := range want {
			if d := got[i] - want[i]; d > 1e-6 || d < -1e-6 {
				t.Fatalf("eager=%v: weights %v, written-out loop %v", eager, got[:4], want[:4])
			}
		}
	}
}
