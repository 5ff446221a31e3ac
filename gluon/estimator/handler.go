package estimator

import (
	"time"
)

// State is what handlers see of a running Fit. Handlers may read it at
// every event and set Stop to end training after the current epoch (or
// batch).
type State struct {
	Epoch       int // 1-based epoch being run (or just finished)
	Epochs      int // epochs requested
	Batch       int // 1-based batch within the epoch (BatchBegin/BatchEnd)
	Batches     int // batches per epoch (0 when unknown)
	Samples     int // samples seen so far in this epoch
	TotalSteps  int // trainer steps since Fit started (or since the checkpoint resumed)
	BatchLoss   float64
	Train       map[string]float64 // training metrics of the epoch so far (loss and the metrics)
	Val         map[string]float64 // validation metrics after the epoch (empty without validation data)
	EpochTime   time.Duration      // wall time of the epoch (at EpochEnd)
	Elapsed     time.Duration      // since Fit started
	Stop        bool               // set by a handler to stop after this epoch
	StartEpoch  int                // first epoch of this Fit (> 1 when resumed from a checkpoint)
	Contexts    int                // number of contexts training runs on
	SamplesRate float64            // training samples per second over the epoch so far
}

// Handler receives Fit's events. Handlers run in the order given to Fit,
// in the training goroutine; an error from a handler stops Fit and is
// returned. A handler that needs only some events embeds NopHandler and
// overrides those: a value that is not a Handler does not compile, instead
// of being passed and silently ignored.
type Handler interface {
	// TrainBegin is called once before the first epoch.
	TrainBegin(s *State) error
	// EpochBegin is called before each epoch.
	EpochBegin(s *State) error
	// BatchEnd is called after each training step.
	BatchEnd(s *State) error
	// EpochEnd is called after each epoch, with validation results.
	EpochEnd(s *State) error
	// TrainEnd is called once when training ends, also after an error
	// (with the error), so that handlers can flush and close files.
	TrainEnd(s *State, err error) error
}

// NopHandler implements every Handler method as doing nothing; embed it
// and override the events a handler needs.
type NopHandler struct{}

// TrainBegin does nothing.
func (NopHandler) TrainBegin(*State) error { return nil }

// EpochBegin does nothing.
func (NopHandler) EpochBegin(*State) error { return nil }

// BatchEnd does nothing.
func (NopHandler) BatchEnd(*State) error { return nil }

// EpochEnd does nothing.
func (NopHandler) EpochEnd(*State) error { return nil }

// TrainEnd does nothing.
func (NopHandler) TrainEnd(*State, error) error { return nil }

// each calls f on every handler in order and returns the first error.
func each(hs []Handler, f func(h Handler) error) error {
	for _, h := range hs {
		if err := f(h); err != nil {
			return err
		}
	}
	return nil
}

func trainBegin(hs []Handler, s *State) error {
	return each(hs, func(h Handler) error { return h.TrainBegin(s) })
}

func epochBegin(hs []Handler, s *State) error {
	return each(hs, func(h Handler) error { return h.EpochBegin(s) })
}

func batchEnd(hs []Handler, s *State) error {
	return each(hs, func(h Handler) error { return h.BatchEnd(s) })
}

func epochEnd(hs []Handler, s *State) error {
	return each(hs, func(h Handler) error { return h.EpochEnd(s) })
}

// trainEnd calls every TrainEnd handler, returning the first error.
func trainEnd(hs []Handler, s *State, cause error) error {
	var first error
	for _, h := range hs {
		if err := h.TrainEnd(s, cause); err != nil && first == nil {
			first = err
		}
	}
	return first
}
