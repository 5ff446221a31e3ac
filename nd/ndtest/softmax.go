package ndtest

// The cases for the ops of nd/softmax.go: Softmax and LogSoftmax.

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// refSoftmax computes softmax (or log-softmax) along axis, subtracting the
// maximum first.
func refSoftmax(x []float64, shape []int, axis int, log bool) []float64 {
	ax := refAxis(axis, len(shape))
	outer, n, inner := refNumel(shape[:ax]), shape[ax], refNumel(shape[ax+1:])
	out := make([]float64, len(x))
	for o := range outer {
		for i := range inner {
			at := func(k int) int { return (o*n+k)*inner + i }
			m := math.Inf(-1)
			for k := range n {
				m = math.Max(m, x[at(k)])
			}
			s := 0.0
			for k := range n {
				s += math.Exp(x[at(k)] - m)
			}
			for k := range n {
				if log {
					out[at(k)] = x[at(k)] - m - math.Log(s)
				} else {
					out[at(k)] = math.Exp(x[at(k)]-m) / s
				}
			}
		}
	}
	return out
}

// confSoftmax checks Softmax and LogSoftmax along several axes of 2-D and
// 3-D arrays, with moderate inputs and with inputs around ±1000, where a
// formula without the maximum subtracted overflows.
func confSoftmax(e confEnv) {
	cases := []struct {
		shape  []int
		axis   int
		offset float64
	}{
		{[]int{4, 7}, 1, 0},
		{[]int{4, 7}, -1, 0},
		{[]int{4, 7}, 0, 0},
		{[]int{2, 3, 5}, 1, 0},
		{[]int{2, 3, 5}, -1, 0},
		{[]int{2, 3, 5}, 0, 0},
		{[]int{4, 7}, 1, 1000},
		{[]int{2, 3, 5}, -1, 1000},
		{[]int{2, 3, 5}, 1, -1000},
		{[]int{1, 1}, -1, 0},
	}
	for _, log := range []bool{false, true} {
		name, op := "Softmax", nd.Softmax
		if log {
			name, op = "LogSoftmax", nd.LogSoftmax
		}
		e.run(name, func(e confEnv) {
			for i, c := range cases {
				e.run(fmt.Sprintf("%s_axis%d_off%g", confDims(c.shape), c.axis, c.offset), func(e confEnv) {
					x, xv := e.rand(uint64(500+i), c.offset-3, c.offset+3, c.shape...)
					e.check(op(x, c.axis), c.shape, refSoftmax(xv, c.shape, c.axis, log), confTolDefault)
				})
			}
			e.run("Extremes", func(e confEnv) {
				v := []float64{1000, 1000, -1000, 0, 0, 0}
				e.check(op(e.arr(v, 2, 3), 1), []int{2, 3}, refSoftmax(v, []int{2, 3}, 1, log), confTolDefault)
			})
		})
	}
}

// gradSoftmaxCases checks Softmax and LogSoftmax along every axis of 2-D
// and 3-D inputs, and LogSoftmax on large logits.
func gradSoftmaxCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for _, op := range []struct {
		name string
		f    func(x *nd.NDArray, axis int) *nd.NDArray
	}{{"Softmax", nd.Softmax}, {"LogSoftmax", nd.LogSoftmax}} {
		for _, c := range []struct {
			name  string
			shape []int
			axis  int
		}{
			{"2-D/axis-1", []int{3, 5}, 1},
			{"2-D/axis-neg1", []int{3, 5}, -1},
			{"2-D/axis-0", []int{3, 5}, 0},
			{"3-D/axis-1", []int{2, 3, 4}, 1},
			{"3-D/axis-neg1", []int{2, 3, 4}, -1},
			{"3-D/axis-0", []int{2, 3, 4}, 0},
		} {
			cases = append(cases, gradCase{
				op: op.name, name: c.name,
				in: func() []*nd.NDArray { return gradIn(Rand(dev, 61, -3, 3, c.shape...)) },
				f:  func(in []*nd.NDArray) *nd.NDArray { return op.f(in[0], c.axis) },
			})
		}
	}
	// Large logits: the stable formulation must keep the gradient finite
	// and right.
	cases = append(cases, gradCase{
		op: "LogSoftmax", name: "2-D/large-logits",
		in: func() []*nd.NDArray { return gradIn(Rand(dev, 62, 50, 60, 3, 5)) },
		f:  func(in []*nd.NDArray) *nd.NDArray { return nd.LogSoftmax(in[0], 1) },
	})
	return cases
}
