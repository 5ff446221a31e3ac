package text_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// bertBatch returns ids in [1, 99), token types (the second half of each
// row 1) and a mask (sample i has its last i%3 positions padded) for a
// batch of b sequences of n tokens.
func bertBatch(dev ctx.Context, b, n int) (ids, types, mask *nd.NDArray) {
	v, tt, mk := make([]int64, b*n), make([]int64, b*n), make([]int64, b*n)
	for i := range v {
		row, col := i/n, i%n
		v[i] = int64((i*37+11)%98 + 1)
		if col >= n/2 {
			tt[i] = 1
		}
		if col < n-row%3 || col == 0 {
			mk[i] = 1
		}
	}
	return nd.FromSlice(dev, v, b, n), nd.FromSlice(dev, tt, b, n), nd.FromSlice(dev, mk, b, n)
}

// TestBertExportONNX: the BERT models export to ONNX, on token ids alone
// (onnx.Export) and on (input_ids, token_type_ids, attention_mask) with
// optional inputs left out (onnx.ExportMulti), batch and length free; the
// files, loaded back with gluon/onnx, give the models' outputs (1e-5
// relative) at other batch sizes and lengths. With GOLUON_ONNX_EXPORT_DIR
// set the files stay there with their inputs and outputs, for
// tools/onnx_ort_check.js (ONNX Runtime).
func TestBertExportONNX(t *testing.T) {
	dev := ctx.CPU(0)
	cls, mlm := tinyClassifier(t), tinyMLM(t)
	base := cls.Bert()
	t.Run("ids only", func(t *testing.T) {
		ids := func(b, n int) *nd.NDArray { x, _, _ := bertBatch(dev, b, n); return x }
		onnxtest.RoundTrip(t, "bert-cls-tiny", cls, []int{2, 9}, onnx.ExportOpts{InputDType: nd.Int64, FreeAxes: []int{1}},
			ids(2, 9), ids(3, 5), ids(1, 16))
	})
	for _, c := range []struct {
		name        string
		net         gluon.Component
		types, mask bool
		outs        []string
	}{
		{"bert-model-tiny", base, true, true, []string{"last_hidden_state", "pooler_output"}},
		{"bert-cls-multi-tiny", cls, true, true, []string{"logits"}},
		{"bert-mlm-mask-tiny", mlm, false, true, []string{"logits"}},
		{"bert-cls-types-tiny", cls, true, false, []string{"logits"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ids, tt, mask := bertBatch(dev, 2, 7)
			ins := []onnx.ExportInput{{Name: "input_ids", DType: nd.Int64, Example: ids, FreeAxes: []int{1}},
				{Name: "token_type_ids", DType: nd.Int64, Example: tt, FreeAxes: []int{1}, Omitted: !c.types},
				{Name: "attention_mask", DType: nd.Int64, Example: mask, FreeAxes: []int{1}, Omitted: !c.mask}}
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
			for _, size := range [][2]int{{3, 11}, {1, 4}} {
				ids, tt, mask := bertBatch(dev, size[0], size[1])
				io := ""
				if size[0] == 3 && os.Getenv(onnxtest.ExportDirEnv) != "" {
					io = filepath.Join(dir, c.name+".io.json")
				}
				compareONNX(t, c.net, loaded, ins, []*nd.NDArray{ids, tt, mask}, c.outs, size, io)
			}
		})
	}
}

// compareONNX runs net eagerly and the loaded export on the arrays (ids,
// token types, mask) that ins does not omit, compares every output
// (relative L2 below 1e-5; size names the case) and, when io is not "",
// writes the inputs and outputs there for tools/onnx_ort_check.js.
func compareONNX(t *testing.T, net gluon.Component, loaded *onnx.Model, ins []onnx.ExportInput, arrays []*nd.NDArray, outs []string, size any, io string) {
	t.Helper()
	full := []*nd.NDArray{arrays[0], nil, nil}
	var xs []*nd.NDArray
	var names []string
	for i, a := range arrays {
		if !ins[i].Omitted {
			full[i] = a
			xs = append(xs, a)
			names = append(names, ins[i].Name)
		}
	}
	var want, got []*nd.NDArray
	autograd.PredictMode(func() {
		want = gluon.Call(net, full...)
		got = loaded.ForwardMulti(xs...)
	})
	if len(got) != len(outs) {
		t.Fatalf("%d outputs, want %d", len(got), len(outs))
	}
	for j := range got {
		if r := numcmp.RelL2(got[j].Float32s(), want[j].Float32s()); !(r < 1e-5) {
			t.Errorf("size %v, %s: relative difference %.3g", size, outs[j], r)
		}
	}
	if io != "" {
		if err := onnxtest.WriteIOMulti(io, names, xs, outs, want); err != nil {
			t.Fatal(err)
		}
	}
}
