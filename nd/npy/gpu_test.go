//go:build cuda || cudaemu

package npy_test

// With -tags cuda (or cudaemu) arrays are loaded onto gpu(0) and saved
// from it.

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	_ "github.com/goluon/goluon/cuda"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/npy"
)

func TestOnGPU(t *testing.T) {
	a, err := npy.Load("testdata/fortran.npy", ctx.GPU(0))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	if a.Context() != ctx.GPU(0) || !slices.Equal(a.Shape(), []int{2, 3, 4}) {
		t.Fatalf("loaded onto %v with shape %v", a.Context(), a.Shape())
	}
	path := filepath.Join(t.TempDir(), "a.npz")
	if err := npy.SaveZ(path, map[string]*nd.NDArray{"a": a}); err != nil {
		t.Fatal(err)
	}
	got, err := npy.LoadZ(path, ctx.CPU(0))
	if err != nil {
		t.Fatal(err)
	}
	defer got["a"].Release()
	want := make([]float64, 24)
	for i := range want {
		want[i] = float64(i)
	}
	if !slices.Equal(got["a"].Float64s(), want) {
		t.Errorf("got %v, want %v", got["a"].Float64s(), want)
	}
}
