package fft_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestSpec: Apply is the N-dimensional transform of its kind, and Steps
// lists the one-dimensional transforms it performs, in order, with their
// axes, lengths, scales and whether a length was given.
func TestSpec(t *testing.T) {
	dev := ctx.CPU(0)
	z := ndtest.Rand(dev, 3, -1, 1, 2, 4, 6, 2)
	x := ndtest.Rand(dev, 4, -1, 1, 2, 4, 6)
	for _, c := range []struct {
		name  string
		sp    fft.Spec
		in    *nd.NDArray
		want  *nd.NDArray
		steps []fft.Step
	}{
		{"fft-default", fft.Spec{}, z, fft.FFTN(z, nil, nil, ""), []fft.Step{
			{Kind: fft.KindFFT, Axis: 0, N: 2, Scale: 1}, {Kind: fft.KindFFT, Axis: 1, N: 4, Scale: 1}, {Kind: fft.KindFFT, Axis: 2, N: 6, Scale: 1}}},
		{"ifft-last-padded", fft.Spec{Kind: fft.KindIFFT, S: []int{8}, Dims: []int{-1}}, z, fft.IFFT(z, 8, -1, ""), []fft.Step{
			{Kind: fft.KindIFFT, Axis: 2, N: 8, Scale: 1.0 / 8, Sized: true}}},
		{"rfft2-ortho", fft.Spec{Kind: fft.KindRFFT, Dims: []int{-2, -1}, Norm: fft.Ortho}, x, fft.RFFT2(x, nil, nil, fft.Ortho), []fft.Step{
			{Kind: fft.KindRFFT, Axis: 2, N: 6, Scale: 1 / math.Sqrt(6)}, {Kind: fft.KindFFT, Axis: 1, N: 4, Scale: 0.5}}},
		{"irfft2-sized", fft.Spec{Kind: fft.KindIRFFT, S: []int{0, 7}, Dims: []int{1, 2}, Norm: fft.Forward}, z,
			fft.IRFFT2(z, []int{0, 7}, []int{1, 2}, fft.Forward), []fft.Step{
				{Kind: fft.KindIFFT, Axis: 1, N: 4, Scale: 1}, {Kind: fft.KindIRFFT, Axis: 2, N: 7, Scale: 1, Sized: true}}},
		{"irfft-default-length", fft.Spec{Kind: fft.KindIRFFT, Dims: []int{-1}}, z, fft.IRFFT(z, 0, -1, ""), []fft.Step{
			{Kind: fft.KindIRFFT, Axis: 2, N: 10, Scale: 0.1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			closeTo(t, "Apply", c.sp.Apply(c.in), c.want, 1e-12)
			if got := c.sp.Steps(c.in.Shape()); !slices.Equal(got, c.steps) {
				t.Errorf("Steps = %+v, want %+v", got, c.steps)
			}
		})
	}
}

// TestSpecErrors: an unknown kind, a real shape for a complex kind and
// an axis out of range panic with an *nd.Error.
func TestSpecErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		sp    fft.Spec
		shape []int
	}{
		{"kind", fft.Spec{Kind: "dct"}, []int{4, 2}},
		{"no-pair", fft.Spec{Kind: fft.KindIFFT}, []int{4, 3}},
		{"scalar", fft.Spec{Kind: fft.KindRFFT}, nil},
		{"axis", fft.Spec{Kind: fft.KindRFFT, Dims: []int{2}}, []int{4, 3}},
		{"norm", fft.Spec{Norm: "unitary"}, []int{4, 2}},
	} {
		err := nd.Catch(func() { c.sp.Steps(c.shape) })
		var ne *nd.Error
		if !errors.As(err, &ne) {
			t.Errorf("%s: %v, want an *nd.Error", c.name, err)
		}
	}
}
