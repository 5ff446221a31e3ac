package nn_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

var cpu0, cpu1, cpu2 = ctx.CPU(0), ctx.CPU(1), ctx.CPU(2)

// mustNDPanic runs f, requires it to panic with an *nd.Error of the given
// kind whose text contains every string in want, and returns the error.
func mustNDPanic(t *testing.T, kind nd.ErrorKind, f func(), want ...string) *nd.Error {
	t.Helper()
	var got any
	func() {
		defer func() { got = recover() }()
		f()
	}()
	if got == nil {
		t.Fatalf("no panic; want an *nd.Error of kind %v", kind)
	}
	e, ok := got.(*nd.Error)
	if !ok {
		t.Fatalf("panic value %T (%v); want *nd.Error", got, got)
	}
	if !errors.Is(e, &nd.Error{Kind: kind}) {
		t.Errorf("error kind %v, want %v: %v", e.Kind, kind, e)
	}
	for _, w := range want {
		if !strings.Contains(e.Error(), w) {
			t.Errorf("error %q does not mention %q", e.Error(), w)
		}
	}
	return e
}

// initNet collects b's parameters, optionally makes them float64 and
// initialises them on devs with init.
func initNet(t testing.TB, b gluon.Block, init initializer.Initializer, dt nd.DType, devs ...ctx.Context) *gluon.ParamDict {
	t.Helper()
	params := gluon.CollectParams(b)
	for _, p := range params.List() {
		p.SetDType(dt)
	}
	if len(devs) == 0 {
		devs = []ctx.Context{cpu0}
	}
	if err := params.Initialize(init, devs, false); err != nil {
		t.Fatal(err)
	}
	return params
}

// forward runs b on x without recording, in predict mode.
func forward(b gluon.Block, x *nd.NDArray) *nd.NDArray {
	var y *nd.NDArray
	autograd.Pause(func() { y = b.Forward(x) })
	return y
}

// forwardTrain runs b on x in training mode (recording, as a training step
// would).
func forwardTrain(b gluon.Block, x *nd.NDArray) *nd.NDArray {
	var y *nd.NDArray
	autograd.Record(func() { y = b.Forward(x) })
	return y
}

// allClose reports the first element where got and want differ by more
// than atol + rtol·|want|.
func allClose(t *testing.T, what string, got, want *nd.NDArray, atol, rtol float64) {
	t.Helper()
	if !slices.Equal(got.Shape(), want.Shape()) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), want.Shape())
	}
	g, w := got.Float64s(), want.Float64s()
	for i := range g {
		if d := math.Abs(g[i] - w[i]); !(d <= atol+rtol*math.Abs(w[i])) {
			t.Fatalf("%s: element %d is %.8g, want %.8g (diff %.3g)", what, i, g[i], w[i], d)
		}
	}
}

// closeSlice compares two slices element by element.
func closeSlice(t *testing.T, what string, got, want []float64, atol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= atol) {
			t.Fatalf("%s: element %d is %.8g, want %.8g", what, i, got[i], want[i])
		}
	}
}

// seq returns the float32 values 0, 1, ... shaped as given, scaled by s and
// shifted by off.
func seq(dev ctx.Context, s, off float64, shape ...int) *nd.NDArray {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(float64(i)*s + off)
	}
	return nd.FromSlice(dev, v, shape...)
}

// randX returns float32 uniform values on dev from a fixed seed.
func randX(dev ctx.Context, seed uint64, shape ...int) *nd.NDArray {
	nd.Seed(seed)
	return nd.RandomUniform(dev, nd.Float32, -1, 1, shape...)
}

// shapesOf maps each parameter's full name to its shape.
func shapesOf(d *gluon.ParamDict) map[string][]int {
	m := map[string][]int{}
	for _, n := range d.Names() {
		m[n] = d.Get(n).Shape()
	}
	return m
}

// forwardRecord runs f while recording, in training mode when train is set.
func forwardRecord(train bool, f func()) { autograd.RecordMode(train, f) }
