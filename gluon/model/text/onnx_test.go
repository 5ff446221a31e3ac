package text_test

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// TestExportONNX: the fixture's GPT-2 exports to ONNX with token-id
// input, batch and sequence length free, and the file, loaded back with
// gluon/onnx, gives the model's logits (1e-5 relative) for the example
// shape and for other batch sizes and lengths; so does the fixture under
// config.json's attention flags (scale_attn_weights false,
// scale_attn_by_inverse_layer_idx true). With GOLUON_ONNX_EXPORT_DIR set
// the files stay there for tools/onnx_ort_check.js (ONNX Runtime).
func TestExportONNX(t *testing.T) {
	dev := ctx.CPU(0)
	m := loadTiny(t, tinyConfig())
	ids := func(b, n int) *nd.NDArray {
		v := make([]int64, b*n)
		for i := range v {
			v[i] = int64((i*37 + 11) % 97)
		}
		return nd.FromSlice(dev, v, b, n)
	}
	onnxtest.RoundTrip(t, "gpt2-tiny", m, []int{2, 9}, onnx.ExportOpts{InputDType: nd.Int64, FreeAxes: []int{1}},
		ids(2, 9), ids(3, 5), ids(1, 32))
	// config.json's attention flags: the scores unscaled by √head_dim,
	// divided by layer_idx+1 (TestGoldensAttnScaling checks the model).
	cfg, no := tinyConfig(), false
	cfg.ScaleAttnWeights, cfg.ScaleAttnByInverseLayerIdx = &no, true
	onnxtest.RoundTrip(t, "gpt2-tiny-attn-flags", loadTiny(t, cfg), []int{2, 9}, onnx.ExportOpts{InputDType: nd.Int64, FreeAxes: []int{1}},
		ids(2, 9), ids(1, 32))
}
