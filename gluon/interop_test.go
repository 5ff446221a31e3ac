package gluon_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/nd"
)

// Whole-network interop with PyTorch: testdata/lenet_interop.py (see its
// header for how to rerun it) writes lenet_from_torch.* from a torch LeNet
// and checks lenet_from_goluon.*, which TestWriteLeNetForTorch writes.

var update = flag.Bool("update", false, "rewrite testdata/lenet_from_goluon.safetensors and lenet_from_goluon.json")

// interopDir, from $GOLUON_INTEROP_DIR, is where make interop has
// lenet_interop.py write fresh torch files for TestLoadLeNetFromTorch to
// read, and where TestWriteLeNetForTorch then writes Goluon's files for
// lenet_interop.py check: a round trip against the installed PyTorch
// rather than the committed fixtures.
var interopDir = os.Getenv("GOLUON_INTEROP_DIR")

func interopPath(name string) string {
	if interopDir != "" {
		return filepath.Join(interopDir, name)
	}
	return filepath.Join("testdata", name)
}

var (
	fromTorchParams  = interopPath("lenet_from_torch.safetensors")
	fromTorchJSON    = interopPath("lenet_from_torch.json")
	fromGoluonParams = interopPath("lenet_from_goluon.safetensors")
	fromGoluonJSON   = interopPath("lenet_from_goluon.json")
)

// interopArray is a float32 array in the JSON files shared with
// lenet_interop.py: its shape and its row-major values.
type interopArray struct {
	Shape  []int     `json:"shape"`
	Values []float32 `json:"values"`
}

// interopCase is the layout of testdata/lenet_from_*.json: an input batch
// and the logits that the network of the matching .safetensors gives for it.
type interopCase struct {
	Input  interopArray `json:"input"`
	Logits interopArray `json:"logits"`
}

func readInteropCase(t *testing.T, path string) interopCase {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c interopCase
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, a := range []interopArray{c.Input, c.Logits} {
		n := 1
		for _, d := range a.Shape {
			n *= d
		}
		if len(a.Shape) == 0 || n != len(a.Values) {
			t.Fatalf("%s: shape %v does not fit %d values", path, a.Shape, len(a.Values))
		}
	}
	return c
}

// compareLogits fails t unless got has want's shape and every element is
// within atol of want's.
func compareLogits(t *testing.T, what string, got *nd.NDArray, want interopArray, atol float64) {
	t.Helper()
	if !slices.Equal(got.Shape(), want.Shape) {
		t.Fatalf("%s: logits have shape %v, want %v", what, got.Shape(), want.Shape)
	}
	worst, at := 0.0, -1
	for i, g := range got.Float32s() {
		d := math.Abs(float64(g) - float64(want.Values[i]))
		if math.IsNaN(d) || d > worst {
			worst, at = d, i
		}
	}
	if !(worst <= atol) {
		t.Errorf("%s: max |got - want| = %.3g at element %d (got %v, want %v), atol %g",
			what, worst, at, got.Float32s()[at], want.Values[at], atol)
	} else {
		t.Logf("%s: max |got - want| = %.3g over %v logits (atol %g)", what, worst, want.Shape, atol)
	}
}

// TestLoadLeNetFromTorch loads parameters written by PyTorch (through
// lenet_interop.py write) into Goluon's LeNet and checks that it computes
// torch's logits, on two contexts.
func TestLoadLeNetFromTorch(t *testing.T) {
	c := readInteropCase(t, fromTorchJSON)
	var first []float32
	for _, dev := range []ctx.Context{ctx.CPU(0), ctx.CPU(1)} {
		net := modelzoo.LeNet()
		if err := gluon.LoadParameters(net, fromTorchParams, dev); err != nil {
			t.Fatalf("%v: %v", dev, err)
		}
		params := gluon.CollectParams(net)
		if params.Len() != 10 {
			t.Fatalf("LeNet has %d parameters, want 10", params.Len())
		}
		for _, p := range params.List() {
			if got := p.Contexts(); !slices.Equal(got, []ctx.Context{dev}) {
				t.Errorf("%s loaded onto %v, want [%v]", p.Name(), got, dev)
			}
		}
		x := nd.FromSlice(dev, c.Input.Values, c.Input.Shape...)
		out := net.Forward(x)
		if out.Context() != dev {
			t.Errorf("logits on %v, want %v", out.Context(), dev)
		}
		compareLogits(t, "goluon on "+dev.String()+" vs torch", out, c.Logits, 1e-5)
		if first == nil {
			first = out.Float32s()
		} else if !slices.Equal(first, out.Float32s()) {
			t.Errorf("%v computes other logits than %v", dev, ctx.CPU(0))
		}
	}
}

// goluonInteropInput is the fixed batch of lenet_from_goluon.json.
func goluonInteropInput() *nd.NDArray {
	const n = 3 * 1 * 28 * 28
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((i*37+11)%101) / 100
	}
	return nd.FromSlice(ctx.CPU(0), v, 3, 1, 28, 28)
}

// TestWriteLeNetForTorch checks what Goluon writes for PyTorch: the
// parameters of a seeded, Xavier-initialised LeNet (byte for byte) and
// its logits for a fixed input. With -update it rewrites the fixtures
// instead; lenet_interop.py check then verifies them with torch.
func TestWriteLeNetForTorch(t *testing.T) {
	defer nd.Seed(nd.CurrentSeed())
	nd.Seed(42)
	net := modelzoo.LeNet()
	if err := gluon.Initialize(net, initializer.Xavier{}, ctx.CPU(0)); err != nil {
		t.Fatal(err)
	}
	x := goluonInteropInput()
	out := net.Forward(x) // also materialises the deferred shapes
	path := filepath.Join(t.TempDir(), "lenet.safetensors")
	if err := gluon.SaveParameters(net, path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := interopCase{
		Input:  interopArray{Shape: x.Shape(), Values: x.Float32s()},
		Logits: interopArray{Shape: out.Shape(), Values: out.Float32s()},
	}
	if *update || interopDir != "" {
		js, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fromGoluonParams, got, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fromGoluonJSON, append(js, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s and %s", fromGoluonParams, fromGoluonJSON)
		return
	}
	want, err := os.ReadFile(fromGoluonParams)
	if err != nil {
		t.Fatalf("%v (create it with go test ./gluon/ -run WriteLeNetForTorch -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("saved parameters differ from %s (%d bytes vs %d); rerun with -update and lenet_interop.py check if the change is intended",
			fromGoluonParams, len(got), len(want))
	}
	stored := readInteropCase(t, fromGoluonJSON)
	if !slices.Equal(stored.Input.Shape, c.Input.Shape) || !slices.Equal(stored.Input.Values, c.Input.Values) {
		t.Errorf("the input in %s is not goluonInteropInput()", fromGoluonJSON)
	}
	compareLogits(t, "goluon vs "+fromGoluonJSON, out, stored.Logits, 1e-6)
}
