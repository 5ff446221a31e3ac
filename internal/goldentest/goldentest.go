// Package goldentest holds what the tests against PyTorch goldens share:
// the JSON form of a tensor the generator scripts write, and the
// comparison of a result with it.
package goldentest

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// Tensor is a tensor as the golden scripts write it: its shape and its
// row-major values as float64 (a Bool tensor as 0 and 1, with Bool set).
type Tensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
	Bool  bool      `json:"bool"`
}

// Array returns the tensor as a float64 (or Bool) array on dev.
func (a Tensor) Array(dev ctx.Context) *nd.NDArray {
	if !a.Bool {
		return nd.FromSlice(dev, a.Data, a.Shape...)
	}
	b := make([]bool, len(a.Data))
	for i, v := range a.Data {
		b[i] = v != 0
	}
	return nd.FromSlice(dev, b, a.Shape...)
}

// Compare fails t unless got has want's shape and every value is within
// tol of want's, relative to 1+|want| (a NaN fails), and returns the
// largest such difference (+Inf after a failure).
func Compare(t testing.TB, what string, got *nd.NDArray, want Tensor, tol float64) float64 {
	t.Helper()
	if !slices.Equal(got.Shape(), want.Shape) {
		t.Errorf("%s: shape %v, PyTorch %v", what, got.Shape(), want.Shape)
		return math.Inf(1)
	}
	worst := 0.0
	for i, g := range got.Float64s() {
		d := math.Abs(g-want.Data[i]) / (1 + math.Abs(want.Data[i]))
		if !(d <= tol) {
			t.Errorf("%s[%d] = %.15g, PyTorch %.15g", what, i, g, want.Data[i])
			return math.Inf(1)
		}
		worst = max(worst, d)
	}
	return worst
}

// Cases reads a golden file of the form {"cases": [...]} into cases of
// type C, failing t when the file is missing, malformed or has no case.
func Cases[C any](t testing.TB, path string) []C {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []C `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(f.Cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return f.Cases
}
