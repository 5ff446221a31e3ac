package vision_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/nd"
)

// TestLoadStateDictFromTorchSave: a checkpoint as torch.save writes it
// ({"epoch", "model_state_dict", "loss"}; make_checkpoint.py) loads
// without conversion and gives torchvision's output, with the same values
// as the safetensors file of that state dict.
func TestLoadStateDictFromTorchSave(t *testing.T) {
	dev := ctx.CPU(0)
	build := func() (vision.Headed, *gluon.ParamDict) {
		net := vision.NewAlexNet(vision.Options{Classes: 10, Width: 4, Hidden: 32, Dropout: -1})
		return net, gluon.CollectParams(net)
	}
	net, params := build()
	if err := vision.LoadStateDict(params, "testdata/alexnet_checkpoint.pth", []ctx.Context{dev}); err != nil {
		t.Fatal(err)
	}
	_, ref := build()
	if err := vision.LoadStateDict(ref, "testdata/alexnet.safetensors", []ctx.Context{dev}); err != nil {
		t.Fatal(err)
	}
	for _, name := range params.Names() {
		a, b := params.Get(name).Data(dev).Float32s(), ref.Get(name).Data(dev).Float32s()
		if !slices.Equal(a, b) {
			t.Fatalf("%s differs between the .pth and the safetensors file", name)
		}
	}
	in, shape, eval, _ := readIO(t, "alexnet")
	x := nd.FromSlice(dev, in, shape...)
	var got []float32
	autograd.PredictMode(func() { got = net.Forward(x).Float32s() })
	if e := relErr(got, eval); e > 1e-4 {
		t.Errorf("relative error %.3g against torchvision", e)
	}
}
