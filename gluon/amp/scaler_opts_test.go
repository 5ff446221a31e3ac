package amp_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/amp"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// TestNewLossScalerRefusesBadOptions: settings torch's GradScaler refuses
// are an argument error (a NaN initial scale skipped every step forever).
func TestNewLossScalerRefusesBadOptions(t *testing.T) {
	for _, o := range []amp.ScalerOpts{
		{InitScale: math.NaN()}, {InitScale: math.Inf(1)}, {InitScale: -1024},
		{GrowthFactor: 0.5}, {GrowthFactor: 1}, {BackoffFactor: 2}, {BackoffFactor: -0.5},
		{GrowthInterval: -3}, {MinScale: 1e9}, {MaxScale: math.NaN()},
	} {
		if err := nd.Catch(func() { amp.NewLossScaler(o) }); !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) {
			t.Errorf("%+v: %v, want an argument error", o, err)
		}
	}
	if s := amp.NewLossScaler(amp.ScalerOpts{}); s.LossScale() != 1<<16 {
		t.Errorf("default scale %v", s.LossScale())
	}
}

// TestUnscaleThenStepRefused: Step (or AllReduceGrads) on gradients that
// UnscaleGrads already divided is an error, not a second division (the
// weight moved by lr·g/scale); after a new backward pass it is a new round.
func TestUnscaleThenStepRefused(t *testing.T) {
	d, ps := ones(t)
	tr, err := gluon.NewTrainer(ps, optimizer.NewSGD(0.001), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	tr.SetGradScaler(amp.NewLossScaler(amp.ScalerOpts{InitScale: 1024}))
	backward(d, 1024, nd.Float32)
	if ok, err := tr.UnscaleGrads(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	before := weight0(ps)
	if err := tr.Step(1); err == nil || !strings.Contains(err.Error(), "UnscaleGrads") {
		t.Fatalf("Step after UnscaleGrads: %v, want an error", err)
	}
	if err := tr.AllReduceGrads(); err == nil {
		t.Fatal("AllReduceGrads after UnscaleGrads: no error")
	}
	if w := weight0(ps); w != before {
		t.Fatalf("a refused Step moved the weight: %v -> %v", before, w)
	}
	// The documented order: AllReduceGrads, UnscaleGrads, Update.
	if err := tr.AllReduceGrads(); err == nil {
		t.Fatal("still refused")
	}
	backward(d, 1024, nd.Float32)
	if err := tr.AllReduceGrads(); err != nil {
		t.Fatal(err)
	}
	if ok, err := tr.UnscaleGrads(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := tr.Update(1); err != nil {
		t.Fatal(err)
	}
	if w := weight0(ps); math.Abs(w-(before-0.001)) > 1e-6 {
		t.Errorf("weight %v after the update, want %v", w, before-0.001)
	}
}
