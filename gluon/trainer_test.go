package gluon_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// twoLayer returns a Dense-Dense network initialised on devs with fixed
// in_units so no forward pass is needed before the trainer is built.
func twoLayer(t *testing.T, devs []ctx.Context) (*nn.Sequential, *gluon.ParamDict) {
	t.Helper()
	nd.Seed(11)
	net := nn.NewSequential(nn.NewDense(4, nn.DenseOpts{InUnits: 3, Act: "tanh"}), nn.NewDense(2, nn.DenseOpts{InUnits: 4}))
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	return net, params
}

// backwardOn runs forward and backward of Σ net(x) on each given device
// with rows of x.
func backwardOn(t *testing.T, net gluon.Block, x *nd.NDArray, devs []ctx.Context) {
	t.Helper()
	parts, err := gluon.SplitAndLoad(x, devs, false)
	if err != nil {
		t.Fatal(err)
	}
	autograd.Record(func() {
		err = gluon.ForEachDevice(devs[:len(parts)], func(i int, _ ctx.Context) error {
			autograd.Backward(nd.Sum(net.Forward(parts[i])))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTrainerStaleGradient(t *testing.T) {
	devs := cpus(1)
	net, params := twoLayer(t, devs)
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	x := nd.Ones(ctx.CPU(0), nd.Float32, 2, 3)
	backwardOn(t, net, x, devs)
	if err := tr.Step(2); err != nil {
		t.Fatal(err)
	}
	err = tr.Step(2) // no backward since the last step
	if err == nil || !strings.Contains(err.Error(), "dense0.weight") || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("second step without backward: %v, want a stale-gradient error naming dense0.weight", err)
	}
	before := params.Get("dense0.weight").Data(ctx.CPU(0)).Float32s()
	if err := tr.StepIgnoreStale(2); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, params.Get("dense0.weight").Data(ctx.CPU(0)).Float32s()) {
		t.Error("StepIgnoreStale updated a parameter with a stale gradient")
	}
}

// TestTrainerFewerSamplesThanDevices: a batch of 2 over 4 devices leaves
// two devices without a backward pass; their stale gradients must not be
// summed, and every replica must still receive the same update.
func TestTrainerFewerSamplesThanDevices(t *testing.T) {
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0.5, 2}, 2, 3)
	run := func(devs []ctx.Context, warm bool) []float32 {
		net, params := twoLayer(t, devs)
		tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.5), "device", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		if warm { // a full step first, so that every replica has an old gradient
			backwardOn(t, net, nd.Ones(ctx.CPU(0), nd.Float32, 8, 3), devs)
			if err := tr.Step(8); err != nil {
				t.Fatal(err)
			}
		}
		backwardOn(t, net, x, devs)
		if err := tr.Step(2); err != nil {
			t.Fatal(err)
		}
		reps := params.Get("dense0.weight").ListData()
		for _, r := range reps[1:] {
			if !slices.Equal(r.Float32s(), reps[0].Float32s()) {
				t.Fatal("replicas diverged")
			}
		}
		return reps[0].Float32s()
	}
	one, four := run(cpus(1), true), run(cpus(4), true)
	for i := range one {
		if d := one[i] - four[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("4 devices with 2 samples differ from 1 device: %v vs %v", four, one)
		}
	}
}

func TestTrainerSplitStepEqualsStep(t *testing.T) {
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0.5, 2, 0, 1, 1, 2, 2, 2}, 4, 3)
	final := func(split bool) []float32 {
		devs := cpus(2)
		net, params := twoLayer(t, devs)
		opt := optimizer.NewSGD(0.2)
		opt.Momentum = 0.9
		tr, _ := gluon.NewTrainer(params, opt, "local", gluon.TrainerOpts{})
		for range 3 {
			backwardOn(t, net, x, devs)
			if split {
				if err := tr.AllReduceGrads(); err != nil {
					t.Fatal(err)
				}
				if err := tr.Update(4); err != nil {
					t.Fatal(err)
				}
			} else if err := tr.Step(4); err != nil {
				t.Fatal(err)
			}
		}
		return params.Get("dense1.weight").Data(ctx.CPU(1)).Float32s()
	}
	if a, b := final(false), final(true); !slices.Equal(a, b) {
		t.Errorf("AllReduceGrads+Update %v != Step %v", b, a)
	}
}

func TestTrainerConstructionAndSettings(t *testing.T) {
	_, params := twoLayer(t, cpus(2))
	if err := params.Get("dense1.bias").ResetContext(cpus(3)); err != nil {
		t.Fatal(err)
	}
	_, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{})
	if err == nil || !strings.Contains(err.Error(), "dense1.bias") || !strings.Contains(err.Error(), "[cpu(0) cpu(1) cpu(2)]") {
		t.Errorf("mixed context sets: %v", err)
	}
	_, params = twoLayer(t, cpus(1))
	if _, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "carrier-pigeon", gluon.TrainerOpts{}); err == nil {
		t.Error("unknown kvstore kind accepted")
	}
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{UpdateOnKVStore: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetLearningRate(0.05); err != nil || tr.LearningRate() != 0.05 {
		t.Errorf("SetLearningRate: %v, lr %g", err, tr.LearningRate())
	}
	for _, lr := range []float64{-0.1, math.NaN(), math.Inf(1)} {
		if err := tr.SetLearningRate(lr); err == nil || tr.LearningRate() != 0.05 {
			t.Errorf("SetLearningRate(%g): %v, lr now %g", lr, err, tr.LearningRate())
		}
	}
	if tr.AllReduceGrads() == nil || tr.Update(1) == nil {
		t.Error("AllReduceGrads/Update allowed with UpdateOnKVStore")
	}
	if tr.Step(0) == nil {
		t.Error("batch size 0 accepted")
	}
}

// TestNewTrainerValidatesOptimizer checks that hyper-parameters no
// training could want are errors when the trainer is built.
func TestNewTrainerValidatesOptimizer(t *testing.T) {
	_, params := twoLayer(t, []ctx.Context{ctx.CPU(0)})
	for _, c := range []struct {
		name string
		opt  optimizer.Optimizer
		want string
	}{
		{"negative lr", optimizer.NewSGD(-0.1), "learning rate"},
		{"momentum 1", &optimizer.SGD{Hyper: optimizer.Hyper{LR: 0.1}, Momentum: 1}, "momentum"},
		{"adam beta2", &optimizer.Adam{Hyper: optimizer.Hyper{LR: 0.1}, Beta1: 0.9, Beta2: 1.5, Epsilon: 1e-8}, "beta2"},
	} {
		_, err := gluon.NewTrainer(params, c.opt, "local", gluon.TrainerOpts{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: NewTrainer error %v, want one naming %q", c.name, err, c.want)
		}
	}
	if _, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{}); err != nil {
		t.Errorf("valid SGD: %v", err)
	}
}

// TestTrainerRescalePerUpdate: the trainer passes 1/batch with each update
// and leaves the optimizer's hyper-parameters as the user set them, so a
// user's RescaleGrad multiplies on top (Step(4) with RescaleGrad 2 is
// Step(2)), on the devices and on the kvstore alike.
func TestTrainerRescalePerUpdate(t *testing.T) {
	for _, onKV := range []bool{false, true} {
		run := func(batch int, rescale float64) []float64 {
			devs := cpus(2)
			net, params := twoLayer(t, devs)
			opt := optimizer.NewSGD(0.1)
			opt.RescaleGrad = rescale
			tr, err := gluon.NewTrainer(params, opt, "device", gluon.TrainerOpts{UpdateOnKVStore: onKV})
			if err != nil {
				t.Fatal(err)
			}
			backwardOn(t, net, nd.Ones(ctx.CPU(0), nd.Float32, 4, 3), devs)
			if err := tr.Step(batch); err != nil {
				t.Fatal(err)
			}
			if opt.RescaleGrad != rescale {
				t.Errorf("Step changed RescaleGrad from %g to %g", rescale, opt.RescaleGrad)
			}
			return params.Get(params.Names()[0]).Data(ctx.CPU(1)).Float64s()
		}
		want, got := run(2, 0), run(4, 2)
		for i := range want {
			if d := got[i] - want[i]; d > 1e-7 || d < -1e-7 {
				t.Fatalf("update on kvstore %v: weight[%d] %g, want %g", onKV, i, got[i], want[i])
			}
		}
	}
}
