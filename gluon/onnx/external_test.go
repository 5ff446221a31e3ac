package onnx_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// TestExternalData: a model whose weights onnx.save_model wrote to a file
// beside it (testdata/make_external.py, as large models are saved) loads,
// its weights as parameters, and gives numpy's output; a location outside
// the model's directory, a missing file and a short one are errors.
func TestExternalData(t *testing.T) {
	m, err := onnx.Load(filepath.Join("testdata", "external.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if n := gluon.CollectParams(m).Len(); n != 2 {
		t.Errorf("%d parameters, want 2", n)
	}
	f, err := safetensors.ReadFile(filepath.Join("testdata", "external_io.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	in, _ := f.Tensors["input"].Float32s()
	want, _ := f.Tensors["output"].Float32s()
	if e := relErr(m.Forward(nd.FromSlice(ctx.CPU(0), in, 2, 4)).Float32s(), want); e > 1e-6 {
		t.Errorf("relative error %.3g", e)
	}

	model, err := os.ReadFile(filepath.Join("testdata", "external.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	weights, err := os.ReadFile(filepath.Join("testdata", "external.weights.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		model   []byte
		weights []byte
		want    string
	}{
		{"missing file", model, nil, "external.weights.bin"},
		{"short file", model, weights[:50], "fewer than 12 bytes"},
		// The same length, so the protobuf stays valid.
		{"outside the directory", []byte(strings.Replace(string(model), "external.weights.bin", "../xternal.weights.b", 1)), weights, "in the model's directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "m.onnx"), c.model, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.weights != nil {
				if err := os.WriteFile(filepath.Join(dir, "external.weights.bin"), c.weights, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := onnx.Load(filepath.Join(dir, "m.onnx")); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}
