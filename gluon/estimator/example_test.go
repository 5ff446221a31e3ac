package estimator_test

import (
	"context"
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/estimator"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// bestEpoch is a custom handler: it embeds NopHandler and overrides the
// one event it needs.
type bestEpoch struct {
	estimator.NopHandler
	epoch int
	acc   float64
}

func (b *bestEpoch) EpochEnd(s *estimator.State) error {
	if acc := s.Val["accuracy"]; acc > b.acc {
		b.epoch, b.acc = s.Epoch, acc
	}
	return nil
}

// Fit a classifier of three separated blobs on two CPU contexts, with
// early stopping and a custom handler.
func Example() {
	nd.Seed(1)
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	net := nn.NewSequential(nn.NewDense(8, nn.DenseOpts{InUnits: 2, Act: "relu"}), nn.NewDense(3, nn.DenseOpts{InUnits: 8}))
	params := gluon.CollectParams(net)
	_ = params.Initialize(initializer.Xavier{}, devs, false)
	trainer, _ := gluon.NewTrainer(params, optimizer.NewSGD(0.2), "device", gluon.TrainerOpts{})
	est, _ := estimator.New(net, loss.NewSoftmaxCrossEntropy(), trainer, devs,
		func() metric.Metric { return metric.NewAccuracy() })

	centres := [][2]float32{{2, 0}, {-2, 1}, {0, -2}}
	var xs []data.Tensor
	var ys []float32
	for i := range 96 {
		c := centres[i%3]
		d := float32(i%5) * 0.1 // a little spread
		xs = append(xs, data.Tensor{Shape: []int{2}, F32: []float32{c[0] + d, c[1] - d}})
		ys = append(ys, float32(i%3))
	}
	ds, _ := data.NewArrayDataset(xs, ys)
	train, _ := data.NewDataLoader(ds, data.LoaderOpts{BatchSize: 16, Shuffle: true, Seed: 2})
	val, _ := data.NewDataLoader(ds, data.LoaderOpts{BatchSize: 32})

	best := &bestEpoch{}
	stop := &estimator.EarlyStopping{Monitor: "val_accuracy", Mode: "max", Patience: 2}
	if err := est.Fit(context.Background(), train, val, 20, best, stop); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("best val accuracy %.2f\n", best.acc)
	// Output: best val accuracy 1.00
}
