package tensorboard

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/estimator"
	"github.com/goluon/goluon/nd"
)

// HandlerOpts configures Handler.
type HandlerOpts struct {
	// Every writes the batch loss every Every steps (train/batch_loss, at
	// the step count); 0 writes none.
	Every int
	// Params, when set, get a histogram each (params/<name>) at every
	// epoch's end, from their first context.
	Params *gluon.ParamDict
}

// Handler is an estimator.Handler that writes Fit's progress to w: at each
// epoch's end the epoch's training and validation metrics (train/<name>,
// val/<name>) and samples per second (perf/samples_per_sec), at the
// epoch number; the batch loss every opts.Every steps; parameter
// histograms. It flushes at every epoch's end and when training ends; the
// caller closes w.
type Handler struct {
	estimator.NopHandler
	w    *Writer
	opts HandlerOpts
}

// NewHandler returns a Handler writing to w.
func NewHandler(w *Writer, opts HandlerOpts) *Handler { return &Handler{w: w, opts: opts} }

// BatchEnd writes the batch loss every opts.Every steps.
func (h *Handler) BatchEnd(s *estimator.State) error {
	if h.opts.Every > 0 && s.TotalSteps%h.opts.Every == 0 {
		return h.w.AddScalar("train/batch_loss", s.BatchLoss, int64(s.TotalSteps))
	}
	return nil
}

// EpochEnd writes the epoch's metrics and histograms, then flushes.
func (h *Handler) EpochEnd(s *estimator.State) error {
	vals := map[string]float64{"perf/samples_per_sec": s.SamplesRate}
	for k, v := range s.Train {
		vals["train/"+k] = v
	}
	for k, v := range s.Val {
		vals["val/"+k] = v
	}
	step := int64(s.Epoch)
	if err := h.w.AddScalars(vals, step); err != nil {
		return err
	}
	if h.opts.Params != nil {
		for _, p := range h.opts.Params.List() {
			cs := p.Contexts()
			if len(cs) == 0 {
				continue
			}
			var v []float64
			if err := nd.Catch(func() { v = p.Data(cs[0]).Float64s() }); err != nil {
				return err
			}
			if err := h.w.AddHistogram("params/"+p.Name(), v, step); err != nil {
				return err
			}
		}
	}
	return h.w.Flush()
}

// TrainEnd flushes the events written so far.
func (h *Handler) TrainEnd(*estimator.State, error) error { return h.w.Flush() }
