package prune_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/gluon/prune"
	"github.com/goluon/goluon/nd"
)

// trainBatch is a fixed batch of 4 inputs for gradNet and their labels.
func trainBatch() (*nd.NDArray, *nd.NDArray) {
	nd.Seed(11)
	return nd.RandomNormal(cpu0, nd.Float32, 0, 1, 4, 2, 4, 4), nd.FromSlice(cpu0, []float32{0, 3, 1, 4}, 4)
}

// trainSteps runs n data-parallel SGD steps (momentum, weight decay) of
// net on devs through trainer.
func trainSteps(t *testing.T, net gluon.Block, trainer *gluon.Trainer, devs []ctx.Context, n int) {
	t.Helper()
	x, y := trainBatch()
	xs, err := gluon.SplitAndLoad(x, devs, false)
	if err != nil {
		t.Fatal(err)
	}
	ys, err := gluon.SplitAndLoad(y, devs, false)
	if err != nil {
		t.Fatal(err)
	}
	lossFn := loss.NewSoftmaxCrossEntropy()
	for range n {
		autograd.Record(func() {
			err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
				autograd.Backward(lossFn.Forward(net.Forward(xs[i]), ys[i]))
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := trainer.Step(x.Shape()[0]); err != nil {
			t.Fatal(err)
		}
	}
}

func newTrainer(t *testing.T, net gluon.Block) *gluon.Trainer {
	t.Helper()
	sgd := optimizer.NewSGD(0.2)
	sgd.Momentum, sgd.WD = 0.9, 0.01
	trainer, err := gluon.NewTrainer(gluon.CollectParams(net), sgd, "device", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	return trainer
}

// TestTrainTwoContexts trains the pruned network with gluon.Trainer on
// cpu(0) and cpu(1), eagerly and hybridized: weight_orig trains (weight
// decay moves its pruned entries too), the masks do not move, and the
// weights the layers use keep their pruned entries at exactly zero on
// both contexts, whose replicas stay equal. A checkpoint (parameters and
// trainer states) loaded into a network pruned with Identity continues
// exactly as the original.
func TestTrainTwoContexts(t *testing.T) {
	devs := []ctx.Context{cpu0, cpu1}
	for _, hybrid := range []bool{false, true} {
		t.Run(map[bool]string{false: "eager", true: "hybridized"}[hybrid], func(t *testing.T) {
			net, conv, dense := prunedNet(t, nd.Float32, devs...)
			before := prune.Sparsity(net)
			masks := map[string][]float64{}
			orig := map[string][]float64{}
			params := gluon.CollectParams(net)
			for _, name := range params.Names() {
				if p := params.Get(name); p.GradReq() == nd.GradNull {
					masks[name] = p.Data(cpu0).Float64s()
				} else {
					orig[name] = p.Data(cpu0).Float64s()
				}
			}
			var run gluon.Block = net
			if hybrid {
				run = gluon.Hybridize(net, gluon.HybridOpts{})
			}
			trainer := newTrainer(t, run)
			trainSteps(t, run, trainer, devs, 3)

			for name, m := range masks {
				for _, dev := range devs {
					equalSlice(t, name+" on "+dev.String(), params.Get(name).Data(dev).Float64s(), m)
				}
			}
			for name, o := range orig {
				now := params.Get(name).Data(cpu0).Float64s()
				if slices.Equal(now, o) {
					t.Errorf("%s did not train", name)
				}
				if m := masks[name[:len(name)-len("orig")]+"mask"]; m != nil {
					moved := false
					for i := range m {
						moved = moved || m[i] == 0 && now[i] != o[i]
					}
					if !moved {
						t.Errorf("%s: weight decay did not move the pruned entries", name)
					}
				}
			}
			if h, ok := run.(*gluon.HybridBlock); ok && nd.TraceSupported && h.Stats().Traces == 0 {
				t.Errorf("hybridized calls %+v: nothing traced", h.Stats())
			}
			for _, c := range []struct {
				w    *gluon.Parameter
				mask string
			}{{conv.Weight, "conv0.weight_mask"}, {dense.Weight, "dense0.weight_mask"}, {dense.Bias, "dense0.bias_mask"}} {
				w0 := c.w.Data(cpu0).Float64s()
				equalSlice(t, c.mask+": replicas", c.w.Data(cpu1).Float64s(), w0)
				for i, m := range masks[c.mask] {
					if m == 0 && w0[i] != 0 {
						t.Fatalf("%s: pruned entry %d of the weight is %g", c.mask, i, w0[i])
					}
				}
			}
			if after := prune.Sparsity(net); after.String() != before.String() {
				t.Errorf("sparsity before\n%s\nafter training\n%s", before, after)
			}

			dir := t.TempDir()
			if err := gluon.SaveParameters(net, filepath.Join(dir, "net.safetensors")); err != nil {
				t.Fatal(err)
			}
			if err := trainer.SaveStates(filepath.Join(dir, "trainer.states")); err != nil {
				t.Fatal(err)
			}
			back, bconv, bdense := gradNet(t, nd.Float32, devs...)
			prune.Identity(bconv, "weight")
			prune.Identity(bdense, "weight")
			prune.Identity(bdense, "bias")
			if err := gluon.LoadParameters(back, filepath.Join(dir, "net.safetensors"), devs...); err != nil {
				t.Fatal(err)
			}
			btrainer := newTrainer(t, back)
			if err := btrainer.LoadStates(filepath.Join(dir, "trainer.states")); err != nil {
				t.Fatal(err)
			}
			trainSteps(t, run, trainer, devs, 1)
			trainSteps(t, back, btrainer, devs, 1)
			bparams := gluon.CollectParams(back)
			for _, name := range params.Names() {
				equalSlice(t, name+" after a step from the checkpoint", bparams.Get(name).Data(cpu1).Float64s(), params.Get(name).Data(cpu1).Float64s())
			}
		})
	}
}

// TestSessions: the pruned weight is computed in the session of the
// layer's input, eagerly or hybridized, on a plain goroutine inside a
// session's Record, on the recording goroutine, or through
// ForEachDevice: weight_orig's gradient is the default session's (the
// weight's times the mask, zero at the pruned entries).
func TestSessions(t *testing.T) {
	x := func(s *autograd.Session) *nd.NDArray {
		nd.Seed(4)
		v := nd.RandomNormal(cpu0, nd.Float32, 0, 1, 2, 2, 4, 4)
		if s != nil {
			return s.FromSlice(cpu0, v.Float32s(), 2, 2, 4, 4)
		}
		return v
	}
	runs := []struct {
		name string
		run  func(t *testing.T, net gluon.Block)
	}{
		{"session-goroutine", func(t *testing.T, net gluon.Block) {
			s := autograd.NewSession("learner")
			in := x(s)
			var err error
			s.Record(func() {
				done := make(chan struct{})
				go func() {
					defer close(done)
					err = nd.Catch(func() { autograd.Backward(nd.Sum(nd.Square(net.Forward(in)))) })
				}()
				<-done
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"session-record", func(t *testing.T, net gluon.Block) {
			s := autograd.NewSession("learner")
			in := x(s)
			s.Record(func() { autograd.Backward(nd.Sum(nd.Square(net.Forward(in)))) })
		}},
		{"session-foreachdevice", func(t *testing.T, net gluon.Block) {
			s := autograd.NewSession("learner")
			in := x(nil)
			var err error
			s.Record(func() {
				err = gluon.ForEachDevice([]ctx.Context{cpu0}, func(int, ctx.Context) error {
					autograd.Backward(nd.Sum(nd.Square(net.Forward(in))))
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
	}
	reference := func(t *testing.T) *gluon.ParamDict {
		net, _, _ := prunedNet(t, nd.Float32)
		autograd.Record(func() { autograd.Backward(nd.Sum(nd.Square(net.Forward(x(nil))))) })
		return gluon.CollectParams(net)
	}
	for _, hybrid := range []bool{false, true} {
		for _, r := range runs {
			name := r.name
			if hybrid {
				name += "/hybridized"
			}
			t.Run(name, func(t *testing.T) {
				want := reference(t)
				net, _, _ := prunedNet(t, nd.Float32)
				var run gluon.Block = net
				if hybrid {
					run = gluon.Hybridize(net, gluon.HybridOpts{})
					predict(run, x(nil))
				}
				r.run(t, run)
				got := gluon.CollectParams(net)
				for _, n := range []string{"conv0.weight_orig", "conv0.bias", "dense0.weight_orig", "dense0.bias_orig"} {
					g := got.Get(n).Grad(cpu0).Float64s()
					closeSlice(t, n+" gradient", g, want.Get(n).Grad(cpu0).Float64s(), 1e-6)
					if zeros(g) == len(g) {
						t.Fatalf("%s: no gradient", n)
					}
				}
			})
		}
	}
}

// TestPruneHybridized: pruning a network already hybridized (and traced)
// takes effect at its next call, and so does a further round, which only
// rewrites the mask; the outputs are the eager network's. A cast network
// keeps its masks, in the new dtype.
func TestPruneHybridized(t *testing.T) {
	g := loadGoldens(t)
	x := g.StateDict.Input.nd().AsType(nd.Float32)
	eager, econv, edense := gradNet(t, nd.Float32)
	net, conv, dense := gradNet(t, nd.Float32)
	for _, n := range []*gluon.ParamDict{gluon.CollectParams(eager), gluon.CollectParams(net)} {
		for name, a := range g.Grad.Init {
			n.Get(name).SetData(a.nd())
		}
	}
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	equalSlice(t, "before pruning", predict(h, x).Float64s(), predict(eager, x).Float64s())
	for _, step := range []func(*nn.Conv2D, *nn.Dense){
		func(c *nn.Conv2D, d *nn.Dense) { prune.L1Unstructured(d, "weight", prune.Fraction(0.5), nil) },
		func(c *nn.Conv2D, d *nn.Dense) { prune.LnStructured(c, "weight", prune.Count(1), 2, 0, nil) },
		func(c *nn.Conv2D, d *nn.Dense) { prune.L1Unstructured(d, "weight", prune.Fraction(0.5), nil) },
	} {
		step(econv, edense)
		step(conv, dense)
		equalSlice(t, "after a round", predict(h, x).Float64s(), predict(eager, x).Float64s())
		equalSlice(t, "replayed", predict(h, x).Float64s(), predict(eager, x).Float64s())
	}
	if z := prune.Sparsity(net).Zeros; z != 18+180 {
		t.Errorf("%d zeros, want 18 + 180", z)
	}
	if st := h.Stats(); nd.TraceSupported && (st.Eager != 0 || st.Replays == 0) {
		t.Errorf("hybridized calls %+v: want replayed graphs", st)
	}
	if err := gluon.Cast(net, nd.Float64); err != nil {
		t.Fatal(err)
	}
	if dt := dense.Weight.DType(); dt != nd.Float64 {
		t.Errorf("weight dtype %v after the cast", dt)
	}
	closeSlice(t, "float64", predict(net, x.AsType(nd.Float64)).Float64s(), predict(eager, x).Float64s(), 1e-5)
	if z := prune.Sparsity(net).Zeros; z != 18+180 {
		t.Errorf("%d zeros after the cast", z)
	}
}
