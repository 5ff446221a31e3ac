package autograd_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestInPlaceAfterRecording: an array changed in place after an op
// recorded it makes Backward through that op an ErrGraph error, as in
// PyTorch, instead of a gradient computed from the new values (a zero
// gradient, or x+1 where x was recorded).
func TestInPlaceAfterRecording(t *testing.T) {
	dev := ctx.CPU(0)
	for _, c := range []struct {
		name   string
		change func(x, u *nd.NDArray)
	}{
		{"ScaleInPlace of an intermediate", func(_, u *nd.NDArray) { nd.ScaleInPlace(u, 0) }},
		{"AddTo of the leaf", func(x, _ *nd.NDArray) { nd.AddTo(x, nd.Ones(dev, nd.Float32, 3)) }},
		{"Assign into a view of the leaf", func(x, _ *nd.NDArray) {
			nd.Assign(nd.Reshape(x, 1, 3), nd.Zeros(dev, nd.Float32, 1, 3))
		}},
		{"FillInPlace of the output an op saved", func(_, u *nd.NDArray) { nd.FillInPlace(u, 2) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := nd.FromSlice(dev, []float32{1, 2, 3}, 3)
			x.AttachGrad(nd.GradWrite)
			var u, y *nd.NDArray
			autograd.Record(func() {
				u = nd.Exp(x)
				y = nd.Sum(nd.Mul(u, x))
			})
			c.change(x, u)
			err := nd.Catch(func() { autograd.Backward(y) })
			if !errors.Is(err, &nd.Error{Kind: nd.ErrGraph}) {
				t.Fatalf("got %v (gradient %v), want ErrGraph", err, x.Grad().Float32s())
			}
		})
	}
	// Changing arrays after Backward, as an optimizer does, is fine, and
	// so is a change to an array no recorded op read.
	x := nd.FromSlice(dev, []float32{1, 2, 3}, 3)
	x.AttachGrad(nd.GradWrite)
	other := nd.Zeros(dev, nd.Float32, 3)
	var y *nd.NDArray
	autograd.Record(func() { y = nd.Sum(nd.Square(x)) })
	nd.FillInPlace(other, 1)
	autograd.Backward(y)
	nd.AddTo(x, x.Grad())
	if got := x.Float32s(); got[0] != 3 || got[2] != 9 {
		t.Errorf("after the update: %v", got)
	}
}

// TestBackwardErrorNamesTheOp: an error inside a backward function (here
// an input released before Backward) is Backward's, naming the recorded
// op it happened in.
func TestBackwardErrorNamesTheOp(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{1, 2, 3}, 3)
	x.AttachGrad(nd.GradWrite)
	var u, y *nd.NDArray
	autograd.Record(func() {
		u = nd.Exp(x)
		y = nd.Sum(nd.Mul(u, u))
	})
	u.Release()
	err := nd.Catch(func() { autograd.Backward(y) })
	if !errors.Is(err, &nd.Error{Kind: nd.ErrReleased}) || !strings.Contains(err.Error(), "Backward") || !strings.Contains(err.Error(), "backward function of Mul") {
		t.Fatalf("got %v, want a released-array error from Backward naming Mul", err)
	}
	t.Log(err)
}
