//go:build cuda || cudaemu

package gluon_test

// With -tags cuda this file links the CUDA backend into the gluon tests,
// so that they can use gpu(i) contexts, and adds the equivalence test on
// GPUs: LeNet trained on gpu(0) matches the CPU, and on 4 GPU contexts
// (GOLUON_VIRTUAL_GPUS=4 on a one-GPU machine) matches gpu(0).

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	_ "github.com/goluon/goluon/cuda"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
)

// trainLeNetOn trains LeNet with momentum SGD for steps steps of a global
// batch of 32 synthetic images split over devs, and returns the parameters.
func trainLeNetOn(t *testing.T, devs []ctx.Context, kv string, steps int) map[string][]float32 {
	t.Helper()
	nd.Seed(2024)
	net := modelzoo.LeNet()
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	opt := optimizer.NewSGD(0.1)
	opt.Momentum = 0.9
	tr, err := gluon.NewTrainer(params, opt, kv, gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 32
	host := nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, steps*batch, 1, 28, 28)
	labels := make([]float32, steps*batch)
	for i := range labels {
		labels[i] = float32((i * 7) % 10)
	}
	allLabels := nd.FromSlice(ctx.CPU(0), labels)
	for s := range steps {
		scope := nd.NewScope()
		x, y := nd.SliceAxis(host, s*batch, (s+1)*batch, 0), nd.SliceAxis(allLabels, s*batch, (s+1)*batch, 0)
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

func gpus(n int) []ctx.Context {
	out := make([]ctx.Context, n)
	for i := range out {
		out[i] = ctx.GPU(i)
	}
	return out
}

// compareParams fails when any parameter differs by more than tol relative.
func compareParams(t *testing.T, what string, want, got map[string][]float32, tol float64) {
	t.Helper()
	worst := 0.0
	for name, w := range want {
		d := traintest.RelDiff(w, got[name])
		worst = max(worst, d)
		if d > tol {
			t.Errorf("%s: %s differs by %.3g relative (tolerance %g)", what, name, d, tol)
		}
	}
	t.Logf("%s: largest relative difference %.3g", what, worst)
}

// TestEquivalenceGPU trains LeNet 20 steps on cpu(0), gpu(0) and, when
// there are 4 GPU contexts, on gpu(0..3) with both kvstore kinds.
func TestEquivalenceGPU(t *testing.T) {
	if ctx.NumGPUs() < 1 {
		t.Skip("no GPU context")
	}
	steps := 20
	if testing.Short() {
		steps = 5
	}
	cpu := trainLeNetOn(t, []ctx.Context{ctx.CPU(0)}, "local", steps)
	one := trainLeNetOn(t, gpus(1), "device", steps)
	compareParams(t, "gpu(0) vs cpu(0)", cpu, one, 1e-4)
	if ctx.NumGPUs() < 4 {
		t.Logf("only %d GPU context(s): set GOLUON_VIRTUAL_GPUS=4 for the 4-GPU runs", ctx.NumGPUs())
		return
	}
	for _, kv := range []string{"device", "local"} {
		four := trainLeNetOn(t, gpus(4), kv, steps)
		compareParams(t, "4 GPUs ("+kv+") vs gpu(0)", one, four, 1e-5)
	}
}
