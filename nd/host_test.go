package nd_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

func TestReadIntoWriteFromConvert(t *testing.T) {
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		a := nd.Zeros(ctx.CPU(1), nd.Float32, 2, 2).AsType(dt)
		a.WriteFrom([]float64{1, 2, 3, 4.5})
		got32 := make([]float32, 4)
		a.ReadInto(got32)
		if !slices.Equal(got32, []float32{1, 2, 3, 4.5}) {
			t.Errorf("%v: read back %v", dt, got32)
		}
		a.WriteFrom([]float32{-1, 0, 1, 2})
		got64 := make([]float64, 4)
		a.ReadInto(got64)
		if !slices.Equal(got64, []float64{-1, 0, 1, 2}) {
			t.Errorf("%v: read back %v", dt, got64)
		}
	}
}

func TestReadIntoWriteFromReject(t *testing.T) {
	a := nd.Zeros(ctx.CPU(0), nd.Float32, 3)
	tests := []struct {
		name string
		f    func()
		kind nd.ErrorKind
	}{
		{"short destination", func() { a.ReadInto(make([]float32, 2)) }, nd.ErrShape},
		{"long source", func() { a.WriteFrom(make([]float64, 4)) }, nd.ErrShape},
		{"wrong type", func() { a.ReadInto(make([]int, 3)) }, nd.ErrArgument},
	}
	for _, tc := range tests {
		err := nd.Catch(tc.f)
		var e *nd.Error
		if !errors.As(err, &e) || e.Kind != tc.kind {
			t.Errorf("%s: %v, want a %v error", tc.name, err, tc.kind)
		}
	}
}
