package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/transforms"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// newOptimizer returns Keras' RMSprop(lr, decay) with Keras' other
// defaults: rho 0.9, epsilon 1e-7 added after the square root, and the
// learning rate lr/(1 + decay·iterations) with iterations counted from 0
// at the first update.
func newOptimizer(lr, decay float64) (*optimizer.RMSProp, error) {
	opt := optimizer.NewRMSProp(lr)
	opt.Gamma1 = 0.9 // Keras' rho
	opt.KerasEpsilon, opt.Epsilon = true, 1e-7
	sched, err := optimizer.NewInverseTime(lr, decay)
	if err != nil {
		return nil, fmt.Errorf("-lr %g, -decay %g: %w", lr, decay, err)
	}
	opt.Scheduler = sched
	return opt, opt.Validate()
}

// trainTransform is the Keras example's ImageDataGenerator(
// width_shift_range=0.1, height_shift_range=0.1, horizontal_flip=True,
// fill_mode='nearest') applied to images already divided by 255. The
// shifts and the flip work on the uint8 HWC pixels, then ToTensor scales
// to [0, 1] and makes the image CHW; shifting first and scaling after
// gives the same values as Keras, which scales first.
func trainTransform(augment bool) data.Transform {
	if !augment {
		return transforms.ToTensor()
	}
	return data.Compose(
		transforms.RandomShift(0.1, 0.1, transforms.Nearest, 0),
		transforms.RandomFlipLeftRight(0.5),
		transforms.ToTensor(),
	)
}

// loaders returns the shuffled, augmented training loader and the test
// loader, both with this process's batch (batch per context × contexts);
// the estimator splits every batch over the contexts. An incomplete last
// batch is kept, as Keras' flow() does. In a distributed job the training
// loader gives this worker only its shard of every epoch; every worker
// validates on the whole test set.
func loaders(job common.Job, trainSet, testSet data.Dataset, augment bool, batch, workers int, seed uint64) (train, val *data.DataLoader, err error) {
	opts, err := job.TrainOptions(trainSet.Len(), data.LoaderOpts{BatchSize: batch, Shuffle: true, Seed: seed, Workers: workers})
	if err != nil {
		return nil, nil, err
	}
	train, err = data.NewDataLoader(data.TransformFirst(trainSet, trainTransform(augment)), opts)
	if err != nil {
		return nil, nil, err
	}
	val, err = data.NewDataLoader(data.TransformFirst(testSet, transforms.ToTensor()),
		data.LoaderOpts{BatchSize: batch, Workers: workers})
	return train, val, err
}

// prepareOutputs makes sure a fresh run does not mix with an earlier one:
// without -resume an existing checkpoint is an error (rather than being
// overwritten after hours of training), and the metrics log starts empty.
// With -resume the log is appended to.
func prepareOutputs(ckptDir, metricsPath string, resume bool) error {
	if resume {
		return nil
	}
	pointer := filepath.Join(ckptDir, "checkpoint.json")
	if _, err := os.Stat(pointer); err == nil {
		return fmt.Errorf("%s holds a checkpoint of an earlier run: pass -resume to continue it, "+
			"or choose another -out (or delete that directory) to start over", ckptDir)
	}
	if err := os.Remove(metricsPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
