package autograd_test

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

var dev = ctx.CPU(0)

func vals(a *nd.NDArray) []float64 { return a.Float64s() }

func equal(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

func TestModes(t *testing.T) {
	if autograd.IsRecording() || autograd.IsTraining() {
		t.Fatal("recording or training outside any scope")
	}
	autograd.Record(func() {
		if !autograd.IsRecording() || !autograd.IsTraining() {
			t.Error("Record: want recording and training")
		}
		autograd.Pause(func() {
			if autograd.IsRecording() || autograd.IsTraining() {
				t.Error("Pause: want neither recording nor training")
			}
		})
		autograd.PredictMode(func() {
			if !autograd.IsRecording() || autograd.IsTraining() {
				t.Error("PredictMode inside Record: want recording, predict mode")
			}
		})
		if !autograd.IsRecording() || !autograd.IsTraining() {
			t.Error("modes not restored after nested scopes")
		}
	})
	autograd.RecordMode(false, func() {
		if !autograd.IsRecording() || autograd.IsTraining() {
			t.Error("RecordMode(false): want recording in predict mode")
		}
	})
	autograd.TrainMode(func() {
		if autograd.IsRecording() || !autograd.IsTraining() {
			t.Error("TrainMode: want training without recording")
		}
	})
	func() {
		defer func() { _ = recover() }()
		autograd.Record(func() { panic("x") })
	}()
	if autograd.IsRecording() {
		t.Fatal("a panic inside Record left recording on")
	}
}

// x² + 3x at x = 1, 2, 3 has gradient 2x + 3.
func TestGradReq(t *testing.T) {
	f := func(x *nd.NDArray) *nd.NDArray { return nd.Add(nd.Square(x), nd.MulScalar(x, 3)) }
	for _, c := range []struct {
		req  nd.GradReq
		want []float64 // after two backward passes
	}{
		{nd.GradWrite, []float64{5, 7, 9}},
		{nd.GradAdd, []float64{10, 14, 18}},
	} {
		t.Run(c.req.String(), func(t *testing.T) {
			x := nd.FromSlice(dev, []float64{1, 2, 3})
			x.AttachGrad(c.req)
			for range 2 {
				autograd.Record(func() { autograd.Backward(f(x)) })
			}
			equal(t, "grad", vals(x.Grad()), c.want)
			if x.GradStamp() != 2 {
				t.Errorf("GradStamp = %d, want 2", x.GradStamp())
			}
		})
	}
	t.Run("null", func(t *testing.T) {
		x := nd.FromSlice(dev, []float64{1, 2, 3})
		y := nd.FromSlice(dev, []float64{1, 1, 1})
		x.AttachGrad(nd.GradNull)
		y.AttachGrad(nd.GradWrite)
		autograd.Record(func() { autograd.Backward(nd.Mul(f(x), y)) })
		if x.Grad() != nil {
			t.Error("GradNull array got a gradient buffer")
		}
		equal(t, "y grad", vals(y.Grad()), []float64{4, 10, 18})
	})
}

func TestHeadsAndHeadGrads(t *testing.T) {
	x := nd.FromSlice(dev, []float64{1, 2})
	x.AttachGrad(nd.GradWrite)
	autograd.Record(func() {
		a := nd.MulScalar(x, 2) // da/dx = 2
		b := nd.Square(x)       // db/dx = 2x
		autograd.BackwardHeads([]*nd.NDArray{a, b}, autograd.BackwardOpts{
			HeadGrads: []*nd.NDArray{nd.FromSlice(dev, []float64{1, 10}), nil},
		})
	})
	equal(t, "grad", vals(x.Grad()), []float64{2*1 + 2*1, 2*10 + 2*2})
}

func TestRetainGraph(t *testing.T) {
	x := nd.FromSlice(dev, []float64{3})
	x.AttachGrad(nd.GradAdd)
	var y *nd.NDArray
	autograd.Record(func() { y = nd.Exp(nd.MulScalar(x, 0.5)) })
	autograd.BackwardHeads([]*nd.NDArray{y}, autograd.BackwardOpts{RetainGraph: true})
	autograd.Backward(y)
	want := math.Exp(1.5)
	equal(t, "grad after two passes", vals(x.Grad()), []float64{2 * 0.5 * want})
	err := nd.Catch(func() { autograd.Backward(y) })
	var e *nd.Error
	if !errors.As(err, &e) || e.Kind != nd.ErrGraph {
		t.Fatalf("third backward through a freed graph: got %v, want ErrGraph", err)
	}
}

func TestBackwardWithoutGraph(t *testing.T) {
	x := nd.FromSlice(dev, []float64{1})
	x.AttachGrad(nd.GradWrite)
	y := nd.Exp(x) // not recorded
	err := nd.Catch(func() { autograd.Backward(y) })
	var e *nd.Error
	if !errors.As(err, &e) || e.Kind != nd.ErrGraph {
		t.Fatalf("got %v, want ErrGraph", err)
	}
	// Without any input needing a gradient, nothing is recorded either.
	z := nd.FromSlice(dev, []float64{1})
	autograd.Record(func() { y = nd.Exp(z) })
	if err := nd.Catch(func() { autograd.Backward(y) }); err == nil {
		t.Fatal("backward from an op whose inputs need no gradient should fail")
	}
}

func TestPauseStopsRecording(t *testing.T) {
	x := nd.FromSlice(dev, []float64{2})
	x.AttachGrad(nd.GradWrite)
	autograd.Record(func() {
		var c *nd.NDArray
		autograd.Pause(func() { c = nd.Square(x) }) // a constant for the graph
		autograd.Backward(nd.Mul(c, x))
	})
	equal(t, "grad", vals(x.Grad()), []float64{4})
}

// scaleFn is a custom function y = k·x whose backward deliberately uses
// its own rule.
type scaleFn struct{ k float64 }

func (s *scaleFn) Forward(in ...*nd.NDArray) *nd.NDArray { return nd.MulScalar(in[0], s.k) }
func (s *scaleFn) Backward(g *nd.NDArray) []*nd.NDArray {
	return []*nd.NDArray{nd.MulScalar(g, s.k)}
}

func TestCustomFunction(t *testing.T) {
	x := nd.FromSlice(dev, []float64{1, 2})
	x.AttachGrad(nd.GradWrite)
	autograd.Record(func() {
		y := autograd.Apply("scale", &scaleFn{k: 3}, x)
		autograd.Backward(nd.Sum(nd.Square(y)))
	})
	// d/dx Σ(3x)² = 18x
	equal(t, "grad", vals(x.Grad()), []float64{18, 36})
}

// TestConcurrentDevices runs forward and backward of the same model on
// four CPU contexts in goroutines started with nd.Go inside one recording
// scope, as the multi-device training loop does (gluon.ForEachDevice), and checks each device's gradient
// against a sequential run. Run with -race.
func TestConcurrentDevices(t *testing.T) {
	const devices = 4
	nd.Seed(3)
	host := nd.RandomNormal(dev, nd.Float64, 0, 1, 8, 5).Float64s()
	wHost := nd.RandomNormal(dev, nd.Float64, 0, 1, 3, 5).Float64s()
	step := func(c ctx.Context, w *nd.NDArray) {
		x := nd.FromSlice(c, host[c.ID*10:c.ID*10+10], 2, 5)
		y := nd.Sum(nd.Tanh(nd.FullyConnected(x, w, nil)))
		autograd.Backward(y)
	}
	want := make([][]float64, devices)
	for i := range devices {
		w := nd.FromSlice(ctx.CPU(i), wHost, 3, 5)
		w.AttachGrad(nd.GradWrite)
		autograd.Record(func() { step(ctx.CPU(i), w) })
		want[i] = w.Grad().Float64s()
	}
	ws := make([]*nd.NDArray, devices)
	for i := range ws {
		ws[i] = nd.FromSlice(ctx.CPU(i), wHost, 3, 5)
		ws[i].AttachGrad(nd.GradWrite)
	}
	autograd.Record(func() {
		var wg sync.WaitGroup
		for i := range devices {
			wg.Add(1)
			nd.Go(func() { // a goroutine of the recording tree
				defer wg.Done()
				step(ctx.CPU(i), ws[i])
			})
		}
		wg.Wait()
	})
	for i := range devices {
		equal(t, fmt.Sprintf("device %d", i), ws[i].Grad().Float64s(), want[i])
	}
}

// sumProd is a two-output function: (a·b, a + b), with its own backward.
type sumProd struct {
	a, b  *nd.NDArray
	calls int
}

func (f *sumProd) Forward(in ...*nd.NDArray) []*nd.NDArray {
	f.a, f.b = in[0], in[1]
	return []*nd.NDArray{nd.Mul(in[0], in[1]), nd.Add(in[0], in[1])}
}

func (f *sumProd) Backward(g ...*nd.NDArray) []*nd.NDArray {
	f.calls++
	return []*nd.NDArray{nd.Add(nd.Mul(g[0], f.b), g[1]), nd.Add(nd.Mul(g[0], f.a), g[1])}
}

// TestApplyN checks a two-output custom function against the same
// computation done with recorded ops, using one output, the other, or both.
func TestApplyN(t *testing.T) {
	for _, use := range []string{"product", "sum", "both"} {
		t.Run(use, func(t *testing.T) {
			loss := func(p, s *nd.NDArray) *nd.NDArray {
				switch use {
				case "product":
					return nd.Sum(nd.Square(p))
				case "sum":
					return nd.Sum(nd.MulScalar(s, 3))
				}
				return nd.Add(nd.Sum(nd.Square(p)), nd.Sum(nd.Mul(s, p)))
			}
			grads := func(custom bool) ([]float64, []float64) {
				a := nd.FromSlice(dev, []float64{1, -2, 3})
				b := nd.FromSlice(dev, []float64{0.5, 4, -1})
				a.AttachGrad(nd.GradWrite)
				b.AttachGrad(nd.GradWrite)
				autograd.Record(func() {
					var p, s *nd.NDArray
					if custom {
						f := &sumProd{}
						out := autograd.ApplyN("sumprod", f, a, b)
						p, s = out[0], out[1]
						defer func() {
							if f.calls != 1 {
								t.Errorf("Backward ran %d times, want once", f.calls)
							}
						}()
					} else {
						p, s = nd.Mul(a, b), nd.Add(a, b)
					}
					autograd.Backward(loss(p, s))
				})
				return a.Grad().Float64s(), b.Grad().Float64s()
			}
			ga, gb := grads(true)
			wa, wb := grads(false)
			equal(t, "grad a", ga, wa)
			equal(t, "grad b", gb, wb)
		})
	}
}
