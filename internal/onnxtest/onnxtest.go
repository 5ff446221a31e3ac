// Package onnxtest is the ONNX export round trip the tests share: export a
// network, load the file back with gluon/onnx, compare the outputs.
package onnxtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// ExportDirEnv names the environment variable that keeps the exported
// files in a directory (make onnx-check runs ONNX's checker on them).
const ExportDirEnv = "GOLUON_ONNX_EXPORT_DIR"

// RoundTrip saves net as <name>.onnx for the example input shape, loads it
// with onnx.Load and checks that, in predict mode, the loaded model's
// output for each input equals the network's within 1e-5 relative (L2).
func RoundTrip(t testing.TB, name string, net gluon.Block, shape []int, opts onnx.ExportOpts, inputs ...*nd.NDArray) {
	t.Helper()
	dir := os.Getenv(ExportDirEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name+".onnx")
	if err := onnx.Save(path, net, shape, opts); err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range inputs {
		var want, got []float32
		autograd.PredictMode(func() {
			want = net.Forward(x).Float32s()
			got = m.Forward(x).Float32s()
		})
		if len(got) != len(want) {
			t.Fatalf("input %v: %d outputs, want %d", x.Shape(), len(got), len(want))
		}
		if rel := numcmp.RelL2(got, want); rel > 1e-5 || rel != rel {
			t.Errorf("input %v: relative L2 difference %.3g", x.Shape(), rel)
		}
	}
}
