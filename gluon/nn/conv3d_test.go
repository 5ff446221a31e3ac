package nn_test

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

// TestConv3DLayers: the 3-D layers infer their input channels, give
// PyTorch's output shapes, match nd's ops on their parameters, and refuse
// bad sizes.
func TestConv3DLayers(t *testing.T) {
	dev := ctx.CPU(0)
	conv := nn.NewConv3D(4, [3]int{3, 2, 2}, nn.Conv3DOpts{Pad: [3]int{1, 0, 1}, Stride: [3]int{2, 1, 1}})
	net := nn.NewSequential(conv, nn.NewMaxPool3D([3]int{2, 2, 2}, nn.Pool3DOpts{CeilMode: true}), nn.NewGlobalAvgPool3D())
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 3, 5, 6, 7)
	var y, c *nd.NDArray
	autograd.PredictMode(func() {
		c = conv.Forward(x)
		y = net.Forward(x)
	})
	if !slices.Equal(conv.Weight.Shape(), []int{4, 3, 3, 2, 2}) || !slices.Equal(c.Shape(), []int{2, 4, 3, 5, 8}) || !slices.Equal(y.Shape(), []int{2, 4, 1, 1, 1}) {
		t.Fatalf("weight %v, conv output %v, network output %v", conv.Weight.Shape(), c.Shape(), y.Shape())
	}
	want := nd.Conv3D(x, conv.Weight.Data(dev), conv.Bias.Data(dev), nd.Conv3DOpts{Pad: [3]int{1, 0, 1}, Stride: [3]int{2, 1, 1}})
	if !slices.Equal(c.Float32s(), want.Float32s()) {
		t.Fatal("the layer differs from nd.Conv3D")
	}
	for name, f := range map[string]func(){
		"kernel":   func() { nn.NewConv3D(4, [3]int{3, 0, 2}, nn.Conv3DOpts{}) },
		"groups":   func() { nn.NewConv3D(3, [3]int{1, 1, 1}, nn.Conv3DOpts{Groups: 2}) },
		"pool":     func() { nn.NewAvgPool3D([3]int{2, -1, 2}, nn.Pool3DOpts{}) },
		"input 4D": func() { conv.Forward(nd.Zeros(dev, nd.Float32, 2, 3, 5, 6)) },
	} {
		if err := nd.Catch(f); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
