package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/transforms"
)

// Fashion-MNIST's mean and standard deviation of the pixel values in
// [0, 1], over the 60,000 training images.
const fashionMean, fashionStd = 0.2860, 0.3530

// classNames are Fashion-MNIST's labels 0..9.
var classNames = [10]string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

// classes returns the samples of ds whose label lies in [lo, lo+n), with
// the label shifted to [0, n): the class split of the tutorial, built from
// data.Subset (which samples) and data.TransformSample (the new label).
func classes(ds data.Dataset, lo, n int) (data.Dataset, error) {
	var idx []int
	for i := range ds.Len() {
		s, err := ds.Get(i, nil)
		if err != nil {
			return nil, err
		}
		if l := int(s.Label); l >= lo && l < lo+n {
			idx = append(idx, i)
		}
	}
	sub, err := data.Subset(ds, idx)
	if err != nil {
		return nil, err
	}
	return data.TransformSample(sub, func(s data.Sample, _ *rand.Rand) (data.Sample, error) {
		s.Label -= float32(lo)
		return s, nil
	}), nil
}

// toRGB32 turns a 28×28 grey uint8 image into what an ImageNet-style
// network takes: padded by 2 pixels of black on every side to 32×32,
// converted to CHW float32 in [0, 1], normalised with Fashion-MNIST's mean
// and standard deviation, and repeated over 3 channels.
func toRGB32() data.Transform {
	return data.Compose(
		transforms.Pad(2, transforms.Constant, 0),
		transforms.ToTensor(),
		transforms.Normalize([]float32{fashionMean}, []float32{fashionStd}),
		repeatChannels(3),
	)
}

// repeatChannels returns a transform that copies a 1×H×W float32 image
// into c identical channels (c×H×W).
func repeatChannels(c int) data.Transform {
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		if x.F32 == nil || len(x.Shape) != 3 || x.Shape[0] != 1 {
			return data.Tensor{}, fmt.Errorf("repeatChannels: want a 1×H×W float32 image, got shape %v", x.Shape)
		}
		n := len(x.F32)
		out := make([]float32, c*n)
		for k := range c {
			copy(out[k*n:(k+1)*n], x.F32)
		}
		return data.Tensor{Shape: []int{c, x.Shape[1], x.Shape[2]}, F32: out}, nil
	}
}

// task is one half of Fashion-MNIST: its training and test loaders.
type task struct {
	name        string
	first       int // the first original class; labels are shifted by it
	train, test *data.DataLoader
	nTrain      int
	nTest       int
}

// newTask keeps the classes [first, first+n) of the training and test
// sets, with labels 0..n-1, and makes the loaders: shuffled batches of
// batch samples for training, in order for testing.
func newTask(name string, trainSet, testSet data.Dataset, first, n, batch, workers int, seed uint64) (*task, error) {
	tr, err := classes(trainSet, first, n)
	if err != nil {
		return nil, err
	}
	te, err := classes(testSet, first, n)
	if err != nil {
		return nil, err
	}
	if tr.Len() == 0 || te.Len() == 0 {
		return nil, fmt.Errorf("%s: classes %d-%d have %d training and %d test images; need some of both", name, first, first+n-1, tr.Len(), te.Len())
	}
	t := &task{name: name, first: first, nTrain: tr.Len(), nTest: te.Len()}
	prep := toRGB32()
	if t.train, err = data.NewDataLoader(data.TransformFirst(tr, prep), data.LoaderOpts{
		BatchSize: batch, Shuffle: true, Seed: seed, Workers: workers,
	}); err != nil {
		return nil, err
	}
	if t.test, err = data.NewDataLoader(data.TransformFirst(te, prep), data.LoaderOpts{
		BatchSize: batch, Workers: workers,
	}); err != nil {
		return nil, err
	}
	return t, nil
}

// describe names the task's classes, e.g. "5 Sandal, 6 Shirt, ...".
func (t *task) describe(n int) string {
	s := ""
	for c := t.first; c < t.first+n; c++ {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", c, classNames[c])
	}
	return s
}
