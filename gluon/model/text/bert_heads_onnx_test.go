package text_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// TestBertHeadsExportONNX: the further heads export to ONNX, on token ids
// alone (onnx.Export) and on (input_ids, token_type_ids, attention_mask)
// with optional inputs left out (onnx.ExportMulti), batch, length (and
// the multiple-choice model's number of choices) free; the files, loaded
// back with gluon/onnx, give the models' outputs (1e-5 relative) at other
// sizes. With GOLUON_ONNX_EXPORT_DIR set the files stay there with their
// inputs and outputs, for tools/onnx_ort_check.js (ONNX Runtime).
func TestBertHeadsExportONNX(t *testing.T) {
	dev := ctx.CPU(0)
	cfg := tinyBert()
	nd.Seed(4)
	load := func(m text.BertNet) text.BertNet { loadBert(t, m, bertFixture, true); return m } // new heads at random
	tok := load(text.NewBertForTokenClassification(cfg))
	qa := load(text.NewBertForQuestionAnswering(cfg))
	pre := load(text.NewBertForPreTraining(cfg))
	nsp := load(text.NewBertForNextSentencePrediction(cfg))
	mc := load(text.NewBertForMultipleChoice(cfg))
	// batch returns the inputs of b sequences of n tokens, or of b
	// questions of choices sequences when choices > 0.
	batch := func(b, choices, n int) (ids, tt, mask *nd.NDArray) {
		if choices == 0 {
			return bertBatch(dev, b, n)
		}
		ids, tt, mask = bertBatch(dev, b*choices, n)
		return nd.Reshape(ids, b, choices, n), nd.Reshape(tt, b, choices, n), nd.Reshape(mask, b, choices, n)
	}
	t.Run("ids only", func(t *testing.T) {
		for _, c := range []struct {
			name    string
			net     gluon.Block
			choices int
		}{
			{"bert-token-cls-tiny", tok.(gluon.Block), 0},
			{"bert-qa-tiny", qa.(gluon.Block), 0},
			{"bert-pretraining-tiny", pre.(gluon.Block), 0},
			{"bert-nsp-tiny", nsp.(gluon.Block), 0},
			{"bert-choice-tiny", mc.(gluon.Block), 3},
		} {
			ids := func(b, n int) *nd.NDArray { x, _, _ := batch(b, c.choices, n); return x }
			shape, free := []int{2, 9}, []int{1}
			if c.choices > 0 {
				shape, free = []int{2, 3, 9}, []int{1, 2}
			}
			onnxtest.RoundTrip(t, c.name, c.net, shape, onnx.ExportOpts{InputDType: nd.Int64, FreeAxes: free},
				ids(2, 9), ids(3, 5), ids(1, 16))
		}
	})
	for _, c := range []struct {
		name        string
		net         gluon.Component
		choices     int
		types, mask bool
		outs        []string
	}{
		{"bert-token-cls-multi-tiny", tok, 0, true, true, []string{"logits"}},
		{"bert-qa-multi-tiny", qa, 0, true, true, []string{"start_logits", "end_logits"}},
		{"bert-pretraining-multi-tiny", pre, 0, true, true, []string{"prediction_logits", "seq_relationship_logits"}},
		{"bert-nsp-types-tiny", nsp, 0, true, false, []string{"logits"}},
		{"bert-choice-multi-tiny", mc, 3, true, true, []string{"logits"}},
		{"bert-choice-mask-tiny", mc, 2, false, true, []string{"logits"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ids, tt, mask := batch(2, c.choices, 7)
			free := []int{1}
			if c.choices > 0 {
				free = []int{1, 2}
			}
			ins := []onnx.ExportInput{{Name: "input_ids", DType: nd.Int64, Example: ids, FreeAxes: free},
				{Name: "token_type_ids", DType: nd.Int64, Example: tt, FreeAxes: free, Omitted: !c.types},
				{Name: "attention_mask", DType: nd.Int64, Example: mask, FreeAxes: free, Omitted: !c.mask}}
			dir := os.Getenv(onnxtest.ExportDirEnv)
			if dir == "" {
				dir = t.TempDir()
			}
			path := filepath.Join(dir, c.name+".onnx")
			if err := onnx.SaveMulti(path, c.net, ins, onnx.ExportOpts{OutputNames: c.outs}); err != nil {
				t.Fatal(err)
			}
			loaded, err := onnx.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range [][3]int{{3, c.choices + 1, 11}, {1, c.choices, 4}} {
				choices := size[1]
				if c.choices == 0 {
					choices = 0
				}
				ids, tt, mask := batch(size[0], choices, size[2])
				io := ""
				if size[0] == 3 && os.Getenv(onnxtest.ExportDirEnv) != "" {
					io = filepath.Join(dir, c.name+".io.json")
				}
				compareONNX(t, c.net, loaded, ins, []*nd.NDArray{ids, tt, mask}, c.outs, size, io)
			}
		})
	}
}
