package gluon_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// TestSaveLoadHalfArrays: Float16 and BFloat16 arrays go to safetensors
// as F16 and BF16 (2 bytes an element, little-endian bits) and come back
// with their dtype and bits.
func TestSaveLoadHalfArrays(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{1, -2.5, 0.1, 65504, 1e-7, 3}, 2, 3)
	arrays := map[string]*nd.NDArray{"h": x.AsType(nd.Float16), "b": x.AsType(nd.BFloat16), "f": x}
	path := filepath.Join(t.TempDir(), "half.safetensors")
	if err := gluon.SaveArrays(path, arrays); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"h": "F16", "b": "BF16", "f": "F32"} {
		tt := f.Tensors[name]
		if tt.DType != want || !slices.Equal(tt.Shape, []int{2, 3}) {
			t.Errorf("%s: %s %v, want %s [2 3]", name, tt.DType, tt.Shape, want)
		}
	}
	if n := len(f.Tensors["h"].Data); n != 12 {
		t.Errorf("F16 data: %d bytes, want 12", n)
	}
	back, err := gluon.LoadArrays(path, dev)
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range arrays {
		b := back[name]
		if b.DType() != a.DType() || !slices.Equal(b.Shape(), a.Shape()) || !slices.Equal(b.Float32s(), a.Float32s()) {
			t.Errorf("%s: loaded %v %v %v, saved %v %v %v", name, b.DType(), b.Shape(), b.Float32s(), a.DType(), a.Shape(), a.Float32s())
		}
	}
}
