package nd_test

import (
	"errors"
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestHalfRoundedOnce: Std, SiLU and ELU on half-precision arrays are the
// float32 results of the rounded inputs, rounded once (Std of float16
// overflowed in its variance; SiLU rounded σ(x) first), and ELU keeps the
// input's half dtype under autocast, as torch's elu.
func TestHalfRoundedOnce(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{300, -300, 300, -300}, 4).AsType(nd.Float16)
	if got := nd.Std(x, 0).Float32s()[0]; got != 300 {
		t.Errorf("Std(float16) = %v, want 300", got)
	}
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		v := nd.RandomUniform(dev, nd.Float32, -4, 4, 3200).AsType(dt)
		for name, f := range map[string]func(*nd.NDArray) *nd.NDArray{
			"SiLU": nd.SiLU,
			"ELU":  func(a *nd.NDArray) *nd.NDArray { return nd.ELU(a, 1) },
		} {
			want := f(v.AsType(nd.Float32)).AsType(dt).Float32s()
			got := f(v).Float32s()
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s(%v %v) = %v, want %v (the float32 result rounded once)", name, dt, v.Float32s()[i], got[i], want[i])
				}
			}
		}
	}
	h := nd.Full(dev, nd.Float16, -1, 4)
	var e, p *nd.NDArray
	nd.Autocast(nd.Float16, func() {
		e = nd.ELU(h, 1)
		p = nd.RPowScalar(10, nd.Full(dev, nd.Float16, 5, 2))
	})
	if e.DType() != nd.Float16 {
		t.Errorf("ELU under autocast is %v, want float16", e.DType())
	}
	if p.DType() != nd.Float32 || p.Float32s()[0] != 100000 {
		t.Errorf("RPowScalar under autocast: %v %v, want float32 100000", p.DType(), p.Float32s())
	}
}

// TestIntScalarRange: a scalar beyond the int64 range on an integer array
// is an error (it was saturated silently).
func TestIntScalarRange(t *testing.T) {
	x := nd.FromSlice(ctx.CPU(0), []int64{1, 2}, 2)
	for name, f := range map[string]func(){
		"AddScalar": func() { nd.AddScalar(x, 1e30) },
		"MulScalar": func() { nd.MulScalar(x, 1e19) },
	} {
		if err := nd.Catch(f); !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) {
			t.Errorf("%s: %v, want an argument error", name, err)
		}
	}
	if got := nd.AddScalar(x, 1<<40).Int64s(); got[0] != 1+1<<40 {
		t.Errorf("AddScalar(1<<40) = %v", got)
	}
}

// TestArangeInfinite: an infinite or NaN bound is an error (Arange(0,
// +Inf, 1) never returned), and so is a range of more than 2^31 values.
func TestArangeInfinite(t *testing.T) {
	inf := math.Inf(1)
	for _, r := range [][3]float64{{0, inf, 1}, {-inf, 0, 1}, {0, 1, inf}, {0, inf - inf, 1}, {0, 1e12, 1}} {
		if err := nd.Catch(func() { nd.Arange(ctx.CPU(0), nd.Float32, r[0], r[1], r[2]) }); !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) {
			t.Errorf("Arange%v: %v, want an argument error", r, err)
		}
	}
}
