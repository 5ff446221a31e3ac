package loss_test

import (
	"math"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/nd"
)

// TestLossEdgeCases: cases a review found (each compared with torch on
// the same inputs).
func TestLossEdgeCases(t *testing.T) {
	dev := ctx.CPU(0)
	close := func(t *testing.T, got, want []float64, tol float64) {
		t.Helper()
		for i := range want {
			if !(math.Abs(got[i]-want[i]) <= tol) {
				t.Fatalf("got %v, want %v", got, want)
			}
		}
	}
	t.Run("half predictions and half labels, backward", func(t *testing.T) {
		// The widened label copy was released while the recorded backward
		// still read it (a crash in the backward pass).
		for _, l := range []loss.SoftmaxCrossEntropy{loss.NewSoftmaxCrossEntropy(), {Sparse: true, FromLogits: true, Axis: -1}} {
			pred := f64(dev, []float64{1, 2, 3, 0, 1, 2}, 2, 3).AsType(nd.Float16)
			if l.FromLogits {
				pred = nd.LogSoftmax(pred.AsType(nd.Float32), -1).AsType(nd.Float16)
			}
			pred.AttachGrad(nd.GradWrite)
			label := f64(dev, []float64{2, 0}, 2).AsType(nd.Float16)
			err := nd.Catch(func() {
				autograd.Record(func() { autograd.Backward(nd.Sum(l.Forward(pred, label))) })
			})
			if err != nil {
				t.Fatal(err)
			}
			// d/dx of CE = softmax − onehot: rows [.09 .245 −.335], [−.91 .245 .665].
			want := []float64{0.0900, 0.2447, -0.3348, -0.9100, 0.2447, 0.6652}
			if l.FromLogits {
				want = []float64{0, 0, -1, -1, 0, 0}
			}
			close(t, pred.Grad().Float64s(), want, 2e-3)
		}
	})
	t.Run("uint8 labels and ignore label -100", func(t *testing.T) {
		// −100 saturated to 0 in uint8 and ignored class 0; torch ignores nothing.
		l := loss.SoftmaxCrossEntropy{Sparse: true, Axis: -1, UseIgnore: true, IgnoreLabel: -100}
		pred := f64(dev, []float64{0.1, 2, -1, 0.5, 0.3, 0.2, -0.4, 1, 0, 0.7, -2, 1.5}, 2, 2, 3)
		label := nd.FromSlice(dev, []uint8{1, 0, 0, 2}, 2, 2)
		close(t, l.Forward(pred, label).Float64s(), []float64{0.5608, 1.1354}, 1e-4)
	})
	t.Run("ignored position with a -inf log-probability", func(t *testing.T) {
		l := loss.SoftmaxCrossEntropy{Sparse: true, Axis: -1, UseIgnore: true, IgnoreLabel: -100}
		pred := f64(dev, []float64{math.Inf(-1), 1, 2, 0, 1, 2}, 2, 3)
		label := nd.FromSlice(dev, []int64{-100, 1}, 2)
		close(t, l.Forward(pred, label).Float64s(), []float64{0, 1.4076}, 1e-4)
	})
	t.Run("TokenMean with every position ignored", func(t *testing.T) {
		l := loss.SoftmaxCrossEntropy{Sparse: true, Axis: -1, UseIgnore: true, IgnoreLabel: -100, TokenMean: true}
		pred := f64(dev, []float64{0.1, 2, -1, 0.5, 0.3, 0.2}, 2, 3)
		pred.AttachGrad(nd.GradWrite)
		var out, sum *nd.NDArray
		autograd.Record(func() { out = l.Forward(pred, nd.FromSlice(dev, []int64{-100, -100}, 2)); sum = nd.Sum(out) })
		autograd.Backward(sum)
		close(t, out.Float64s(), []float64{0, 0}, 0)
		close(t, pred.Grad().Float64s(), make([]float64, 6), 0)
	})
	t.Run("TokenMean in float16 beyond 65504 positions", func(t *testing.T) {
		// Uniform logits: every position's loss is ln 3, and so is the mean.
		l := loss.SoftmaxCrossEntropy{Sparse: true, Axis: -1, UseIgnore: true, IgnoreLabel: -100, TokenMean: true}
		lab := make([]int64, 2*40000)
		for i := range lab {
			lab[i] = int64(i % 3)
			if i%7 == 0 {
				lab[i] = -100
			}
		}
		out := l.Forward(nd.Zeros(dev, nd.Float16, 2, 40000, 3), nd.FromSlice(dev, lab, 2, 40000))
		if out.DType() != nd.Float32 {
			t.Errorf("dtype %v, want float32", out.DType())
		}
		close(t, []float64{nd.Mean(out).Scalar()}, []float64{math.Log(3)}, 1e-3)
	})
	t.Run("TokenMean with dense labels", func(t *testing.T) {
		l := loss.SoftmaxCrossEntropy{Axis: -1, TokenMean: true}
		err := nd.Catch(func() { l.Forward(f64(dev, []float64{1, 2}, 1, 2), f64(dev, []float64{0.5, 0.5}, 1, 2)) })
		if err == nil {
			t.Error("no error")
		}
	})
	t.Run("ignore on an empty sequence batch", func(t *testing.T) {
		l := loss.SoftmaxCrossEntropy{Sparse: true, Axis: -1, UseIgnore: true, IgnoreLabel: -100}
		var got *nd.NDArray
		if err := nd.Catch(func() {
			got = l.Forward(nd.Zeros(dev, nd.Float32, 0, 3, 4), nd.Zeros(dev, nd.Int64, 0, 3))
		}); err != nil {
			t.Fatal(err)
		}
		if got.Size() != 0 {
			t.Fatalf("shape %v", got.Shape())
		}
	})
	t.Run("FromSigmoid in float16 with confident predictions", func(t *testing.T) {
		p := nd.Sigmoid(f64(dev, []float64{10, 12, -12}, 3).AsType(nd.Float16))
		z := f64(dev, []float64{1, 1, 0}, 3).AsType(nd.Float16)
		got := loss.NewSigmoidBCE(true).Forward(p, z).Float64s()
		close(t, got, []float64{0, 0, 0}, 1e-3)
	})
}
