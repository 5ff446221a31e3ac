package estimator

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/internal/atomicfile"
)

// Checkpoint saves the parameters and the trainer state after every
// Every-th epoch into Dir, and with Resume restores the latest checkpoint
// before training so that an interrupted Fit continues where it stopped.
//
// A checkpoint is two files written atomically (params-NNNN.safetensors,
// trainer-NNNN.safetensors) and then the pointer file checkpoint.json,
// replaced atomically: a crash at any moment leaves the previous complete
// checkpoint in force. Only the newest Keep checkpoints are kept (default 2).
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

	// ResumedFrom is the epoch of the checkpoint restored by TrainBegin (0 if none).
	ResumedFrom int
}

// checkpointMeta is the content of checkpoint.json.
type checkpointMeta struct {
	Epoch   int    `json:"epoch"`
	Params  string `json:"params"`
	Trainer string `json:"trainer"`
	Steps   int    `json:"steps"`
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
	if err := c.Params.Load(filepath.Join(c.Dir, m.Params), c.Contexts, gluon.LoadOpts{}); err != nil {
		return fmt.Errorf("estimator: resume: %w", err)
	}
	if err := c.Trainer.LoadStates(filepath.Join(c.Dir, m.Trainer)); err != nil {
		return fmt.Errorf("estimator: resume: %w", err)
	}
	c.ResumedFrom = m.Epoch
	s.StartEpoch = m.Epoch + 1
	s.TotalSteps = m.Steps
	return nil
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
	m := checkpointMeta{
		Epoch: s.Epoch, Steps: s.TotalSteps,
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
	c.prune()
	return nil
}

// prune removes all but the newest Keep checkpoints found in Dir (also
// those an earlier, resumed run wrote).
func (c *Checkpoint) prune() {
	keep := c.Keep
	if keep <= 0 {
		keep = 2
	}
	names, _ := filepath.Glob(filepath.Join(c.Dir, "params-*.safetensors"))
	var epochs []int
	for _, n := range names {
		var e int
		if _, err := fmt.Sscanf(filepath.Base(n), "params-%d.safetensors", &e); err == nil {
			epochs = append(epochs, e)
		}
	}
	sort.Ints(epochs)
	for len(epochs) > keep {
		old := epochs[0]
		epochs = epochs[1:]
		os.Remove(filepath.Join(c.Dir, fmt.Sprintf("params-%04d.safetensors", old)))
		os.Remove(filepath.Join(c.Dir, fmt.Sprintf("trainer-%04d.safetensors", old)))
	}
}
