package prune_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// TestExportONNX exports the pruned network: the file's initializers are
// the weights as the layers use them, masked (conv0.weight, dense0.weight,
// dense0.bias with the masks' zeros), not weight_orig and weight_mask, and
// the loaded model computes the network's output (onnxtest.RoundTrip;
// with GOLUON_ONNX_EXPORT_DIR set the file stays there for
// tools/onnx_check.py and tools/onnx_ort_check.js, which run it in ONNX
// Runtime: make onnx-check does not list this package).
func TestExportONNX(t *testing.T) {
	net, conv, dense := prunedNet(t, nd.Float32)
	nd.Seed(2)
	x := nd.RandomNormal(cpu0, nd.Float32, 0, 1, 2, 2, 4, 4)
	onnxtest.RoundTrip(t, "pruned-convnet", net, []int{2, 2, 4, 4}, onnx.ExportOpts{}, x, nd.RandomNormal(cpu0, nd.Float32, 0, 1, 5, 2, 4, 4))

	path := filepath.Join(t.TempDir(), "pruned.onnx")
	if err := onnx.Save(path, net, []int{1, 2, 4, 4}, onnx.ExportOpts{}); err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*gluon.Parameter{"conv0.weight": conv.Weight, "dense0.weight": dense.Weight, "dense0.bias": dense.Bias}
	found := 0
	for _, p := range m.Params() {
		name := p.Name()
		if strings.HasSuffix(name, "_orig") || strings.HasSuffix(name, "_mask") {
			t.Errorf("initializer %s: the export should hold the masked weight only", name)
		}
		if w := want[name]; w != nil {
			found++
			equalSlice(t, name, p.Data(cpu0).Float64s(), w.Data(cpu0).Float64s())
		}
	}
	if found != len(want) {
		t.Errorf("%d of the pruned weights among the initializers %v", found, gluon.CollectParams(m).Names())
	}
}
