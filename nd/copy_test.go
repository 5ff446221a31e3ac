package nd_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestDetachedCopyTo checks that the copy holds a's values on the target
// context and that, recorded or not, no gradient flows back through it.
func TestDetachedCopyTo(t *testing.T) {
	x := nd.FromSlice(ctx.CPU(0), []float64{1, -2, 3}, 3)
	x.AttachGrad(nd.GradWrite)
	w := nd.FromSlice(ctx.CPU(1), []float64{2, 2, 2}, 3)
	w.AttachGrad(nd.GradWrite)
	exit := nd.EnterRecording(true)
	y := x.DetachedCopyTo(ctx.CPU(1))
	loss := nd.Sum(nd.Mul(y, w))
	exit()
	nd.Backward([]*nd.NDArray{loss}, nil, false)
	if y.Context() != ctx.CPU(1) || !slices.Equal(y.Float64s(), []float64{1, -2, 3}) {
		t.Fatalf("copy = %v, want [1 -2 3] on cpu(1)", y)
	}
	if got := x.Grad().Float64s(); !slices.Equal(got, []float64{0, 0, 0}) {
		t.Errorf("x.Grad() = %v after backward through a detached copy, want zeros", got)
	}
	if got := w.Grad().Float64s(); !slices.Equal(got, []float64{1, -2, 3}) {
		t.Errorf("w.Grad() = %v, want the copied values", got)
	}
}
