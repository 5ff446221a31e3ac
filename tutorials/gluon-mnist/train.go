package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/amp"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/gluon/progress"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// tutorial holds what the training loop works with: the network (one
// parameter replica per context), the loss, the trainer and the contexts.
type tutorial struct {
	net     gluon.Block
	lossFn  loss.SoftmaxCrossEntropy
	trainer *gluon.Trainer
	devs    []ctx.Context
	scaler  *amp.LossScaler  // -amp: the loss scale (nil in float32)
	step    *gluon.TrainStep // -compile: the whole training step traced (nil: the loop below)
}

// forward splits a batch over the contexts with SplitAndLoad and runs the
// network and the loss on every context concurrently. When train is set it
// records the passes and runs backward on each device; otherwise it runs in
// predict mode. It returns the per-device labels, outputs and per-sample
// losses (nil when the batch fails to split).
func (t *tutorial) forward(b data.Batch, train bool) (labels, outs, losses []*nd.NDArray, err error) {
	xs, err := gluon.SplitAndLoad(b.Data, t.devs, false)
	if err != nil {
		return nil, nil, nil, err
	}
	ys, err := gluon.SplitAndLoad(b.Label, t.devs, false)
	if err != nil {
		return nil, nil, nil, err
	}
	devs := t.devs[:len(xs)] // a batch smaller than len(devs) has fewer slices
	outs = make([]*nd.NDArray, len(xs))
	losses = make([]*nd.NDArray, len(xs))
	pass := func(i int, _ ctx.Context) error {
		outs[i] = t.net.Forward(xs[i])
		losses[i] = t.lossFn.Forward(outs[i], ys[i])
		if train {
			autograd.Backward(common.ScaleLoss(t.scaler, losses[i])) // gradients land in this device's replica
		}
		return nil
	}
	if train {
		autograd.Record(func() { err = gluon.ForEachDevice(devs, pass) })
	} else {
		autograd.PredictMode(func() { err = gluon.ForEachDevice(devs, pass) })
	}
	return ys, outs, losses, err
}

// trainEpoch runs one epoch of training: per batch, the forward and
// backward passes on every context, then one trainer step with the global
// batch size. Loss and accuracy are accumulated over the epoch from the
// training passes themselves (as Keras reports them).
func (t *tutorial) trainEpoch(loader *data.DataLoader, epoch, epochs int, w io.Writer) (epochResult, error) {
	r := epochResult{Epoch: epoch, start: time.Now()}
	acc, lossM := metric.NewAccuracy(), metric.NewLoss()
	bar := progress.New(w, int64(loader.Len()), progress.Opts{
		Prefix: fmt.Sprintf("Epoch %d/%d", epoch, epochs), Unit: "batches",
	})
	it := loader.Iter(context.Background())
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		s := nd.NewScope() // every temporary of this step goes back to the pool at Close
		var ys, outs, losses []*nd.NDArray
		var err error
		if t.step != nil { // the same step, traced: split, forward, loss, backward, Step
			var res gluon.StepResult
			res, err = t.step.Run(b.Data, b.Label)
			ys, outs, losses = res.Labels, res.Outputs, res.Losses
		} else {
			ys, outs, losses, err = t.forward(b, true)
			if err == nil {
				// The global batch: every sample on every device. The summed
				// gradient is divided by it, so the update uses the mean.
				err = t.trainer.Step(b.Data.Shape()[0])
			}
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
		_, l := lossM.Get()
		_, a := acc.Get()
		bar.SetSuffix(fmt.Sprintf("%.0f samples/s - loss %.4f - acc %.4f", float64(r.Samples)/time.Since(r.start).Seconds(), l, a))
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
// loader, in predict mode, with every batch split over the contexts.
func (t *tutorial) evaluate(loader *data.DataLoader) (lossValue, accuracy float64, err error) {
	acc, lossM := metric.NewAccuracy(), metric.NewLoss()
	it := loader.Iter(context.Background())
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		s := nd.NewScope()
		ys, outs, losses, err := t.forward(b, false)
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
