package ndtest

// The cases for the ops of nd/softmaxce.go: SoftmaxCrossEntropy.

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// refSoftmaxCE is log Σ exp(x) − x[clip(label)] along axis per position.
func refSoftmaxCE(x []float64, shape []int, labels []float64, axis int) []float64 {
	ax := refAxis(axis, len(shape))
	outer, n, inner := refNumel(shape[:ax]), shape[ax], refNumel(shape[ax+1:])
	out := make([]float64, outer*inner)
	for o := range outer {
		for i := range inner {
			m := math.Inf(-1)
			for k := range n {
				m = math.Max(m, x[(o*n+k)*inner+i])
			}
			s := 0.0
			for k := range n {
				s += math.Exp(x[(o*n+k)*inner+i] - m)
			}
			k := min(max(int(labels[o*inner+i]), 0), n-1)
			out[o*inner+i] = m + math.Log(s) - x[(o*n+k)*inner+i]
		}
	}
	return out
}

// confSoftmaxCE checks SoftmaxCrossEntropy on the last axis and a middle
// one, with float and int64 labels, clipped out-of-range labels and logits
// large enough to overflow exp without the maximum subtracted.
func confSoftmaxCE(e confEnv) {
	for i, c := range []struct {
		shape  []int
		axis   int
		labels []float64
		scale  float64
	}{
		{[]int{4, 5}, -1, []float64{0, 4, 2, 3}, 3},
		{[]int{3, 7}, 1, []float64{-2, 9, 6}, 3}, // clipped to 0 and 6
		{[]int{2, 4, 3}, 1, []float64{3, 0, 1, 2, 2, 0}, 3},
		{[]int{3, 6}, 1, []float64{5, 1, 0}, 200}, // exp(±200) overflows float32
	} {
		for _, ints := range []bool{false, true} {
			e.run(fmt.Sprintf("%s_axis%d_%d_ints%v", confDims(c.shape), c.axis, i, ints), func(e confEnv) {
				x, xv := e.rand(uint64(1700+i), -c.scale, c.scale, c.shape...)
				ax := refAxis(c.axis, len(c.shape))
				ishape := append(append([]int{}, c.shape[:ax]...), c.shape[ax+1:]...)
				labels := e.arr(c.labels, ishape...)
				if ints {
					iv := make([]int64, len(c.labels))
					for j, v := range c.labels {
						iv[j] = int64(v)
					}
					labels = nd.FromSlice(e.dev, iv, ishape...)
				}
				e.check(nd.SoftmaxCrossEntropy(x, labels, c.axis), ishape, refSoftmaxCE(xv, c.shape, c.labels, c.axis), confTolDefault)
			})
		}
	}
}

// gradSoftmaxCECases checks SoftmaxCrossEntropy's gradient on the last
// axis, a middle one and with a clipped label.
func gradSoftmaxCECases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for i, c := range []struct {
		name          string
		shape, lshape []int
		labels        []float64
		axis          int
	}{
		{"axis-1", []int{4, 5}, []int{4}, []float64{1, 0, 4, 3}, 1},
		{"axis-1/clipped", []int{3, 6}, []int{3}, []float64{-1, 8, 2}, 1},
		{"3-D/axis-1", []int{2, 4, 3}, []int{2, 3}, []float64{3, 0, 1, 2, 2, 0}, 1},
	} {
		cases = append(cases, gradCase{
			op: "SoftmaxCrossEntropy", name: c.name, noGrad: []int{1},
			in: func() []*nd.NDArray {
				return gradIn(gradSigned(dev, 90+uint64(i), c.shape...), gradLabels(dev, c.labels, c.lshape...))
			},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.SoftmaxCrossEntropy(in[0], in[1], c.axis) },
		})
	}
	return cases
}
