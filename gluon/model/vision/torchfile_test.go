package vision_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/gluon/pytorch"
	"github.com/goluon/goluon/gluon/safetensors"
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

// TestSaveStateDictTorchFormat: a ".pth" path gets torch.save's format
// with torchvision's keys and shapes, and loads back to the same outputs.
func TestSaveStateDictTorchFormat(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	for _, m := range zoo {
		if m.name != "resnet18" && m.name != "mobilenetv2" && m.name != "swin_t" {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			a := m.build()
			if err := vision.LoadStateDict(gluon.CollectParams(a), filepath.Join("testdata", m.name+".safetensors"), dev); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), m.name+".pth")
			if err := vision.SaveStateDict(gluon.CollectParams(a), path); err != nil {
				t.Fatal(err)
			}
			saved, err := pytorch.LoadStateDict(path, dev[0])
			if err != nil {
				t.Fatal(err)
			}
			torch, err := safetensors.ReadFile(filepath.Join("testdata", m.name+".safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			if len(saved) != len(torch.Names()) {
				t.Errorf("%d tensors saved, torchvision has %d", len(saved), len(torch.Names()))
			}
			for _, k := range torch.Names() {
				if s := saved[k]; s == nil || !slices.Equal(s.Shape(), torch.Tensors[k].Shape) {
					t.Errorf("%s: saved %v, torch shape %v", k, s, torch.Tensors[k].Shape)
				}
			}
			b := m.build()
			if err := vision.LoadStateDict(gluon.CollectParams(b), path, dev); err != nil {
				t.Fatal(err)
			}
			in, shape, _, _ := readIO(t, m.name)
			x := nd.FromSlice(dev[0], in, shape...)
			var ya, yb []float32
			autograd.PredictMode(func() { ya, yb = a.Forward(x).Float32s(), b.Forward(x).Float32s() })
			if !slices.Equal(ya, yb) {
				t.Error("the reloaded model computes other outputs")
			}
		})
	}
}
