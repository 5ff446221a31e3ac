package safetensors

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIntRoundTrips(t *testing.T) {
	i64 := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64, 7}
	if got, err := FromInt64([]int{2, 3}, i64).Int64s(); err != nil || !cmp.Equal(got, i64) {
		t.Errorf("I64 round trip = %v, %v", got, err)
	}
	i32 := []int32{math.MinInt32, -5, 0, math.MaxInt32}
	if got, err := FromInt32([]int{4}, i32).Int32s(); err != nil || !cmp.Equal(got, i32) {
		t.Errorf("I32 round trip = %v, %v", got, err)
	}
	u8 := []uint8{0, 1, 200, 255}
	if got, err := FromUint8([]int{2, 2}, u8).Uint8s(); err != nil || !cmp.Equal(got, u8) {
		t.Errorf("U8 round trip = %v, %v", got, err)
	}
	b := []bool{true, false, true}
	if got, err := FromBool([]int{3}, b).Bools(); err != nil || !cmp.Equal(got, b) {
		t.Errorf("BOOL round trip = %v, %v", got, err)
	}
	// Widening is exact; integers convert to floats as well.
	if got, err := FromInt32([]int{2}, []int32{-3, 4}).Int64s(); err != nil || !cmp.Equal(got, []int64{-3, 4}) {
		t.Errorf("I32 as int64 = %v, %v", got, err)
	}
	if got, err := FromBool([]int{2}, []bool{true, false}).Float32s(); err != nil || !cmp.Equal(got, []float32{1, 0}) {
		t.Errorf("BOOL as float32 = %v, %v", got, err)
	}
}

func TestIntErrors(t *testing.T) {
	tests := []struct {
		name string
		f    func() error
		want string
	}{
		{"narrowing out of range", func() error { _, err := FromInt64([]int{1}, []int64{1 << 40}).Int32s(); return err }, "outside"},
		{"negative to uint8", func() error { _, err := FromInt32([]int{1}, []int32{-1}).Uint8s(); return err }, "outside"},
		{"float tensor", func() error { _, err := FromFloat32([]int{1}, []float32{1}).Int64s(); return err }, "not an integer dtype"},
		{"bad bool byte", func() error { _, err := (Tensor{DType: "BOOL", Shape: []int{1}, Data: []byte{2}}).Bools(); return err }, "byte value 2"},
		{"short data", func() error {
			_, err := (Tensor{DType: "I64", Shape: []int{2}, Data: make([]byte, 8)}).Int64s()
			return err
		}, "needs 16 bytes"},
		{"not 0 or 1", func() error { _, err := FromInt64([]int{1}, []int64{3}).Bools(); return err }, "outside"},
	}
	for _, tc := range tests {
		err := tc.f()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
