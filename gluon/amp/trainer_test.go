package amp_test

import (
	"math"
	"strings"
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

// ones returns a 2→2 Dense layer without bias, its weights 1, on cpu(0).
func ones(t *testing.T) (*nn.Dense, *gluon.ParamDict) {
	t.Helper()
	d := nn.NewDense(2, nn.DenseOpts{InUnits: 2, NoBias: true})
	ps := gluon.CollectParams(d)
	if err := ps.Initialize(initializer.Constant{Value: 1}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	return d, ps
}

// backward runs backward of scale·Σ d(x) for x = [1 1] in dtype dt.
func backward(d *nn.Dense, scale float64, dt nd.DType) {
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 1}, 1, 2).AsType(dt)
	var l *nd.NDArray
	autograd.Record(func() { l = nd.MulScalar(nd.Sum(d.Forward(x).AsType(nd.Float32)), scale) })
	autograd.Backward(l)
}

func weight0(ps *gluon.ParamDict) float64 {
	return ps.Get("weight").Data(ctx.CPU(0)).AsType(nd.Float64).Float64s()[0]
}

// TestSetDataReseedsMasters: a half-precision weight written with SetData
// after a step keeps the written value: the Trainer re-seeds its float32
// master copy instead of writing the stale master back.
func TestSetDataReseedsMasters(t *testing.T) {
	d, ps := ones(t)
	if err := gluon.Cast(d, nd.Float16); err != nil {
		t.Fatal(err)
	}
	tr, err := gluon.NewTrainer(ps, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	backward(d, 1, nd.Float16)
	if err := tr.Step(1); err != nil {
		t.Fatal(err)
	}
	ps.Get("weight").SetData(nd.Full(ctx.CPU(0), nd.Float16, 5, 2, 2))
	backward(d, 0, nd.Float16) // a zero gradient
	if err := tr.Step(1); err != nil {
		t.Fatal(err)
	}
	if w := weight0(ps); w != 5 {
		t.Errorf("weight %v after SetData(5) and a zero-gradient step, want 5", w)
	}
}

// TestCastAfterTrainerFails: casting a parameter after its Trainer made
// the optimizer state is an error at the next step that says so.
func TestCastAfterTrainerFails(t *testing.T) {
	d, ps := ones(t)
	tr, err := gluon.NewTrainer(ps, &optimizer.SGD{Hyper: optimizer.Hyper{LR: 0.1}, Momentum: 0.9}, "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	backward(d, 1, nd.Float32)
	if err := tr.Step(1); err != nil {
		t.Fatal(err)
	}
	if err := gluon.Cast(d, nd.Float16); err != nil {
		t.Fatal(err)
	}
	backward(d, 1, nd.Float16)
	if err := tr.Step(1); err == nil || !strings.Contains(err.Error(), "cast before making the Trainer") {
		t.Errorf("Step after Cast: %v, want an error saying to cast before making the Trainer", err)
	}
}

// TestUnscaleGrads: UnscaleGrads refuses half-precision gradients (small
// ones would flush to zero), and its "already unscaled" mark lasts one
// round only: after a dropped batch the next AllReduceGrads/Update pair
// divides by the loss scale again.
func TestUnscaleGrads(t *testing.T) {
	d, ps := ones(t)
	if err := gluon.Cast(d, nd.Float16); err != nil {
		t.Fatal(err)
	}
	tr, _ := gluon.NewTrainer(ps, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{})
	if err := tr.SetGradScaler(amp.NewLossScaler(amp.ScalerOpts{})); err != nil {
		t.Fatal(err)
	}
	backward(d, 1, nd.Float16)
	if err := tr.AllReduceGrads(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.UnscaleGrads(); err == nil || !strings.Contains(err.Error(), "float16 gradients") {
		t.Errorf("UnscaleGrads on float16 gradients: %v, want a refusal", err)
	}

	d, ps = ones(t)
	tr, _ = gluon.NewTrainer(ps, optimizer.NewSGD(0.001), "local", gluon.TrainerOpts{})
	s := amp.NewLossScaler(amp.ScalerOpts{InitScale: 1024})
	if err := tr.SetGradScaler(s); err != nil {
		t.Fatal(err)
	}
	backward(d, 1024, nd.Float32) // a scaled loss
	if err := tr.AllReduceGrads(); err != nil {
		t.Fatal(err)
	}
	if ok, err := tr.UnscaleGrads(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	// The batch is dropped; the next one goes through AllReduceGrads and
	// Update, which must divide by the scale.
	backward(d, 1024, nd.Float32)
	if err := tr.AllReduceGrads(); err != nil {
		t.Fatal(err)
	}
	if err := tr.Update(1); err != nil {
		t.Fatal(err)
	}
	if w := weight0(ps); math.Abs(w-0.999) > 1e-6 {
		t.Errorf("weight %v, want 0.999 (gradient 1, lr 0.001)", w)
	}
}
