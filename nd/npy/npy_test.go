package npy

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// fixture is an entry of testdata/manifest.json (make_fixtures.py).
type fixture struct {
	File      string              `json:"file"`
	Identical bool                `json:"identical"` // Write gives the same bytes
	Error     string              `json:"error"`
	DType     string              `json:"dtype"`
	Shape     []int               `json:"shape"`
	Values    []string            `json:"values"`
	Bits      []uint16            `json:"bits"`
	NPZ       string              `json:"npz"`
	Arrays    map[string][]string `json:"arrays"`
}

func fixtures(t *testing.T) []fixture {
	t.Helper()
	b, err := os.ReadFile("testdata/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	if err := json.Unmarshal(b, &fs); err != nil {
		t.Fatal(err)
	}
	return fs
}

// checkValues compares a's elements with NumPy's, exactly.
func checkValues(t *testing.T, what string, a *nd.NDArray, want []string) {
	t.Helper()
	if a.Size() != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, a.Size(), len(want))
	}
	if !a.DType().IsFloat() {
		got := a.Int64s()
		for i, w := range want {
			n, err := strconv.ParseInt(w, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if got[i] != n {
				t.Errorf("%s[%d] = %d, want %d", what, i, got[i], n)
			}
		}
		return
	}
	got := a.Float64s()
	for i, w := range want {
		v, err := strconv.ParseFloat(w, 64)
		if err != nil {
			t.Fatal(err)
		}
		if a.DType() == nd.Float32 {
			v = float64(float32(v))
		}
		if math.Float64bits(got[i]) != math.Float64bits(v) && !(math.IsNaN(v) && math.IsNaN(got[i])) {
			t.Errorf("%s[%d] = %v, want %v", what, i, got[i], v)
		}
	}
}

func TestLoadNumPyFiles(t *testing.T) {
	dev := ctx.CPU(0)
	for _, f := range fixtures(t) {
		if f.File == "" {
			continue
		}
		t.Run(f.File, func(t *testing.T) {
			a, err := Load(filepath.Join("testdata", f.File), dev)
			if f.Error != "" {
				if err == nil || !strings.Contains(err.Error(), f.Error) {
					t.Fatalf("err = %v, want one containing %q", err, f.Error)
				}
				if a != nil {
					t.Fatal("an array came back with the error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer a.Release()
			if a.DType().String() != f.DType || !slices.Equal(a.Shape(), f.Shape) {
				t.Fatalf("got %v %v, want %s %v", a.DType(), a.Shape(), f.DType, f.Shape)
			}
			if f.Bits != nil {
				got := make([]nd.F16, a.Size())
				a.ReadInto(got)
				for i, b := range f.Bits {
					if uint16(got[i]) != b {
						t.Errorf("element %d has bits %#04x, want %#04x", i, uint16(got[i]), b)
					}
				}
			} else {
				checkValues(t, f.File, a, f.Values)
			}
			if f.Identical {
				var b bytes.Buffer
				if err := Write(&b, a); err != nil {
					t.Fatal(err)
				}
				want, _ := os.ReadFile(filepath.Join("testdata", f.File))
				if !bytes.Equal(b.Bytes(), want) {
					t.Errorf("Write gave\n%q\nNumPy wrote\n%q", b.Bytes(), want)
				}
			}
		})
	}
}

func TestLoadZNumPyArchives(t *testing.T) {
	for _, f := range fixtures(t) {
		if f.NPZ == "" {
			continue
		}
		t.Run(f.NPZ, func(t *testing.T) {
			got, err := LoadZ(filepath.Join("testdata", f.NPZ), ctx.CPU(0))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(f.Arrays) {
				t.Fatalf("%d arrays, want %d", len(got), len(f.Arrays))
			}
			for name, want := range f.Arrays {
				a := got[name]
				if a == nil {
					t.Fatalf("no array %q", name)
				}
				checkValues(t, name, a, want)
				a.Release()
			}
		})
	}
}

func TestRoundTrips(t *testing.T) {
	dev := ctx.CPU(0)
	halves := []nd.F16{nd.F16From(1.5), nd.F16From(-0.25), nd.F16From(65504)}
	cases := []struct {
		name string
		a    *nd.NDArray
	}{
		{"float32", nd.FromSlice(dev, []float32{1, -2.5, float32(math.Inf(1)), 3e-45}, 2, 2)},
		{"float64", nd.FromSlice(dev, []float64{math.Pi, math.NaN(), math.Copysign(0, -1)}, 3, 1, 1)},
		{"float16", nd.FromSlice(dev, halves, 3)},
		{"int32", nd.FromSlice(dev, []int32{math.MinInt32, 7}, 2)},
		{"int64", nd.FromSlice(dev, []int64{math.MaxInt64, -1, 0, 5}, 1, 4)},
		{"uint8", nd.FromSlice(dev, []uint8{0, 255}, 2)},
		{"bool", nd.FromSlice(dev, []bool{true, false, false}, 3)},
		{"0-d", nd.Reshape(nd.FromSlice(dev, []float32{2}, 1))},
		{"zero-size", nd.Zeros(dev, nd.Float64, 2, 0, 3)},
	}
	dir := t.TempDir()
	arrays := map[string]*nd.NDArray{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".npy")
			if err := Save(path, c.a); err != nil {
				t.Fatal(err)
			}
			b, err := Load(path, dev)
			if err != nil {
				t.Fatal(err)
			}
			same(t, b, c.a)
			b.Release()
		})
		arrays[strings.ReplaceAll(c.name, "-", "_")] = c.a
	}
	for _, save := range []func(string, map[string]*nd.NDArray) error{SaveZ, SaveZCompressed} {
		path := filepath.Join(dir, "all.npz")
		if err := save(path, arrays); err != nil {
			t.Fatal(err)
		}
		got, err := LoadZ(path, dev)
		if err != nil {
			t.Fatal(err)
		}
		for name, a := range arrays {
			same(t, got[name], a)
			got[name].Release()
		}
	}
}

// same fails unless a and b have one dtype, shape and bits.
func same(t *testing.T, a, b *nd.NDArray) {
	t.Helper()
	if a == nil || a.DType() != b.DType() || !slices.Equal(a.Shape(), b.Shape()) {
		t.Fatalf("got %v, want %v %v", a, b.DType(), b.Shape())
	}
	var x, y bytes.Buffer
	if err := Write(&x, a); err != nil {
		t.Fatal(err)
	}
	if err := Write(&y, b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x.Bytes(), y.Bytes()) {
		t.Errorf("round trip changed the bytes of a %v %v array", b.DType(), b.Shape())
	}
}

func TestLongHeaderUsesVersion2(t *testing.T) {
	shape := make([]int, 25000) // a header longer than 65,535 bytes
	for i := range shape {
		shape[i] = 1
	}
	a := nd.Zeros(ctx.CPU(0), nd.Float32, shape...)
	defer a.Release()
	var b bytes.Buffer
	if err := Write(&b, a); err != nil {
		t.Fatal(err)
	}
	if b.Bytes()[6] != 2 {
		t.Fatalf("version %d, want 2", b.Bytes()[6])
	}
	if (len(b.Bytes())-4)%align != 0 {
		t.Errorf("data starts at %d, not a multiple of %d", len(b.Bytes())-4, align)
	}
	got, err := Read(&b, ctx.CPU(0))
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if len(got.Shape()) != len(shape) {
		t.Errorf("rank %d, want %d", len(got.Shape()), len(shape))
	}
}

func TestReadConsecutiveFiles(t *testing.T) {
	var b bytes.Buffer
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2}, 2)
	y := nd.FromSlice(ctx.CPU(0), []int64{3}, 1)
	defer x.Release()
	defer y.Release()
	for _, a := range []*nd.NDArray{x, y} {
		if err := Write(&b, a); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []*nd.NDArray{x, y} {
		got, err := Read(&b, ctx.CPU(0))
		if err != nil {
			t.Fatal(err)
		}
		same(t, got, want)
		got.Release()
	}
}
