// Package initializer sets the initial values of parameters, with MXNet's
// rules (mx.init): Uniform, Normal, Xavier, MSRAPrelu, Zero, One, Constant,
// Orthogonal and Bilinear, and PyTorch's Kaiming (its default for Linear
// and Conv weights among them) and TruncatedNormal (torch.nn.init).
//
// Initial values are computed on the host, in float64, from a generator
// that gluon derives from nd.CurrentSeed and the parameter's full name. So
// the same seed gives the same weights whatever the order in which
// parameters happen to be initialised (deferred initialisation runs during
// concurrent per-device forward passes), and every device replica of a
// parameter starts from the same values.
package initializer

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/goluon/goluon/nd"
)

// Initializer fills a weight. shape is the parameter's shape and data its
// row-major values, to be overwritten.
type Initializer interface {
	InitWeight(shape []int, data []float64, rng *rand.Rand)
}

// Fill initialises a parameter by its name, as MXNet's Initializer does:
// names ending in bias, beta, running_mean or moving_mean get zeros; gamma,
// running_var or moving_var get ones; anything else (weights) uses init.
func Fill(init Initializer, name string, shape []int, data []float64, rng *rand.Rand) {
	switch {
	case hasSuffix(name, "bias", "beta", "running_mean", "moving_mean"):
		clear(data)
	case hasSuffix(name, "gamma", "running_var", "moving_var"):
		for i := range data {
			data[i] = 1
		}
	default:
		init.InitWeight(shape, data, rng)
	}
}

func hasSuffix(name string, suffixes ...string) bool {
	for _, s := range suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// Uniform draws from U(-Scale, Scale). MXNet's default initializer is
// Uniform{Scale: 0.07}.
type Uniform struct{ Scale float64 }

// InitWeight fills data uniformly.
func (u Uniform) InitWeight(_ []int, data []float64, rng *rand.Rand) {
	for i := range data {
		data[i] = (2*rng.Float64() - 1) * u.Scale
	}
}

// Normal draws from N(0, Sigma²).
type Normal struct{ Sigma float64 }

// InitWeight fills data from a normal distribution.
func (n Normal) InitWeight(_ []int, data []float64, rng *rand.Rand) {
	for i := range data {
		data[i] = rng.NormFloat64() * n.Sigma
	}
}

// Constant fills every element with Value.
type Constant struct{ Value float64 }

// InitWeight fills data with the constant.
func (c Constant) InitWeight(_ []int, data []float64, _ *rand.Rand) {
	for i := range data {
		data[i] = c.Value
	}
}

// Zero fills zeros.
func Zero() Constant { return Constant{0} }

// One fills ones.
func One() Constant { return Constant{1} }

// Factor selects the fan Xavier scales by.
type Factor string

// The Xavier factor types.
const (
	FactorAvg Factor = "avg" // (fan_in + fan_out) / 2
	FactorIn  Factor = "in"
	FactorOut Factor = "out"
)

// Xavier is Glorot initialisation as MXNet defines it: with
// fan_in = shape[1]·∏shape[2:] and fan_out = shape[0]·∏shape[2:], the
// scale is sqrt(Magnitude / factor); values are U(-scale, scale) or, with
// Gaussian, N(0, scale²). The zero value is MXNet's default Xavier():
// uniform, factor avg, magnitude 3.
type Xavier struct {
	Gaussian  bool
	Factor    Factor  // default FactorAvg
	Magnitude float64 // default 3
}

// InitWeight fills data with Xavier values; a weight of fewer than two
// dimensions panics (as MXNet refuses it).
func (x Xavier) InitWeight(shape []int, data []float64, rng *rand.Rand) {
	if len(shape) < 2 {
		nd.Panicf("initializer.Xavier", nd.ErrShape, "weight of shape %v needs at least 2 dimensions", shape)
	}
	recept := 1
	for _, s := range shape[2:] {
		recept *= s
	}
	fanIn, fanOut := float64(shape[1]*recept), float64(shape[0]*recept)
	var factor float64
	switch x.Factor {
	case FactorIn:
		factor = fanIn
	case FactorOut:
		factor = fanOut
	case FactorAvg, "":
		factor = (fanIn + fanOut) / 2
	default:
		nd.Panicf("initializer.Xavier", nd.ErrArgument, "unknown factor type %q (want avg, in or out)", x.Factor)
	}
	mag := x.Magnitude
	if mag == 0 {
		mag = 3
	}
	scale := math.Sqrt(mag / factor)
	if x.Gaussian {
		Normal{Sigma: scale}.InitWeight(shape, data, rng)
		return
	}
	Uniform{Scale: scale}.InitWeight(shape, data, rng)
}

// MSRAPrelu is He/Kaiming initialisation for (leaky) ReLU networks: a
// Gaussian Xavier with magnitude 2/(1+Slope²) (MXNet's defaults: factor
// avg, slope 0.25).
type MSRAPrelu struct {
	Factor Factor  // default FactorAvg
	Slope  float64 // default 0.25; use a tiny positive value for plain ReLU
}

// InitWeight fills data with MSRA values.
func (m MSRAPrelu) InitWeight(shape []int, data []float64, rng *rand.Rand) {
	slope := m.Slope
	if slope == 0 {
		slope = 0.25
	}
	Xavier{Gaussian: true, Factor: m.Factor, Magnitude: 2 / (1 + slope*slope)}.InitWeight(shape, data, rng)
}
