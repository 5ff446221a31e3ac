package ndtest

// The cases for the autograd helpers of nd/backward.go and nd/checkpoint.go:
// Grad and Checkpoint, which run ops and their backward functions on the
// device.

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// confAutograd checks Grad (the gradient of Σ x·w with respect to x is w,
// and no gradient buffer is written) and Checkpoint (the value of
// tanh(x·w), and its gradient through the recomputation, (1 − tanh²)·w).
func confAutograd(e confEnv) {
	e.run("grad", func(e confEnv) {
		x, _ := e.rand(1700, -1, 1, 3, 4)
		w, wv := e.rand(1701, -1, 1, 3, 4)
		x.AttachGrad(nd.GradWrite)
		var l *nd.NDArray
		nd.DefaultSession().Record(func() { l = nd.Sum(nd.Mul(x, w)) })
		g := nd.Grad([]*nd.NDArray{l}, nil, []*nd.NDArray{x})[0]
		e.check(g, []int{3, 4}, wv, confTolDefault)
		e.check(x.Grad(), []int{3, 4}, make([]float64, 12), confTolExact)
	})
	e.run("checkpoint", func(e confEnv) {
		x, xv := e.rand(1702, -1, 1, 2, 5)
		w, wv := e.rand(1703, -1, 1, 2, 5)
		x.AttachGrad(nd.GradWrite)
		var y, l *nd.NDArray
		nd.DefaultSession().Record(func() {
			y = nd.Checkpoint(func(in []*nd.NDArray) []*nd.NDArray {
				return []*nd.NDArray{nd.Tanh(nd.Mul(in[0], in[1]))}
			}, []*nd.NDArray{x, w}, nil)[0]
			l = nd.Sum(y)
		})
		want, dwant := make([]float64, 10), make([]float64, 10)
		for i := range want {
			tv := math.Tanh(xv[i] * wv[i])
			want[i], dwant[i] = tv, (1-tv*tv)*wv[i]
		}
		e.check(y, []int{2, 5}, want, confTolDefault)
		g := nd.Grad([]*nd.NDArray{l}, nil, []*nd.NDArray{x})[0]
		e.check(g, []int{2, 5}, dwant, confTolDefault)
	})
}
