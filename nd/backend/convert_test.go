package backend

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConvertHost: same-type conversions (a plain copy) and the converting
// ones give what element-wise conversion gives; truth values stay 0/1;
// a destination shorter than the source panics, same type or not.
func TestConvertHost(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name   string
		dst    any
		toBool bool
		src    any
		want   any
	}{
		{"float32 copy", make([]float32, 4), false, []float32{1.5, -2, nan, 0}, []float32{1.5, -2, nan, 0}},
		{"float64 copy into a longer dst", []float64{9, 9, 9}, false, []float64{1, 2}, []float64{1, 2, 9}},
		{"int64 copy", make([]int64, 2), false, []int64{-3, 1 << 40}, []int64{-3, 1 << 40}},
		{"int32 copy", make([]int32, 2), false, []int32{-3, 7}, []int32{-3, 7}},
		{"uint8 copy", make([]uint8, 3), false, []uint8{0, 2, 255}, []uint8{0, 2, 255}},
		{"uint8 truth values", make([]uint8, 3), true, []uint8{0, 2, 255}, []uint8{0, 1, 1}},
		{"float32 to int64 truncates", make([]int64, 3), false, []float32{1.9, -1.9, nan}, []int64{1, -1, 0}},
		{"float16 copy", make([]F16, 2), false, []F16{F16From(1.5), F16From(-2)}, []F16{F16From(1.5), F16From(-2)}},
		{"bfloat16 copy", make([]BF16, 2), false, []BF16{BF16From(1.5), BF16From(-2)}, []BF16{BF16From(1.5), BF16From(-2)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ConvertHost(c.dst, c.toBool, c.src)
			if d := cmp.Diff(c.want, c.dst, cmp.Comparer(func(a, b float32) bool { return a == b || a != a && b != b })); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	for _, src := range []any{[]float32{1, 2}, []float64{1, 2}, []int64{1, 2}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%T into a shorter destination did not panic", src)
				}
			}()
			ConvertHost(make([]float32, 1), false, src)
		}()
	}
}
