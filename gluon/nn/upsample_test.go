package nn_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// A feature map doubled by nearest sampling, and resized to 3×3 with
// bilinear sampling and aligned corners.
func ExampleUpsample() {
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, 4}, 1, 1, 2, 2)
	fmt.Println(nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{2, 2}}).Forward(x).Float32s())
	fmt.Println(nn.NewUpsample(nd.InterpolateOpts{Size: [2]int{3, 3}, Mode: nd.InterpBilinear, AlignCorners: true}).Forward(x).Float32s())
	// Output:
	// [1 1 2 2 1 1 2 2 3 3 4 4 3 3 4 4]
	// [1 1.5 2 2 2.5 3 3 3.5 4]
}

func TestUpsample(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.RandomUniform(dev, nd.Float32, -1, 1, 2, 3, 5, 4)
	x.AttachGrad(nd.GradWrite)
	u := nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{2, 1.5}, Mode: nd.InterpBilinear})
	var y *nd.NDArray
	autograd.Record(func() {
		y = u.Forward(x)
		autograd.Backward(nd.Sum(y))
	})
	if !slices.Equal(y.Shape(), []int{2, 3, 10, 6}) {
		t.Fatalf("shape %v, want [2 3 10 6]", y.Shape())
	}
	// Each input pixel's weights sum to the output pixels it feeds; over
	// the whole map they sum to the output's size.
	g := x.Grad().Float32s()
	var total float64
	for _, v := range g {
		total += float64(v)
	}
	if want := float64(y.Size()); total < want-1e-3 || total > want+1e-3 {
		t.Errorf("gradient sums to %v, want %v", total, want)
	}
	err := nd.Catch(func() { u.Forward(nd.Zeros(dev, nd.Float32, 5, 4)) })
	if !errors.Is(err, &nd.Error{Kind: nd.ErrShape}) {
		t.Errorf("a 2-D input: %v, want a shape error", err)
	}
}

func TestNewUpsampleErrors(t *testing.T) {
	for _, o := range []nd.InterpolateOpts{
		{},
		{Size: [2]int{2, 2}, Scale: [2]float64{2, 2}},
		{Size: [2]int{-2, 2}},
		{Scale: [2]float64{0, 2}},
		{Size: [2]int{2, 2}, AlignCorners: true},
		{Size: [2]int{2, 2}, Mode: nd.InterpBilinear, AlignCorners: true, Antialias: true},
		{Size: [2]int{2, 2}, Mode: 5},
	} {
		if err := nd.Catch(func() { nn.NewUpsample(o) }); !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) {
			t.Errorf("%+v: %v, want an argument error", o, err)
		}
	}
}
