package ndtest

// The cases for the ops of nd/copy.go: CopyTo, AsIn, Copy, AsType,
// Assign, AddTo, ScaleInPlace and FillInPlace.

import (
	"slices"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// confOther is the second context the copy checks use: the next CPU for a
// CPU device, and cpu(0) for a GPU.
func confOther(dev ctx.Context) ctx.Context {
	if dev.IsGPU() {
		return ctx.CPU(0)
	}
	return ctx.CPU(dev.ID + 1)
}

// confCopy checks CopyTo, AsIn, Copy, AsType, Assign, AddTo, ScaleInPlace
// and FillInPlace, within dev and between dev and another context.
func confCopy(e confEnv) {
	other := confOther(e.dev)
	shape := []int{3, 4, 5}
	x, xv := e.rand(1500, -3, 3, shape...)
	onOther := func(e confEnv, a *nd.NDArray, want []float64) {
		e.T.Helper()
		if a.Context() != other || a.DType() != e.dt || !slices.Equal(a.Shape(), shape) {
			e.Fatalf("got %v %v on %v, want %v %v on %v", a.Shape(), a.DType(), a.Context(), shape, e.dt, other)
		}
		e.checkVals(a.Float64s(), want, confTol{})
	}
	e.run("CopyTo_same", func(e confEnv) {
		y := x.CopyTo(e.dev)
		if y == x {
			e.Errorf("CopyTo to the same context returned its receiver")
		}
		e.check(y, shape, xv, confTolExact)
		nd.FillInPlace(y, 0)
		e.check(x, shape, xv, confTolExact) // the copy does not share memory
	})
	e.run("CopyTo_other", func(e confEnv) {
		y := x.CopyTo(other)
		onOther(e, y, xv)
		e.check(y.CopyTo(e.dev), shape, xv, confTolExact)
	})
	e.run("AsIn", func(e confEnv) {
		if y := x.AsIn(e.dev); y != x {
			e.Errorf("AsIn(%v) on an array already there returned a new array", e.dev)
		}
		y := x.AsIn(other)
		onOther(e, y, xv)
		e.check(y.AsIn(e.dev), shape, xv, confTolExact)
	})
	e.run("Copy", func(e confEnv) {
		y := x.Copy()
		if y == x {
			e.Errorf("Copy returned its receiver")
		}
		e.check(y, shape, xv, confTolExact)
		nd.ScaleInPlace(y, 2)
		e.check(x, shape, xv, confTolExact)
	})
	e.run("AsType", func(e confEnv) {
		if y := x.AsType(e.dt); y != x {
			e.Errorf("AsType(%v) on a %v array returned a new array", e.dt, e.dt)
		}
		to := nd.Float64
		if e.dt == nd.Float64 {
			to = nd.Float32
		}
		// Exactly representable values survive both ways; others round to
		// nearest float32.
		v := append(confUniform(1501, 20, -3, 3), 0.5, -1, 1e-3, 1e20)
		want := slices.Clone(v)
		if to == nd.Float32 {
			for i := range want {
				want[i] = float64(float32(want[i]))
			}
		}
		v = e.round(v)
		if e.dt != nd.Float64 { // exact in float64
			want = v
		}
		e.checkAs(e.arr(v).AsType(to), to, []int{len(v)}, want, confTolExact)
		back := e.arr(v).AsType(to).AsType(e.dt)
		e.check(back, []int{len(v)}, e.round(want), confTolExact)
	})
	e.run("Assign", func(e confEnv) {
		dst := nd.Full(e.dev, e.dt, 9, shape...)
		nd.Assign(dst, x)
		e.check(dst, shape, xv, confTolExact)
		src, sv := e.rand(1502, -1, 1, shape...)
		far := src.CopyTo(other)
		nd.Assign(dst, far) // from another context
		e.check(dst, shape, sv, confTolExact)
		back := nd.Full(other, e.dt, 0, shape...)
		nd.Assign(back, x) // to another context
		onOther(e, back, xv)
		to := nd.Float64
		if e.dt == nd.Float64 {
			to = nd.Float32
		}
		mixed := nd.Full(e.dev, to, 0, shape...)
		nd.Assign(mixed, x) // another dtype
		want := slices.Clone(xv)
		if to == nd.Float32 {
			for i := range want {
				want[i] = float64(float32(want[i]))
			}
		}
		e.checkAs(mixed, to, shape, want, confTolExact)
	})
	e.run("AddTo", func(e confEnv) {
		dst, dv := e.rand(1503, -1, 1, shape...)
		nd.AddTo(dst, x)
		want, _ := refBroadcast(func(a, b float64) float64 { return a + b }, dv, shape, xv, shape)
		e.check(dst, shape, want, confTolDefault)
		row, rv := e.rand(1504, -1, 1, 5)
		nd.AddTo(dst, row) // broadcast [W] into [C, H, W]
		want, _ = refBroadcast(func(a, b float64) float64 { return a + b }, want, shape, rv, []int{5})
		e.check(dst, shape, want, confTolDefault)
	})
	e.run("ScaleInPlace", func(e confEnv) {
		y := x.Copy()
		nd.ScaleInPlace(y, -1.5)
		want := make([]float64, len(xv))
		for i, v := range xv {
			want[i] = -1.5 * v
		}
		e.check(y, shape, want, confTolDefault)
	})
	e.run("FillInPlace", func(e confEnv) {
		y := x.Copy()
		nd.FillInPlace(y, 7.25)
		e.check(y, shape, confConst(len(xv), 7.25), confTolExact)
		nd.FillInPlace(y, 0)
		e.check(y, shape, confConst(len(xv), 0), confTolExact)
	})
}

// gradCopyCases checks CopyTo (to another context and back, so that the
// gradient must return to the original input), AsIn, AsType and Copy.
func gradCopyCases(dev ctx.Context) []gradCase {
	// other is a second context of dev's kind: cpu(i+1) for a CPU, and the
	// next GPU when there is one.
	other := dev
	other.ID++
	noOther := func() string {
		if dev.IsGPU() && other.ID >= ctx.NumGPUs() {
			return "needs a second GPU"
		}
		return ""
	}
	host := ctx.CPU(0)
	if !dev.IsGPU() {
		host = other
	}
	in := func() []*nd.NDArray { return gradIn(gradSigned(dev, 51, 3, 4)) }
	return []gradCase{
		{op: "CopyTo", name: "other-context-and-back", in: in, skip: noOther,
			f: func(in []*nd.NDArray) *nd.NDArray { return in[0].CopyTo(other).CopyTo(dev) }},
		// An op on the other context between the copies: the gradient
		// crosses both copies and the op runs where its input lives.
		{op: "CopyTo", name: "other-context-op-and-back", in: in, skip: noOther,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Tanh(in[0].CopyTo(other)).CopyTo(dev) }},
		{op: "CopyTo", name: "host-and-back", in: in,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Square(in[0].CopyTo(host)).CopyTo(dev) }},
		{op: "CopyTo", name: "same-context", in: in,
			f: func(in []*nd.NDArray) *nd.NDArray { return in[0].CopyTo(dev) }},
		{op: "AsIn", name: "other-context-and-back", in: in, skip: noOther,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Exp(in[0].AsIn(other)).AsIn(dev) }},
		{op: "Copy", name: "2-D", in: in,
			f: func(in []*nd.NDArray) *nd.NDArray { return in[0].Copy() }},
		{op: "Copy", name: "then-mul-original", in: in,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Mul(in[0].Copy(), in[0]) }},
		{op: "AsType", name: "float64-identity", in: in,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Tanh(in[0].AsType(nd.Float64)) }},
		// A float32 round trip rounds every value to ~6e-8 relative, which
		// swamps a 1e-6 central difference. With a step of 1e-3 only the
		// perturbed element's rounding differs between the two
		// evaluations, so the noise stays below 2*6e-8/2e-3 = 6e-5 and the
		// truncation error of tanh near 1e-7; a 2e-4 tolerance still
		// catches a wrong gradient (off by any factor, or misrouted).
		{op: "AsType", name: "float32-round-trip", in: in,
			tol: GradTol{Step: 1e-3, Atol: 2e-4, Rtol: 1e-3},
			f: func(in []*nd.NDArray) *nd.NDArray {
				return nd.Tanh(in[0].AsType(nd.Float32)).AsType(nd.Float64)
			}},
	}
}
