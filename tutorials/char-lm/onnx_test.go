package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/nd"
)

// TestExportONNX: the GPT exports to ONNX with token-id (int64) input, and
// the file, loaded back, gives the same logits (1e-5 relative) for another
// batch size at the exported sequence length.
func TestExportONNX(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(9)
	m := newGPT(modelOpts{Vocab: 17, Embed: 16, Heads: 2, Layers: 2, Context: 12, Dropout: 0.1})
	if err := gluon.CollectParams(m).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	const seq = 10
	dir := os.Getenv("GOLUON_ONNX_EXPORT_DIR") // make onnx-check keeps the file for onnx.checker
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "gpt.onnx")
	if err := onnx.Save(path, m, []int{2, seq}, onnx.ExportOpts{InputDType: nd.Int64}); err != nil {
		t.Fatal(err)
	}
	lm, err := onnx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, 3*seq)
	for i := range ids {
		ids[i] = int64((i*7 + 3) % 17)
	}
	x := nd.FromSlice(dev, ids, 3, seq)
	var want, got []float32
	autograd.PredictMode(func() {
		want = m.Forward(x).Float32s()
		got = lm.Forward(x).Float32s()
	})
	var num, den float64
	for i := range want {
		d := float64(got[i] - want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if rel := math.Sqrt(num / den); len(got) != len(want) || rel > 1e-5 {
		t.Errorf("%d logits (want %d), relative L2 difference %.3g", len(got), len(want), rel)
	}
}
