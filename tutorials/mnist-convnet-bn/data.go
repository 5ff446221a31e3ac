package main

import (
	"context"
	"fmt"
	"io"

	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/transforms"
	"github.com/goluon/goluon/gluon/data/vision"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// Data set names accepted by -dataset.
const (
	dsFashion = "fashion-mnist"
	dsMNIST   = "mnist"
)

// loadData returns the training and test sets of the named data set, with
// ToTensor applied to the images: uint8 28×28 pixels become float32 1×28×28
// values in [0, 1], the notebook's x / 255.
func loadData(f *common.Flags, name string, log io.Writer) (train, test data.Dataset, err error) {
	switch name {
	case dsFashion:
		train, test, err = common.FashionMNIST(f, log)
	case dsMNIST:
		train, test, err = loadMNIST(f, log)
	default:
		return nil, nil, fmt.Errorf("unknown -dataset %q (want %s or %s)", name, dsMNIST, dsFashion)
	}
	if err != nil {
		return nil, nil, err
	}
	toTensor := transforms.ToTensor()
	return data.TransformFirst(train, toTensor), data.TransformFirst(test, toTensor), nil
}

// loadMNIST reads the original MNIST digits (same file format and names as
// Fashion-MNIST), downloading them with -download, and applies -limit the
// way common.FashionMNIST does (Limit training and Limit/5 test samples).
func loadMNIST(f *common.Flags, log io.Writer) (data.Dataset, data.Dataset, error) {
	var opts []vision.Option
	if f.Download {
		opts = append(opts, vision.WithDownload(context.Background(), vision.DownloadOpts{Progress: log}))
	}
	train, err := vision.MNIST(f.DataDir, true, opts...)
	if err != nil {
		return nil, nil, err
	}
	test, err := vision.MNIST(f.DataDir, false, opts...)
	if err != nil {
		return nil, nil, err
	}
	if f.Limit <= 0 {
		return train, test, nil
	}
	tr, err := firstN(train, f.Limit)
	if err != nil {
		return nil, nil, err
	}
	te, err := firstN(test, max(f.Limit/5, 1))
	return tr, te, err
}

// firstN returns the first n samples of ds (all of them when it has fewer).
func firstN(ds data.Dataset, n int) (data.Dataset, error) {
	if n >= ds.Len() {
		return ds, nil
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return data.Subset(ds, idx)
}

// newLoaders returns the training loader (shuffled, a new order every
// epoch) and the test loader, both giving this process's batches of batch
// samples on cpu(0); the Estimator splits each batch over the contexts. In
// a distributed job the training loader gives this worker only its shard
// of every epoch; every worker validates on the whole test set.
func newLoaders(job common.Job, train, test data.Dataset, batch, workers int, seed uint64) (*data.DataLoader, *data.DataLoader, error) {
	opts, err := job.TrainOptions(train.Len(), data.LoaderOpts{BatchSize: batch, Shuffle: true, Seed: seed, Workers: workers})
	if err != nil {
		return nil, nil, err
	}
	tl, err := data.NewDataLoader(train, opts)
	if err != nil {
		return nil, nil, err
	}
	vl, err := data.NewDataLoader(test, data.LoaderOpts{BatchSize: batch, Seed: seed, Workers: workers})
	if err != nil {
		return nil, nil, err
	}
	return tl, vl, nil
}
