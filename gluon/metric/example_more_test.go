package metric_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/nd"
)

// ExampleF1 scores two batches of a binary classifier, the first split
// over two devices, over all samples (Global, the default) and with MXNet
// 1.9's per-batch average (BatchMean).
func ExampleF1() {
	perBatch, global := metric.NewF1(metric.BatchMean), metric.NewF1(metric.Global)
	update := func(labels, preds []*nd.NDArray) {
		perBatch.Update(labels, preds)
		global.Update(labels, preds)
	}

	// Class scores [N, 2]: the positive class is the larger second score.
	// Predicted [1 1 | 1] for labels [0 1 | 1]: tp 2, fp 1, fn 0, F1 0.8.
	update(
		[]*nd.NDArray{
			nd.FromSlice(ctx.CPU(0), []float32{0, 1}),
			nd.FromSlice(ctx.CPU(1), []float32{1}),
		},
		[]*nd.NDArray{
			nd.FromSlice(ctx.CPU(0), []float32{0.3, 0.7, 0, 1}, 2, 2),
			nd.FromSlice(ctx.CPU(1), []float32{0.4, 0.6}, 1, 2),
		})
	// Probabilities of the positive class, positive above 0.5: predicted
	// [0 1] for labels [1 0], no true positive, F1 0.
	update(
		[]*nd.NDArray{nd.FromSlice(ctx.CPU(0), []float32{1, 0})},
		[]*nd.NDArray{nd.FromSlice(ctx.CPU(0), []float32{0.2, 0.9})})

	name, v := perBatch.Get()
	fmt.Printf("%s per batch: %.4f\n", name, v) // (0.8 + 0) / 2
	name, v = global.Get()
	fmt.Printf("%s global: %.4f\n", name, v) // tp 2, fp 2, fn 1: 4/7
	// Output:
	// f1 per batch: 0.4000
	// f1 global: 0.5714
}

// ExampleMAE averages absolute errors over the samples of two batches of
// different sizes; labels [N] go with predictions [N, 1].
func ExampleMAE() {
	m := metric.NewMAE()
	m.Update(
		[]*nd.NDArray{nd.FromSlice(ctx.CPU(0), []float32{2.5, 0, 2, 8})},
		[]*nd.NDArray{nd.FromSlice(ctx.CPU(0), []float32{3, -0.5, 2, 7}, 4, 1)})
	name, v := m.Get()
	fmt.Printf("%s: %.4f\n", name, v)

	m.Update(
		[]*nd.NDArray{nd.FromSlice(ctx.CPU(0), []float32{1})},
		[]*nd.NDArray{nd.FromSlice(ctx.CPU(0), []float32{4}, 1, 1)})
	name, v = m.Get()
	fmt.Printf("%s: %.4f\n", name, v) // (0.5·4 + 3) / 5 samples
	// Output:
	// mae: 0.5000
	// mae: 1.0000
}
