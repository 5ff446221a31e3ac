package nd_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestGrad: nd.Grad gives Backward's gradients without writing any
// gradient buffer, nil for a var the heads do not depend on, and errors
// for misuse.
func TestGrad(t *testing.T) {
	dev := ctx.CPU(0)
	mk := func() (x, w, u *nd.NDArray) {
		x = nd.FromSlice(dev, []float64{1, 2, 3}, 3)
		w = nd.FromSlice(dev, []float64{0.5, -1, 2}, 3)
		u = nd.FromSlice(dev, []float64{7}, 1)
		for _, a := range []*nd.NDArray{x, w, u} {
			a.AttachGrad(nd.GradWrite)
		}
		return
	}
	x, w, u := mk()
	var l *nd.NDArray
	autograd.Record(func() { l = nd.Sum(nd.Mul(nd.Square(x), w)) })
	gs := autograd.Grad([]*nd.NDArray{l}, nil, []*nd.NDArray{x, u})
	if !slices.Equal(gs[0].Float64s(), []float64{1, -4, 12}) || gs[1] != nil {
		t.Fatalf("grads %v, %v", gs[0].Float64s(), gs[1])
	}
	for _, a := range []*nd.NDArray{x, w} {
		if !slices.Equal(a.Grad().Float64s(), []float64{0, 0, 0}) {
			t.Errorf("a gradient buffer was written: %v", a.Grad().Float64s())
		}
	}
	// A var listed twice gets its gradient twice (torch.autograd.grad too).
	x, w, _ = mk()
	autograd.Record(func() { l = nd.Sum(nd.Mul(x, w)) })
	twice := nd.Grad([]*nd.NDArray{l}, nil, []*nd.NDArray{w, x, w})
	if twice[0] == nil || twice[2] == nil || !slices.Equal(twice[0].Float64s(), twice[2].Float64s()) {
		t.Errorf("a var listed twice: %v and %v", twice[0], twice[2])
	}
	// Head gradients weight the heads, as in Backward.
	x, w, _ = mk()
	autograd.Record(func() { l = nd.Mul(x, w) })
	g := nd.FromSlice(dev, []float64{1, 10, 100}, 3)
	if got := nd.Grad([]*nd.NDArray{l}, []*nd.NDArray{g}, []*nd.NDArray{w})[0].Float64s(); !slices.Equal(got, []float64{1, 20, 300}) {
		t.Errorf("weighted %v", got)
	}
	x, w, _ = mk()
	var mid *nd.NDArray
	autograd.Record(func() { mid = nd.Mul(x, w); l = nd.Sum(mid) })
	for name, f := range map[string]func(){
		"no heads":         func() { nd.Grad(nil, nil, []*nd.NDArray{x}) },
		"unrecorded head":  func() { nd.Grad([]*nd.NDArray{nd.Ones(dev, nd.Float64, 1)}, nil, []*nd.NDArray{x}) },
		"intermediate var": func() { nd.Grad([]*nd.NDArray{l}, nil, []*nd.NDArray{mid}) },
		"var without grad": func() { nd.Grad([]*nd.NDArray{l}, nil, []*nd.NDArray{nd.Ones(dev, nd.Float64, 3)}) },
		"head grad shape":  func() { nd.Grad([]*nd.NDArray{l}, []*nd.NDArray{nd.Ones(dev, nd.Float64, 2)}, []*nd.NDArray{x}) },
	} {
		var e *nd.Error
		if err := nd.Catch(f); !errors.As(err, &e) {
			t.Errorf("%s: %v, want an *nd.Error", name, err)
		}
	}
}

// TestRNGState: draws after SetRNGState repeat those after RNGState, in
// dropout masks and random arrays.
func TestRNGState(t *testing.T) {
	dev := ctx.CPU(0)
	s := nd.DefaultSession()
	nd.Seed(4)
	st := s.RNGState(dev)
	a := nd.RandomNormal(dev, nd.Float32, 0, 1, 5).Float32s()
	var m1, m2 []float32
	autograd.Record(func() { m1 = nd.Dropout(nd.Ones(dev, nd.Float32, 32), 0.5).Float32s() })
	if err := s.SetRNGState(dev, st); err != nil {
		t.Fatal(err)
	}
	b := nd.RandomNormal(dev, nd.Float32, 0, 1, 5).Float32s()
	autograd.Record(func() { m2 = nd.Dropout(nd.Ones(dev, nd.Float32, 32), 0.5).Float32s() })
	if !slices.Equal(a, b) || !slices.Equal(m1, m2) {
		t.Error("draws after SetRNGState differ")
	}
	if err := s.SetRNGState(dev, []byte("junk")); err == nil {
		t.Error("a corrupt state was accepted")
	}
}
