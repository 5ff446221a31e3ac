//go:build cuda || cudaemu

package linalg_test

// With -tags cuda (or cudaemu) the functions run on gpu(0): the
// factorisations on the host, the gradients' products on the device.

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	_ "github.com/goluon/goluon/cuda"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/linalg"
)

func TestOnGPU(t *testing.T) {
	var cpu []float32
	for _, dev := range []ctx.Context{ctx.CPU(0), ctx.GPU(0)} {
		a := nd.FromSlice(dev, []float32{4, 1, 0, 1, 3, 1, 0, 1, 2}, 3, 3)
		a.AttachGrad(nd.GradWrite)
		b := nd.FromSlice(dev, []float32{1, 2, 3}, 3)
		var x, l *nd.NDArray
		autograd.Record(func() {
			x = linalg.Solve(a, b)
			_, ld := linalg.Slogdet(a)
			w, _ := linalg.Eigh(a)
			l = nd.Add(nd.Add(nd.Sum(x), ld), nd.Sum(nd.Mul(linalg.Inv(a), linalg.Cholesky(a))))
			l = nd.Add(l, nd.Sum(w))
		})
		autograd.Backward(l)
		if x.Context() != dev || a.Grad().Context() != dev {
			t.Fatalf("on %v: result on %v, gradient on %v", dev, x.Context(), a.Grad().Context())
		}
		got := append(x.Float32s(), a.Grad().Float32s()...)
		if cpu == nil {
			cpu = got
			continue
		}
		for i := range got {
			if d := got[i] - cpu[i]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("value %d: %v on gpu(0), %v on cpu(0)", i, got[i], cpu[i])
			}
		}
	}
}
