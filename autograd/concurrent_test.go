package autograd_test

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestConcurrentBackwardSharedGraph: two goroutines backpropagating
// (without retainGraph) through heads that share part of a graph never
// crash and never leave a partial gradient: one of them may run, the
// other fails with ErrGraph, as in PyTorch. They used to race on the
// shared nodes (nil-pointer panics, or gradients missing their inputs'
// share without an error).
func TestConcurrentBackwardSharedGraph(t *testing.T) {
	dev := ctx.CPU(0)
	for run := range 300 {
		w := nd.FromSlice(dev, []float32{0.1, 0.2, 0.3}, 3)
		w.AttachGrad(nd.GradWrite)
		var u, h1, h2 *nd.NDArray
		autograd.Record(func() {
			u = nd.Exp(w)
			h1 = nd.Sum(nd.Mul(u, w))
			h2 = nd.Sum(nd.Square(u))
		})
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, h := range []*nd.NDArray{h1, h2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = func() (err error) {
					defer func() {
						if r := recover(); r != nil {
							e, ok := r.(*nd.Error)
							if !ok {
								t.Errorf("run %d: a runtime panic: %v", run, r)
								return
							}
							err = e
						}
					}()
					autograd.Backward(h)
					return nil
				}()
			}()
		}
		wg.Wait()
		ok := -1
		for i, err := range errs {
			switch {
			case err == nil && ok >= 0:
				t.Fatalf("run %d: both passes ran through the shared graph", run)
			case err == nil:
				ok = i
			case !errors.Is(err, &nd.Error{Kind: nd.ErrGraph}):
				t.Fatalf("run %d: %v, want an ErrGraph error", run, err)
			}
		}
		if ok < 0 {
			continue // both refused: each saw the other's claim
		}
		x := []float64{0.1, 0.2, 0.3}
		g := w.Grad().Float32s()
		for j, xv := range x {
			e := math.Exp(float64(float32(xv)))
			want := e*xv + e // d/dw Σ e^w·w
			if ok == 1 {
				want = 2 * e * e // d/dw Σ e^{2w}
			}
			if math.Abs(float64(g[j])-want) > 1e-5*want {
				t.Fatalf("run %d: head %d's gradient %v, want %v at %d", run, ok+1, g[j], want, j)
			}
		}
	}
}

// TestBackwardBadGradients: a released gradient buffer and a custom
// function's gradient of the wrong dtype are *nd.Errors naming what is
// wrong (they were runtime panics in the backend).
func TestBackwardBadGradients(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{1, 2, 3}, 3)
	x.AttachGrad(nd.GradWrite)
	var y *nd.NDArray
	autograd.Record(func() { y = nd.Sum(nd.Exp(x)) })
	x.Grad().Release()
	err := nd.Catch(func() { autograd.Backward(y) })
	if !errors.Is(err, &nd.Error{Kind: nd.ErrReleased}) {
		t.Errorf("released gradient buffer: %v, want ErrReleased", err)
	}

	z := nd.FromSlice(dev, []float32{1, 2, 3}, 3)
	z.AttachGrad(nd.GradWrite)
	var out *nd.NDArray
	autograd.Record(func() { out = nd.Sum(autograd.Apply("f64grad", f64Grad{}, z)) })
	err = nd.Catch(func() { autograd.Backward(out) })
	if err == nil || !errors.Is(err, &nd.Error{Kind: nd.ErrShape}) || !strings.Contains(err.Error(), "f64grad") {
		t.Errorf("wrong-dtype gradient: %v, want an error naming f64grad", err)
	}
}

// f64Grad doubles its input and returns a float64 gradient whatever the
// input's dtype.
type f64Grad struct{}

func (f64Grad) Forward(in ...*nd.NDArray) *nd.NDArray { return nd.MulScalar(in[0], 2) }
func (f64Grad) Backward(g *nd.NDArray) []*nd.NDArray {
	return []*nd.NDArray{nd.MulScalar(g, 2).AsType(nd.Float64)}
}
