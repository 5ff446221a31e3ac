package gluon_test

import (
	"math"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

func TestClipGlobalNorm(t *testing.T) {
	mk := func() []*nd.NDArray {
		return []*nd.NDArray{
			nd.FromSlice(ctx.CPU(0), []float32{3, 0, -4}),
			nd.FromSlice(ctx.CPU(1), []float64{0, 12}), // another context and dtype
		}
	}
	// ‖(3, 0, −4, 0, 12)‖ = 13
	for _, tc := range []struct {
		name    string
		max     float64
		clipped bool
	}{{"clipped", 6.5, true}, {"below", 20, false}, {"equal (scaled by 13/(13+1e-8), as Gluon)", 13, true}} {
		arrs := mk()
		norm, err := gluon.ClipGlobalNorm(arrs, tc.max)
		if err != nil || norm != 13 {
			t.Fatalf("%s: norm %v, err %v; want 13", tc.name, norm, err)
		}
		scale := 1.0
		if tc.clipped {
			scale = tc.max / (13 + 1e-8)
		}
		got0, got1 := arrs[0].Float64s(), arrs[1].Float64s()
		want0, want1 := []float64{3 * scale, 0, -4 * scale}, []float64{0, 12 * scale}
		for i := range want0 {
			if math.Abs(got0[i]-want0[i]) > 1e-6 {
				t.Errorf("%s: array 0 is %v, want %v", tc.name, got0, want0)
			}
		}
		for i := range want1 {
			if math.Abs(got1[i]-want1[i]) > 1e-12 {
				t.Errorf("%s: array 1 is %v, want %v", tc.name, got1, want1)
			}
		}
	}
	nan := []*nd.NDArray{nd.FromSlice(ctx.CPU(0), []float32{1, float32(math.NaN())})}
	if _, err := gluon.ClipGlobalNorm(nan, 1); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN gradient: err %v", err)
	}
	if v := nan[0].Float32s()[0]; v != 1 {
		t.Errorf("a failed clip changed the array: %v", v)
	}
	if _, err := gluon.ClipGlobalNorm(mk(), 0); err == nil {
		t.Error("max norm 0 accepted")
	}
}

// TestClipGlobalNormHalf: half-precision gradients are squared and summed
// in float32, so a norm beyond float16's range is measured and clipped
// (it used to overflow to +Inf and leave the gradients alone).
func TestClipGlobalNormHalf(t *testing.T) {
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		g := nd.Ones(ctx.CPU(0), dt, 100000)
		norm, err := gluon.ClipGlobalNorm([]*nd.NDArray{g}, 1)
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		if want := math.Sqrt(100000); math.Abs(norm-want) > 1e-3*want {
			t.Errorf("%v: norm %v, want %v", dt, norm, want)
		}
		if v := g.AsType(nd.Float32).Float32s()[0]; math.Abs(float64(v)-1/math.Sqrt(100000)) > 1e-2/math.Sqrt(100000) {
			t.Errorf("%v: clipped value %v, want about %v", dt, v, 1/math.Sqrt(100000))
		}
	}
}
