package loss_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/nd"
)

// TestSoftmaxCEIntegerLabels checks that integer class indices give the
// same losses and gradients as the same indices stored as floats.
func TestSoftmaxCEIntegerLabels(t *testing.T) {
	dev := ctx.CPU(0)
	l := loss.NewSoftmaxCrossEntropy()
	logits := []float64{0.1, -1, 2, 0.5, 0.3, -0.2, 1.5, 0, -1, 2, 0.2, 0.7}
	run := func(label *nd.NDArray) (lossV, grad []float64) {
		x := nd.FromSlice(dev, slices.Clone(logits), 3, 4)
		x.AttachGrad(nd.GradWrite)
		autograd.Record(func() {
			out := l.Forward(x, label)
			lossV = out.Float64s()
			autograd.Backward(out)
		})
		return lossV, x.Grad().Float64s()
	}
	wantL, wantG := run(nd.FromSlice(dev, []float64{2, 0, 3}))
	for _, label := range []*nd.NDArray{
		nd.FromSlice(dev, []int64{2, 0, 3}),
		nd.FromSlice(dev, []int32{2, 0, 3}),
		nd.FromSlice(dev, []uint8{2, 0, 3}),
		nd.FromSlice(dev, []int{2, 0, 3}, 3, 1),
	} {
		gotL, gotG := run(label)
		if !slices.Equal(gotL, wantL) || !slices.Equal(gotG, wantG) {
			t.Errorf("%v labels: loss %v grad %v, want %v %v", label.DType(), gotL, gotG, wantL, wantG)
		}
	}
}

// TestIgnoreIntLabels checks that UseIgnore and label smoothing give the
// same losses with Int64 labels as with float labels.
func TestIgnoreIntLabels(t *testing.T) {
	pred := nd.FromSlice(ctx.CPU(0), []float64{0.1, 2, -1, 0.5, 0.3, 0.2, -0.4, 1, 0, 0.7, -2, 1.5}, 2, 2, 3)
	l := loss.SoftmaxCrossEntropy{Axis: -1, Sparse: true, UseIgnore: true, IgnoreLabel: -100, LabelSmoothing: 0.1}
	f := l.Forward(pred, nd.FromSlice(ctx.CPU(0), []float64{1, -100, 0, 2}, 2, 2)).Float64s()
	i := l.Forward(pred, nd.FromSlice(ctx.CPU(0), []int64{1, -100, 0, 2}, 2, 2)).Float64s()
	for k := range f {
		if f[k] != i[k] {
			t.Fatalf("float labels give %v, int labels %v", f, i)
		}
	}
}
