package gluon_test

import (
	"errors"
	"fmt"
	"math"
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

// TestAveraged checks SWA's equal average and EMA's decays (with warm-up)
// against sums written out, Apply's swap and restore (on error and panic
// too), CopyTo on every replica, and BatchNorm's statistics.
func TestAveraged(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	net := nn.NewSequential(nn.NewDense(2, nn.DenseOpts{InUnits: 3}), nn.NewBatchNorm(nn.BatchNormOpts{InChannels: 2}))
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	w := params.Get("dense0.weight")
	if w == nil {
		t.Fatalf("params %v", params.Names())
	}
	mean := params.Get("batchnorm0.running_mean")
	set := func(p *gluon.Parameter, v float64) {
		p.SetData(nd.Full(devs[0], p.DType(), v, p.Shape()...))
	}
	first := func(p *gluon.Parameter, dev ctx.Context) float64 { return p.Data(dev).Float64s()[0] }
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	values := []float64{1, 2, 6, 3}

	swa, err := gluon.NewAveraged(params, gluon.AverageOpts{})
	if err != nil {
		t.Fatal(err)
	}
	ema, _ := gluon.NewAveraged(params, gluon.AverageOpts{Decay: 0.5})
	warm, _ := gluon.NewAveraged(params, gluon.AverageOpts{Decay: 0.9, Warmup: true})
	stats, _ := gluon.NewAveraged(params, gluon.AverageOpts{Decay: 0.5, Statistics: true})
	wantEMA, wantWarm := 0.0, 0.0
	for n, v := range values {
		set(w, v)
		set(mean, 10*v)
		for _, a := range []*gluon.Averaged{swa, ema, warm, stats} {
			if err := a.Update(); err != nil {
				t.Fatal(err)
			}
		}
		if n == 0 {
			wantEMA, wantWarm = v, v
		} else {
			wantEMA = 0.5*wantEMA + 0.5*v
			d := math.Min(0.9, float64(1+n)/float64(10+n))
			wantWarm = d*wantWarm + (1-d)*v
		}
	}
	set(w, -7)
	set(mean, -70)
	check := func(name string, a *gluon.Averaged, wantW, wantMean float64) {
		t.Helper()
		if a.Count() != 4 {
			t.Errorf("%s: count %d", name, a.Count())
		}
		err := a.Apply(func() error {
			for _, dev := range devs {
				near(name+" weight in Apply on "+dev.String(), first(w, dev), wantW)
				near(name+" running mean in Apply", first(mean, dev), wantMean)
			}
			return errors.New("evaluation failed")
		})
		if err == nil || err.Error() != "evaluation failed" {
			t.Errorf("%s: Apply returned %v", name, err)
		}
		near(name+" weight restored", first(w, devs[1]), -7)
		near(name+" running mean restored", first(mean, devs[0]), -70)
	}
	check("swa", swa, 3, -70) // (1+2+6+3)/4; statistics left alone
	check("ema", ema, wantEMA, -70)
	check("ema warm-up", warm, wantWarm, -70)
	check("ema statistics", stats, wantEMA, 10*wantEMA)

	// A panic inside Apply still restores the weights.
	func() {
		defer func() { _ = recover() }()
		_ = swa.Apply(func() error { panic("boom") })
	}()
	near("weight after a panic", first(w, devs[0]), -7)

	if err := swa.CopyTo(); err != nil {
		t.Fatal(err)
	}
	for _, dev := range devs {
		near("CopyTo on "+dev.String(), first(w, dev), 3)
	}
	swa.Release()

	for name, opts := range map[string]gluon.AverageOpts{"decay 1": {Decay: 1}, "negative decay": {Decay: -0.1}, "NaN": {Decay: math.NaN()}} {
		if _, err := gluon.NewAveraged(params, opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	deferred := gluon.CollectParams(nn.NewDense(2, nn.DenseOpts{}))
	if _, err := gluon.NewAveraged(deferred, gluon.AverageOpts{}); err == nil {
		t.Error("an uninitialised parameter was accepted")
	}
}

// TestAveragedHalf: half-precision weights are averaged in float32, so
// many small steps are not lost to rounding.
func TestAveragedHalf(t *testing.T) {
	d := nn.NewDense(1, nn.DenseOpts{InUnits: 1, NoBias: true})
	params := gluon.CollectParams(d)
	if err := params.Initialize(initializer.Zero(), []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	if err := gluon.Cast(d, nd.BFloat16); err != nil {
		t.Fatal(err)
	}
	w := params.List()[0]
	a, err := gluon.NewAveraged(params, gluon.AverageOpts{})
	if err != nil {
		t.Fatal(err)
	}
	// 1000 updates alternating 1 and 1.0078125 (bfloat16 neighbours):
	// the mean 1.00390625 is not a bfloat16, but the float32 average is
	// exact until it is written back, rounded once.
	for i := range 1000 {
		v := 1.0
		if i%2 == 1 {
			v = 1.0078125
		}
		w.SetData(nd.Full(ctx.CPU(0), nd.BFloat16, v, 1, 1))
		if err := a.Update(); err != nil {
			t.Fatal(err)
		}
	}
	avg := a.Average(w)
	if avg.DType() != nd.Float32 || math.Abs(avg.Float64s()[0]-1.00390625) > 1e-6 {
		t.Errorf("average %v %v, want float32 1.00390625", avg.DType(), avg.Float64s())
	}
	var got float64
	_ = a.Apply(func() error { got = w.Data(ctx.CPU(0)).Float64s()[0]; return nil })
	if got != 1 && got != 1.0078125 { // the mean rounded once to a bfloat16 neighbour
		t.Errorf("averaged bfloat16 weight %v", got)
	}
	if a.Average(gluon.NewParameter("other", 1)) != nil {
		t.Error("an average for a parameter not averaged")
	}
}

// ExampleAveraged keeps an exponential moving average of a network's
// weights during training and evaluates with it.
func ExampleAveraged() {
	dev := ctx.CPU(0)
	net := nn.NewDense(1, nn.DenseOpts{InUnits: 1, NoBias: true})
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Zero(), []ctx.Context{dev}, false); err != nil {
		fmt.Println(err)
		return
	}
	ema, _ := gluon.NewAveraged(params, gluon.AverageOpts{Decay: 0.5})
	w := params.List()[0]
	for _, v := range []float32{4, 8, 8} { // stand-ins for three training steps
		w.SetData(nd.FromSlice(dev, []float32{v}, 1, 1))
		_ = ema.Update()
	}
	_ = ema.Apply(func() error {
		y := net.Forward(nd.Ones(dev, nd.Float32, 1, 1))
		fmt.Println("with the average:", y.Float32s()) // 4, then 6, then 7
		return nil
	})
	fmt.Println("afterwards:", net.Forward(nd.Ones(dev, nd.Float32, 1, 1)).Float32s())
	// Output:
	// with the average: [7]
	// afterwards: [8]
}

// TestAveragedApplyKeepsTraining: evaluating with the averages between
// steps leaves a half network's training as it was (restoring through
// SetData made the Trainer re-seed its float32 masters from the rounded
// half weights).
func TestAveragedApplyKeepsTraining(t *testing.T) {
	run := func(apply bool) []float64 {
		nd.Seed(2)
		net := nn.NewSequential(nn.NewDense(6, nn.DenseOpts{InUnits: 4, Act: "tanh"}), nn.NewDense(2, nn.DenseOpts{}))
		params := gluon.CollectParams(net)
		if err := params.Initialize(initializer.Xavier{}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
			t.Fatal(err)
		}
		if err := gluon.Cast(net, nd.Float16); err != nil {
			t.Fatal(err)
		}
		tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.05), "device", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		avg, err := gluon.NewAveraged(params, gluon.AverageOpts{Decay: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		x := nd.RandomNormal(ctx.CPU(0), nd.Float32, 0, 1, 8, 4).AsType(nd.Float16)
		for range 4 {
			autograd.Record(func() { autograd.Backward(nd.Sum(nd.Square(net.Forward(x)))) })
			if err := tr.Step(8); err != nil {
				t.Fatal(err)
			}
			_ = avg.Update()
			if apply {
				_ = avg.Apply(func() error { net.Forward(x); return nil })
			}
		}
		return params.List()[0].Data(ctx.CPU(0)).Float64s()
	}
	if !slices.Equal(run(false), run(true)) {
		t.Error("Apply between steps changed the training of a float16 network")
	}
}
