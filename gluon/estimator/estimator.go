// Package estimator trains a gluon network with a Keras-style Fit, after
// Gluon's contrib.estimator: give it the network, the loss, the metrics,
// the trainer and the contexts, and Fit runs the epochs — splitting each
// batch over the contexts, running the per-device forward and backward
// passes concurrently, stepping the trainer, validating — and calls event
// handlers for logging, checkpoints, learning-rate schedules and early
// stopping.
package estimator

import (
	"context"
	"fmt"
	"time"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/nd"
)

// Estimator holds what training needs.
type Estimator struct {
	Net      gluon.Block
	Loss     loss.Loss
	Trainer  *gluon.Trainer
	Contexts []ctx.Context
	// Metrics are computed on the training batches (from the network's
	// outputs) and, with fresh state, on the validation data. Fit adds
	// the mean loss as "loss".
	Metrics []func() metric.Metric
	// Session is the autograd session Fit and Evaluate record, set the
	// mode and open their scopes in (nil: the default session). An
	// estimator that runs beside other goroutine trees — evaluating while
	// its caller trains — takes its own, and its loaders make their
	// batches with it (data.LoaderOpts.Session).
	Session *nd.Session
}

// session returns the session the estimator works in.
func (e *Estimator) session() *nd.Session {
	if e.Session != nil {
		return e.Session
	}
	return nd.DefaultSession()
}

// New returns an Estimator; metrics are given as constructors so that
// training and validation each get their own instances.
func New(net gluon.Block, l loss.Loss, tr *gluon.Trainer, devs []ctx.Context, metrics ...func() metric.Metric) (*Estimator, error) {
	if net == nil || l == nil || tr == nil {
		return nil, fmt.Errorf("estimator: network, loss and trainer are required")
	}
	if len(devs) == 0 {
		return nil, fmt.Errorf("estimator: no contexts")
	}
	if err := ctx.Check(devs...); err != nil {
		return nil, fmt.Errorf("estimator: %w", err)
	}
	return &Estimator{Net: net, Loss: l, Trainer: tr, Contexts: devs, Metrics: metrics}, nil
}

// tracker accumulates the mean loss and the metrics of one pass.
type tracker struct {
	loss    *metric.Loss
	metrics []metric.Metric
}

func (e *Estimator) newTracker() *tracker {
	t := &tracker{loss: metric.NewLoss()}
	for _, mk := range e.Metrics {
		t.metrics = append(t.metrics, mk())
	}
	return t
}

func (t *tracker) update(labels, outputs, losses []*nd.NDArray) {
	t.loss.Update(nil, losses)
	for _, m := range t.metrics {
		m.Update(labels, outputs)
	}
}

func (t *tracker) values() map[string]float64 {
	out := map[string]float64{}
	for _, m := range append([]metric.Metric{t.loss}, t.metrics...) {
		for _, nv := range metric.NameValues(m) {
			out[nv.Name] = nv.Value
		}
	}
	return out
}

// lossScaler is a GradScaler that also scales losses (amp.LossScaler).
type lossScaler interface {
	Scale(loss *nd.NDArray) *nd.NDArray
}

// scaled returns l multiplied by the loss scale of the Trainer's
// GradScaler (Trainer.SetGradScaler), or l itself without one.
func (e *Estimator) scaled(l *nd.NDArray) *nd.NDArray {
	if s, ok := e.Trainer.GradScaler().(lossScaler); ok {
		return s.Scale(l)
	}
	return l
}

// step trains on one batch: split over the contexts, concurrent forward
// and backward, one trainer step with the global batch size.
func (e *Estimator) step(b data.Batch, tr *tracker) (float64, error) {
	xs, err := gluon.SplitAndLoad(b.Data, e.Contexts, false)
	if err != nil {
		return 0, err
	}
	ys, err := gluon.SplitAndLoad(b.Label, e.Contexts, false)
	if err != nil {
		return 0, err
	}
	devs := e.Contexts[:len(xs)]
	outs := make([]*nd.NDArray, len(xs))
	losses := make([]*nd.NDArray, len(xs))
	e.session().Record(func() {
		err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
			outs[i] = e.Net.Forward(xs[i])
			losses[i] = e.Loss.Forward(outs[i], ys[i])
			autograd.Backward(e.scaled(losses[i]))
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	n := b.Data.Shape()[0]
	if err := e.Trainer.Step(n); err != nil {
		return 0, err
	}
	tr.update(ys, outs, losses)
	var sum float64
	for _, l := range losses {
		sum += nd.Sum(l).Scalar()
	}
	return sum / float64(n), nil
}

// Evaluate runs the network in predict mode over a loader and returns the
// mean loss and the metrics.
func (e *Estimator) Evaluate(goctx context.Context, val *data.DataLoader) (map[string]float64, error) {
	tr := e.newTracker()
	it := val.Iter(goctx)
	defer it.Close()
	for it.Next() {
		s := e.session().NewScope()
		b := it.Batch()
		xs, err := gluon.SplitAndLoad(b.Data, e.Contexts, false)
		if err != nil {
			s.Close()
			b.Release()
			return nil, err
		}
		ys, _ := gluon.SplitAndLoad(b.Label, e.Contexts, false)
		outs := make([]*nd.NDArray, len(xs))
		losses := make([]*nd.NDArray, len(xs))
		e.session().PredictMode(func() {
			err = gluon.ForEachDevice(e.Contexts[:len(xs)], func(i int, _ ctx.Context) error {
				outs[i] = e.Net.Forward(xs[i])
				losses[i] = e.Loss.Forward(outs[i], ys[i])
				return nil
			})
		})
		if err == nil {
			tr.update(ys, outs, losses)
		}
		s.Close()
		b.Release()
		if err != nil {
			return nil, err
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return tr.values(), nil
}

// Fit trains for the given number of epochs, validating after each epoch
// when val is not nil, and calls the handlers. It returns early, after
// TrainEnd handlers ran, when a handler sets State.Stop, when goctx is
// cancelled, or on the first error.
func (e *Estimator) Fit(goctx context.Context, train, val *data.DataLoader, epochs int, handlers ...Handler) (err error) {
	if epochs <= 0 {
		return fmt.Errorf("estimator: %d epochs", epochs)
	}
	start := time.Now()
	s := &State{Epochs: epochs, StartEpoch: 1, Batches: train.Len(), Contexts: len(e.Contexts)}
	defer func() {
		if endErr := trainEnd(handlers, s, err); err == nil {
			err = endErr
		}
	}()
	if err := trainBegin(handlers, s); err != nil {
		return err
	}
	for epoch := s.StartEpoch; epoch <= epochs && !s.Stop; epoch++ {
		if err := goctx.Err(); err != nil {
			return err
		}
		s.Epoch, s.Batch, s.Samples, s.Val = epoch, 0, 0, map[string]float64{}
		tr := e.newTracker()
		s.Train = tr.values()
		if err := epochBegin(handlers, s); err != nil {
			return err
		}
		epochStart := time.Now()
		if err := e.runEpoch(goctx, train, tr, s, epochStart, handlers); err != nil {
			return err
		}
		s.EpochTime = time.Since(epochStart)
		s.Train = tr.values()
		if val != nil {
			if s.Val, err = e.Evaluate(goctx, val); err != nil {
				return fmt.Errorf("estimator: validation after epoch %d: %w", epoch, err)
			}
		}
		s.Elapsed = time.Since(start)
		if err := epochEnd(handlers, s); err != nil {
			return err
		}
	}
	return nil
}

// runEpoch iterates over one epoch of training batches.
func (e *Estimator) runEpoch(goctx context.Context, train *data.DataLoader, tr *tracker, s *State, t0 time.Time, handlers []Handler) error {
	train.SetEpoch(s.Epoch - 1) // epoch e always sees the same order, also after a resume
	it := train.Iter(goctx)
	defer it.Close()
	for it.Next() {
		scope := e.session().NewScope()
		b := it.Batch()
		l, err := e.step(b, tr)
		scope.Close()
		b.Release()
		if err != nil {
			return fmt.Errorf("estimator: epoch %d, batch %d: %w", s.Epoch, s.Batch+1, err)
		}
		s.Batch++
		s.TotalSteps++
		s.Samples += len(b.Indices)
		s.BatchLoss = l
		s.SamplesRate = float64(s.Samples) / time.Since(t0).Seconds()
		_, s.Train["loss"] = tr.loss.Get()
		if err := batchEnd(handlers, s); err != nil {
			return err
		}
		if s.Stop {
			break
		}
	}
	return it.Err()
}
