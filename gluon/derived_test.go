package gluon_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// expWeight derives a weight kept positive: exp of a raw parameter.
type expWeight struct{ raw *gluon.Parameter }

func (e expWeight) InferShape(shape []int) { e.raw.InferShape(shape...) }
func (e expWeight) Value(dev ctx.Context, s *nd.Session) *nd.NDArray {
	return nd.Exp(e.raw.DataIn(dev, s))
}
func (e expWeight) String() string { return "exp(" + e.raw.Name() + ")" }
func newExpWeight(b gluon.Component, name string) expWeight { // raw takes the weight's place
	w := b.Meta().Param(name)
	raw := gluon.NewParameter(name+"_log", w.Shape()...)
	w.SetDerivation(expWeight{raw})
	b.Meta().ReplaceParam(w, raw)
	return expWeight{raw}
}

// A Derivation computes a parameter's value from others at every read: a
// Dense layer whose weights stay positive, trained through their
// logarithms. The layer reads its weight as always; the network's
// parameters are the raw ones.
func ExampleDerivation() {
	dev := ctx.CPU(0)
	d := nn.NewDense(2, nn.DenseOpts{NoBias: true}) // in_units inferred
	e := newExpWeight(d, "weight")
	_ = gluon.Initialize(d, initializer.Zero(), dev)
	x := nd.FromSlice(dev, []float32{1, 2, 3}, 1, 3)
	autograd.Record(func() { autograd.Backward(nd.Sum(d.Forward(x))) })
	fmt.Println(gluon.CollectParams(d).Names(), d.Weight.Derivation())
	fmt.Println(d.Forward(x), e.raw.Grad(dev))
	// Output:
	// [weight_log] exp(weight_log)
	// NDArray[1 2] float32 @cpu(0) [6 6] NDArray[2 3] float32 @cpu(0) [1 2 3 1 2 3]
}

// TestZeroDimParameter: a 0-d parameter (a whole-tensor weight norm's g)
// is materialised, saved and loaded 0-d.
func TestZeroDimParameter(t *testing.T) {
	p := gluon.NewParameter("scale")
	if err := p.Initialize(initializer.Constant{Value: 2.5}, []ctx.Context{ctx.CPU(0), ctx.CPU(1)}, false); err != nil {
		t.Fatal(err)
	}
	if s := p.Data(ctx.CPU(1)).Shape(); len(s) != 0 {
		t.Fatalf("replica shape %v, want 0-d", s)
	}
	net := &holder{BlockMeta: gluon.NewBlockMeta("holder")}
	net.AddParam(p)
	path := filepath.Join(t.TempDir(), "p.safetensors")
	if err := gluon.SaveParameters(net, path); err != nil {
		t.Fatal(err)
	}
	net2 := &holder{BlockMeta: gluon.NewBlockMeta("holder")}
	q := net2.AddParam(gluon.NewParameter("scale"))
	if err := gluon.LoadParameters(net2, path, ctx.CPU(0)); err != nil {
		t.Fatal(err)
	}
	if v := q.Data(ctx.CPU(0)); len(v.Shape()) != 0 || v.Scalar() != 2.5 {
		t.Errorf("loaded %v", v)
	}
}

type holder struct{ gluon.BlockMeta }

// TestReplaceParamAndInitializeWith: ReplaceParam keeps the order and
// panics on a stranger; InitializeWith copies onto every context.
func TestReplaceParamAndInitializeWith(t *testing.T) {
	b := &holder{BlockMeta: gluon.NewBlockMeta("holder")}
	a, c := b.AddParam(gluon.NewParameter("a", 2)), b.AddParam(gluon.NewParameter("c", 2))
	x, y := gluon.NewParameter("x", 2), gluon.NewParameter("y", 0)
	b.ReplaceParam(a, x, y)
	if got := gluon.CollectParams(b).Names(); !slices.Equal(got, []string{"x", "y", "c"}) {
		t.Errorf("names %v", got)
	}
	b.ReplaceParam(c)
	if got := gluon.CollectParams(b).Names(); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("names %v", got)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("replacing a stranger did not panic")
			}
		}()
		b.ReplaceParam(a)
	}()
	src := nd.FromSlice(ctx.CPU(2), []float64{1, 2})
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	if err := y.InitializeWith(src, devs); err != nil {
		t.Fatal(err)
	}
	if y.DType() != nd.Float32 || !slices.Equal(y.Shape(), []int{2}) || !slices.Equal(y.Data(ctx.CPU(1)).Float64s(), []float64{1, 2}) {
		t.Errorf("y: %v %v %v", y.DType(), y.Shape(), y.Data(ctx.CPU(1)))
	}
	if err := x.InitializeWith(nd.FromSlice(ctx.CPU(0), []float64{1, 2, 3}), devs); err == nil {
		t.Error("a wrong shape was accepted")
	}
	if err := x.InitializeLike(c); err != nil || x.Initialized() {
		t.Errorf("like a parameter never initialised: %v, initialised %v", err, x.Initialized())
	}
}

// TestDerivedParamNamed: CollectParams names a derived weight by its full
// name without listing it (an ONNX export writes its value under that
// name), and lists it again once it is stored again; its dtype is its
// derivation's, which follows a Cast.
func TestDerivedParamNamed(t *testing.T) {
	d := nn.NewDense(2, nn.DenseOpts{InUnits: 3})
	net := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{InUnits: 3}), d)
	wn := nn.ApplyWeightNorm(d, nn.WeightNormOpts{})
	names := gluon.CollectParams(net).Names()
	if want := []string{"dense0.weight", "dense0.bias", "dense1.weight_v", "dense1.weight_g", "dense1.bias"}; !slices.Equal(names, want) {
		t.Errorf("collected %v, want %v", names, want)
	}
	if got := d.Weight.Name(); got != "dense1.weight" {
		t.Errorf("derived weight named %q, want dense1.weight", got)
	}
	if err := gluon.Initialize(net, initializer.Xavier{}, ctx.CPU(0)); err != nil {
		t.Fatal(err)
	}
	if err := gluon.Cast(net, nd.Float64); err != nil {
		t.Fatal(err)
	}
	if dt := d.Weight.DType(); dt != nd.Float64 { // the derivation's: V's
		t.Errorf("derived weight's dtype %v after Cast, want float64", dt)
	}
	if err := wn.Remove(); err != nil {
		t.Fatal(err)
	}
	if names := gluon.CollectParams(net).Names(); !slices.Contains(names, "dense1.weight") || slices.Contains(names, "dense1.weight_v") {
		t.Errorf("after Remove: %v", names)
	}
}
