package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/gluon/progress"
	"github.com/goluon/goluon/gluon/tensorboard"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// learner is what a training phase works with: the network (one replica
// of its parameters per context), the loss, the trainer and the contexts.
type learner struct {
	net     gluon.Block
	lossFn  loss.SoftmaxCrossEntropy
	trainer *gluon.Trainer
	devs    []ctx.Context
	// frozen says that only the head trains. The forward pass is then
	// recorded in predict mode: the frozen BatchNorm layers normalise
	// with their running statistics and leave them alone (GradReq null
	// stops the Trainer, not BatchNorm's updates in training mode), and
	// as no frozen parameter wants a gradient, only the head's
	// operations are taped.
	frozen bool
	// tb, when set, receives each epoch's metrics under <phase>/.
	tb *tensorboard.Writer
}

// forward splits a batch over the contexts and runs the network and the
// loss on each, concurrently; with train set the passes are recorded and
// backward runs on every context. It returns the per-context labels,
// outputs and per-sample losses.
func (l *learner) forward(b data.Batch, train bool) (labels, outs, losses []*nd.NDArray, err error) {
	xs, err := gluon.SplitAndLoad(b.Data, l.devs, false)
	if err != nil {
		return nil, nil, nil, err
	}
	ys, err := gluon.SplitAndLoad(b.Label, l.devs, false)
	if err != nil {
		return nil, nil, nil, err
	}
	devs := l.devs[:len(xs)] // a batch smaller than len(devs) has fewer slices
	outs = make([]*nd.NDArray, len(xs))
	losses = make([]*nd.NDArray, len(xs))
	pass := func(i int, _ ctx.Context) error {
		outs[i] = l.net.Forward(xs[i])
		losses[i] = l.lossFn.Forward(outs[i], ys[i])
		if train {
			autograd.Backward(losses[i])
		}
		return nil
	}
	switch {
	case !train:
		autograd.PredictMode(func() { err = gluon.ForEachDevice(devs, pass) })
	case l.frozen:
		autograd.RecordMode(false, func() { err = gluon.ForEachDevice(devs, pass) })
	default:
		autograd.Record(func() { err = gluon.ForEachDevice(devs, pass) })
	}
	return ys, outs, losses, err
}

// epochResult is what one epoch of one phase measured; it is written as
// one JSON line to the metrics log.
type epochResult struct {
	Phase         string  `json:"phase"`
	Epoch         int     `json:"epoch"`
	Loss          float64 `json:"loss"`     // mean training loss over the epoch
	Acc           float64 `json:"acc"`      // training accuracy over the epoch
	ValLoss       float64 `json:"val_loss"` // test loss after the epoch
	ValAcc        float64 `json:"val_acc"`  // test accuracy after the epoch
	Samples       int     `json:"samples"`
	TrainSeconds  float64 `json:"train_seconds"`
	SamplesPerSec float64 `json:"samples_per_sec"`
	Seconds       float64 `json:"seconds"` // training and evaluation

	start time.Time
}

// line is the Keras-like summary of the epoch, after the phase's name.
func (r epochResult) line(epochs int) string {
	return fmt.Sprintf("%s: Epoch %d/%d - %.1fs - %.0f samples/s - loss: %.4f - acc: %.4f - val_loss: %.4f - val_acc: %.4f",
		r.Phase, r.Epoch, epochs, r.Seconds, r.SamplesPerSec, r.Loss, r.Acc, r.ValLoss, r.ValAcc)
}

// fit trains l for epochs from to to of epochs on t, evaluating on t's
// test set after every epoch; it prints the progress and one line per
// epoch to w and appends every epoch to the metrics log mlog. The training
// loader is set to epoch e-1 before epoch e, so that every phase sees the
// same batches in the same order.
func (l *learner) fit(phase string, t *task, from, to, epochs int, w, mlog io.Writer) ([]epochResult, error) {
	var hist []epochResult
	for epoch := from; epoch <= to; epoch++ {
		t.train.SetEpoch(epoch - 1)
		r, err := l.trainEpoch(phase, t.train, epoch, epochs, w)
		if err != nil {
			return hist, fmt.Errorf("%s: epoch %d: %w", phase, epoch, err)
		}
		if r.ValLoss, r.ValAcc, err = l.evaluate(t.test); err != nil {
			return hist, fmt.Errorf("%s: epoch %d: evaluation: %w", phase, epoch, err)
		}
		r.Seconds = common.Since(r.start)
		fmt.Fprintln(w, r.line(epochs))
		b, err := json.Marshal(r)
		if err != nil {
			return hist, err
		}
		if _, err := fmt.Fprintf(mlog, "%s\n", b); err != nil {
			return hist, err
		}
		if l.tb != nil {
			if err := l.tb.AddScalars(map[string]float64{phase + "/loss": r.Loss, phase + "/accuracy": r.Acc,
				phase + "/val_loss": r.ValLoss, phase + "/val_accuracy": r.ValAcc}, int64(epoch)); err != nil {
				return hist, err
			}
		}
		hist = append(hist, r)
	}
	if l.tb != nil {
		if err := l.tb.Flush(); err != nil {
			return hist, err
		}
	}
	return hist, nil
}

// trainEpoch runs one epoch: per batch the forward and backward passes on
// every context, then one trainer step with the whole batch. Loss and
// accuracy are accumulated from the training passes.
func (l *learner) trainEpoch(phase string, loader *data.DataLoader, epoch, epochs int, w io.Writer) (epochResult, error) {
	r := epochResult{Phase: phase, Epoch: epoch, start: time.Now()}
	acc, lossM := metric.NewAccuracy(), metric.NewLoss()
	bar := progress.New(w, int64(loader.Len()), progress.Opts{
		Prefix: fmt.Sprintf("%s: Epoch %d/%d", phase, epoch, epochs), Unit: "batches",
	})
	it := loader.Iter(context.Background())
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		s := nd.NewScope() // every temporary of this step goes back to the pool at Close
		ys, outs, losses, err := l.forward(b, true)
		if err == nil {
			err = l.trainer.Step(b.Data.Shape()[0])
		}
		if err == nil {
			acc.Update(ys, outs)
			lossM.Update(nil, losses)
		}
		s.Close()
		b.Release()
		if err != nil {
			return r, err
		}
		r.Samples += len(b.Indices)
		_, lv := lossM.Get()
		_, av := acc.Get()
		bar.SetSuffix(fmt.Sprintf("%.0f samples/s - loss %.4f - acc %.4f", float64(r.Samples)/time.Since(r.start).Seconds(), lv, av))
		bar.Add(1)
	}
	bar.Finish()
	if err := it.Err(); err != nil {
		return r, err
	}
	r.TrainSeconds = time.Since(r.start).Seconds()
	r.SamplesPerSec = rate(r.Samples, r.TrainSeconds)
	_, r.Loss = lossM.Get()
	_, r.Acc = acc.Get()
	return r, nil
}

// evaluate returns the mean loss and the accuracy of the network over a
// loader, in predict mode.
func (l *learner) evaluate(loader *data.DataLoader) (lossValue, accuracy float64, err error) {
	acc, lossM := metric.NewAccuracy(), metric.NewLoss()
	it := loader.Iter(context.Background())
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		s := nd.NewScope()
		ys, outs, losses, err := l.forward(b, false)
		if err == nil {
			acc.Update(ys, outs)
			lossM.Update(nil, losses)
		}
		s.Close()
		b.Release()
		if err != nil {
			return 0, 0, err
		}
	}
	if err := it.Err(); err != nil {
		return 0, 0, err
	}
	_, lossValue = lossM.Get()
	_, accuracy = acc.Get()
	return lossValue, accuracy, nil
}

// rate returns n/seconds, rounded to a whole number (0 for no time).
func rate(n int, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(int64(float64(n)/seconds + 0.5))
}
