package main

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/onnxtest"
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
	ids := make([]int64, 3*seq)
	for i := range ids {
		ids[i] = int64((i*7 + 3) % 17)
	}
	onnxtest.RoundTrip(t, "gpt", m, []int{2, seq}, onnx.ExportOpts{InputDType: nd.Int64}, nd.FromSlice(dev, ids, 3, seq))
}
