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

// TestLoadsTorchStateDict loads a torch state_dict saved as safetensors by
// name and reproduces torch's float32 output.
func TestLoadsTorchStateDict(t *testing.T) {
	raw, err := os.ReadFile("testdata/lstm_state_dict.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Input, Output tensor }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	m := newTagger()
	if err := gluon.LoadParameters(m, "testdata/lstm_state_dict.safetensors", ctx.CPU(0)); err != nil {
		t.Fatal(err)
	}
	got := m.Forward(nd.FromSlice(ctx.CPU(0), f.Input.Data, f.Input.Shape...).AsType(nd.Float32))
	if !slices.Equal(got.Shape(), f.Output.Shape) {
		t.Fatalf("output %v, torch %v", got.Shape(), f.Output.Shape)
	}
	for i, g := range got.Float32s() {
		if d := float64(g) - f.Output.Data[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("output[%d] = %g, torch %g", i, g, f.Output.Data[i])
		}
	}
}

// TestLoadRejectsWrongShape changes one tensor's shape in the file: the
// load fails naming it, and the parameters keep their values.
func TestLoadRejectsWrongShape(t *testing.T) {
	f, err := safetensors.ReadFile("testdata/lstm_state_dict.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	tt := f.Tensors["lstm.weight_hh_l1"]
	tt.Shape = []int{14, 14} // 28×7 elements, reshaped
	f.Tensors["lstm.weight_hh_l1"] = tt
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := safetensors.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	m := newTagger()
	if err := gluon.LoadParameters(m, "testdata/lstm_state_dict.safetensors", ctx.CPU(0)); err != nil {
		t.Fatal(err)
	}
	before := gluon.CollectParams(m).Get("lstm.weight_hh_l1").Data(ctx.CPU(0)).Float32s()
	err = gluon.LoadParameters(m, path, ctx.CPU(0))
	if err == nil || !strings.Contains(err.Error(), "weight_hh_l1") {
		t.Fatalf("load of a wrong-shaped tensor: %v, want an error naming it", err)
	}
	after := gluon.CollectParams(m).Get("lstm.weight_hh_l1").Data(ctx.CPU(0)).Float32s()
	if !slices.Equal(before, after) {
		t.Error("a failed load changed the parameter")
	}
}
