package nd_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// recordingTB collects a checker's failures instead of failing the test.
type recordingTB struct {
	*testing.T
	failed []string
}

func (r *recordingTB) Errorf(f string, a ...any) { r.failed = append(r.failed, fmt.Sprintf(f, a...)) }
func (r *recordingTB) Error(a ...any)            { r.failed = append(r.failed, fmt.Sprint(a...)) }
func (r *recordingTB) Fatalf(f string, a ...any) { r.failed = append(r.failed, fmt.Sprintf(f, a...)) }
func (r *recordingTB) Helper()                   {}

// TestCreateGraphHVPUnderPause: autograd.HVP (built on GradWith's
// CreateGraph) records even when called from code that paused recording.
func TestCreateGraphHVPUnderPause(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float64{1, 2}, 2)
	v := nd.FromSlice(dev, []float64{1, -1}, 2)
	f := func(in []*nd.NDArray) *nd.NDArray { return nd.Sum(nd.PowScalar(in[0], 3)) }
	var hvp []*nd.NDArray
	err := nd.Catch(func() {
		autograd.Pause(func() { _, hvp = autograd.HVP(f, []*nd.NDArray{x}, []*nd.NDArray{v}) })
	})
	if err != nil {
		t.Fatalf("HVP under Pause: %v", err)
	}
	if got := hvp[0].Float64s(); !slices.Equal(got, []float64{6, -12}) {
		t.Errorf("HVP under Pause = %v, want [6 -12]", got)
	}
}

// TestCreateGraphCheckGradGradCatchesWrongDiff: ndtest.CheckGradGrad fails
// a linear op whose differentiable backward gives 2·g: its second
// derivative with respect to x is zero either way, so only the comparison
// of the recorded first derivatives and the derivative through the output
// gradient can catch it.
func TestCreateGraphCheckGradGradCatchesWrongDiff(t *testing.T) {
	dev := ctx.CPU(0)
	wrong := func(in []*nd.NDArray) *nd.NDArray {
		x := in[0]
		y := nd.MulScalar(x.Detach(), 1) // x itself, unrecorded
		nd.RecordDiff("WrongIdentity", y, []*nd.NDArray{x},
			func(g *nd.NDArray, _ []bool) []*nd.NDArray { return []*nd.NDArray{g.Copy()} },
			func(g *nd.NDArray, _ []bool) []*nd.NDArray { return []*nd.NDArray{nd.MulScalar(g, 2)} }) // wrong: 2·g
		return y
	}
	x := nd.FromSlice(dev, []float64{0.3, -1.2, 2.5}, 3)
	tb := &recordingTB{T: t}
	err := ndtest.CheckGradGrad(tb, wrong, []*nd.NDArray{x}, ndtest.GradTol{})
	if err == nil && len(tb.failed) == 0 {
		t.Errorf("CheckGradGrad passed an op whose CreateGraph gradient is 2× its Backward gradient")
	}
}

// TestCreateGraphMaxPoolNaNWindow: CreateGraph's first derivative through
// a max pool is Backward's also for a window holding a NaN (the kernels'
// rule: the first element, then any greater one).
func TestCreateGraphMaxPoolNaNWindow(t *testing.T) {
	dev := ctx.CPU(0)
	nan := math.NaN()
	for _, k := range [][2]int{{2, 2}, {3, 3}} {
		x := nd.FromSlice(dev, []float64{1, 5, nan, 2, 0, 3, 4, 6, 7, 8, 9, 1, 2, 3, 4, 5}, 1, 1, 4, 4)
		x.AttachGrad(nd.GradWrite)
		var l *nd.NDArray
		autograd.Record(func() { l = nd.Sum(nd.MaxPool2D(x, k, [2]int{1, 1}, [2]int{})) })
		gc := nd.GradWith([]*nd.NDArray{l}, []*nd.NDArray{x}, nd.GradOpts{CreateGraph: true})[0].Float64s()
		autograd.Backward(l)
		gb := x.Grad().Float64s()
		if !slices.Equal(gc, gb) {
			t.Errorf("kernel %v: CreateGraph %v, Backward %v", k, gc, gb)
		}
	}
}

// TestCreateGraphMaxPoolOutputChangedInPlace: a max pool's output changed
// in place after it was recorded (allowed: its backward reads x, not the
// output) leaves CreateGraph's first derivative equal to Backward's.
func TestCreateGraphMaxPoolOutputChangedInPlace(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float64{1, 5, 2, 3, 0, 3, 4, 6, 7, 8, 9, 1, 2, 3, 4, 5}, 1, 1, 4, 4)
	x.AttachGrad(nd.GradWrite)
	var l, y *nd.NDArray
	autograd.Record(func() {
		y = nd.MaxPool2D(nd.MulScalar(x, 1), [2]int{2, 2}, [2]int{}, [2]int{})
		l = nd.Sum(y)
	})
	nd.ScaleInPlace(y, 2)
	var gc []float64
	if err := nd.Catch(func() {
		gc = nd.GradWith([]*nd.NDArray{l}, []*nd.NDArray{x}, nd.GradOpts{CreateGraph: true})[0].Float64s()
	}); err != nil {
		t.Logf("CreateGraph: %v", err)
	}
	var gb []float64
	if err := nd.Catch(func() { autograd.Backward(l); gb = x.Grad().Float64s() }); err != nil {
		t.Logf("Backward: %v", err)
	}
	if gc != nil && gb != nil && !slices.Equal(gc, gb) {
		t.Errorf("CreateGraph %v, Backward %v", gc, gb)
	}
}

// TestCreateGraphPrunedGradientsReleased: Grad walks only the paths to
// its vars, and releases the gradients a backward function computes for
// the inputs off them (a hybridized graph's computes every input's).
func TestCreateGraphPrunedGradientsReleased(t *testing.T) {
	dev := ctx.CPU(0)
	a := nd.FromSlice(dev, []float64{1, 2}, 2)
	b := nd.FromSlice(dev, []float64{3, 4}, 2)
	a.AttachGrad(nd.GradWrite)
	b.AttachGrad(nd.GradWrite)
	var made []*nd.NDArray
	var l *nd.NDArray
	autograd.Record(func() {
		y := nd.Mul(a.Detach(), b.Detach())
		nd.Record("AllGrads", y, []*nd.NDArray{a, b}, func(g *nd.NDArray, need []bool) []*nd.NDArray {
			ga, gb := nd.Mul(g, b.Detach()), nd.Mul(g, a.Detach()) // both, whatever need says
			made = append(made, ga, gb)
			return []*nd.NDArray{ga, gb}
		})
		l = nd.Sum(y)
	})
	g := nd.Grad([]*nd.NDArray{l}, nil, []*nd.NDArray{a})[0]
	if !slices.Equal(g.Float64s(), []float64{3, 4}) {
		t.Fatalf("grad %v", g.Float64s())
	}
	if !made[1].Released() {
		t.Errorf("the gradient returned for b, which the pruned pass does not use, was not released")
	}
}

// TestCreateGraphDivOutputChangedInPlace: Div's backward reads its
// output, so an in-place change of the output after recording is an error
// rather than a wrong gradient.
func TestCreateGraphDivOutputChangedInPlace(t *testing.T) {
	dev := ctx.CPU(0)
	a := nd.FromSlice(dev, []float64{1, 2}, 2)
	b := nd.FromSlice(dev, []float64{4, 5}, 2)
	b.AttachGrad(nd.GradWrite)
	var y, l *nd.NDArray
	autograd.Record(func() { y = nd.Div(a, b); l = nd.Sum(y) })
	nd.ScaleInPlace(y, 10)
	err := nd.Catch(func() { autograd.Backward(l) })
	if err == nil {
		got := b.Grad().Float64s()
		want := []float64{-1.0 / 16, -2.0 / 25}
		if math.Abs(got[0]-want[0]) > 1e-15 || math.Abs(got[1]-want[1]) > 1e-15 {
			t.Errorf("d/db Σ a/b after the output was scaled in place: %v (no error), want %v or ErrGraph", got, want)
		}
	}
}

// TestLeakyReLUKinks: the fused LeakyReLU keeps the composed form's
// values and gradients bit for bit, at 0 and −0 (gradient: the slope), at
// NaN and infinities, and its second derivative's constant mask.
func TestLeakyReLUKinks(t *testing.T) {
	dev := ctx.CPU(0)
	vals := []float32{0, float32(math.Copysign(0, -1)), 1.5, -2.25, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-30, -1e-30}
	for _, slope := range []float64{0, 0.2, 1} {
		x := nd.FromSlice(dev, vals, len(vals))
		x.AttachGrad(nd.GradWrite)
		var y *nd.NDArray
		autograd.Record(func() {
			y = nd.LeakyReLU(x, slope)
			autograd.Backward(nd.Mul(y, nd.FullLike(y, 3)))
		})
		got, grad := y.Float32s(), x.Grad().Float32s()
		for i, v := range vals {
			want, wg := v, float32(3)
			if !(v > 0) {
				want, wg = v*float32(slope), 3*float32(slope)
			}
			if math.Float32bits(got[i]) != math.Float32bits(want) && !(want != want && got[i] != got[i]) {
				t.Errorf("slope %g: LeakyReLU(%v) = %v, want %v", slope, v, got[i], want)
			}
			if grad[i] != wg {
				t.Errorf("slope %g: gradient at %v = %v, want %v", slope, v, grad[i], wg)
			}
		}
	}
}
