package ndtest

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// The cases of nd/activation.go: the activations of sequence and
// transformer models.

// gradActivationCases checks the activations away from their kink at 0,
// and PReLU's per-channel and shared slopes.
func gradActivationCases(dev ctx.Context) []gradCase {
	away := func(seed uint64, shape ...int) *nd.NDArray {
		return AwayFrom(dev, seed, -2, 2, 0.1, []float64{0}, shape...)
	}
	one := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(away(71, shape...)) }
	}
	cases := []gradCase{
		{op: "LeakyReLU", name: "slope-0.1", in: one(3, 4), f: func(in []*nd.NDArray) *nd.NDArray { return nd.LeakyReLU(in[0], 0.1) }},
		{op: "ELU", name: "alpha-1", in: one(3, 4), f: func(in []*nd.NDArray) *nd.NDArray { return nd.ELU(in[0], 1) }},
		{op: "ELU", name: "alpha-0.5", in: one(2, 5), f: func(in []*nd.NDArray) *nd.NDArray { return nd.ELU(in[0], 0.5) }},
		{op: "GELU", name: "erf", in: one(3, 4), f: func(in []*nd.NDArray) *nd.NDArray { return nd.GELU(in[0], false) }},
		{op: "GELU", name: "tanh", in: one(3, 4), f: func(in []*nd.NDArray) *nd.NDArray { return nd.GELU(in[0], true) }},
		{op: "SiLU", name: "3x4", in: one(3, 4), f: func(in []*nd.NDArray) *nd.NDArray { return nd.SiLU(in[0]) }},
		{op: "PReLU", name: "per-channel", in: func() []*nd.NDArray {
			return gradIn(away(72, 2, 3, 4), gradPositive(dev, 73, 3))
		}, f: func(in []*nd.NDArray) *nd.NDArray { return nd.PReLU(in[0], in[1], 1) }},
		{op: "PReLU", name: "shared", in: func() []*nd.NDArray {
			return gradIn(away(74, 4, 3), gradPositive(dev, 75, 1))
		}, f: func(in []*nd.NDArray) *nd.NDArray { return nd.PReLU(in[0], in[1], -1) }},
	}
	return cases
}

// confActivation checks the activations against plain-Go references.
func confActivation(e confEnv) {
	x, xv := e.rand(91, -3, 3, 4, 5)
	ref := func(f func(v float64) float64) []float64 {
		out := make([]float64, len(xv))
		for i, v := range xv {
			out[i] = f(v)
		}
		return out
	}
	sigmoid := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	for _, c := range []struct {
		name string
		got  func() *nd.NDArray
		want func(v float64) float64
	}{
		{"LeakyReLU", func() *nd.NDArray { return nd.LeakyReLU(x, 0.2) }, func(v float64) float64 { return max(v, 0) + 0.2*min(v, 0) }},
		{"ELU", func() *nd.NDArray { return nd.ELU(x, 1.5) }, func(v float64) float64 {
			if v > 0 {
				return v
			}
			return 1.5 * math.Expm1(v)
		}},
		{"GELU", func() *nd.NDArray { return nd.GELU(x, false) }, func(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) }},
		{"GELU-tanh", func() *nd.NDArray { return nd.GELU(x, true) }, func(v float64) float64 {
			return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		}},
		{"SiLU", func() *nd.NDArray { return nd.SiLU(x) }, func(v float64) float64 { return v * sigmoid(v) }},
	} {
		e.run(c.name, func(e confEnv) { e.check(c.got(), []int{4, 5}, ref(c.want), confTolDefault) })
	}
	e.run("PReLU", func(e confEnv) { // a slope per channel (axis 1 of [4, 5])
		slopes := []float64{0.1, 0.2, 0.3, 0.4, 0.5}
		want := make([]float64, len(xv))
		for i, v := range xv {
			want[i] = max(v, 0) + slopes[i%5]*min(v, 0)
		}
		e.check(nd.PReLU(x, e.arr(slopes), 1), []int{4, 5}, want, confTolDefault)
	})
	e.run("MaskedFill", func(e confEnv) {
		mask := make([]bool, len(xv))
		want := make([]float64, len(xv))
		for i, v := range xv {
			mask[i], want[i] = v > 0.5, v
			if mask[i] {
				want[i] = -7
			}
		}
		e.check(nd.MaskedFill(x, nd.FromSlice(e.dev, mask, 4, 5), -7), []int{4, 5}, want, confTolExact)
	})
}
