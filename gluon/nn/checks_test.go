package nn_test

import (
	"errors"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// TestLayerArgumentErrors: definitions a layer cannot run are refused
// when the layer is made (a negative group count used to pass and end in
// a runtime panic at the first forward pass; a negative in_units was read
// as "infer").
func TestLayerArgumentErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"conv2d negative groups", func() { nn.NewConv2D(4, 3, nn.Conv2DOpts{Groups: -1}) }},
		{"conv2d negative in_channels", func() { nn.NewConv2D(4, 3, nn.Conv2DOpts{InChannels: -2}) }},
		{"conv2d groups not dividing", func() { nn.NewConv2D(4, 3, nn.Conv2DOpts{Groups: 3}) }},
		{"dense negative in_units", func() { nn.NewDense(4, nn.DenseOpts{InUnits: -3}) }},
	} {
		if err := nd.Catch(c.f); !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) {
			t.Errorf("%s: %v, want an argument error", c.name, err)
		}
	}
}

// TestInstanceNormNeedsSpatialElements: over one value per instance and
// channel the output would be beta whatever the input; it is a shape
// error instead, as in PyTorch.
func TestInstanceNormNeedsSpatialElements(t *testing.T) {
	n := nn.NewInstanceNorm(nn.NormOpts{})
	if err := gluon.CollectParams(n).Initialize(nil, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	for _, shape := range [][]int{{2, 3}, {2, 3, 1}, {2, 3, 1, 1}} {
		err := nd.Catch(func() { n.Forward(nd.Ones(ctx.CPU(0), nd.Float32, shape...)) })
		if !errors.Is(err, &nd.Error{Kind: nd.ErrShape}) {
			t.Errorf("%v: %v, want a shape error", shape, err)
		}
	}
	if err := nd.Catch(func() { n.Forward(nd.Ones(ctx.CPU(0), nd.Float32, 2, 3, 2)) }); err != nil {
		t.Errorf("[2 3 2]: %v", err)
	}
}
