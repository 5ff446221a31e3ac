package rnn_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// tagger is testdata's torch module: a bidirectional 2-layer batch-first
// LSTM ("lstm") and a Linear ("proj") over its output.
type tagger struct {
	gluon.BlockMeta
	lstm *rnn.Layer
	proj *nn.Dense
}

func newTagger() *tagger {
	m := &tagger{BlockMeta: gluon.NewBlockMeta("tagger")}
	m.lstm = rnn.NewLSTM(7, rnn.Opts{NumLayers: 2, Bidirectional: true, Layout: "NTC", InputSize: 5})
	m.lstm.SetName("lstm")
	m.proj = nn.NewDense(3, nn.DenseOpts{InUnits: 14, NoFlatten: true})
	m.proj.SetName("proj")
	m.AddChild(m.lstm)
	m.AddChild(m.proj)
	return m
}

func (m *tagger) Forward(x *nd.NDArray) *nd.NDArray { return m.proj.Forward(m.lstm.Forward(x)) }

// torchOutput reads testdata's input and torch's output for it.
func torchOutput(t *testing.T) (in, out tensor) {
	t.Helper()
	raw, err := os.ReadFile("testdata/lstm_state_dict.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Input, Output tensor }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f.Input, f.Output
}

// matchesTorch runs m on dev and compares with torch's float32 output.
func matchesTorch(t *testing.T, m *tagger, dev ctx.Context) {
	t.Helper()
	in, want := torchOutput(t)
	got := m.Forward(nd.FromSlice(dev, in.Data, in.Shape...).AsType(nd.Float32))
	if got.Context() != dev {
		t.Fatalf("output on %v, want %v", got.Context(), dev)
	}
	if !slices.Equal(got.Shape(), want.Shape) {
		t.Fatalf("output %v, torch %v", got.Shape(), want.Shape)
	}
	for i, g := range got.Float32s() {
		if d := float64(g) - want.Data[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("%v: output[%d] = %g, torch %g", dev, i, g, want.Data[i])
		}
	}
}

// TestLoadsTorchStateDict loads a torch state_dict saved as safetensors by
// name and reproduces torch's float32 output. The model's parameter names
// are exactly the state_dict's keys.
func TestLoadsTorchStateDict(t *testing.T) {
	f, err := safetensors.ReadFile("testdata/lstm_state_dict.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	m := newTagger()
	params := gluon.CollectParams(m)
	if got, want := slices.Sorted(slices.Values(params.Names())), f.Names(); !slices.Equal(got, want) {
		t.Fatalf("parameter names %v, torch's state_dict %v", got, want)
	}
	if err := gluon.LoadParameters(m, "testdata/lstm_state_dict.safetensors", ctx.CPU(0)); err != nil {
		t.Fatal(err)
	}
	for _, p := range params.List() {
		if d := p.Data(ctx.CPU(0)); d.DType() != nd.Float32 || !slices.Equal(d.Shape(), f.Tensors[p.Name()].Shape) {
			t.Errorf("%s: %v %v, the file %v", p.Name(), d.DType(), d.Shape(), f.Tensors[p.Name()].Shape)
		}
	}
	matchesTorch(t, m, ctx.CPU(0))
}

// TestLoadsTorchStateDictOnTwoContexts loads onto cpu(0) and cpu(1): each
// replica holds torch's values and reproduces its output.
func TestLoadsTorchStateDictOnTwoContexts(t *testing.T) {
	m := newTagger()
	if err := gluon.LoadParameters(m, "testdata/lstm_state_dict.safetensors", ctx.CPU(0), ctx.CPU(1)); err != nil {
		t.Fatal(err)
	}
	matchesTorch(t, m, ctx.CPU(0))
	matchesTorch(t, m, ctx.CPU(1))
}

// TestLoadRejectsWrongShape changes one tensor's shape in the file and
// zeroes every other tensor: the load fails naming the tensor and both
// shapes, and no parameter changes (a load that wrote the others before
// finding the bad one would leave zeros).
func TestLoadRejectsWrongShape(t *testing.T) {
	f, err := safetensors.ReadFile("testdata/lstm_state_dict.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	const bad = "lstm.weight_hh_l1"
	for name, tt := range f.Tensors {
		if name == bad {
			tt.Shape = []int{14, 14} // 28×7 elements, reshaped
		} else {
			n := 1
			for _, s := range tt.Shape {
				n *= s
			}
			tt = safetensors.FromFloat32(tt.Shape, make([]float32, n))
		}
		f.Tensors[name] = tt
	}
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := safetensors.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	m := newTagger()
	if err := gluon.LoadParameters(m, "testdata/lstm_state_dict.safetensors", ctx.CPU(0)); err != nil {
		t.Fatal(err)
	}
	params := gluon.CollectParams(m)
	before := map[string][]float32{}
	for _, p := range params.List() {
		before[p.Name()] = p.Data(ctx.CPU(0)).Float32s()
	}
	err = gluon.LoadParameters(m, path, ctx.CPU(0))
	if err == nil {
		t.Fatal("a wrong-shaped tensor loaded")
	}
	for _, w := range []string{bad, "[28 7]", "[14 14]"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %s", err, w)
		}
	}
	for _, p := range params.List() {
		if !slices.Equal(before[p.Name()], p.Data(ctx.CPU(0)).Float32s()) {
			t.Errorf("the failed load changed %s", p.Name())
		}
	}
	matchesTorch(t, m, ctx.CPU(0))
}
