package gluon_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// scaledNet holds a 0-d parameter (as a whole-tensor weight norm's
// magnitude) and a vector: it computes scale·w·x.
type scaledNet struct {
	gluon.BlockMeta
	scale, w *gluon.Parameter
}

func newScaledNet(dev ...ctx.Context) *scaledNet {
	n := &scaledNet{BlockMeta: gluon.NewBlockMeta("scaled")}
	n.scale = n.AddParam(gluon.NewParameter("scale"))
	n.w = n.AddParam(gluon.NewParameter("w", 3))
	n.scale.Init = initializer.Constant{Value: 1.5}
	n.w.Init = initializer.Constant{Value: 0.5}
	if err := gluon.CollectParams(n).Initialize(nil, dev, false); err != nil {
		panic(err)
	}
	return n
}

func (n *scaledNet) Forward(x *nd.NDArray) *nd.NDArray {
	dev := x.Context()
	return nd.Mul(nd.Mul(n.scale.Data(dev), n.w.Data(dev)), x)
}

// step runs one training step of n on a fixed batch.
func (n *scaledNet) step(t *testing.T, tr *gluon.Trainer, dev ctx.Context) {
	t.Helper()
	x := nd.FromSlice(dev, []float32{1, -2, 3})
	y := nd.FromSlice(dev, []float32{0.5, 1, -1})
	autograd.Record(func() { autograd.Backward(nd.Sum(nd.Square(nd.Sub(n.Forward(x), y)))) })
	if err := tr.Step(1); err != nil {
		t.Fatal(err)
	}
}

// TestZeroDimTrainerStates: a Trainer's optimizer state for a 0-d
// parameter saves and loads 0-d (LoadStates rebuilt it as [1] and
// panicked in nd.Assign), on the workers and on the kvstore, and the
// resumed training goes on exactly as the uninterrupted one.
func TestZeroDimTrainerStates(t *testing.T) {
	dev := ctx.CPU(0)
	for _, c := range []struct {
		name string
		opt  func() optimizer.Optimizer
		kv   bool
	}{
		{"sgd-momentum", func() optimizer.Optimizer { o := optimizer.NewSGD(0.1); o.Momentum = 0.9; return o }, false},
		{"sgd-momentum-kvstore", func() optimizer.Optimizer { o := optimizer.NewSGD(0.1); o.Momentum = 0.9; return o }, true},
		{"adam", func() optimizer.Optimizer { return optimizer.NewAdam(0.01) }, false},
		{"adam-kvstore", func() optimizer.Optimizer { return optimizer.NewAdam(0.01) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			mk := func(n *scaledNet) *gluon.Trainer {
				tr, err := gluon.NewTrainer(gluon.CollectParams(n), c.opt(), "device", gluon.TrainerOpts{UpdateOnKVStore: c.kv})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tr.Close() })
				return tr
			}
			a := newScaledNet(dev)
			ta := mk(a)
			a.step(t, ta, dev)
			path := filepath.Join(t.TempDir(), "states")
			if err := ta.SaveStates(path); err != nil {
				t.Fatal(err)
			}
			b := newScaledNet(dev)
			b.scale.SetData(a.scale.Data(dev))
			b.w.SetData(a.w.Data(dev))
			tb := mk(b)
			if err := nd.Catch(func() {
				if err := tb.LoadStates(path); err != nil {
					t.Fatal(err)
				}
			}); err != nil {
				t.Fatalf("LoadStates panicked: %v", err)
			}
			a.step(t, ta, dev)
			b.step(t, tb, dev)
			if s := b.scale.Data(dev).Shape(); len(s) != 0 {
				t.Errorf("scale has shape %v after loading, want 0-d", s)
			}
			if ga, gb := a.scale.Data(dev).Scalar(), b.scale.Data(dev).Scalar(); ga != gb {
				t.Errorf("scale %v after resuming, %v without the interruption", gb, ga)
			}
		})
	}
}

// TestZeroDimLBFGS: L-BFGS writes a 0-d parameter back 0-d (it rebuilt it
// as [1], which SetData refused) and minimises through it.
func TestZeroDimLBFGS(t *testing.T) {
	dev := ctx.CPU(0)
	p := gluon.NewParameter("s")
	p.SetDType(nd.Float64)
	if err := p.Initialize(initializer.Constant{Value: 0}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	l, err := gluon.NewLBFGS([]*gluon.Parameter{p}, gluon.LBFGSDefaults())
	if err != nil {
		t.Fatal(err)
	}
	var stepErr error
	if err := nd.Catch(func() {
		_, stepErr = l.Step(func() (float64, error) {
			var loss *nd.NDArray
			autograd.Record(func() {
				loss = nd.Square(nd.AddScalar(p.Data(dev), -3)) // (s-3)²
				autograd.Backward(loss)
			})
			return loss.Scalar(), nil
		})
	}); err != nil || stepErr != nil {
		t.Fatalf("Step: panic %v, error %v", err, stepErr)
	}
	if s := p.Data(dev).Shape(); len(s) != 0 {
		t.Errorf("shape %v after the step, want 0-d", s)
	}
	if v := p.Data(dev).Scalar(); math.Abs(v-3) > 1e-6 {
		t.Errorf("s = %v, want 3", v)
	}
}
