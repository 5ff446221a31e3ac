package ndtest

// The cases for the ops of nd/biasrelu.go: BiasRelu.

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// confBiasRelu checks BiasRelu = max(x + bias, 0) along an axis, on long
// runs (NCHW, 9×13 planes), short ones ([N, C]) and the first axis.
func confBiasRelu(e confEnv) {
	for i, c := range []struct {
		name  string
		shape []int
		axis  int
	}{
		{"nchw", []int{3, 4, 9, 13}, 1},
		{"dense", []int{5, 19}, 1},
		{"axis0", []int{6, 2, 21}, 0},
		{"last_axis", []int{2, 7, 3}, -1},
	} {
		e.run(c.name, func(e confEnv) {
			ax := (c.axis + len(c.shape)) % len(c.shape)
			x, xv := e.rand(uint64(1500+2*i), -1, 1, c.shape...)
			b, bv := e.rand(uint64(1501+2*i), -0.5, 0.5, c.shape[ax])
			inner := refNumel(c.shape[ax+1:])
			want := make([]float64, len(xv))
			for j, v := range xv {
				want[j] = math.Max(v+bv[(j/inner)%c.shape[ax]], 0)
			}
			e.check(nd.BiasRelu(x, b, c.axis), c.shape, want, confTolDefault)
		})
	}
}

// gradBiasReluCases checks BiasRelu with inputs at least 0.3 away from the
// kink once the bias (within ±0.2) is added; long runs (NCHW), short runs
// (a dense layer's [N, C]) and another axis.
func gradBiasReluCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for i, c := range []struct {
		name  string
		shape []int
		axis  int
	}{
		{"4-D/axis-1", []int{2, 3, 3, 4}, 1},
		{"2-D/axis-1", []int{4, 5}, 1},
		{"3-D/axis-2", []int{2, 3, 4}, 2},
		{"3-D/axis-0", []int{3, 2, 9}, 0},
	} {
		ch := c.shape[(c.axis+len(c.shape))%len(c.shape)]
		seed := 80 + 2*uint64(i)
		cases = append(cases, gradCase{
			op: "BiasRelu", name: c.name,
			in: func() []*nd.NDArray {
				return gradIn(gradNonzero(dev, seed, c.shape...), Rand(dev, seed+1, -0.2, 0.2, ch))
			},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.BiasRelu(in[0], in[1], c.axis) },
		})
	}
	return cases
}
