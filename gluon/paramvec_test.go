package gluon_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// TestParamsToVector: the vector holds every parameter flattened in
// order, its gradient reaches the parameters, and VectorToParams writes
// it back into every replica.
func TestParamsToVector(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	net := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{InUnits: 2}), nn.NewDense(1, nn.DenseOpts{InUnits: 3}))
	params := gluon.CollectParams(net)
	nd.Seed(2)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	var want []float64
	for _, p := range params.List() {
		want = append(want, p.Data(devs[1]).Float64s()...)
	}
	var vec *nd.NDArray
	autograd.Record(func() {
		vec = gluon.ParamsToVector(params.List(), devs[1])
		autograd.Backward(nd.Sum(nd.Square(vec)))
	})
	if got := vec.Float64s(); !slices.Equal(got, want) || vec.Context() != devs[1] {
		t.Fatalf("vector %v on %v, want %v on cpu(1)", got, vec.Context(), want)
	}
	w := params.Get("dense0.weight")
	if g, v := w.Grad(devs[1]).Float64s(), w.Data(devs[1]).Float64s(); math.Abs(g[0]-2*v[0]) > 1e-6 {
		t.Errorf("gradient %g, want 2·%g", g[0], v[0])
	}

	next := make([]float64, len(want))
	for i := range next {
		next[i] = float64(i)
	}
	if err := gluon.VectorToParams(nd.FromSlice(ctx.CPU(0), next), params.List()); err != nil {
		t.Fatal(err)
	}
	for _, dev := range devs {
		if got := gluon.ParamsToVector(params.List(), dev).Float64s(); !slices.Equal(got, next) {
			t.Errorf("%v after VectorToParams: %v", dev, got)
		}
	}
	if err := gluon.VectorToParams(nd.FromSlice(ctx.CPU(0), next[1:]), params.List()); err == nil || !strings.Contains(err.Error(), "elements") {
		t.Errorf("short vector: %v", err)
	}
	if err := gluon.VectorToParams(nd.FromSlice(ctx.CPU(0), next, 1, len(next)), params.List()); err == nil {
		t.Error("2-D vector accepted")
	}
}

// TestClipGradValue clamps every element, keeps NaN, and refuses a bad
// bound.
func TestClipGradValue(t *testing.T) {
	g := nd.FromSlice(ctx.CPU(0), []float64{-3, -0.5, 0, 0.7, 2, math.NaN()})
	if err := gluon.ClipGradValue([]*nd.NDArray{g}, 1); err != nil {
		t.Fatal(err)
	}
	got := g.Float64s()
	want := []float64{-1, -0.5, 0, 0.7, 1}
	if !slices.Equal(got[:5], want) || !math.IsNaN(got[5]) {
		t.Errorf("clipped %v, want %v and NaN", got, want)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if err := gluon.ClipGradValue([]*nd.NDArray{g}, bad); err == nil {
			t.Errorf("clip %g accepted", bad)
		}
	}
}

// ParamsToVector flattens a network's parameters into one vector, the
// form flat-parameter optimisers work on; VectorToParams writes one back.
func ExampleParamsToVector() {
	dev := ctx.CPU(0)
	d := nn.NewDense(2, nn.DenseOpts{InUnits: 2})
	params := gluon.CollectParams(d)
	_ = params.Initialize(initializer.One(), []ctx.Context{dev}, false)
	fmt.Println(gluon.ParamsToVector(params.List(), dev))
	_ = gluon.VectorToParams(nd.FromSlice(dev, []float32{1, 2, 3, 4, 5, 6}), params.List())
	fmt.Println(d.Weight.Data(dev), d.Bias.Data(dev))
	// Output:
	// NDArray[6] float32 @cpu(0) [1 1 1 1 0 0]
	// NDArray[2 2] float32 @cpu(0) [1 2 3 4] NDArray[2] float32 @cpu(0) [5 6]
}

// ClipGradValue clamps gradients element by element (PyTorch's
// clip_grad_value_), where ClipGlobalNorm rescales them together.
func ExampleClipGradValue() {
	g := nd.FromSlice(ctx.CPU(0), []float32{-5, 0.25, 3})
	_ = gluon.ClipGradValue([]*nd.NDArray{g}, 1)
	fmt.Println(g)
	// Output: NDArray[3] float32 @cpu(0) [-1 0.25 1]
}
