package gluon_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// TestLoadStatesCorruptMetadata: update counts and learning rates that
// SaveStates never writes are refused, and the Trainer steps on as before
// (a negative count used to be accepted and crash the next Step).
func TestLoadStatesCorruptMetadata(t *testing.T) {
	dir := t.TempDir()
	devs := []ctx.Context{ctx.CPU(0)}
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1}, 2, 2)
	net := nn.NewSequential(nn.NewDense(1, nn.DenseOpts{InUnits: 2}))
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.One(), devs, false); err != nil {
		t.Fatal(err)
	}
	tr, err := gluon.NewTrainer(params, optimizer.NewAdam(0.01), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	backwardOn(t, net, x, devs)
	if err := tr.Step(2); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good")
	if err := tr.SaveStates(good); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"negative steps", func(m map[string]any) {
			for k := range m["steps"].(map[string]any) {
				m["steps"].(map[string]any)[k] = -1
			}
		}, "has -1 updates"},
		{"negative updates", func(m map[string]any) { m["updates"] = -7 }, "-7 updates"},
		{"negative lr", func(m map[string]any) { m["lr"] = -0.5 }, "learning rate -0.5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(f.Metadata["trainer"]), &m); err != nil {
				t.Fatal(err)
			}
			c.edit(m)
			b, _ := json.Marshal(m)
			bad := *f
			bad.Metadata = map[string]string{"trainer": string(b)}
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if err := safetensors.WriteFile(path, &bad); err != nil {
				t.Fatal(err)
			}
			if err := tr.LoadStates(path); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
			backwardOn(t, net, x, devs)
			if err := tr.Step(2); err != nil {
				t.Fatalf("Step after a refused load: %v", err)
			}
		})
	}
}
