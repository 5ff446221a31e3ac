package gluon_test

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// TestForEachDeviceSeesCallersSession: inside s.Record, every device's
// function works in s, not only the first one's (which runs on the
// caller's goroutine): with neutral inputs, the other devices used to run
// in the default session, not recording, and Backward failed (or, with
// the error ignored, the step trained on the first device's gradient
// only); in s.PredictMode they followed the default session's mode.
func TestForEachDeviceSeesCallersSession(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	net := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{InUnits: 2}))
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.One(), devs, false); err != nil {
		t.Fatal(err)
	}
	xs, err := gluon.SplitAndLoad(nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, 4}, 2, 2), devs, true)
	if err != nil {
		t.Fatal(err)
	}
	s := autograd.NewSession("learner")
	s.Record(func() {
		err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
			autograd.Backward(nd.Sum(net.Forward(xs[i])))
			return nil
		})
	})
	if err != nil {
		t.Fatalf("ForEachDevice in s.Record: %v", err)
	}
	for i, d := range devs {
		if g := nd.Sum(params.Get("dense0.weight").Grad(d)).Scalar(); g == 0 {
			t.Errorf("device %d got no gradient", i)
		}
	}
	// In s.PredictMode, dropout is off on every device, whatever mode the
	// default session is in.
	ys, _ := gluon.SplitAndLoad(nd.Ones(ctx.CPU(0), nd.Float32, 2, 100), devs, true)
	drop := nn.NewDropout(0.5)
	autograd.TrainMode(func() {
		s.PredictMode(func() {
			_ = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
				if v := nd.Sum(drop.Forward(ys[i])).Scalar(); v != 100 {
					t.Errorf("device %d: dropout active in s.PredictMode (sum %v)", i, v)
				}
				return nil
			})
		})
	})
}
