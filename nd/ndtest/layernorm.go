package ndtest

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// The cases of nd/layernorm.go: LayerNorm, GroupNorm, InstanceNorm.

// gradLayerNormCases checks the three normalisations with and without
// scale and shift, on several axes and group counts.
func gradLayerNormCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	affine := func(seed uint64, x []int, c int) func() []*nd.NDArray {
		return func() []*nd.NDArray {
			return gradIn(gradSigned(dev, seed, x...), gradPositive(dev, seed+1, c), gradSigned(dev, seed+2, c))
		}
	}
	for _, c := range []struct {
		op, name string
		in       func() []*nd.NDArray
		f        func(in []*nd.NDArray) *nd.NDArray
	}{
		{"LayerNorm", "last-axis", affine(80, []int{3, 5}, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.LayerNorm(in[0], in[1], in[2], -1, 1e-5) }},
		{"LayerNorm", "3-D/axis-1", affine(83, []int{2, 4, 3}, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.LayerNorm(in[0], in[1], in[2], 1, 1e-5) }},
		{"LayerNorm", "no-affine", func() []*nd.NDArray { return gradIn(gradSigned(dev, 86, 4, 6)) }, func(in []*nd.NDArray) *nd.NDArray { return nd.LayerNorm(in[0], nil, nil, -1, 1e-5) }},
		{"GroupNorm", "2-groups", affine(89, []int{2, 4, 3}, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.GroupNorm(in[0], in[1], in[2], 2, 1e-5) }},
		{"GroupNorm", "4-D/1-group", affine(92, []int{2, 3, 2, 2}, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.GroupNorm(in[0], in[1], in[2], 1, 1e-5) }},
		{"InstanceNorm", "4-D", affine(95, []int{2, 3, 2, 3}, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.InstanceNorm(in[0], in[1], in[2], 1e-5) }},
	} {
		cases = append(cases, gradCase{op: c.op, name: c.name, in: c.in, f: c.f})
	}
	return cases
}

// confLayerNorm checks LayerNorm over the last axis against a plain-Go
// reference.
func confLayerNorm(e confEnv) {
	x, xv := e.rand(91, -3, 3, 4, 5)
	e.run("last-axis", func(e confEnv) {
		want := make([]float64, len(xv))
		for r := range 4 {
			row := xv[r*5 : r*5+5]
			mean, sq := 0.0, 0.0
			for _, v := range row {
				mean += v / 5
			}
			for _, v := range row {
				sq += (v - mean) * (v - mean) / 5
			}
			for j, v := range row {
				want[r*5+j] = (v-mean)/math.Sqrt(sq+1e-5)*float64(j+1) + 0.5
			}
		}
		gamma := e.arr([]float64{1, 2, 3, 4, 5})
		beta := e.arr([]float64{0.5, 0.5, 0.5, 0.5, 0.5})
		e.check(nd.LayerNorm(x, gamma, beta, -1, 1e-5), []int{4, 5}, want, confTolDefault)
	})
	// GroupNorm over [N=2, C=4, L=3] in 2 groups of 2 channels, and
	// InstanceNorm (a group per channel), against the normalisation of each
	// group's values, scaled and shifted per channel.
	g, gv := e.rand(92, -2, 2, 2, 4, 3)
	gamma, beta := e.arr([]float64{1, -0.5, 2, 0.25}), e.arr([]float64{0, 0.5, -1, 0.1})
	gammaV, betaV := []float64{1, -0.5, 2, 0.25}, []float64{0, 0.5, -1, 0.1}
	norm := func(groups int) []float64 {
		want := make([]float64, len(gv))
		per := 4 / groups * 3 // values per (sample, group)
		for start := 0; start < len(gv); start += per {
			vals := gv[start : start+per]
			mean, sq := 0.0, 0.0
			for _, v := range vals {
				mean += v / float64(per)
			}
			for _, v := range vals {
				sq += (v - mean) * (v - mean) / float64(per)
			}
			for k, v := range vals {
				c := (start + k) / 3 % 4
				want[start+k] = (v-mean)/math.Sqrt(sq+1e-5)*gammaV[c] + betaV[c]
			}
		}
		return want
	}
	e.run("GroupNorm", func(e confEnv) {
		e.check(nd.GroupNorm(g, gamma, beta, 2, 1e-5), []int{2, 4, 3}, norm(2), confTolDefault)
	})
	e.run("InstanceNorm", func(e confEnv) {
		e.check(nd.InstanceNorm(g, gamma, beta, 1e-5), []int{2, 4, 3}, norm(4), confTolDefault)
	})
}
