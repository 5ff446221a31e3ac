package pytorch

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// savedCases are arrays of every writable dtype, a 0-d, an empty and a
// large-valued one.
func savedCases() (names []string, arrays map[string]*nd.NDArray) {
	dev := ctx.CPU(0)
	arrays = map[string]*nd.NDArray{
		"conv.weight":  nd.FromSlice(dev, []float32{1, -2.5, 3e-39, float32(math.Inf(-1)), 5, 6}, 1, 2, 3),
		"fc.bias":      nd.FromSlice(dev, []float64{math.Pi, math.Copysign(0, -1)}, 2),
		"half":         nd.FromSlice(dev, []nd.F16{nd.F16From(1.5), nd.F16From(-65504)}, 2),
		"bhalf":        nd.FromSlice(dev, []nd.BF16{nd.BF16From(0.1), nd.BF16From(-3e38)}, 1, 2),
		"ids":          nd.FromSlice(dev, []int32{math.MinInt32, 9}, 2),
		"bn.num_batch": nd.Reshape(nd.FromSlice(dev, []int64{math.MaxInt64}, 1)),
		"mask":         nd.FromSlice(dev, []bool{true, false, true}, 3),
		"bytes":        nd.FromSlice(dev, []uint8{0, 255}, 2),
		"empty":        nd.Zeros(dev, nd.Float32, 0, 4),
	}
	names = []string{"conv.weight", "fc.bias", "half", "bhalf", "ids", "bn.num_batch", "mask", "bytes", "empty"}
	return names, arrays
}

func TestSaveStateDictRoundTrip(t *testing.T) {
	names, arrays := savedCases()
	path := filepath.Join(t.TempDir(), "sd.pt")
	if err := SaveStateDict(path, names, arrays); err != nil {
		t.Fatal(err)
	}
	v, err := Load(path, ctx.CPU(0))
	if err != nil {
		t.Fatal(err)
	}
	d := v.(*Dict)
	var keys []string
	for _, k := range d.Keys {
		keys = append(keys, k.(string))
	}
	if !slices.Equal(keys, names) {
		t.Fatalf("keys %v, want %v in order", keys, names)
	}
	for i, name := range names {
		got, want := d.Values[i].(*nd.NDArray), arrays[name]
		if got.DType() != want.DType() || !slices.Equal(got.Shape(), want.Shape()) ||
			!slices.Equal(hostBytes(got), hostBytes(want)) {
			t.Errorf("%s: got %v %v, want %v %v", name, got.DType(), got.Shape(), want.DType(), want.Shape())
		}
	}
}

func TestSaveStateDictErrorsKeepTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sd.pt")
	names, arrays := savedCases()
	if err := SaveStateDict(path, nil, arrays); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	released := nd.Zeros(ctx.CPU(0), nd.Float32, 2)
	released.Release()
	cases := []struct {
		names  []string
		arrays map[string]*nd.NDArray
		want   string
	}{
		{[]string{"missing"}, arrays, `"missing" is nil`},
		{nil, map[string]*nd.NDArray{"r": released}, "released"},
		{[]string{names[0], names[0]}, arrays, "twice"},
	}
	for _, c := range cases {
		if err := SaveStateDict(path, c.names, c.arrays); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want one containing %q", err, c.want)
		}
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Error("a failed save changed the file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want 1", len(entries))
	}
}
