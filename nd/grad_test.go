package nd_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
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
	// A recorded result is a var too (torch.autograd.grad's inputs), and
	// a var upstream of it still gets the whole gradient.
	mx := nd.Grad([]*nd.NDArray{l}, nil, []*nd.NDArray{mid, x})
	if !slices.Equal(mx[0].Float64s(), []float64{1, 1, 1}) || !slices.Equal(mx[1].Float64s(), w.Float64s()) {
		t.Errorf("intermediate var: %v and %v, want ones and w", mx[0], mx[1])
	}
	autograd.Record(func() { mid = nd.Mul(x, w); l = nd.Sum(mid) })
	for name, f := range map[string]func(){
		"no heads":         func() { nd.Grad(nil, nil, []*nd.NDArray{x}) },
		"unrecorded head":  func() { nd.Grad([]*nd.NDArray{nd.Ones(dev, nd.Float64, 1)}, nil, []*nd.NDArray{x}) },
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

// TestGradCreateGraph: GradWith with CreateGraph gives gradients that
// differentiate again (a Hessian-vector product of Σx³ is 6·x·v), keeps
// the graph for the first-order loss, takes recorded results as vars, and
// names the op that has no differentiable backward function.
func TestGradCreateGraph(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float64{1, -2, 3}, 3)
	v := nd.FromSlice(dev, []float64{0.5, 1, -1}, 3)
	x.AttachGrad(nd.GradWrite)
	autograd.Record(func() {
		y := nd.Sum(nd.PowScalar(x, 3))
		g := nd.GradWith([]*nd.NDArray{y}, []*nd.NDArray{x}, nd.GradOpts{CreateGraph: true})[0]
		if got := g.Float64s(); !slices.Equal(got, []float64{3, 12, 27}) {
			t.Errorf("first derivative %v, want 3x²", got)
		}
		// y's graph is kept: the loss y + Σ g·v backpropagates through both.
		autograd.Backward(nd.Add(y, nd.Sum(nd.Mul(g, v))))
	})
	if got := x.Grad().Float64s(); !slices.Equal(got, []float64{6, 0, 9}) {
		t.Errorf("3x² + 6·x·v = %v", got)
	}

	// A recorded result as the var: d/dh of Σ tanh(h)², then d/dx of that.
	x.AttachGrad(nd.GradWrite)
	var gh *nd.NDArray
	autograd.Record(func() {
		h := nd.MulScalar(x, 0.5)
		y := nd.Sum(nd.Square(nd.Tanh(h)))
		gh = nd.GradWith([]*nd.NDArray{y}, []*nd.NDArray{h}, nd.GradOpts{CreateGraph: true})[0]
		autograd.Backward(nd.Sum(gh))
	})
	for i, xi := range []float64{1, -2, 3} {
		th := math.Tanh(xi / 2)
		wantG := 2 * th * (1 - th*th)
		wantX := 0.5 * (2*(1-th*th)*(1-th*th) - 4*th*th*(1-th*th))
		if got := gh.Float64s()[i]; math.Abs(got-wantG) > 1e-14 {
			t.Errorf("gh[%d] = %v, want %v", i, got, wantG)
		}
		if got := x.Grad().Float64s()[i]; math.Abs(got-wantX) > 1e-14 {
			t.Errorf("x.Grad[%d] = %v, want %v", i, got, wantX)
		}
	}

	// An op without a differentiable backward function is named.
	x.AttachGrad(nd.GradWrite)
	var e *nd.Error
	err := nd.Catch(func() {
		autograd.Record(func() {
			nd.GradWith([]*nd.NDArray{nd.Sum(nd.Digamma(nd.AddScalar(x, 5)))}, []*nd.NDArray{x}, nd.GradOpts{CreateGraph: true})
		})
	})
	if !errors.As(err, &e) || e.Kind != nd.ErrGraph || !strings.Contains(e.Msg, "Digamma") {
		t.Errorf("Digamma under CreateGraph: %v, want an ErrGraph naming Digamma", err)
	}
}

// ExampleGradWith computes a Hessian-vector product: the gradient of
// Σ x³ is 3x², recorded, and the gradient of Σ 3x²·v is 6·x·v.
func ExampleGradWith() {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float64{1, 2}, 2)
	v := nd.FromSlice(dev, []float64{1, -1}, 2)
	x.AttachGrad(nd.GradWrite)
	var hv *nd.NDArray
	autograd.Record(func() {
		y := nd.Sum(nd.PowScalar(x, 3))
		g := nd.GradWith([]*nd.NDArray{y}, []*nd.NDArray{x}, nd.GradOpts{CreateGraph: true})[0]
		hv = nd.Grad([]*nd.NDArray{nd.Sum(nd.Mul(g, v))}, nil, []*nd.NDArray{x})[0]
	})
	fmt.Println(hv.Float64s())
	// Output: [6 -12]
}
