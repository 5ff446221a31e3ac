package gluon_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// TestHybridizeAfterReplaceChild: a hybridized network whose child is
// replaced (a new head for transfer learning) runs the new child, in
// predict mode and recording; it used to replay the old head's graph, and
// a recorded pass failed with a trace error.
func TestHybridizeAfterReplaceChild(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	net := nn.NewSequential(nn.NewDense(4, nn.DenseOpts{InUnits: 3, Act: "relu"}), nn.NewDense(2, nn.DenseOpts{InUnits: 4}))
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, dev, false); err != nil {
		t.Fatal(err)
	}
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	x := nd.RandomUniform(dev[0], nd.Float32, -1, 1, 5, 3)
	autograd.PredictMode(func() { h.Forward(x); h.Forward(x) })
	head := nn.NewDense(7, nn.DenseOpts{InUnits: 4})
	net.ReplaceChild("dense1", head)
	if err := gluon.CollectParams(head).Initialize(initializer.Xavier{}, dev, false); err != nil {
		t.Fatal(err)
	}
	var y, want *nd.NDArray
	autograd.PredictMode(func() { y, want = h.Forward(x), net.Forward(x) })
	if !slices.Equal(y.Shape(), []int{5, 7}) || !slices.Equal(y.Float32s(), want.Float32s()) {
		t.Fatalf("hybridized %v %v, eager %v %v", y.Shape(), y.Float32s()[:3], want.Shape(), want.Float32s()[:3])
	}
	head.Weight.ZeroGrad()
	err := nd.Catch(func() {
		autograd.Record(func() { autograd.Backward(nd.Sum(h.Forward(x))) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := head.Weight.ListData()[0]; g == nil || nd.Sum(nd.Abs(head.Weight.Grad(dev[0]))).Scalar() == 0 {
		t.Error("the new head got no gradient")
	}
}

// TestHybridizeAfterParameterFreeChange: adding or replacing a block that
// has no parameters (an activation) also makes the next call trace the new
// network; the old graph used to replay, its parameters being the same.
func TestHybridizeAfterParameterFreeChange(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	net := nn.NewSequential(nn.NewDense(4, nn.DenseOpts{InUnits: 3}))
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, dev, false); err != nil {
		t.Fatal(err)
	}
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	x := nd.RandomUniform(dev[0], nd.Float32, -1, 1, 5, 3)
	check := func(what string) {
		t.Helper()
		var y, want *nd.NDArray
		autograd.PredictMode(func() { h.Forward(x); y, want = h.Forward(x), net.Forward(x) })
		if !slices.Equal(y.Float32s(), want.Float32s()) {
			t.Fatalf("%s: hybridized %v, eager %v", what, y.Float32s()[:4], want.Float32s()[:4])
		}
	}
	check("before")
	net.Add(nn.NewActivation("relu"))
	check("after Add")
	net.ReplaceChild("relu0", nn.NewActivation("tanh"))
	check("after ReplaceChild")
}
