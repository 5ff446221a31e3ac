package estimator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/atomicfile"
	"github.com/goluon/goluon/nd"
)

// EarlyStopping stops training when a monitored value has not improved by
// more than MinDelta for Patience epochs in a row, as Keras' EarlyStopping
// does: with Patience 2, the second epoch in a row without improvement is
// the last (Patience 0 stops at the first, as 1 does). Monitor is a key of
// the validation metrics ("val_loss", "val_accuracy") or, with a "train_"
// prefix, of the training metrics. Its state starts again at every Fit.
type EarlyStopping struct {
	NopHandler
	Monitor string
	// Mode is "min" or "max"; by default max for accuracy-like names
	// (containing "acc" or "auc", as Keras decides), else min.
	Mode     string
	Patience int
	// MinDelta is the least change that counts as an improvement; its
	// sign is ignored, as Keras ignores it.
	MinDelta float64

	best  float64
	waits int
	seen  bool
	// StoppedEpoch is the epoch after which training stopped (0 if it ran out).
	StoppedEpoch int
}

func (e *EarlyStopping) maximise() bool {
	switch e.Mode {
	case "max":
		return true
	case "min":
		return false
	}
	return strings.Contains(e.Monitor, "acc") || strings.Contains(e.Monitor, "auc")
}

// TrainBegin starts the watch afresh (Keras' on_train_begin), so that one
// handler serves several Fit calls, a frozen backbone's and then the
// whole network's.
func (e *EarlyStopping) TrainBegin(*State) error {
	e.best, e.waits, e.seen, e.StoppedEpoch = 0, 0, false, 0
	return nil
}

// EpochEnd compares the monitored value with the best so far.
func (e *EarlyStopping) EpochEnd(s *State) error {
	v, ok := lookup(s, e.Monitor)
	if !ok {
		return fmt.Errorf("estimator: early stopping monitors %q, which this run does not produce (have %v)", e.Monitor, keys(s))
	}
	d := math.Abs(e.MinDelta)
	better := !e.seen || (e.maximise() && v > e.best+d) || (!e.maximise() && v < e.best-d)
	if better {
		e.best, e.waits, e.seen = v, 0, true
		return nil
	}
	e.waits++
	if e.waits >= max(e.Patience, 1) {
		s.Stop = true
		e.StoppedEpoch = s.Epoch
	}
	return nil
}

// lookup finds a metric: "val_x" in the validation map as "x", "train_x"
// or "x" in the training map.
func lookup(s *State, name string) (float64, bool) {
	if len(name) > 4 && name[:4] == "val_" {
		v, ok := s.Val[name[4:]]
		return v, ok
	}
	if len(name) > 6 && name[:6] == "train_" {
		name = name[6:]
	}
	v, ok := s.Train[name]
	return v, ok
}

func keys(s *State) []string {
	var out []string
	for k := range s.Train {
		out = append(out, k)
	}
	for k := range s.Val {
		out = append(out, "val_"+k)
	}
	sort.Strings(out)
	return out
}

// EpochLR sets the learning rate at the start of every epoch from a
// function of the 0-based epoch, as Keras' LearningRateScheduler callback
// does (the MiniGoogLeNet tutorial's poly_decay).
type EpochLR struct {
	NopHandler
	Trainer  *gluon.Trainer
	Schedule func(epoch int) float64
}

// EpochBegin sets the epoch's learning rate.
func (h *EpochLR) EpochBegin(s *State) error {
	return h.Trainer.SetLearningRate(h.Schedule(s.Epoch - 1))
}

// MetricsLog appends one JSON object per epoch to a file (JSON lines):
// epoch, seconds, learning rate and every training and validation metric
// (validation ones prefixed "val_").
type MetricsLog struct {
	NopHandler
	Path    string
	Trainer *gluon.Trainer // optional: logs the learning rate
	f       *os.File
	w       *bufio.Writer
}

// TrainBegin opens (appends to) the log file.
func (m *MetricsLog) TrainBegin(*State) error {
	if err := os.MkdirAll(filepath.Dir(m.Path), 0o755); err != nil {
		return fmt.Errorf("estimator: metrics log: %w", err)
	}
	f, err := os.OpenFile(m.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("estimator: metrics log: %w", err)
	}
	m.f, m.w = f, bufio.NewWriter(f)
	return nil
}

// EpochEnd writes the epoch's line and flushes it.
func (m *MetricsLog) EpochEnd(s *State) error {
	rec := map[string]any{"epoch": s.Epoch, "seconds": round(s.EpochTime.Seconds(), 3), "samples_per_sec": round(s.SamplesRate, 1)}
	if m.Trainer != nil {
		rec["lr"] = m.Trainer.LearningRate()
	}
	for k, v := range s.Train {
		rec[k] = finite(v)
	}
	for k, v := range s.Val {
		rec["val_"+k] = finite(v)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	m.w.Write(append(b, '\n'))
	return m.w.Flush()
}

// TrainEnd closes the file.
func (m *MetricsLog) TrainEnd(*State, error) error {
	if m.f == nil {
		return nil
	}
	err := m.w.Flush()
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	m.f = nil
	return err
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// finite maps NaN and infinities (not representable in JSON) to nil.
func finite(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// Publish publishes the Trainer's parameters to a Predictor while Fit
// trains, so that a server beside it (HTTP handlers calling the Predictor)
// answers with recent parameters: every Every training steps (never when
// 0) and at the end of every epoch.
type Publish struct {
	NopHandler
	Trainer   *gluon.Trainer
	Predictor *gluon.Predictor
	Every     int
}

// BatchEnd publishes every Every steps.
func (p *Publish) BatchEnd(s *State) error {
	if p.Every > 0 && s.TotalSteps%p.Every == 0 {
		return p.publish()
	}
	return nil
}

// EpochEnd publishes the epoch's final parameters.
func (p *Publish) EpochEnd(*State) error { return p.publish() }

func (p *Publish) publish() error {
	snap := p.Trainer.Snapshot()
	defer snap.Release()
	return p.Predictor.Publish(snap)
}

// ReduceLROnPlateau feeds a monitored value to an optimizer.Plateau at
// every epoch's end (PyTorch's ReduceLROnPlateau, Keras' callback of that
// name): set the Plateau as the optimizer's Scheduler and the rate drops
// when the value stalls. Monitor is named as for EarlyStopping; whether
// lower or higher is better is the Plateau's Maximize (an accuracy-like
// name, with "acc" or "auc", on a Plateau that minimises is an error).
// The Plateau's state is not in a Checkpoint: a resumed run restores it
// with Plateau.SetState, or starts it afresh.
type ReduceLROnPlateau struct {
	NopHandler
	Monitor string
	Plateau *optimizer.Plateau
	// Reduced is called with the epoch and the new rate after a
	// reduction (nil: nothing).
	Reduced func(epoch int, lr float64)
}

// EpochEnd observes the monitored value.
func (r *ReduceLROnPlateau) EpochEnd(s *State) error {
	if r.Plateau == nil {
		return fmt.Errorf("estimator: ReduceLROnPlateau without a Plateau")
	}
	v, ok := lookup(s, r.Monitor)
	if !ok {
		return fmt.Errorf("estimator: ReduceLROnPlateau monitors %q, which this run does not produce (have %v)", r.Monitor, keys(s))
	}
	if (strings.Contains(r.Monitor, "acc") || strings.Contains(r.Monitor, "auc")) && !r.Plateau.Maximizes() {
		return fmt.Errorf("estimator: ReduceLROnPlateau monitors %q, which improves upwards, with a Plateau that minimises: set PlateauOpts.Maximize", r.Monitor)
	}
	if lr, reduced := r.Plateau.Observe(v); reduced && r.Reduced != nil {
		r.Reduced(s.Epoch, lr)
	}
	return nil
}

// Profile records nd's ops (nd.StartProfile) over a window of training
// steps, counted from the start of this Fit (a resumed one included): from
// step Skip+1 to step Skip+Steps (the first steps pay for allocations and
// traces). At the
// window's end, or when training ends first, it writes the table of the
// Top ops (all for 0) to Table and, with a TracePath, a Chrome trace
// there (atomically). Profile holds nd's one profile meanwhile.
type Profile struct {
	NopHandler
	Skip, Steps int
	Top         int
	Table       io.Writer
	TracePath   string
	Opts        nd.ProfileOpts

	p     *nd.Profile
	done  bool
	start int // State.TotalSteps when Fit began (a resume starts above 0)
}

// TrainBegin arms the window (Skip 0 starts it now).
func (h *Profile) TrainBegin(s *State) error {
	h.done, h.start = false, s.TotalSteps
	if h.Steps <= 0 {
		return fmt.Errorf("estimator: Profile needs Steps > 0")
	}
	if h.Skip == 0 {
		return h.begin()
	}
	return nil
}

func (h *Profile) begin() error {
	o := h.Opts
	o.Trace = o.Trace || h.TracePath != ""
	p, err := nd.StartProfile(o)
	if err != nil {
		return fmt.Errorf("estimator: Profile: %w", err)
	}
	h.p = p
	return nil
}

// BatchEnd starts or ends the window.
func (h *Profile) BatchEnd(s *State) error {
	switch {
	case h.done:
	case h.p == nil && s.TotalSteps-h.start == h.Skip:
		return h.begin()
	case h.p != nil && s.TotalSteps-h.start >= h.Skip+h.Steps:
		return h.finish()
	}
	return nil
}

// TrainEnd ends a window training ended inside, or says on Table that
// training ended before it.
func (h *Profile) TrainEnd(s *State, err error) error {
	switch {
	case h.p != nil:
		if ferr := h.finish(); err == nil {
			return ferr
		}
	case !h.done && h.Table != nil:
		fmt.Fprintf(h.Table, "profile: training ended after %d steps, before the profiled steps %d to %d\n", s.TotalSteps-h.start, h.Skip+1, h.Skip+h.Steps)
	}
	return nil
}

// finish stops the profile and writes its results.
func (h *Profile) finish() error {
	h.p.Stop()
	p := h.p
	h.p, h.done = nil, true
	if h.Table != nil {
		if err := p.WriteTable(h.Table, h.Top); err != nil {
			return fmt.Errorf("estimator: Profile: %w", err)
		}
	}
	if h.TracePath != "" {
		var b bytes.Buffer
		if err := p.WriteChromeTrace(&b); err != nil {
			return fmt.Errorf("estimator: Profile: %w", err)
		}
		if err := atomicfile.WriteBytes(h.TracePath, b.Bytes()); err != nil {
			return fmt.Errorf("estimator: Profile: %w", err)
		}
	}
	return nil
}
