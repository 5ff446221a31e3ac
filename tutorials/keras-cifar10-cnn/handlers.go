package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/goluon/goluon/gluon/estimator"
	"github.com/goluon/goluon/gluon/progress"
)

// estimate prints, once, how long the run will take at the speed measured
// over the first batches of its first epoch. The Keras example trains for
// hours on a CPU, so this is worth knowing early.
type estimate struct {
	estimator.NopHandler
	W       io.Writer
	After   int // batches to measure before estimating
	Samples int // training samples per epoch
	done    bool
}

// BatchEnd prints the estimate after the first After batches.
func (e *estimate) BatchEnd(s *estimator.State) error {
	if e.done || s.Batch < min(e.After, max(s.Batches, 1)) || s.SamplesRate <= 0 {
		return nil
	}
	e.done = true
	perEpoch := time.Duration(float64(e.Samples) / s.SamplesRate * float64(time.Second))
	left := s.Epochs - s.Epoch + 1
	sep := ""
	if progress.IsTerminal(e.W) {
		sep = "\n" // end the bar's line; it redraws below
	}
	_, err := fmt.Fprintf(e.W, "%sEstimated time: %s per epoch, %s for the %d epoch(s) to go "+
		"(%.0f samples/s over the first %d batches; validation not included)\n",
		sep, progress.Duration(perEpoch), progress.Duration(perEpoch*time.Duration(left)), left, s.SamplesRate, s.Batch)
	return err
}

// history keeps what the summary line needs: the last epoch's metrics and
// the training throughput over every epoch this run trained.
type history struct {
	estimator.NopHandler
	epochs  int // epochs trained in this run
	last    int // number of the last epoch finished
	train   map[string]float64
	val     map[string]float64
	samples int
	time    time.Duration
}

// EpochEnd records the epoch.
func (h *history) EpochEnd(s *estimator.State) error {
	h.epochs++
	h.last = s.Epoch
	h.train = maps.Clone(s.Train)
	h.val = maps.Clone(s.Val)
	h.samples += s.Samples
	h.time += s.EpochTime
	return nil
}

// rate is the training throughput in samples per second (0 before any
// epoch ran).
func (h *history) rate() float64 {
	if h.time <= 0 {
		return 0
	}
	return float64(h.samples) / h.time.Seconds()
}

// resumeNote says, before the first epoch, which checkpoint a -resume run
// continues from; it must come after the Checkpoint handler.
type resumeNote struct {
	estimator.NopHandler
	W    io.Writer
	Ckpt *estimator.Checkpoint
}

// TrainBegin prints the note.
func (r resumeNote) TrainBegin(s *estimator.State) error {
	switch {
	case r.Ckpt.ResumedFrom == 0:
		return nil
	case s.StartEpoch > s.Epochs:
		_, err := fmt.Fprintf(r.W, "The checkpoint is at epoch %d: nothing left to train for -epochs %d.\n", r.Ckpt.ResumedFrom, s.Epochs)
		return err
	}
	_, err := fmt.Fprintf(r.W, "Resuming from the checkpoint of epoch %d.\n", r.Ckpt.ResumedFrom)
	return err
}

// lastLogged reads the last line of a metrics log (JSON lines), for a
// resumed run that had nothing left to train; missing values stay 0.
func lastLogged(path string) map[string]float64 {
	out := map[string]float64{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var rec map[string]any
	if json.Unmarshal([]byte(lines[len(lines)-1]), &rec) != nil {
		return out
	}
	for k, v := range rec {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}
