package ndtest

// The cases for the ops of nd/biasrelu.go: BiasRelu and AddRelu.

import (
	"fmt"
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

// confAddRelu checks AddRelu = max(a + b, 0) elementwise, on an NCHW
// block's output, a vector, and operands that broadcast.
func confAddRelu(e confEnv) {
	for i, c := range []struct {
		name   string
		sa, sb []int
	}{
		{"nchw", []int{2, 5, 6, 7}, []int{2, 5, 6, 7}},
		{"vector", []int{33}, []int{33}},
		{"broadcast", []int{4, 9}, []int{9}},
	} {
		e.run(c.name, func(e confEnv) {
			a, av := e.rand(uint64(1530+2*i), -1, 1, c.sa...)
			b, bv := e.rand(uint64(1531+2*i), -1, 1, c.sb...)
			want := make([]float64, len(av))
			for j, v := range av {
				want[j] = math.Max(v+bv[j%len(bv)], 0)
			}
			e.check(nd.AddRelu(a, b), c.sa, want, confTolDefault)
		})
	}
}

// gradAddReluCases checks AddRelu with sums at least 0.4 away from the
// kink: a at least 0.5 from 0, b within ±0.1.
func gradAddReluCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for i, shape := range [][]int{{2, 3, 3, 4}, {11}} {
		seed := 90 + 2*uint64(i)
		cases = append(cases, gradCase{
			op: "AddRelu", name: fmt.Sprintf("%d-D", len(shape)),
			in: func() []*nd.NDArray {
				return gradIn(gradNonzero(dev, seed, shape...), Rand(dev, seed+1, -0.1, 0.1, shape...))
			},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.AddRelu(in[0], in[1]) },
		})
	}
	return cases
}
