package data_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/nd"
)

// A DataLoader batches a dataset with worker goroutines; batches come out
// in sampler order, here with the incomplete last batch kept.
func ExampleDataLoader() {
	x := nd.Reshape(nd.Arange(ctx.CPU(0), nd.Float32, 0, 10, 1), 5, 2) // five samples of shape [2]
	y := nd.FromSlice(ctx.CPU(0), []float32{0, 1, 0, 1, 0})
	ds, err := data.NewArrayDatasetFromND(x, y)
	if err != nil {
		fmt.Println(err)
		return
	}
	scaled := data.TransformFirst(ds, func(t data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		out := make([]float32, len(t.F32))
		for i, v := range t.F32 {
			out[i] = v * 10
		}
		return data.Tensor{Shape: t.Shape, F32: out}, nil
	})
	loader, err := data.NewDataLoader(scaled, data.LoaderOpts{BatchSize: 2, Workers: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("batches per epoch:", loader.Len())
	it := loader.Iter(context.Background())
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		fmt.Println(b.Indices, b.Data.Shape(), b.Data.Float32s(), b.Label.Float32s())
		b.Release()
	}
	if err := it.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// batches per epoch: 3
	// [0 1] [2 2] [0 10 20 30] [0 1]
	// [2 3] [2 2] [40 50 60 70] [0 1]
	// [4] [1 2] [80 90] [0]
}

// Rollover carries the samples left over at the end of an epoch into the
// first batch of the next one.
func ExampleBatchSampler() {
	bs, _ := data.NewBatchSampler(data.SequentialSampler{N: 5}, 2, data.Rollover)
	for epoch := range 3 {
		fmt.Println(epoch, bs.Batches(epoch))
	}
	// Output:
	// 0 [[0 1] [2 3]]
	// 1 [[4 0] [1 2] [3 4]]
	// 2 [[0 1] [2 3]]
}

// Shard cuts a dataset into balanced contiguous parts, one per machine or
// process.
func ExampleShard() {
	ds := make(data.SimpleDataset, 10)
	for i := range 3 {
		part, _ := data.Shard(ds, 3, i)
		start, end, _ := data.ShardRange(ds.Len(), 3, i)
		fmt.Println(i, part.Len(), start, end)
	}
	// Output:
	// 0 4 0 4
	// 1 3 4 7
	// 2 3 7 10
}

// Collate pads sequences of different lengths: here frames of features
// [T_i, 3] and target sequences [S_i] (padded with −1, the CTC loss's
// padding), with each sample's lengths in Batch.Lengths.
func ExampleCollate() {
	ds := data.FuncDataset{N: 3, Fn: func(i int, _ *rand.Rand) (data.Sample, error) {
		frames := make([]float32, 3*(4+i)) // 4, 5, 6 frames
		target := make([]float32, 1+i)     // 1, 2, 3 labels
		for j := range target {
			target[j] = float32(j + 1)
		}
		return data.Sample{
			Data:  data.Tensor{Shape: []int{4 + i, 3}, F32: frames},
			Extra: []data.Tensor{{Shape: []int{1 + i}, F32: target}},
		}, nil
	}}
	l, err := data.NewDataLoader(ds, data.LoaderOpts{BatchSize: 3, Collate: []data.Collate{
		{Pad: true, Axis: 0},            // the frames, padded with zeros
		{Pad: true, Axis: 0, Value: -1}, // the targets
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	it := l.Iter(context.Background())
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		fmt.Println(b.Data.Shape(), b.Lengths[0])
		fmt.Println(b.Extra[0].Float32s(), b.Lengths[1])
	}
	// Output:
	// [3 6 3] [4 5 6]
	// [1 -1 -1 1 2 -1 1 2 3] [1 2 3]
}
