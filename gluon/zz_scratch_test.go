package gluon_test

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/amp"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

func zzNet(t *testing.T) (*nn.Dense, *gluon.ParamDict) {
	nd.Seed(3)
	d := nn.NewDense(2, nn.DenseOpts{InUnits: 2, NoBias: true})
	ps := gluon.CollectParams(d)
	if err := ps.Initialize(initializer.Constant{Value: 1}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	return d, ps
}

func zzStep(t *testing.T, d *nn.Dense, tr *gluon.Trainer, scale float64, dt nd.DType) {
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 1}, 1, 2).AsType(dt)
	var l *nd.NDArray
	autograd.Record(func() { l = nd.MulScalar(nd.Sum(d.Forward(x)), scale) })
	autograd.Backward(l)
	if err := tr.Step(1); err != nil {
		t.Fatal(err)
	}
}

// Cast after the Trainer made its state: the momentum buffer is taken for the master copy.
func TestZZCastAfterTrainerState(t *testing.T) {
	d, ps := zzNet(t)
	tr, err := gluon.NewTrainer(ps, &optimizer.SGD{Hyper: optimizer.Hyper{LR: 0.1}, Momentum: 0.9}, "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	zzStep(t, d, tr, 1, nd.Float32) // weight 1 -> 0.9, momentum buffer -0.1
	err = gluon.Cast(d, nd.Float16)
	t.Logf("Cast after a step: err=%v", err)
	{ // two backward passes: the new array's stamp must differ from the old one's
		x := nd.FromSlice(ctx.CPU(0), []float32{1, 1}, 1, 2).AsType(nd.Float16)
		for range 2 {
			var l *nd.NDArray
			autograd.Record(func() { l = nd.Sum(d.Forward(x)) })
			autograd.Backward(l)
		}
		if err := tr.Step(1); err != nil {
			t.Fatal(err)
		}
	}
	w := ps.Get("weight").Data(ctx.CPU(0)).AsType(nd.Float32).Float32s()
	// expected: mom = 0.9*(-0.1) - 0.1 = -0.19; w = 0.9 - 0.19 = 0.71
	t.Logf("weight after the second step: %v (want ~0.71)", w)
	if w[0] < 0.6 || w[0] > 0.8 {
		t.Errorf("weight %v after Cast with an existing Trainer, want ~0.71", w[0])
	}
}

// SetData after a step is reverted by the next step through the stale master copy.
func TestZZSetDataRevertedByMaster(t *testing.T) {
	d, ps := zzNet(t)
	if err := gluon.Cast(d, nd.Float16); err != nil {
		t.Fatal(err)
	}
	tr, err := gluon.NewTrainer(ps, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	zzStep(t, d, tr, 1, nd.Float16) // 1 -> 0.9
	p := ps.Get("weight")
	p.SetData(nd.Full(ctx.CPU(0), nd.Float16, 5, 2, 2))
	zzStep(t, d, tr, 0, nd.Float16) // zero gradient: nothing should change
	w := p.Data(ctx.CPU(0)).AsType(nd.Float32).Float32s()
	t.Logf("after SetData(5) and a zero-gradient step: %v", w)
	if w[0] != 5 {
		t.Errorf("weight %v, want 5 (SetData reverted by the master copy)", w[0])
	}
}

// UnscaleGrads divides float16 gradients in float16: small gradients flush.
func TestZZUnscaleHalfGrads(t *testing.T) {
	run := func(unscale bool) (float32, float32) {
		d, ps := zzNet(t)
		if err := gluon.Cast(d, nd.Float16); err != nil {
			t.Fatal(err)
		}
		tr, _ := gluon.NewTrainer(ps, optimizer.NewSGD(1e6), "local", gluon.TrainerOpts{})
		s := amp.NewLossScaler(amp.ScalerOpts{})
		tr.SetGradScaler(s)
		x := nd.FromSlice(ctx.CPU(0), []float32{1, 1}, 1, 2).AsType(nd.Float16)
		var l *nd.NDArray
		autograd.Record(func() { l = s.Scale(nd.MulScalar(nd.Sum(d.Forward(x).AsType(nd.Float32)), 1e-8)) })
		autograd.Backward(l)
		if err := tr.AllReduceGrads(); err != nil {
			t.Fatal(err)
		}
		p := ps.Get("weight")
		if unscale {
			tr.UnscaleGrads()
		}
		g := p.Grad(ctx.CPU(0)).AsType(nd.Float32).Float32s()[0]
		if err := tr.Update(1); err != nil {
			t.Fatal(err)
		}
		return g, p.Data(ctx.CPU(0)).AsType(nd.Float32).Float32s()[0]
	}
	g1, w1 := run(false)
	g2, w2 := run(true)
	t.Logf("true gradient 1e-8, lr 1e6: Update alone: grad %g, weight %g; UnscaleGrads+Update: grad %g, weight %g", g1, w1, g2, w2)
	if w1 != w2 {
		t.Errorf("UnscaleGrads changes the update of a float16 parameter")
	}
}
