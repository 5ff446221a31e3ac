package audio

import (
	"fmt"
	"math/rand/v2"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/nd"
)

// randomBlock is a Block with a form that draws from a given generator,
// as Masking's Apply.
type randomBlock interface {
	Apply(x *nd.NDArray, rng *rand.Rand) *nd.NDArray
}

// rngOptional is a randomBlock whose options may leave nothing to draw
// (GriffinLim with NoRandInit): its Apply then takes a nil generator.
type rngOptional interface {
	needsRNG() bool
}

// Transform returns b as a data.Transform, for data pipelines
// (data.TransformFirst, a DataLoader's workers): each float32 sample
// (a waveform [channels, frames] or a spectrogram) becomes a float32
// array on cpu(0), b runs on it outside any recording, and its output
// becomes the new sample. A Block with an Apply(x, rng) method, as
// Masking, GriffinLim and InverseMelScale have, is applied with the
// sample's generator, so augmentation and random starting points follow
// the loader's seed; it is an error to give it a nil one when it draws.
// The arrays made on the way are released before the transform returns.
// An *nd.Error b panics with (a wrong shape) is returned as an error, and
// so is a uint8 sample.
func Transform(b gluon.Block) data.Transform {
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		name := b.Meta().Kind()
		if x.U8 != nil {
			return data.Tensor{}, fmt.Errorf("audio: %s: want float32 samples, got uint8 (shape %v)", name, x.Shape)
		}
		if err := x.Validate(); err != nil {
			return data.Tensor{}, fmt.Errorf("audio: %s: %w", name, err)
		}
		r, random := b.(randomBlock)
		needs := random
		if o, ok := b.(rngOptional); ok && random {
			needs = o.needsRNG()
		}
		if needs && rng == nil {
			return data.Tensor{}, fmt.Errorf("audio: %s: nil random generator", name)
		}
		var out data.Tensor
		err := nd.Catch(func() {
			nd.WithScope(func() []*nd.NDArray {
				in := nd.FromSlice(ctx.CPU(0), x.F32, x.Shape...)
				var y *nd.NDArray
				if random {
					y = r.Apply(in, rng)
				} else {
					y = b.Forward(in)
				}
				out = data.Tensor{Shape: y.Shape(), F32: y.Float32s()}
				return nil
			})
		})
		if err != nil {
			return data.Tensor{}, fmt.Errorf("audio: %w", err)
		}
		return out, nil
	}
}
