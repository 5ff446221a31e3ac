package text_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/gluon/pytorch"
	"github.com/goluon/goluon/nd"
)

// TestLoadPytorchModelBin: the fixture's state dict written as torch.save
// writes Hugging Face's pytorch_model.bin (with lm_head.weight and the
// attention-mask buffers) loads to the same model as the safetensors file;
// an untied head in such a file is reported.
func TestLoadPytorchModelBin(t *testing.T) {
	dev := ctx.CPU(0)
	arrays, err := gluon.LoadArrays(fixture, dev)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "pytorch_model.bin")
	if err := pytorch.SaveStateDict(bin, nil, arrays); err != nil {
		t.Fatal(err)
	}
	fromBin, err := text.LoadGPT2(bin, tinyConfig(), dev)
	if err != nil {
		t.Fatal(err)
	}
	ref := loadTiny(t, tinyConfig(), dev)
	ids := idsArray(dev, [][]int64{{1, 5, 9, 2}})
	var a, b []float32
	autograd.PredictMode(func() { a, b = fromBin.Forward(ids).Float32s(), ref.Forward(ids).Float32s() })
	if !slices.Equal(a, b) {
		t.Error("the .bin file's model computes other logits than the safetensors file's")
	}

	v := arrays["lm_head.weight"].Float32s()
	v[0]++
	arrays["lm_head.weight"] = nd.FromSlice(dev, v, arrays["lm_head.weight"].Shape()...)
	untied := filepath.Join(t.TempDir(), "untied.bin")
	if err := pytorch.SaveStateDict(untied, nil, arrays); err != nil {
		t.Fatal(err)
	}
	err = text.Load(text.NewGPT2(tinyConfig()), untied, dev)
	if le, ok := err.(*text.LoadError); !ok || !le.Untied {
		t.Errorf("err = %v, want a LoadError saying the head is untied", err)
	}
}
