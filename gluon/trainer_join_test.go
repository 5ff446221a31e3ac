package gluon_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
)

// The tests of parameters that are not ready to train while frozen: not
// initialised, or on other contexts (traintest.LateNet's Late layer).

// TestTrainerFrozenApart: a frozen parameter need not be ready to train:
// left uninitialised or living on other contexts, the Trainer steps over
// the rest; unfrozen while so, Step says why it cannot train it, and
// Update and UnscaleGrads leave it alone.
func TestTrainerFrozenApart(t *testing.T) {
	for _, c := range []struct {
		name  string
		spare []ctx.Context // where the spare layer lives (nil: not initialised)
		want  string
	}{
		{"not initialised", nil, "not frozen but not initialised"},
		{"on other contexts", cpus(1), "all parameters must share one set of contexts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			devs := cpus(2)
			net := traintest.NewLateNet(modelzoo.LeNet(), false) // Late unused
			params := gluon.CollectParams(net)
			body := gluon.CollectParams(net.Body)
			if err := body.Initialize(initializer.Xavier{}, devs, false); err != nil {
				t.Fatal(err)
			}
			spare := gluon.CollectParams(net.Late)
			if c.spare != nil {
				if err := spare.Initialize(initializer.Xavier{}, c.spare, false); err != nil {
					t.Fatal(err)
				}
			}
			spare.SetGradReq(nd.GradNull)
			tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			x, y := lenetBatch(8)
			if err := lenetBackward(net, x, y, devs); err != nil {
				t.Fatal(err)
			}
			if err := tr.Step(8); err != nil {
				t.Fatalf("step beside a frozen layer %s: %v", c.name, err)
			}
			spare.SetGradReq(nd.GradWrite)
			if err := lenetBackward(net, x, y, devs); err != nil {
				t.Fatal(err)
			}
			if err := tr.Step(8); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("step with the spare layer unfrozen: %v, want an error containing %q", err, c.want)
			}
			// Update and UnscaleGrads leave it alone (it has not joined).
			if err := lenetBackward(net, x, y, devs); err != nil {
				t.Fatal(err)
			}
			if err := nd.Catch(func() {
				if _, err := tr.UnscaleGrads(); err != nil {
					t.Errorf("UnscaleGrads: %v", err)
				}
				if err := tr.Update(8); err != nil {
					t.Errorf("Update: %v", err)
				}
			}); err != nil {
				t.Errorf("UnscaleGrads and Update with the spare layer unfrozen: %v", err)
			}
		})
	}
}

// TestTrainerJoinsLater: a layer frozen and not initialised when the
// Trainer was first used, then initialised and unfrozen, enters the
// kvstore at the end of its first step and trains from the next one, on
// every path.
func TestTrainerJoinsLater(t *testing.T) {
	x, y := lenetBatch(8)
	for _, path := range freezePaths {
		t.Run(path.name, func(t *testing.T) {
			if path.cores > 0 {
				defer withCores(path.cores)()
			}
			devs := cpus(path.devs)
			nd.Seed(5)
			net := traintest.NewLateNet(modelzoo.LeNet(), false)
			if err := gluon.CollectParams(net.Body).Initialize(initializer.Xavier{}, devs, false); err != nil {
				t.Fatal(err)
			}
			late := gluon.CollectParams(net.Late)
			late.SetGradReq(nd.GradNull)
			tr, err := gluon.NewTrainer(gluon.CollectParams(net), optimizer.NewSGD(0.1), path.kv, path.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			step := func() {
				t.Helper()
				if err := lenetBackward(net, x, y, devs); err != nil {
					t.Fatal(err)
				}
				if err := tr.Step(8); err != nil {
					t.Fatal(err)
				}
			}
			step()
			if err := late.Initialize(initializer.Xavier{}, devs, false); err != nil {
				t.Fatal(err)
			}
			late.SetGradReq(nd.GradWrite)
			net.Use = true
			w := late.List()[0]
			before := firstReplicas(t, late)[w.Name()]
			step()
			if got := firstReplicas(t, late)[w.Name()]; !slices.Equal(got, before) {
				t.Errorf("%s changed at the step it joined", w.Name())
			}
			step()
			if got := firstReplicas(t, late)[w.Name()]; slices.Equal(got, before) {
				t.Errorf("%s was not trained the step after it joined", w.Name())
			}
		})
	}
}

// TestCompileStepFrozenFirst: CompileStep takes its contexts from the
// Trainer's first parameter that trains, not from a frozen, uninitialised
// layer registered before it, and the compiled step skips that layer.
func TestCompileStepFrozenFirst(t *testing.T) {
	devs := cpus(2)
	net := traintest.NewLateNet(modelzoo.LeNet(), true) // Late first, unused
	gluon.CollectParams(net.Late).SetGradReq(nd.GradNull)
	params := gluon.CollectParams(net)
	nd.Seed(5)
	if err := gluon.CollectParams(net.Body).Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	autograd.Pause(func() { net.Forward(nd.Zeros(devs[0], nd.Float32, 1, 1, 28, 28)) }) // deferred shapes
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	step, err := gluon.CompileStep(net, traintest.SoftmaxCE, tr, gluon.StepOpts{})
	if err != nil {
		t.Fatalf("CompileStep with a frozen, uninitialised first layer: %v", err)
	}
	if got := step.Contexts(); !slices.Equal(got, devs) {
		t.Errorf("contexts %v, want %v", got, devs)
	}
	x, y := lenetBatch(8)
	w := gluon.CollectParams(net.Body).List()[0]
	before := w.Data(devs[0]).Float32s()
	for range 2 {
		if _, err := step.Run(x, y); err != nil {
			t.Fatal(err)
		}
	}
	if slices.Equal(before, w.Data(devs[0]).Float32s()) {
		t.Errorf("%s did not train", w.Name())
	}
}
