package vision_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// TestLoadStateDictOlderNames: a ViT state dict with torchvision 0.13's
// MLP names (mlp.linear_1, mlp.linear_2), saved from a DataParallel model
// ("module." prefix), loads as today's names do.
func TestLoadStateDictOlderNames(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	build := func() vision.Model {
		return vision.NewViT(vision.ViTOptions{Options: vision.Options{Classes: 10}, ImageSize: 32, PatchSize: 8, Layers: 2, Heads: 2, HiddenDim: 16, MLPDim: 32})
	}
	a := build()
	pa := gluon.CollectParams(a)
	if err := vision.LoadStateDict(pa, filepath.Join("testdata", "vit.safetensors"), dev); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "vit.safetensors")
	if err := vision.SaveStateDict(pa, path); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := &safetensors.File{Tensors: map[string]safetensors.Tensor{}}
	renamed := 0
	for name, tensor := range f.Tensors {
		n := strings.Replace(strings.Replace(name, ".mlp.0.", ".mlp.linear_1.", 1), ".mlp.3.", ".mlp.linear_2.", 1)
		if n != name {
			renamed++
		}
		old.Tensors["module."+n] = tensor
	}
	if renamed == 0 {
		t.Fatal("no mlp.0 or mlp.3 names to rename")
	}
	oldPath := filepath.Join(t.TempDir(), "old.safetensors")
	if err := safetensors.WriteFile(oldPath, old); err != nil {
		t.Fatal(err)
	}
	b := build()
	if err := vision.LoadStateDict(gluon.CollectParams(b), oldPath, dev); err != nil {
		t.Fatal(err)
	}
	x := nd.RandomUniform(dev[0], nd.Float32, -1, 1, 2, 3, 32, 32)
	var ya, yb []float32
	autograd.PredictMode(func() { ya, yb = a.Forward(x).Float32s(), b.Forward(x).Float32s() })
	if !slices.Equal(ya, yb) {
		t.Error("the model loaded from the older names computes other outputs")
	}
}

// TestReplaceHeadKeepsDType: the new head of a network cast to float64 is
// float64 too (it was float32, and the forward pass failed), SqueezeNet's
// convolution as the others' Dense layers.
func TestReplaceHeadKeepsDType(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	for _, net := range []vision.Headed{
		vision.ResNet18(vision.Options{Classes: 10, Width: 8}),
		vision.SqueezeNet1_1(vision.Options{Classes: 10, Width: 16}),
	} {
		if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, dev, false); err != nil {
			t.Fatal(err)
		}
		if err := gluon.Cast(net, nd.Float64); err != nil {
			t.Fatal(err)
		}
		replaceHead(t, net, 3)
		var y *nd.NDArray
		err := nd.Catch(func() {
			autograd.PredictMode(func() { y = net.Forward(nd.RandomUniform(dev[0], nd.Float64, -1, 1, 2, 3, 32, 32)) })
		})
		if err != nil || y.DType() != nd.Float64 || !slices.Equal(y.Shape(), []int{2, 3}) {
			t.Fatalf("%s: forward after ReplaceHead: %v", net.Meta().Kind(), err)
		}
	}
}

// TestOptionErrors: options a model cannot take are argument errors
// (panics that nd.Catch returns), not networks of another layout.
func TestOptionErrors(t *testing.T) {
	for name, build := range map[string]func(){
		"groups on basic blocks":    func() { vision.ResNet18(vision.Options{Groups: 32}) },
		"no bottleneck width":       func() { vision.ResNeXt50_32x4d(vision.Options{Width: 4}) },
		"stochastic depth above 1":  func() { vision.EfficientNetB0(vision.Options{StochasticDepth: 1.5}) },
		"ConvNeXt's above 1":        func() { vision.ConvNeXtTiny(vision.Options{StochasticDepth: 2}) },
		"DenseNet without a growth": func() { vision.DenseNet121(vision.Options{Width: 1}) },
		"Swin heads not dividing":   func() { vision.NewSwin(vision.SwinOptions{Heads: [4]int{5, 6, 12, 24}}) },
		"Swin's above 1":            func() { vision.SwinT(vision.Options{StochasticDepth: 1.5}) },
		"RegNet's WM of 1": func() {
			vision.NewRegNet(vision.RegNetParams{Depth: 4, W0: 8, WA: 8, WM: 1, GroupWidth: 8}, vision.Options{})
		},
		"RegNet's W0 not of 8": func() {
			vision.NewRegNet(vision.RegNetParams{Depth: 4, W0: 12, WA: 8, WM: 2, GroupWidth: 8}, vision.Options{})
		},
		"ShuffleNet's odd widths": func() { vision.NewShuffleNetV2([3]int{4, 8, 4}, [5]int{24, 49, 96, 192, 1024}, vision.Options{}) },
		"transform of 1 channel": func() {
			vision.NewGoogLeNet(vision.InceptionOptions{Options: vision.Options{InChannels: 1}, TransformInput: new(true)})
		},
		"Inception's width 1": func() { vision.NewInceptionV3(vision.InceptionOptions{Options: vision.Options{Width: 1}}) },
	} {
		if err := nd.Catch(build); !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) {
			t.Errorf("%s: %v, want an argument error", name, err)
		}
	}
}

// TestLoadStateDictDenseNetCheckpointNames: a DenseNet state dict with the
// dense-layer names of torchvision's published checkpoints (norm.1,
// conv.1, norm.2, conv.2) loads as today's names do.
func TestLoadStateDictDenseNetCheckpointNames(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	build := func() vision.Model { return vision.DenseNet121(vision.Options{Classes: 10, Width: 6}) }
	path := filepath.Join("testdata", "densenet121.safetensors")
	a := build()
	if err := vision.LoadStateDict(gluon.CollectParams(a), path, dev); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := &safetensors.File{Tensors: map[string]safetensors.Tensor{}}
	renamed := 0
	for name, tensor := range f.Tensors {
		n := name
		for _, l := range []string{"norm1", "conv1", "norm2", "conv2"} {
			n = strings.Replace(n, "."+l+".", "."+l[:len(l)-1]+"."+l[len(l)-1:]+".", 1)
		}
		if n != name {
			renamed++
		}
		old.Tensors[n] = tensor
	}
	if _, ok := old.Tensors["features.denseblock1.denselayer1.norm.1.running_var"]; !ok || renamed == 0 {
		t.Fatalf("renamed %d, no features.denseblock1.denselayer1.norm.1.running_var", renamed)
	}
	oldPath := filepath.Join(t.TempDir(), "old.safetensors")
	if err := safetensors.WriteFile(oldPath, old); err != nil {
		t.Fatal(err)
	}
	b := build()
	if err := vision.LoadStateDict(gluon.CollectParams(b), oldPath, dev); err != nil {
		t.Fatal(err)
	}
	x := nd.RandomUniform(dev[0], nd.Float32, -1, 1, 2, 3, 32, 32)
	var ya, yb []float32
	autograd.PredictMode(func() { ya, yb = a.Forward(x).Float32s(), b.Forward(x).Float32s() })
	if !slices.Equal(ya, yb) {
		t.Error("the model loaded from the checkpoint names computes other outputs")
	}
}

// TestSaveStateDictZoo: for every model of the zoo, SaveStateDict writes
// exactly the keys and shapes of torchvision's state_dict (the
// num_batches_tracked counters included), and the file loads back into a
// fresh model that computes the same outputs.
func TestSaveStateDictZoo(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	for _, m := range zoo {
		t.Run(m.name, func(t *testing.T) {
			torchPath := filepath.Join("testdata", m.name+".safetensors")
			a := m.build()
			if err := vision.LoadStateDict(gluon.CollectParams(a), torchPath, dev); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), m.name+".safetensors")
			if err := vision.SaveStateDict(gluon.CollectParams(a), path); err != nil {
				t.Fatal(err)
			}
			torch, err := safetensors.ReadFile(torchPath)
			if err != nil {
				t.Fatal(err)
			}
			saved, err := safetensors.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(saved.Names(), torch.Names()) {
				t.Fatalf("saved keys differ from torchvision's:\n saved %v\n torch %v", saved.Names(), torch.Names())
			}
			for _, k := range torch.Names() {
				if !slices.Equal(saved.Tensors[k].Shape, torch.Tensors[k].Shape) {
					t.Errorf("%s: saved shape %v, torch %v", k, saved.Tensors[k].Shape, torch.Tensors[k].Shape)
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
