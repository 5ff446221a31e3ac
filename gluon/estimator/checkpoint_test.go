package estimator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/estimator"
	"github.com/goluon/goluon/gluon/optimizer"
)

// TestCheckpointFreshRunKeepsItsCheckpoint: a new (not resumed) run into
// a directory holding a longer run's checkpoints keeps the checkpoint it
// writes, and can be resumed from it. Pruning by epoch number used to
// delete it, leaving checkpoint.json naming a missing file.
func TestCheckpointFreshRunKeepsItsCheckpoint(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0)}
	dir := t.TempDir()
	a := newSetup(t, devs)
	if err := a.est.Fit(context.Background(), a.train, nil, 4, &estimator.Checkpoint{Dir: dir, Params: a.params, Trainer: a.tr, Contexts: devs}); err != nil {
		t.Fatal(err)
	}
	b := newSetup(t, devs)
	if err := b.est.Fit(context.Background(), b.train, nil, 1, &estimator.Checkpoint{Dir: dir, Params: b.params, Trainer: b.tr, Contexts: devs}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"params-0001.safetensors", "trainer-0001.safetensors"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the checkpoint just written is gone: %v", err)
		}
	}
	c := newSetup(t, devs)
	cp := &estimator.Checkpoint{Dir: dir, Resume: true, Params: c.params, Trainer: c.tr, Contexts: devs}
	if err := cp.TrainBegin(&estimator.State{}); err != nil {
		t.Fatalf("resuming the fresh run: %v", err)
	}
	if cp.ResumedFrom != 1 {
		t.Errorf("resumed from epoch %d, want 1", cp.ResumedFrom)
	}
	// Within one run, only the newest Keep checkpoints stay.
	d := newSetup(t, devs)
	dir2 := t.TempDir()
	if err := d.est.Fit(context.Background(), d.train, nil, 5, &estimator.Checkpoint{Dir: dir2, Keep: 2, Params: d.params, Trainer: d.tr, Contexts: devs}); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir2, "*.safetensors"))
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	slices.Sort(names)
	want := []string{"params-0004.safetensors", "params-0005.safetensors", "trainer-0004.safetensors", "trainer-0005.safetensors"}
	if !slices.Equal(names, want) {
		t.Errorf("checkpoint files %v, want %v", names, want)
	}
}

// TestCheckpointFailedResumeLosesNothing: a resume whose trainer file is
// truncated, or does not fit the Trainer, leaves the parameters as they
// were.
func TestCheckpointFailedResumeLosesNothing(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0)}
	for _, c := range []struct {
		name    string
		corrupt func(t *testing.T, dir string)
		other   bool // resume into a Trainer with another optimizer
	}{
		{"truncated trainer file", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "trainer-0001.safetensors")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b[:len(b)-3], 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"another optimizer", func(*testing.T, string) {}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			a := newSetup(t, devs)
			if err := a.est.Fit(context.Background(), a.train, nil, 1, &estimator.Checkpoint{Dir: dir, Params: a.params, Trainer: a.tr, Contexts: devs}); err != nil {
				t.Fatal(err)
			}
			c.corrupt(t, dir)
			s := newSetup(t, devs)
			tr := s.tr
			if c.other {
				var err error
				if tr, err = gluon.NewTrainer(s.params, optimizer.NewAdam(0.01), "device", gluon.TrainerOpts{}); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(s.params)
			cp := &estimator.Checkpoint{Dir: dir, Resume: true, Params: s.params, Trainer: tr, Contexts: devs}
			if err := cp.TrainBegin(&estimator.State{}); err == nil {
				t.Fatal("the resume succeeded")
			}
			after := snapshot(s.params)
			for n, w := range before {
				if !slices.Equal(w, after[n]) {
					t.Errorf("%s changed although the resume failed", n)
				}
			}
		})
	}
}

// TestCheckpointSavesStoppingEpoch: the epoch where early stopping ends
// training is saved whether the stopping handler comes before or after
// the checkpoint.
func TestCheckpointSavesStoppingEpoch(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0)}
	for _, esFirst := range []bool{true, false} {
		dir := t.TempDir()
		s := newSetup(t, devs)
		es := &estimator.EarlyStopping{Monitor: "val_accuracy", Patience: 1, MinDelta: 0.5}
		cp := &estimator.Checkpoint{Dir: dir, Every: 5, Params: s.params, Trainer: s.tr, Contexts: devs}
		hs := []estimator.Handler{cp, es}
		if esFirst {
			hs = []estimator.Handler{es, cp}
		}
		if err := s.est.Fit(context.Background(), s.train, s.val, 10, hs...); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("params-%04d.safetensors", es.StoppedEpoch))); err != nil {
			t.Errorf("early stopping listed first=%v: epoch %d not saved: %v", esFirst, es.StoppedEpoch, err)
		}
	}
}

// TestCheckpointSettingsMismatch: a resume under other settings than the
// checkpoint's is refused, naming them; the same settings (and an added
// one the checkpoint does not know) resume.
func TestCheckpointSettingsMismatch(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0)}
	dir := t.TempDir()
	a := newSetup(t, devs)
	settings := map[string]string{"batch-size": "32", "limit": "0"}
	if err := a.est.Fit(context.Background(), a.train, nil, 1, &estimator.Checkpoint{Dir: dir, Params: a.params, Trainer: a.tr, Contexts: devs, Settings: settings}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		settings map[string]string
		want     string
	}{
		{map[string]string{"batch-size": "64", "limit": "0"}, "batch-size was 32, now 64"},
		{map[string]string{"batch-size": "32", "limit": "0", "new": "x"}, ""},
		{nil, ""},
	} {
		b := newSetup(t, devs)
		err := (&estimator.Checkpoint{Dir: dir, Resume: true, Params: b.params, Trainer: b.tr, Contexts: devs, Settings: c.settings}).TrainBegin(&estimator.State{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.settings, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want an error saying %q", c.settings, err, c.want)
		}
	}
}
