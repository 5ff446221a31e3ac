package estimator

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/internal/atomicfile"
	"github.com/goluon/goluon/nd"
)

// Checkpoint saves the parameters and the trainer state after every
// Every-th epoch into Dir, and with Resume restores the latest checkpoint
// before training so that an interrupted Fit continues where it stopped.
//
// A checkpoint is two files written atomically (params-NNNN.safetensors,
// trainer-NNNN.safetensors) and then the pointer file checkpoint.json,
// replaced atomically: a crash at any moment leaves the previous complete
// checkpoint in force. Only the newest Keep checkpoints are kept (default
// 2). A resume that fails leaves the parameters as they were, except those
// that were not initialised before it (they keep the loaded values).
type Checkpoint struct {
	NopHandler
	Dir      string
	Every    int // default 1
	Keep     int // default 2
	Resume   bool
	Params   *gluon.ParamDict
	Trainer  *gluon.Trainer
	Contexts []ctx.Context // where resumed parameters are loaded
	// ReadOnly restores (with Resume) but never writes: the other workers
	// of a distributed job resume from the checkpoints rank 0 writes (Dir
	// must then be visible to every worker, e.g. a shared file system).
	ReadOnly bool
	// Settings, when set, are what the run was started with (a program's
	// flags: batch size, learning rate, data limit, ...). They are saved
	// with each checkpoint, and a resume from a checkpoint written with
	// other values is an error naming them: the run would go on silently
	// as another experiment.
	Settings map[string]string

	// ResumedFrom is the epoch of the checkpoint restored by TrainBegin (0 if none).
	ResumedFrom int

	saved int // the last epoch written
}

// checkpointMeta is the content of checkpoint.json.
type checkpointMeta struct {
	Epoch    int               `json:"epoch"`
	Params   string            `json:"params"`
	Trainer  string            `json:"trainer"`
	Steps    int               `json:"steps"`
	Settings map[string]string `json:"settings,omitempty"`
}

const pointerFile = "checkpoint.json"

// TrainBegin restores the latest checkpoint when Resume is set.
func (c *Checkpoint) TrainBegin(s *State) error {
	if !c.ReadOnly {
		if err := os.MkdirAll(c.Dir, 0o755); err != nil {
			return fmt.Errorf("estimator: checkpoint: %w", err)
		}
	}
	if !c.Resume {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(c.Dir, pointerFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil // nothing to resume: start from scratch
	}
	if err != nil {
		return fmt.Errorf("estimator: checkpoint: %w", err)
	}
	var m checkpointMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("estimator: checkpoint %s is corrupt: %v", filepath.Join(c.Dir, pointerFile), err)
	}
	if diff := settingsDiff(m.Settings, c.Settings); diff != "" {
		return fmt.Errorf("estimator: resume: the checkpoint in %s was written by a run with other settings (%s): resume with the same ones, or start afresh", c.Dir, diff)
	}
	// Both files are read whole first, so that a truncated or corrupt
	// trainer file fails before any parameter changes; a trainer file
	// that does not fit the Trainer puts the parameters back.
	params, trainer := filepath.Join(c.Dir, m.Params), filepath.Join(c.Dir, m.Trainer)
	for _, f := range []string{params, trainer} {
		if _, err := safetensors.ReadFile(f); err != nil {
			return fmt.Errorf("estimator: resume: %w", err)
		}
	}
	before := c.saveValues()
	defer before.release()
	if err := c.Params.Load(params, c.Contexts, gluon.LoadOpts{}); err != nil {
		return fmt.Errorf("estimator: resume: %w", err)
	}
	if err := c.Trainer.LoadStates(trainer); err != nil {
		before.restore()
		return fmt.Errorf("estimator: resume: %w", err)
	}
	c.ResumedFrom = m.Epoch
	s.StartEpoch = m.Epoch + 1
	s.TotalSteps = m.Steps
	return nil
}

// settingsDiff lists the settings that differ between a checkpoint's
// (saved) and a run's (now), "" when they agree or either has none.
func settingsDiff(saved, now map[string]string) string {
	if saved == nil || now == nil {
		return ""
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if v, ok := saved[k]; ok && v != now[k] {
			diffs = append(diffs, fmt.Sprintf("%s was %s, now %s", k, v, now[k]))
		}
	}
	return strings.Join(diffs, ", ")
}

// savedValues are copies of parameters' values, to put back.
type savedValues map[*gluon.Parameter]*nd.NDArray

// saveValues copies the value of every initialised parameter of c.Params.
func (c *Checkpoint) saveValues() savedValues {
	v := savedValues{}
	for _, p := range c.Params.List() {
		if p.Initialized() {
			v[p] = p.ListData()[0].Copy()
		}
	}
	return v
}

// restore sets every saved parameter back to its saved value.
func (v savedValues) restore() {
	for p, a := range v {
		p.SetData(a)
	}
}

func (v savedValues) release() {
	for _, a := range v {
		a.Release()
	}
}

// EpochEnd writes a checkpoint every Every epochs and after the last one.
func (c *Checkpoint) EpochEnd(s *State) error {
	if c.ReadOnly {
		return nil
	}
	every := max(c.Every, 1)
	if s.Epoch%every != 0 && s.Epoch != s.Epochs && !s.Stop {
		return nil
	}
	return c.write(s)
}

// TrainEnd writes the last epoch when a handler after this one stopped
// training there (early stopping listed after the checkpoint), so that the
// stopping epoch is always saved.
func (c *Checkpoint) TrainEnd(s *State, err error) error {
	if c.ReadOnly || err != nil || !s.Stop || s.Epoch <= 0 || c.saved == s.Epoch {
		return nil
	}
	return c.write(s)
}

// write saves the checkpoint of epoch s.Epoch.
func (c *Checkpoint) write(s *State) error {
	m := checkpointMeta{
		Epoch: s.Epoch, Steps: s.TotalSteps, Settings: c.Settings,
		Params:  fmt.Sprintf("params-%04d.safetensors", s.Epoch),
		Trainer: fmt.Sprintf("trainer-%04d.safetensors", s.Epoch),
	}
	if err := c.Params.Save(filepath.Join(c.Dir, m.Params)); err != nil {
		return fmt.Errorf("estimator: checkpoint: %w", err)
	}
	if err := c.Trainer.SaveStates(filepath.Join(c.Dir, m.Trainer)); err != nil {
		return fmt.Errorf("estimator: checkpoint: %w", err)
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := atomicfile.WriteBytes(filepath.Join(c.Dir, pointerFile), append(b, '\n')); err != nil {
		return fmt.Errorf("estimator: checkpoint: %w", err)
	}
	c.prune(s.Epoch)
	c.saved = s.Epoch
	return nil
}

// prune removes the checkpoints before the current epoch's (also those
// an earlier, resumed run wrote) but the newest Keep−1 of them. Files of
// later epochs, left by another run into the same Dir, are not touched:
// the pointer file no longer names them, but they are not this run's to
// delete.
func (c *Checkpoint) prune(current int) {
	keep := c.Keep
	if keep <= 0 {
		keep = 2
	}
	names, _ := filepath.Glob(filepath.Join(c.Dir, "params-*.safetensors"))
	var epochs []int
	for _, n := range names {
		var e int
		if _, err := fmt.Sscanf(filepath.Base(n), "params-%d.safetensors", &e); err == nil && e < current {
			epochs = append(epochs, e)
		}
	}
	sort.Ints(epochs)
	for len(epochs) > keep-1 {
		old := epochs[0]
		epochs = epochs[1:]
		os.Remove(filepath.Join(c.Dir, fmt.Sprintf("params-%04d.safetensors", old)))
		os.Remove(filepath.Join(c.Dir, fmt.Sprintf("trainer-%04d.safetensors", old)))
	}
}
