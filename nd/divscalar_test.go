package nd_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// quot32 divides in float32, as PyTorch divides a float32 tensor by a
// Python scalar.
func quot32(xs []float32, s float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x / float32(s))
	}
	return out
}

// quot64 divides in float64 at run time (a constant expression would be
// exact).
func quot64(a, b float64) float64 { return a / b }

// TestDivScalar: DivScalar is a true division by s in x's dtype (PyTorch's
// x / s), not a product with 1/s, which is off by one ulp (9/10 in
// float32), overflows when 1/s does not fit, and is not defined on
// integers; integer quotients truncate toward zero as Div's do.
func TestDivScalar(t *testing.T) {
	dev := ctx.CPU(0)
	x32 := []float32{9, 13, 0, 1e-10, -7}
	inf := math.Inf(1)
	cases := []struct {
		name  string
		x     *nd.NDArray
		s     float64
		shape []int
		want  []float64
	}{
		{"float32/10", nd.FromSlice(dev, x32, 5), 10, []int{5}, quot32(x32, 10)},
		{"float32/10-exact", nd.FromSlice(dev, []float32{9, 13}, 2), 10, []int{2}, []float64{float64(float32(0.9)), float64(float32(1.3))}},
		{"float32/0.7", nd.FromSlice(dev, x32, 5), 0.7, []int{5}, quot32(x32, 0.7)},
		{"float32/subnormal", nd.FromSlice(dev, x32, 5), 1e-39, []int{5}, []float64{inf, inf, 0, float64(float32(1e-10) / float32(1e-39)), -inf}},
		{"float32/huge", nd.FromSlice(dev, x32, 5), 1e300, []int{5}, []float64{0, 0, 0, 0, math.Copysign(0, -1)}},
		{"float64/10", nd.FromSlice(dev, []float64{9, 13, -1e-300}, 3), 10, []int{3}, []float64{0.9, 1.3, -1e-301}},
		{"float64/tiny", nd.FromSlice(dev, []float64{1, 1e-300}, 2), 1e-310, []int{2}, []float64{inf, quot64(1e-300, 1e-310)}},
		{"float64/0-d", nd.Full(dev, nd.Float64, 3, []int{}...), 4, []int{}, []float64{0.75}},
		{"float16/10", nd.FromSlice(dev, []nd.F16{nd.F16From(9), nd.F16From(13)}, 2), 10, []int{2},
			[]float64{float64(nd.F16From(float32(9) / 10).Float32()), float64(nd.F16From(float32(13) / 10).Float32())}},
		{"bfloat16/3", nd.FromSlice(dev, []nd.BF16{nd.BF16From(1), nd.BF16From(-2)}, 2), 3, []int{2},
			[]float64{float64(nd.BF16From(float32(1) / 3).Float32()), float64(nd.BF16From(float32(-2) / 3).Float32())}},
		{"int64/2", nd.FromSlice(dev, []int64{7, -7, 0, 6}, 4), 2, []int{4}, []float64{3, -3, 0, 3}},
		{"int64/-3", nd.FromSlice(dev, []int64{7, -7}, 2), -3, []int{2}, []float64{-2, 2}},
		{"int32/2", nd.FromSlice(dev, []int32{7, -7}, 2), 2, []int{2}, []float64{3, -3}},
		{"uint8/4", nd.FromSlice(dev, []uint8{255, 3}, 2), 4, []int{2}, []float64{63, 0}},
		{"empty", nd.Zeros(dev, nd.Float32, 0, 3), 2, []int{0, 3}, []float64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var y *nd.NDArray
			if err := catchAny(func() { y = nd.DivScalar(c.x, c.s) }); err != nil {
				t.Fatal(err)
			}
			if y.DType() != c.x.DType() || !slices.Equal(y.Shape(), c.shape) {
				t.Fatalf("got %v %v, want %v %v", y.DType(), y.Shape(), c.x.DType(), c.shape)
			}
			got := y.Float64s()
			for i := range got {
				if got[i] != c.want[i] || math.Signbit(got[i]) != math.Signbit(c.want[i]) {
					t.Fatalf("values %v, want %v", got, c.want)
				}
			}
		})
	}
}

// TestDivScalarGrad: the gradient of x / s is g / s (computed by division,
// so exact where the forward is).
func TestDivScalarGrad(t *testing.T) {
	dev := ctx.CPU(0)
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		x := nd.FromSlice(dev, []float64{1, -2, 3}, 3).AsType(dt)
		x.AttachGrad(nd.GradWrite)
		nd.DefaultSession().Record(func() {
			nd.Backward([]*nd.NDArray{nd.Sum(nd.Mul(nd.DivScalar(x, 10), nd.FromSlice(dev, []float64{9, 13, -1}, 3).AsType(dt)))}, nil, false)
		})
		want := []float64{9, 13, -1}
		for i := range want {
			if dt == nd.Float32 {
				want[i] = float64(float32(want[i]) / 10)
			} else {
				want[i] /= 10
			}
		}
		if got := x.Grad().Float64s(); !slices.Equal(got, want) {
			t.Errorf("%v: gradient %v, want %v", dt, got, want)
		}
	}
}

// TestDivScalarErrors: invalid scalars fail with an *nd.Error that names
// DivScalar.
func TestDivScalarErrors(t *testing.T) {
	dev := ctx.CPU(0)
	cases := []struct {
		name string
		kind nd.ErrorKind
		want []string
		call func()
	}{
		{"zero", nd.ErrArgument, []string{"nd.DivScalar:", "division by zero"}, func() { nd.DivScalar(nd.Ones(dev, nd.Float32, 2), 0) }},
		{"int fractional", nd.ErrDType, []string{"nd.DivScalar:", "0.5", "int64"}, func() { nd.DivScalar(nd.Ones(dev, nd.Int64, 2), 0.5) }},
		{"int32 out of range", nd.ErrArgument, []string{"nd.DivScalar:", "out of range", "int32"}, func() { nd.DivScalar(nd.Ones(dev, nd.Int32, 2), 1e10) }},
		{"uint8 negative", nd.ErrArgument, []string{"nd.DivScalar:", "out of range", "uint8"}, func() { nd.DivScalar(nd.Ones(dev, nd.Uint8, 2), -1) }},
		{"int NaN", nd.ErrDType, []string{"nd.DivScalar:", "NaN"}, func() { nd.DivScalar(nd.Ones(dev, nd.Int64, 2), math.NaN()) }},
		{"bool", nd.ErrDType, []string{"nd.DivScalar:", "bool"}, func() { nd.DivScalar(nd.Ones(dev, nd.Bool, 2), 2) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := catchAny(c.call)
			var e *nd.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *nd.Error", err)
			}
			if e.Kind != c.kind {
				t.Errorf("kind %v, want %v (%v)", e.Kind, c.kind, e)
			}
			for _, w := range c.want {
				if !strings.Contains(e.Error(), w) {
					t.Errorf("error %q does not contain %q", e.Error(), w)
				}
			}
		})
	}
}
