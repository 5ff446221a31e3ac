package vision_test

import (
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
// float64 too (it was float32, and the forward pass failed).
func TestReplaceHeadKeepsDType(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	net := vision.ResNet18(vision.Options{Classes: 10, Width: 8})
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, dev, false); err != nil {
		t.Fatal(err)
	}
	if err := gluon.Cast(net, nd.Float64); err != nil {
		t.Fatal(err)
	}
	net.ReplaceHead(3)
	var y *nd.NDArray
	err := nd.Catch(func() {
		autograd.PredictMode(func() { y = net.Forward(nd.RandomUniform(dev[0], nd.Float64, -1, 1, 2, 3, 32, 32)) })
	})
	if err != nil || y.DType() != nd.Float64 || !slices.Equal(y.Shape(), []int{2, 3}) {
		t.Fatalf("forward after ReplaceHead: %v", err)
	}
}
