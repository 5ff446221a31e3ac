package nd_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestHalfStorage: Float16 and BFloat16 arrays are made, cast both ways
// (rounding as F16From/BF16From), filled, copied to another context,
// assigned, reshaped and read; ops on them round their float32 result
// once; mixing them with float32 is ErrDType.
func TestHalfStorage(t *testing.T) {
	cpu0, cpu1 := ctx.CPU(0), ctx.CPU(1)
	vals := []float32{0, 1, -2.5, 1.0009765625, 65504, 70000, float32(math.Inf(-1)), 6e-8, -3e-6, 0.1, float32(math.NaN()), 1e-40}
	x := nd.FromSlice(cpu0, vals, 3, 4)
	for _, tc := range []struct {
		dt    nd.DType
		round func(float32) float32
	}{
		{nd.Float16, func(f float32) float32 { return nd.F16From(f).Float32() }},
		{nd.BFloat16, func(f float32) float32 { return nd.BF16From(f).Float32() }},
	} {
		t.Run(tc.dt.String(), func(t *testing.T) {
			h := x.AsType(tc.dt)
			if h.DType() != tc.dt || h.DType().Size() != 2 || !h.DType().IsHalf() {
				t.Fatalf("AsType gave %v", h.DType())
			}
			want := make([]float32, len(vals))
			for i, v := range vals {
				want[i] = tc.round(v)
			}
			same := func(what string, got []float32) {
				t.Helper()
				for i := range want {
					if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
						t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
					}
				}
			}
			same("Float32s", h.Float32s())
			same("AsType(Float32)", h.AsType(nd.Float32).Float32s())
			same("CopyTo(cpu(1))", h.CopyTo(cpu1).AsType(nd.Float32).Float32s())
			same("Reshape", nd.Reshape(h, 12).Float32s())
			f64 := h.AsType(nd.Float64).Float64s()
			for i := range want {
				if float32(f64[i]) != want[i] && want[i] == want[i] {
					t.Fatalf("AsType(Float64)[%d] = %v, want %v", i, f64[i], want[i])
				}
			}
			z := nd.Zeros(cpu0, tc.dt, 3, 4)
			nd.Assign(z, x) // float32 into half: rounds
			same("Assign", z.Float32s())
			full := nd.Full(cpu0, tc.dt, 1.0/3, 2)
			if got := full.Float32s()[1]; got != tc.round(1.0/3) {
				t.Errorf("Full: %v, want %v", got, tc.round(1.0/3))
			}
			// Ops compute in float32 and round their result once.
			sum := nd.Add(h, h)
			if sum.DType() != tc.dt {
				t.Fatalf("Add gave %v", sum.DType())
			}
			for i, g := range sum.Float32s() {
				if w := tc.round(want[i] + want[i]); g != w && w == w {
					t.Errorf("Add[%d] = %v, want %v", i, g, w)
				}
			}
			tr := nd.Transpose(h, 1, 0).Float32s()
			if tr[1] != want[4] || tr[3] != want[1] {
				t.Errorf("Transpose moved %v, %v", tr[1], tr[3])
			}
			// Mixing dtypes is still an error outside autocast.
			err := nd.Catch(func() { nd.Add(h, x) })
			var ne *nd.Error
			if !errors.As(err, &ne) || ne.Kind != nd.ErrDType {
				t.Errorf("Add(%v, float32): %v, want ErrDType", tc.dt, err)
			}
		})
	}
	bits := []nd.F16{0x3c00, 0x7c00, 0x0001}
	h := nd.FromSlice(cpu0, bits)
	if got := h.Float32s(); got[0] != 1 || !math.IsInf(float64(got[1]), 1) || got[2] != 5.960464477539063e-08 {
		t.Errorf("FromSlice([]F16) reads %v", got)
	}
	back := make([]nd.F16, 3)
	h.ReadInto(back)
	if back[0] != bits[0] || back[1] != bits[1] || back[2] != bits[2] {
		t.Errorf("ReadInto([]F16) = %v, want %v", back, bits)
	}
}

// TestRandomUniformNarrowInterval: an interval too narrow for the dtype to
// hold a value inside still returns (its draws rounded), instead of
// drawing forever.
func TestRandomUniformNarrowInterval(t *testing.T) {
	for _, c := range []struct {
		dt     nd.DType
		lo, hi float64
	}{{nd.Float16, 1.0006, 1.0008}, {nd.Float32, 1.00000008, 1.0000001}} {
		a := nd.RandomUniform(ctx.CPU(0), c.dt, c.lo, c.hi, 100)
		if a.Size() != 100 {
			t.Errorf("%v [%v, %v): %d values", c.dt, c.lo, c.hi, a.Size())
		}
	}
}

// TestHalfDropout: in training mode a float16 input is scaled by the
// float32 mask and rounded once, and the gradient is 1/(1-p), rounded,
// exactly where the value was kept.
func TestHalfDropout(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.Ones(dev, nd.Float16, 1000)
	x.AttachGrad(nd.GradWrite)
	var y *nd.NDArray
	exit := nd.EnterRecording(true)
	y = nd.Dropout(x, 0.25)
	l := nd.Sum(y.AsType(nd.Float32))
	exit()
	nd.Backward([]*nd.NDArray{l}, nil, false)
	keep := float64(nd.F16From(float32(1 / 0.75)).Float32())
	ys, gs := y.Float64s(), x.Grad().Float64s()
	kept := 0
	for i := range ys {
		switch {
		case ys[i] == 0 && gs[i] == 0:
		case ys[i] == keep && gs[i] == keep:
			kept++
		default:
			t.Fatalf("element %d: value %v, gradient %v (want both 0 or both %v)", i, ys[i], gs[i], keep)
		}
	}
	if kept < 700 || kept > 800 {
		t.Errorf("%d of 1000 kept at p = 0.25", kept)
	}
	if y.DType() != nd.Float16 || x.Grad().DType() != nd.Float16 {
		t.Errorf("dtypes %v, %v", y.DType(), x.Grad().DType())
	}
}

// TestHalfOpsRoundOnce: convolution, FullyConnected and pooling on half
// arrays give exactly the float32 op on the widened inputs, rounded once
// (the same kernels, chosen for float32 operands).
func TestHalfOpsRoundOnce(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(9)
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		x := nd.RandomNormal(dev, nd.Float32, 0, 1, 4, 3, 12, 12).AsType(dt)
		w := nd.RandomNormal(dev, nd.Float32, 0, 0.3, 8, 3, 3, 3).AsType(dt)
		b := nd.RandomNormal(dev, nd.Float32, 0, 0.3, 8).AsType(dt)
		x1 := nd.RandomNormal(dev, nd.Float32, 0, 1, 64, 1, 28, 28).AsType(dt) // LeNet's first layer
		w5 := nd.RandomNormal(dev, nd.Float32, 0, 0.3, 6, 1, 5, 5).AsType(dt)
		f := func(a *nd.NDArray) *nd.NDArray { return a.AsType(nd.Float32) }
		o := nd.ConvOpts{Pad: [2]int{1, 1}}
		m := nd.Reshape(x, 4, -1)
		v := nd.Reshape(nd.SliceAxis(x, 0, 2, 0), 2, -1)
		for name, c := range map[string][2]*nd.NDArray{
			"Conv2D":         {nd.Conv2D(x, w, b, o), nd.Conv2D(f(x), f(w), f(b), o).AsType(dt)},
			"Conv2D 5x5":     {nd.Conv2D(x1, w5, nil, nd.ConvOpts{}), nd.Conv2D(f(x1), f(w5), nil, nd.ConvOpts{}).AsType(dt)},
			"FullyConnected": {nd.FullyConnected(m, v, nil), nd.FullyConnected(f(m), f(v), nil).AsType(dt)},
			"MaxPool2D":      {nd.MaxPool2D(x, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}), nd.MaxPool2D(f(x), [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}).AsType(dt)},
			"AvgPool2D":      {nd.AvgPool2D(x, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}), nd.AvgPool2D(f(x), [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}).AsType(dt)},
		} {
			if got, want := c[0].Float32s(), c[1].Float32s(); c[0].DType() != dt || !slices.Equal(got, want) {
				t.Errorf("%v %s: not the float32 result rounded once", dt, name)
			}
		}
	}
}

// TestHalfConvGradsRoundOnce: the gradients of a half-precision
// convolution are the float32 ones of the widened operands, rounded once.
func TestHalfConvGradsRoundOnce(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(10)
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 64, 6, 12, 12).AsType(nd.Float16) // LeNet's second layer
	w := nd.RandomNormal(dev, nd.Float32, 0, 0.3, 16, 6, 5, 5).AsType(nd.Float16)
	b := nd.RandomNormal(dev, nd.Float32, 0, 0.3, 16).AsType(nd.Float16)
	grads := func(x, w *nd.NDArray) (gx, gw []float32) {
		x, w = x.Detach(), w.Detach()
		x.AttachGrad(nd.GradWrite)
		w.AttachGrad(nd.GradWrite)
		exit := nd.EnterRecording(true)
		y := nd.Conv2D(x, w, b, nd.ConvOpts{})
		l := nd.Sum(nd.Mul(y, y).AsType(nd.Float32))
		exit()
		nd.Backward([]*nd.NDArray{l}, nil, false)
		return x.Grad().AsType(nd.Float16).Float32s(), w.Grad().AsType(nd.Float16).Float32s()
	}
	gx, gw := grads(x, w)
	// The same graph with the convolution in float32: its output rounded
	// to float16 before the square, as the half op rounds it.
	x32, w32 := x.AsType(nd.Float32).Detach(), w.AsType(nd.Float32).Detach()
	x32.AttachGrad(nd.GradWrite)
	w32.AttachGrad(nd.GradWrite)
	exit := nd.EnterRecording(true)
	y := nd.Conv2D(x32, w32, b.AsType(nd.Float32), nd.ConvOpts{}).AsType(nd.Float16)
	l := nd.Sum(nd.Mul(y, y).AsType(nd.Float32))
	exit()
	nd.Backward([]*nd.NDArray{l}, nil, false)
	if !slices.Equal(gx, x32.Grad().AsType(nd.Float16).Float32s()) || !slices.Equal(gw, w32.Grad().AsType(nd.Float16).Float32s()) {
		t.Error("the half convolution's gradients are not the float32 ones rounded once")
	}
}
