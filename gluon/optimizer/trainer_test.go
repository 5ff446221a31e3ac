package optimizer_test

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// trainerRules returns every registered optimizer with weight decay, and
// the forms whose state differs from the registered default's.
func trainerRules(t *testing.T) map[string]func() optimizer.Optimizer {
	t.Helper()
	out := map[string]func() optimizer.Optimizer{}
	for _, n := range optimizer.Names() {
		out[n] = func() optimizer.Optimizer {
			o, err := optimizer.Create(n, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			o.Hyperparams().WD = 0.01
			return o
		}
	}
	out["adam_amsgrad"] = func() optimizer.Optimizer {
		o := optimizer.NewAdam(0.05)
		o.AMSGrad, o.WD = true, 0.01
		return o
	}
	out["adamw_amsgrad"] = func() optimizer.Optimizer {
		o := optimizer.NewAdamW(0.05, 0.01)
		o.AMSGrad = true
		return o
	}
	out["lars_momentum"] = func() optimizer.Optimizer {
		o := optimizer.NewLARS(0.05)
		o.Momentum, o.WD = 0.9, 0.01
		return o
	}
	out["adadelta_torch"] = func() optimizer.Optimizer {
		o := optimizer.NewAdaDelta(1)
		o.TorchForm, o.WD = true, 0.01
		return o
	}
	return out
}

// TestTrainerEveryRule trains a two-layer network on two contexts with
// every rule through a gluon.Trainer: the gradient buckets are updated
// with one call each exactly when the rule is Elementwise, and training 6
// steps straight equals training 3, saving the parameters and the
// Trainer's state, loading them into fresh objects and training 3 more.
func TestTrainerEveryRule(t *testing.T) {
	dir := t.TempDir()
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0.5, 2, 0, 1}, 4, 2)
	defer x.Release()
	rules := trainerRules(t)
	for _, name := range slices.Sorted(maps.Keys(rules)) {
		mk := rules[name]
		t.Run(name, func(t *testing.T) {
			build := func() (gluon.Block, *gluon.ParamDict, *gluon.Trainer) {
				nd.Seed(3)
				net := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{InUnits: 2, Act: "tanh"}), nn.NewDense(1, nn.DenseOpts{InUnits: 3}))
				params := gluon.CollectParams(net)
				if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
					t.Fatal(err)
				}
				tr, err := gluon.NewTrainer(params, mk(), "local", gluon.TrainerOpts{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tr.Close() })
				return net, params, tr
			}
			steps := func(net gluon.Block, tr *gluon.Trainer, n int) {
				for range n {
					parts, err := gluon.SplitAndLoad(x, devs, false)
					if err != nil {
						t.Fatal(err)
					}
					autograd.Record(func() {
						err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
							autograd.Backward(nd.Sum(nd.Square(net.Forward(parts[i]))))
							return nil
						})
					})
					if err != nil {
						t.Fatal(err)
					}
					if err := tr.Step(4); err != nil {
						t.Fatal(err)
					}
				}
			}
			values := func(params *gluon.ParamDict) map[string][]float64 {
				out := map[string][]float64{}
				for _, n := range params.Names() {
					out[n] = params.Get(n).ListData()[0].Float64s()
				}
				return out
			}

			net, params, tr := build()
			start := values(params)
			steps(net, tr, 6)
			want := values(params)
			e, ok := tr.Optimizer().(optimizer.Elementwise)
			elementwise := ok && e.Elementwise()
			if s := tr.Stats(); s.Buckets == 0 || (s.Fused > 0) != elementwise {
				t.Errorf("%d buckets, %d updated whole; the rule is elementwise: %v", s.Buckets, s.Fused, elementwise)
			}
			moved := false
			for n, w := range want {
				for i, v := range w {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%s[%d] = %v", n, i, v)
					}
					moved = moved || v != start[n][i]
				}
			}
			if !moved {
				t.Fatal("6 steps changed no weight")
			}

			net, params, tr = build()
			steps(net, tr, 3)
			pPath, sPath := filepath.Join(dir, name+".params"), filepath.Join(dir, name+".states")
			if err := params.Save(pPath); err != nil {
				t.Fatal(err)
			}
			if err := tr.SaveStates(sPath); err != nil {
				t.Fatal(err)
			}
			net2, params2, tr2 := build()
			if err := params2.Load(pPath, devs, gluon.LoadOpts{}); err != nil {
				t.Fatal(err)
			}
			if err := tr2.LoadStates(sPath); err != nil {
				t.Fatal(err)
			}
			steps(net2, tr2, 3)
			got := values(params2)
			for n, w := range want {
				for i := range w {
					if d := math.Abs(got[n][i] - w[i]); d > 1e-6 {
						t.Fatalf("%s after resume: %v, straight run %v", n, got[n], w)
					}
				}
			}
		})
	}
}

// ExampleLAMB shows the trust ratio at work: the same gradient moves a
// weight of norm 10 ten times as far as one of norm 1.
func ExampleLAMB() {
	dev := ctx.CPU(0)
	opt := optimizer.NewLAMB(0.1)
	for _, scale := range []float64{1, 10} {
		w := nd.FromSlice(dev, []float64{0.6 * scale, 0.8 * scale})
		g := nd.FromSlice(dev, []float64{0.5, -0.5})
		st := opt.CreateState(w)
		before := w.Float64s()
		opt.Update(optimizer.Param{Name: "w", Step: 1, LRMult: 1, WDMult: 1}, w, g, st)
		after := w.Float64s()
		fmt.Printf("norm %2.0f: step %.4f\n", scale, math.Hypot(after[0]-before[0], after[1]-before[1]))
	}
	// Output:
	// norm  1: step 0.1000
	// norm 10: step 1.0000
}
