package amp_test

import (
	"math"
	"path/filepath"
	"slices"
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

func TestLossScalerSchedule(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     amp.ScalerOpts
		steps []bool // finite?
		want  float64
	}{
		{"start", amp.ScalerOpts{}, nil, 1 << 16},
		{"backoff", amp.ScalerOpts{}, []bool{false}, 1 << 15},
		{"growth after the interval", amp.ScalerOpts{GrowthInterval: 3}, []bool{true, true, true}, 1 << 17},
		{"not before", amp.ScalerOpts{GrowthInterval: 3}, []bool{true, true}, 1 << 16},
		{"overflow restarts the count", amp.ScalerOpts{GrowthInterval: 3}, []bool{true, true, false, true, true}, 1 << 15},
		{"bounded above", amp.ScalerOpts{GrowthInterval: 1, InitScale: 1 << 23}, []bool{true, true, true}, 1 << 24},
		{"bounded below", amp.ScalerOpts{InitScale: 2, MinScale: 1}, []bool{false, false, false}, 1},
		{"bfloat16 fixed at 1", amp.ScalerOpts{DType: nd.BFloat16, GrowthInterval: 1}, []bool{true, false, true}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := amp.NewLossScaler(tc.o)
			for _, f := range tc.steps {
				s.Update(f)
			}
			if got := s.LossScale(); got != tc.want {
				t.Errorf("scale %g, want %g", got, tc.want)
			}
		})
	}
}

// mlp returns an initialised two-layer network on devs.
func mlp(t *testing.T, devs []ctx.Context, bn bool) (*nn.Sequential, *gluon.ParamDict) {
	t.Helper()
	nd.Seed(21)
	layers := []gluon.Block{nn.NewDense(16, nn.DenseOpts{InUnits: 8, Act: "relu"})}
	if bn {
		layers = append(layers, nn.NewBatchNorm(nn.BatchNormOpts{InChannels: 16}))
	}
	layers = append(layers, nn.NewDense(4, nn.DenseOpts{InUnits: 16}))
	net := nn.NewSequential(layers...)
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	return net, params
}

// step runs one forward/backward/Step of net on (x, y), with autocast in
// dt when dt is half, the loss scaled by scaler when it is not nil.
func step(t *testing.T, net gluon.Block, tr *gluon.Trainer, x, y *nd.NDArray, dt nd.DType, scaler *amp.LossScaler) float64 {
	t.Helper()
	ce := loss.NewSoftmaxCrossEntropy()
	var l *nd.NDArray
	autograd.Record(func() {
		run := func() {
			l = nd.Sum(ce.Forward(net.Forward(x), y))
		}
		if dt.IsHalf() {
			nd.Autocast(dt, run)
		} else {
			run()
		}
		if scaler != nil {
			l = scaler.Scale(l)
		}
	})
	autograd.Backward(l)
	if err := tr.Step(x.Shape()[0]); err != nil {
		t.Fatal(err)
	}
	v := l.Float64s()[0]
	if scaler != nil {
		v /= scaler.LossScale()
	}
	return v
}

func batch() (x, y *nd.NDArray) {
	nd.Seed(22)
	x = nd.RandomNormal(ctx.CPU(0), nd.Float32, 0, 1, 32, 8)
	y = nd.RandomInt(ctx.CPU(0), nd.Int64, 0, 4, 32)
	return x, y
}

// TestScaledStepEqualsUnscaled: in float32 a power-of-two loss scale
// changes nothing — the Trainer divides it back exactly — so the weights
// after training with a scaler are bitwise those without.
func TestScaledStepEqualsUnscaled(t *testing.T) {
	x, y := batch()
	devs := []ctx.Context{ctx.CPU(0)}
	train := func(scaler *amp.LossScaler) []float32 {
		net, params := mlp(t, devs, false)
		tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		if scaler != nil {
			if err := tr.SetGradScaler(scaler); err != nil {
				t.Fatal(err)
			}
		}
		for range 5 {
			step(t, net, tr, x, y, nd.Float32, scaler)
		}
		return params.Get("dense0.weight").Data(devs[0]).Float32s()
	}
	if a, b := train(nil), train(amp.NewLossScaler(amp.ScalerOpts{})); !slices.Equal(a, b) {
		t.Error("training with a loss scale of 2^16 differs from training without")
	}
}

// TestOverflowSkipsStep: a scale so large that float16 gradients overflow
// makes the Trainer skip the step — no weight changes — and halves the
// scale; later steps train, and the loss falls as in float32.
func TestOverflowSkipsStep(t *testing.T) {
	x, y := batch()
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	net, params := mlp(t, devs, true)
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	scaler := amp.NewLossScaler(amp.ScalerOpts{InitScale: 1e12})
	if err := tr.SetGradScaler(scaler); err != nil {
		t.Fatal(err)
	}
	w := params.Get("dense0.weight")
	before := w.Data(devs[1]).Float32s()
	step(t, net, tr, x, y, nd.Float16, scaler)
	if !tr.Stats().Skipped {
		t.Fatal("a step with overflowing float16 gradients was not skipped")
	}
	if !slices.Equal(before, w.Data(devs[1]).Float32s()) {
		t.Error("a skipped step changed the weights")
	}
	if got := scaler.LossScale(); got != 5e11 {
		t.Errorf("scale after an overflow %g, want 5e11", got)
	}
	first := math.NaN()
	for i := 0; i < 60 && math.IsNaN(first); i++ { // back off until the gradients fit
		if l := step(t, net, tr, x, y, nd.Float16, scaler); !tr.Stats().Skipped {
			first = l
		}
	}
	if math.IsNaN(first) {
		t.Fatalf("every step skipped down to scale %g", scaler.LossScale())
	}
	last := first
	for range 20 {
		last = step(t, net, tr, x, y, nd.Float16, scaler)
	}
	t.Logf("first finite step at scale %g: loss %.4g, 20 steps later %.4g", scaler.LossScale(), first, last)
	if !(last < 0.8*first) {
		t.Errorf("loss %g after 20 float16 steps from %g: not training", last, first)
	}
	if skipped, steps := scaler.Skipped(); skipped < 1 || steps < 22 {
		t.Errorf("scaler counted %d skipped of %d", skipped, steps)
	}
	if w.DType() != nd.Float32 || params.Get("batchnorm0.running_mean").DType() != nd.Float32 {
		t.Error("autocast changed a parameter's dtype")
	}
}

// TestScalerCheckpoint: SaveStates keeps the scale and growth count, and
// LoadStates restores them.
func TestScalerCheckpoint(t *testing.T) {
	x, y := batch()
	devs := []ctx.Context{ctx.CPU(0)}
	net, params := mlp(t, devs, false)
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	scaler := amp.NewLossScaler(amp.ScalerOpts{InitScale: 1 << 10})
	if err := tr.SetGradScaler(scaler); err != nil {
		t.Fatal(err)
	}
	scaler.Update(false)
	step(t, net, tr, x, y, nd.Float16, scaler)
	path := filepath.Join(t.TempDir(), "states")
	if err := tr.SaveStates(path); err != nil {
		t.Fatal(err)
	}
	fresh := amp.NewLossScaler(amp.ScalerOpts{})
	if err := tr.SetGradScaler(fresh); err != nil {
		t.Fatal(err)
	}
	if err := tr.LoadStates(path); err != nil {
		t.Fatal(err)
	}
	if got := fresh.LossScale(); got != 1<<9 {
		t.Errorf("restored scale %g, want 512", got)
	}
	if s, n := fresh.Skipped(); s != 1 || n != 2 {
		t.Errorf("restored counts %d of %d, want 1 of 2", s, n)
	}
}

// TestMasterWeights: float16 parameters (gluon.Cast) train through float32
// master copies. Updates far below half an ulp of the weights accumulate
// in the master copy and reach the weights; the weights track float32
// training, and BatchNorm's parameters stay float32.
func TestMasterWeights(t *testing.T) {
	x, y := batch()
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	train := func(dt nd.DType, lr float64, steps int) ([]float64, *gluon.ParamDict) {
		net, params := mlp(t, devs, true)
		if err := gluon.Cast(net, dt); err != nil {
			t.Fatal(err)
		}
		tr, err := gluon.NewTrainer(params, optimizer.NewAdam(lr), "local", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		xs := x.AsType(dt)
		for range steps {
			step(t, net, tr, xs, y, nd.Float32, nil)
		}
		return params.Get("dense0.weight").Data(devs[0]).AsType(nd.Float64).Float64s(), params
	}
	w16, p16 := train(nd.Float16, 1e-5, 30)
	if got := p16.Get("dense0.weight").DType(); got != nd.Float16 {
		t.Fatalf("weight dtype %v after Cast", got)
	}
	if got := p16.Get("batchnorm0.gamma").DType(); got != nd.Float32 {
		t.Errorf("BatchNorm gamma %v after Cast, want float32", got)
	}
	if got := p16.Get("dense0.weight").Data(devs[0]).Grad().DType(); got != nd.Float16 {
		t.Errorf("gradient dtype %v", got)
	}
	w0, _ := train(nd.Float16, 0, 0)
	moved := 0
	for i := range w16 {
		if w16[i] != w0[i] {
			moved++
		}
	}
	// Adam moves every weight by about lr per step, 3e-4 after 30 steps,
	// while one step (1e-5) is below half an ulp of most of them (weights
	// above 0.04): updated in float16 they would not move at all.
	if moved < 3*len(w16)/4 {
		t.Errorf("%d of %d weights moved after 30 steps of 1e-5", moved, len(w16))
	}
	w32, _ := train(nd.Float32, 1e-5, 30)
	var maxDiff float64
	for i := range w16 {
		maxDiff = math.Max(maxDiff, math.Abs(w16[i]-w32[i])/math.Max(math.Abs(w32[i]), 1e-3))
	}
	t.Logf("%d of %d weights moved; largest relative difference from float32 training %.3g", moved, len(w16), maxDiff)
	if maxDiff > 2e-3 {
		t.Errorf("float16 weights differ from float32 training by %.3g relative", maxDiff)
	}
}
