package nn_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// TestInitDeterminism checks that nd.Seed makes a network's initial
// weights reproducible, whatever the context the first forward pass runs
// on, and that different parameters get different values.
func TestInitDeterminism(t *testing.T) {
	build := func(seed uint64, first ctx.Context) map[string][]float64 {
		x := randX(first, 40, 1, 2, 4, 4) // reseeds: draw it before nd.Seed(seed)
		// Deferred parameters draw from the seed in force at the first
		// forward pass, so nothing may reseed between here and there.
		nd.Seed(seed)
		net := nn.NewSequential(
			nn.NewConv2D(3, 3, nn.Conv2DOpts{}),
			nn.NewFlatten(),
			nn.NewDense(4, nn.DenseOpts{InUnits: 12}),
			nn.NewDense(4, nn.DenseOpts{InUnits: 4}),
			nn.NewDense(4, nn.DenseOpts{InUnits: 4}),
		)
		params := initNet(t, net, initializer.Xavier{}, nd.Float32, cpu0, cpu1)
		forward(net, x)
		out := map[string][]float64{}
		for _, p := range params.List() {
			out[p.Name()] = p.Data(cpu0).Float64s()
		}
		return out
	}
	a := build(7, cpu0)
	b := build(7, cpu1)
	c := build(8, cpu0)
	for n, v := range a {
		if !slices.Equal(v, b[n]) {
			t.Errorf("%s: same seed, different values (first forward on cpu(1))", n)
		}
		if slices.Contains([]string{"conv0.weight", "dense0.weight", "dense1.weight"}, n) && slices.Equal(v, c[n]) {
			t.Errorf("%s: different seeds, same values", n)
		}
	}
	if slices.Equal(a["dense1.weight"], a["dense2.weight"]) {
		t.Error("dense1.weight and dense2.weight (same shape) got the same values")
	}
}

// TestSetDataMisuse checks that Parameter.SetData on a layer's weight
// never silently drops or mis-shapes the values.
func TestSetDataMisuse(t *testing.T) {
	t.Run("before-Initialize", func(t *testing.T) {
		// Gluon raises "parameter has not been initialized"; silently
		// ignoring the data would leave the layer with whatever a later
		// Initialize draws.
		d := nn.NewDense(4, nn.DenseOpts{InUnits: 5})
		err := nd.Catch(func() { d.Weight.SetData(nd.Ones(cpu0, nd.Float32, 4, 5)) })
		if err == nil && !d.Weight.Initialized() {
			t.Error("SetData on an uninitialised parameter neither failed nor stored the data")
		}
	})
	t.Run("deferred-wrong-shape", func(t *testing.T) {
		// The weight of Dense(4) is [4, 0]: data of shape [3, 5] cannot
		// fit and must be refused at SetData, not accepted and reported
		// later as a contradiction at the forward pass.
		d := nn.NewDense(4, nn.DenseOpts{})
		initNet(t, d, initializer.Xavier{}, nd.Float32)
		err := nd.Catch(func() { d.Weight.SetData(nd.Ones(cpu0, nd.Float32, 3, 5)) })
		if err == nil {
			t.Errorf("SetData([3 5]) on a [4 0] weight accepted; weight shape now %v", d.Weight.Shape())
		}
	})
	t.Run("deferred-right-shape", func(t *testing.T) {
		d := nn.NewDense(4, nn.DenseOpts{})
		initNet(t, d, initializer.Xavier{}, nd.Float32, cpu0, cpu1)
		w := randX(cpu0, 41, 4, 5)
		d.Weight.SetData(w)
		if !slices.Equal(d.Weight.Shape(), []int{4, 5}) {
			t.Fatalf("shape %v, want [4 5]", d.Weight.Shape())
		}
		for _, r := range d.Weight.ListData() {
			closeSlice(t, "replica on "+r.Context().String(), r.Float64s(), w.Float64s(), 0)
		}
		y := forward(d, randX(cpu1, 42, 2, 5))
		if !slices.Equal(y.Shape(), []int{2, 4}) {
			t.Errorf("output %v", y.Shape())
		}
	})
	t.Run("initialised-wrong-shape", func(t *testing.T) {
		d := nn.NewDense(4, nn.DenseOpts{InUnits: 5})
		initNet(t, d, initializer.Xavier{}, nd.Float32)
		mustNDPanic(t, nd.ErrShape, func() { d.Weight.SetData(nd.Ones(cpu0, nd.Float32, 3, 5)) }, "[4 5]", "[3 5]")
	})
}
