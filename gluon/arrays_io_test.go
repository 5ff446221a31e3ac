package gluon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

func TestSaveLoadArraysEveryDType(t *testing.T) {
	dev := ctx.CPU(0)
	arrays := map[string]*nd.NDArray{
		"f32":  nd.FromSlice(dev, []float32{1.5, -2, 3}, 3),
		"f64":  nd.FromSlice(dev, []float64{1e-300, 2, 3, 4}, 2, 2),
		"i32":  nd.FromSlice(dev, []int32{-2147483648, 0, 7}, 3, 1),
		"i64":  nd.FromSlice(dev, []int64{1 << 62, -1}, 2),
		"u8":   nd.FromSlice(dev, []uint8{0, 255}, 2),
		"bool": nd.FromSlice(dev, []bool{true, false, true, true}, 2, 2),
		"0-d":  nd.Reshape(nd.FromSlice(dev, []float32{5}, 1)),
	}
	path := filepath.Join(t.TempDir(), "arrays.safetensors")
	if err := gluon.SaveArrays(path, arrays); err != nil {
		t.Fatal(err)
	}
	got, err := gluon.LoadArrays(path, ctx.CPU(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(arrays) {
		t.Fatalf("loaded %d arrays, want %d", len(got), len(arrays))
	}
	for name, want := range arrays {
		g := got[name]
		if g.DType() != want.DType() || !cmp.Equal(g.Shape(), want.Shape()) || g.Context() != ctx.CPU(1) {
			t.Errorf("%s: loaded %v %v on %v, want %v %v on cpu(1)", name, g.DType(), g.Shape(), g.Context(), want.DType(), want.Shape())
			continue
		}
		if g.String() != strings.Replace(want.String(), "cpu(0)", "cpu(1)", 1) {
			t.Errorf("%s: loaded %v, want %v", name, g, want)
		}
	}
}

func TestLoadArraysCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := gluon.SaveArrays(path, map[string]*nd.NDArray{"x": nd.FromSlice(ctx.CPU(0), []int64{1, 2, 3})}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)-4], 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := gluon.LoadArrays(path, ctx.CPU(0)); err == nil || got != nil {
		t.Errorf("LoadArrays of a truncated file = %v, %v; want an error and no arrays", got, err)
	}
}

func TestLoadArraysReadsTorchSaveFiles(t *testing.T) {
	got, err := gluon.LoadArrays("pytorch/testdata/checkpoint.pt", ctx.CPU(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"model.0.weight", "model.1.num_batches_tracked", "optimizer.state.0.exp_avg"} {
		if got[name] == nil {
			t.Errorf("no %s among %d arrays", name, len(got))
		}
	}
	if a := got["model.1.num_batches_tracked"]; a != nil && (a.DType() != nd.Int64 || a.Int64s()[0] != 2) {
		t.Errorf("num_batches_tracked is %v %v, want int64 2", a.DType(), a.Int64s())
	}
}

// TestLoadArraysNamesTorchFileProblems: a file of PyTorch's legacy format
// and a truncated torch.save archive get errors that say so, not a
// safetensors parse error.
func TestLoadArraysNamesTorchFileProblems(t *testing.T) {
	whole, err := os.ReadFile("pytorch/testdata/state_dict.pt")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.pt")
	if err := os.WriteFile(cut, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"pytorch/testdata/legacy.pt": "legacy format",
		cut:                          "truncated or corrupt",
	} {
		if _, err := gluon.LoadArrays(path, ctx.CPU(0)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one containing %q", path, err, want)
		}
	}
}
