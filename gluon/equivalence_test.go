package gluon_test

import (
	"fmt"
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

type runConfig struct {
	devices  int
	kv       string
	onKV     bool
	momentum float64
	opts     gluon.TrainerOpts // UpdateOnKVStore is onKV
	adam     bool              // Adam instead of SGD
	lrMults  bool              // the dense layers' weights learn at half the rate
}

// trainLeNet trains LeNet for steps steps on synthetic data with a fixed
// global batch and returns the final parameters by name (from the first
// replica) after checking all replicas agree.
func trainLeNet(t *testing.T, c runConfig, steps int) map[string][]float32 {
	t.Helper()
	nd.Seed(2024)
	devs := make([]ctx.Context, c.devices)
	for i := range devs {
		devs[i] = ctx.CPU(i)
	}
	net := modelzoo.LeNet()
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	var opt optimizer.Optimizer
	if c.adam {
		opt = optimizer.NewAdam(1e-3)
	} else {
		sgd := optimizer.NewSGD(0.1)
		sgd.Momentum = c.momentum
		opt = sgd
	}
	if c.lrMults {
		for _, p := range params.List() {
			if strings.HasPrefix(p.Name(), "dense") && strings.HasSuffix(p.Name(), "weight") {
				p.LRMult = 0.5
			}
		}
	}
	o := c.opts
	o.UpdateOnKVStore = c.onKV
	tr, err := gluon.NewTrainer(params, opt, c.kv, o)
	if err != nil {
		t.Fatal(err)
	}
	const batch = 32
	host := nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, max(steps, 1)*batch, 1, 28, 28)
	labelsHost := make([]float32, max(steps, 1)*batch)
	for i := range labelsHost {
		labelsHost[i] = float32((i * 7) % 10)
	}
	allLabels := nd.FromSlice(ctx.CPU(0), labelsHost)
	if steps == 0 { // materialise the deferred parameters without training
		autograd.Pause(func() { net.Forward(host.AsIn(devs[0])) })
	}
	for s := range steps {
		scope := nd.NewScope()
		x := nd.SliceAxis(host, s*batch, (s+1)*batch, 0)
		y := nd.SliceAxis(allLabels, s*batch, (s+1)*batch, 0)
		if err := traintest.Backward(net, traintest.SoftmaxCE, x, y, devs, true); err != nil {
			t.Fatal(err)
		}
		if err := tr.Step(batch); err != nil {
			t.Fatal(err)
		}
		scope.Close()
	}
	out, err := traintest.Snapshot(params)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// relDiff is ‖a−b‖ / ‖a‖.
var relDiff = traintest.RelDiff

// TestEquivalenceAcrossContexts is the equivalence test: LeNet
// trained 20 steps with the same seed and global batch on 1, 2 and 4 CPU
// contexts, with both kvstore kinds (and with the update on the kvstore),
// ends with the same parameters to within 1e-6 relative (measured: at most
// 3.2e-7; README.md quotes both numbers).
func TestEquivalenceAcrossContexts(t *testing.T) {
	steps := 20
	if testing.Short() {
		steps = 5
	}
	initial := trainLeNet(t, runConfig{devices: 1, kv: "local"}, 0)
	for _, mom := range []float64{0, 0.9} {
		ref := trainLeNet(t, runConfig{devices: 1, kv: "local", momentum: mom}, steps)
		for name, w := range ref { // guard against a vacuous pass: training must move every parameter
			if d := relDiff(w, initial[name]); d < 1e-3 {
				t.Fatalf("%s moved only %.3g relative in %d steps: is the trainer updating?", name, d, steps)
			}
		}
		for _, c := range []runConfig{
			{devices: 1, kv: "device"}, {devices: 2, kv: "local"}, {devices: 2, kv: "device"},
			{devices: 4, kv: "local"}, {devices: 4, kv: "device"}, {devices: 4, kv: "device", onKV: true},
		} {
			c.momentum = mom
			t.Run(fmt.Sprintf("momentum%v/%dctx/%s/onkv=%v", mom, c.devices, c.kv, c.onKV), func(t *testing.T) {
				got := trainLeNet(t, c, steps)
				worst := 0.0
				for name, want := range ref {
					d := relDiff(want, got[name])
					worst = max(worst, d)
					if d > 1e-6 {
						t.Errorf("%s differs from the 1-context run by %.3g relative", name, d)
					}
				}
				t.Logf("largest relative difference from 1 context: %.3g", worst)
			})
		}
	}
}

// TestTrainingBitwiseReproducible runs the same multi-device training
// twice and requires identical parameters.
func TestTrainingBitwiseReproducible(t *testing.T) {
	c := runConfig{devices: 4, kv: "device", momentum: 0.9}
	a, b := trainLeNet(t, c, 5), trainLeNet(t, c, 5)
	for name := range a {
		if !slices.Equal(a[name], b[name]) {
			t.Fatalf("%s differs between two identical runs", name)
		}
	}
}
