// Package data moves samples from storage to batches on a context, after
// Gluon's gluon.data: a Dataset gives samples by index, transforms prepare
// them, and a DataLoader batches them with a pool of worker goroutines.
//
// Samples live in host memory as Tensors (uint8 pixels as stored on disk,
// or float32 values after a transform such as ToTensor). Randomness is per
// sample: the DataLoader gives every sample its own generator, derived from
// the loader's seed, the epoch and the sample's index, so augmentation is
// the same for the same seed whatever the number of workers and whichever
// worker handles the sample.
package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Tensor is a host-side array: exactly one of U8 and F32 holds the
// row-major values of Shape. Images are HWC while uint8 (as files store
// them) and CHW once converted to float32 by ToTensor.
type Tensor struct {
	Shape []int
	U8    []uint8
	F32   []float32
}

// Len returns the number of elements.
func (t Tensor) Len() int {
	if t.F32 != nil {
		return len(t.F32)
	}
	return len(t.U8)
}

// Validate reports a tensor whose values do not fill its shape or that
// holds both or neither element type.
func (t Tensor) Validate() error {
	n := 1
	for _, s := range t.Shape {
		if s < 0 {
			return fmt.Errorf("data: negative dimension in shape %v", t.Shape)
		}
		n *= s
	}
	if (t.U8 == nil) == (t.F32 == nil) && n > 0 {
		return fmt.Errorf("data: tensor of shape %v must hold exactly one of uint8 and float32 values", t.Shape)
	}
	if t.Len() != n {
		return fmt.Errorf("data: %d values do not fill shape %v", t.Len(), t.Shape)
	}
	return nil
}

// Float32s returns the values as float32 (uint8 values unscaled, 0–255).
func (t Tensor) Float32s() []float32 {
	if t.F32 != nil {
		return t.F32
	}
	out := make([]float32, len(t.U8))
	for i, v := range t.U8 {
		out[i] = float32(v)
	}
	return out
}

// Clone returns a deep copy.
func (t Tensor) Clone() Tensor {
	return Tensor{Shape: slices.Clone(t.Shape), U8: slices.Clone(t.U8), F32: slices.Clone(t.F32)}
}

// Sample is one example: its data, its label (a class index for the
// vision data sets) and any further arrays it has (a segmentation mask, a
// target sequence for CTC or a decoder, a second input): the DataLoader
// batches each of Extra as it batches Data (see LoaderOpts.Collate).
type Sample struct {
	Data  Tensor
	Label float32
	Extra []Tensor
}

// Dataset gives samples by index.
type Dataset interface {
	// Len returns the number of samples.
	Len() int
	// Get returns sample i (0 <= i < Len()). rng is the sample's own
	// random generator for random transforms; callers outside a DataLoader
	// may pass nil, and a random transform then uses a generator derived
	// from i alone. Get must not keep rng after it returns: a DataLoader
	// reseeds the same generator for its next sample.
	Get(i int, rng *rand.Rand) (Sample, error)
}

// Transform maps one tensor to another; random transforms draw from rng.
// It must not modify its input in place (datasets may hand out shared
// memory) and must be safe for concurrent use.
type Transform func(x Tensor, rng *rand.Rand) (Tensor, error)

// Compose chains transforms, applied left to right.
func Compose(ts ...Transform) Transform {
	return func(x Tensor, rng *rand.Rand) (Tensor, error) {
		var err error
		for _, t := range ts {
			if x, err = t(x, rng); err != nil {
				return Tensor{}, err
			}
		}
		return x, nil
	}
}

// SampleRNG returns the generator a DataLoader gives sample index of
// epoch under seed. Datasets use SampleRNG(0, 0, i) when called with a nil
// generator.
func SampleRNG(seed uint64, epoch, index int) *rand.Rand {
	return rand.New(rand.NewPCG(sampleSeeds(seed, epoch, index)))
}

// sampleSeeds returns the PCG seeds of SampleRNG(seed, epoch, index); the
// DataLoader reseeds one generator per worker with them instead of
// allocating a new one for every sample.
func sampleSeeds(seed uint64, epoch, index int) (uint64, uint64) {
	return seed ^ 0x9e3779b97f4a7c15, uint64(epoch)<<40 ^ uint64(index)
}
