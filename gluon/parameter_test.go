package gluon_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/nd"
)

func cpus(n int) []ctx.Context {
	out := make([]ctx.Context, n)
	for i := range out {
		out[i] = ctx.CPU(i)
	}
	return out
}

func mustPanicKind(t *testing.T, kind nd.ErrorKind, mention []string, f func()) {
	t.Helper()
	err := nd.Catch(f)
	var e *nd.Error
	if !errors.As(err, &e) || e.Kind != kind {
		t.Fatalf("got %v, want an *nd.Error of kind %v", err, kind)
	}
	for _, m := range mention {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("%q does not mention %q", err, m)
		}
	}
}

func TestParameterReplicas(t *testing.T) {
	nd.Seed(5)
	p := gluon.NewParameter("weight", 3, 4)
	if err := p.Initialize(initializer.Xavier{}, cpus(3), false); err != nil {
		t.Fatal(err)
	}
	data := p.ListData()
	if len(data) != 3 || len(p.ListGrad()) != 3 {
		t.Fatalf("%d replicas", len(data))
	}
	for i, d := range data {
		if d.Context() != ctx.CPU(i) {
			t.Errorf("replica %d on %v", i, d.Context())
		}
		if !slices.Equal(d.Float32s(), data[0].Float32s()) {
			t.Errorf("replica %d differs from replica 0", i)
		}
		if p.Grad(ctx.CPU(i)) == nil {
			t.Errorf("replica %d has no gradient buffer", i)
		}
	}
	if err := p.Initialize(initializer.Xavier{}, cpus(3), false); err == nil {
		t.Error("second Initialize without force succeeded")
	}
	if err := p.Initialize(initializer.Zero(), cpus(2), true); err != nil {
		t.Fatal(err)
	}
	if got := p.Data(ctx.CPU(1)).Float32s(); got[0] != 0 || len(p.Contexts()) != 2 {
		t.Errorf("forced re-initialisation: %v on %v", got, p.Contexts())
	}
	mustPanicKind(t, nd.ErrContext, []string{"weight", "cpu(2)", "[cpu(0) cpu(1)]"}, func() { p.Data(ctx.CPU(2)) })
	if ctx.NumGPUs() == 0 { // built without a GPU backend
		if err := p.Initialize(nil, []ctx.Context{ctx.GPU(0)}, true); err == nil || !strings.Contains(err.Error(), "-tags cuda") {
			t.Errorf("initialise on gpu(0) without a GPU backend: %v", err)
		}
	}
}

// TestInitialValuesDependOnSeedAndName checks that initial values are a
// function of the seed and the parameter's name only.
func TestInitialValuesDependOnSeedAndName(t *testing.T) {
	init := func(seed uint64, name string) []float32 {
		nd.Seed(seed)
		p := gluon.NewParameter(name, 4, 4)
		if err := p.Initialize(initializer.Uniform{Scale: 1}, cpus(1), false); err != nil {
			t.Fatal(err)
		}
		return p.Data(ctx.CPU(0)).Float32s()
	}
	a := init(1, "x.weight")
	if !slices.Equal(a, init(1, "x.weight")) {
		t.Error("same seed and name gave different values")
	}
	if slices.Equal(a, init(2, "x.weight")) || slices.Equal(a, init(1, "y.weight")) {
		t.Error("a different seed or name gave the same values")
	}
}

func TestDeferredInitialisation(t *testing.T) {
	p := gluon.NewParameter("weight", 5, 0)
	if err := p.Initialize(nil, cpus(2), false); err != nil {
		t.Fatal(err)
	}
	if p.Initialized() {
		t.Fatal("parameter with an unknown dimension was initialised at once")
	}
	mustPanicKind(t, nd.ErrArgument, []string{"first forward"}, func() { p.Data(ctx.CPU(0)) })
	p.InferShape(5, 7)
	p.InferShape(5, 7) // a second call is a no-op
	if !slices.Equal(p.Shape(), []int{5, 7}) || !p.Initialized() {
		t.Fatalf("after inference: shape %v, initialised %v", p.Shape(), p.Initialized())
	}
	mustPanicKind(t, nd.ErrShape, []string{"[5 7]", "[5 8]"}, func() { p.InferShape(5, 8) })
}

func TestResetContextAndSetData(t *testing.T) {
	p := gluon.NewParameter("bias", 3)
	if err := p.Initialize(initializer.Zero(), cpus(1), false); err != nil {
		t.Fatal(err)
	}
	p.SetData(nd.FromSlice(ctx.CPU(5), []float32{1, 2, 3}))
	if err := p.ResetContext([]ctx.Context{ctx.CPU(2), ctx.CPU(3)}); err != nil {
		t.Fatal(err)
	}
	for _, d := range p.ListData() {
		if !slices.Equal(d.Float32s(), []float32{1, 2, 3}) || d.Grad() == nil {
			t.Errorf("replica on %v: %v", d.Context(), d.Float32s())
		}
	}
}

func TestParamDictSelect(t *testing.T) {
	net := modelzoo.LeNet()
	params := gluon.CollectParams(net)
	want := []string{"conv0.weight", "conv0.bias", "conv1.weight", "conv1.bias",
		"dense0.weight", "dense0.bias", "dense1.weight", "dense1.bias", "dense2.weight", "dense2.bias"}
	if got := params.Names(); !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	w, err := params.Select(".*weight")
	if err != nil || w.Len() != 5 || w.Get("conv1.weight") == nil || w.Get("conv1.bias") != nil {
		t.Errorf("Select(.*weight) = %v, %v", w.Names(), err)
	}
	if _, err := params.Select("("); err == nil {
		t.Error("bad pattern accepted")
	}
}
