package gluon_test

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// A hybridized Dense called once on its own weight (an input that is a
// bound array), then on another array of the same signature: the replay
// reads the new input where the weight should be.
func TestHybridizeInputIsParameter(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(1)
	net := nn.NewDense(4, nn.DenseOpts{NoBias: true, InUnits: 4})
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		t.Fatal(err)
	}
	w := net.Weight.Data(dev)
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	h.Forward(w)
	x := nd.RandomUniform(dev, nd.Float32, 0, 1, 4, 4).Persist()
	x.AttachGrad(nd.GradWrite) // same signature as w
	want := net.Forward(x).Float32s()
	got := h.Forward(x).Float32s()
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("hybrid %v, eager %v (stats %+v)", got, want, h.Stats())
		}
	}
}
