package fft_test

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
	"github.com/goluon/goluon/nd/ndtest"
)

// closeTo fails unless got and want have one shape and values within tol
// relative to 1+|want|.
func closeTo(t *testing.T, what string, got, want *nd.NDArray, tol float64) {
	t.Helper()
	if !slices.Equal(got.Shape(), want.Shape()) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), want.Shape())
	}
	w := want.Float64s()
	for i, g := range got.Float64s() {
		if d := math.Abs(g - w[i]); !(d <= tol*(1+math.Abs(w[i]))) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, g, w[i])
		}
	}
}

// TestRoundTrips: each inverse undoes its transform, for even, odd,
// prime (FFTPACK and Bluestein) lengths, in every norm, and on batches
// large enough to be split among goroutines.
func TestRoundTrips(t *testing.T) {
	dev := ctx.CPU(0)
	for _, n := range []int{1, 2, 7, 12, 61, 64, 97, 1000, 4099} {
		for _, norm := range []fft.Norm{"", fft.Ortho, fft.Forward} {
			t.Run(fmt.Sprint(n, norm), func(t *testing.T) {
				batch := max(1, 40000/n)
				z := ndtest.Rand(dev, uint64(n), -1, 1, batch, n, 2)
				x := ndtest.Rand(dev, uint64(n)+1, -1, 1, batch, n)
				closeTo(t, "IFFT(FFT)", fft.IFFT(fft.FFT(z, 0, -1, norm), 0, -1, norm), z, 1e-12)
				closeTo(t, "FFT(IFFT)", fft.FFT(fft.IFFT(z, 0, -1, norm), 0, -1, norm), z, 1e-12)
				closeTo(t, "IRFFT(RFFT)", fft.IRFFT(fft.RFFT(x, 0, -1, norm), n, -1, norm), x, 1e-12)
				closeTo(t, "HFFT(IHFFT)", fft.HFFT(fft.IHFFT(x, 0, -1, norm), n, -1, norm), x, 1e-12)
				xt := nd.SwapAxes(x, 0, 1) // along a leading axis
				closeTo(t, "IRFFT(RFFT) dim 0", fft.IRFFT(fft.RFFT(xt, 0, 0, norm), n, 0, norm), xt, 1e-12)
			})
		}
	}
	z := ndtest.Rand(dev, 9, -1, 1, 3, 5, 4, 2)
	closeTo(t, "IFFTN(FFTN)", fft.IFFTN(fft.FFTN(z, nil, nil, ""), nil, nil, ""), z, 1e-12)
	x := ndtest.Rand(dev, 10, -1, 1, 3, 5, 7)
	closeTo(t, "IRFFTN(RFFTN)", fft.IRFFTN(fft.RFFTN(x, nil, nil, fft.Ortho), []int{3, 5, 7}, nil, fft.Ortho), x, 1e-12)
	closeTo(t, "HFFT2(IHFFT2)", fft.HFFT2(fft.IHFFT2(x, nil, nil, ""), []int{5, 7}, nil, ""), x, 1e-12)
}

// TestSerialSameAsParallel: splitting the lines among goroutines does not
// change a bit of the result.
func TestSerialSameAsParallel(t *testing.T) {
	dev := ctx.CPU(0)
	z := ndtest.Rand(dev, 11, -1, 1, 300, 67, 2)
	par := fft.FFT2(z, nil, []int{0, 1}, fft.Ortho).Float64s()
	release := nd.DedicateCores(runtime.GOMAXPROCS(0))
	ser := fft.FFT2(z, nil, []int{0, 1}, fft.Ortho).Float64s()
	release()
	if !slices.Equal(par, ser) {
		t.Error("the parallel and serial transforms differ")
	}
}

// TestSTFTRoundTrip: ISTFT inverts STFT with the same options.
func TestSTFTRoundTrip(t *testing.T) {
	dev := ctx.CPU(0)
	x := ndtest.Rand(dev, 12, -1, 1, 2, 3, 101)
	n := 32
	hann := make([]float64, n)
	for i := range hann {
		hann[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n))
	}
	for _, o := range []fft.STFTOpts{
		{Window: nd.FromSlice(dev, hann), Length: 101},
		{Hop: 5, WinLength: 20, Normalized: true, PadMode: "constant", Length: 101},
		{Hop: 16, NoCenter: true, TwoSided: true},
	} {
		s := fft.STFT(x, n, o)
		y := fft.ISTFT(s, n, o)
		want := x
		if o.Length == 0 {
			want = nd.SliceAxis(x, 0, y.Shape()[2], -1)
		}
		closeTo(t, fmt.Sprintf("%+v", o), y, want, 1e-12)
	}
}

// TestParseval: an orthonormal transform keeps the sum of squares.
func TestParseval(t *testing.T) {
	dev := ctx.CPU(0)
	z := ndtest.Rand(dev, 3, -1, 1, 4, 13, 2)
	energy := func(a *nd.NDArray) float64 { return nd.Sum(nd.Mul(a, a)).Scalar() }
	if a, b := energy(z), energy(fft.FFT(z, 0, -1, fft.Ortho)); math.Abs(a-b) > 1e-12*a {
		t.Errorf("sum of squares %v, after the transform %v", a, b)
	}
}

// TestDTypes: results keep the input's dtype; half dtypes are computed
// in float64 and rounded.
func TestDTypes(t *testing.T) {
	dev := ctx.CPU(0)
	z := ndtest.Rand(dev, 4, -1, 1, 2, 8, 2)
	want := fft.FFT(z, 0, -1, "")
	for _, dt := range []nd.DType{nd.Float32, nd.Float16, nd.BFloat16} {
		got := fft.FFT(z.AsType(dt), 0, -1, "")
		if got.DType() != dt {
			t.Fatalf("%v input gave a %v result", dt, got.DType())
		}
		tol := map[nd.DType]float64{nd.Float32: 1e-6, nd.Float16: 4e-3, nd.BFloat16: 3e-2}[dt]
		closeTo(t, dt.String(), got.AsType(nd.Float64), want, tol)
	}
}

// TestEmpty: an empty batch gives an empty result; FFTN over no axes is
// a copy.
func TestEmpty(t *testing.T) {
	dev := ctx.CPU(0)
	z := nd.Zeros(dev, nd.Float32, 0, 5, 2)
	if got := fft.FFT(z, 8, -1, "").Shape(); !slices.Equal(got, []int{0, 8, 2}) {
		t.Errorf("FFT of an empty batch: shape %v", got)
	}
	if got := fft.RFFT(nd.Zeros(dev, nd.Float64, 3, 0, 6), 0, -1, "").Shape(); !slices.Equal(got, []int{3, 0, 4, 2}) {
		t.Errorf("RFFT of an empty batch: shape %v", got)
	}
	y := ndtest.Rand(dev, 5, -1, 1, 3, 2)
	closeTo(t, "FFTN over no axes", fft.FFTN(y, nil, []int{}, ""), y, 0)
}

// TestErrors: bad arguments are *nd.Error values of the right kind that
// name the op.
func TestErrors(t *testing.T) {
	dev := ctx.CPU(0)
	z := nd.Zeros(dev, nd.Float64, 3, 4, 2)
	x := nd.Zeros(dev, nd.Float64, 3, 4)
	cases := []struct {
		name string
		kind nd.ErrorKind
		f    func()
		says string
	}{
		{"no pair axis", nd.ErrShape, func() { fft.FFT(x, 0, -1, "") }, "fft.FFT"},
		{"pair axis of 3", nd.ErrShape, func() { fft.IFFT(nd.Zeros(dev, nd.Float64, 4, 3), 0, -1, "") }, "trailing axis of 2"},
		{"pair alone", nd.ErrShape, func() { fft.FFT(nd.Zeros(dev, nd.Float64, 2), 0, -1, "") }, "got shape [2]"},
		{"scalar", nd.ErrShape, func() { fft.RFFT(nd.Reshape(nd.Scalar(dev, nd.Float64, 1)), 0, -1, "") }, "scalar"},
		{"negative n", nd.ErrArgument, func() { fft.FFT(z, -1, -1, "") }, "invalid length -1"},
		{"irfft of one bin", nd.ErrArgument, func() { fft.IRFFT(nd.Zeros(dev, nd.Float64, 1, 2), 0, -1, "") }, "invalid length 0"},
		{"s of zero points", nd.ErrArgument, func() { fft.FFTN(z, []int{-2}, nil, "") }, "invalid length -2"},
		{"dim", nd.ErrArgument, func() { fft.FFT(z, 0, 2, "") }, "dim 2 out of range"},
		{"negative dim", nd.ErrArgument, func() { fft.RFFT(x, 0, -3, "") }, "dim -3 out of range"},
		{"repeated dims", nd.ErrArgument, func() { fft.FFT2(z, nil, []int{0, -2}, "") }, "repeat axis 0"},
		{"lengths and dims", nd.ErrArgument, func() { fft.FFTN(z, []int{4}, []int{0, 1}, "") }, "1 lengths for 2 axes"},
		{"too many lengths", nd.ErrArgument, func() { fft.RFFTN(x, []int{1, 2, 3}, nil, "") }, "3 lengths"},
		{"no axes", nd.ErrArgument, func() { fft.RFFTN(x, nil, []int{}, "") }, "at least one axis"},
		{"integer", nd.ErrDType, func() { fft.RFFT(nd.FromSlice(dev, []int{1, 2}), 0, -1, "") }, "floating-point"},
		{"norm", nd.ErrArgument, func() { fft.FFT(z, 0, -1, "unitary") }, `norm "unitary"`},
		{"norm without axes", nd.ErrArgument, func() { fft.FFTN(z, nil, []int{}, "Ortho") }, "norm"},
		{"nil", nd.ErrArgument, func() { fft.HFFT(nil, 0, -1, "") }, "nil"},
		{"Complex shapes", nd.ErrShape, func() { fft.Complex(x, nd.Zeros(dev, nd.Float64, 4)) }, "fft.Complex"},
		{"Real of a real array", nd.ErrShape, func() { fft.Real(x) }, "fft.Real"},
		{"Abs of a real array", nd.ErrShape, func() { fft.Abs(x) }, "fft.Abs"},
		{"FFTFreq dtype", nd.ErrDType, func() { fft.FFTFreq(dev, nd.Int64, 4, 1) }, "fft.FFTFreq"},
		{"FFTFreq length", nd.ErrArgument, func() { fft.RFFTFreq(dev, nd.Float32, -1, 1) }, "negative length"},
		{"FFTShift axis", nd.ErrArgument, func() { fft.FFTShift(x, 2) }, "axis 2 out of range"},
		{"ComplexFFTShift of a real array", nd.ErrShape, func() { fft.ComplexFFTShift(x) }, "fft.ComplexFFTShift"},
		{"ComplexIFFTShift pair axis", nd.ErrArgument, func() { fft.ComplexIFFTShift(z, 2) }, "axis 2 out of range for a complex signal"},
		{"STFT hop", nd.ErrArgument, func() { fft.STFT(x, 3, fft.STFTOpts{}) }, "set Hop"},
		{"STFT nFFT", nd.ErrArgument, func() { fft.STFT(x, 9, fft.STFTOpts{NoCenter: true}) }, "longer than the signal"},
		{"STFT reflect", nd.ErrArgument, func() { fft.STFT(x, 8, fft.STFTOpts{}) }, "reflect padding of 4"},
		{"STFT pad mode", nd.ErrArgument, func() { fft.STFT(x, 4, fft.STFTOpts{PadMode: "edge"}) }, `pad mode "edge"`},
		{"STFT window", nd.ErrShape, func() { fft.STFT(x, 4, fft.STFTOpts{Window: nd.Ones(dev, nd.Float64, 3), WinLength: 4}) }, "want [4]"},
		{"STFT window dtype", nd.ErrDType, func() { fft.STFT(x, 4, fft.STFTOpts{Window: nd.Ones(dev, nd.Float32, 4)}) }, "window of float32"},
		{"STFT window length", nd.ErrArgument, func() { fft.STFT(x, 2, fft.STFTOpts{Hop: 1, WinLength: 3}) }, "window length 3"},
		{"ISTFT bins", nd.ErrShape, func() { fft.ISTFT(z, 8, fft.STFTOpts{}) }, "3 frequency bins"},
		{"ISTFT NOLA", nd.ErrArgument, func() {
			fft.ISTFT(nd.Ones(dev, nd.Float64, 3, 5, 2), 4, fft.STFTOpts{Window: nd.FromSlice(dev, []float64{0, 1, 1, 0}), NoCenter: true})
		}, "NOLA"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := nd.Catch(c.f)
			var e *nd.Error
			if !errors.As(err, &e) {
				t.Fatalf("%v, want an *nd.Error", err)
			}
			if e.Kind != c.kind || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%v (%v), want a %v saying %q", err, e.Kind, c.kind, c.says)
			}
		})
	}
}

// BenchmarkFFT transforms 64 complex signals of 4096 points, and of 4099
// (a prime, through Bluestein's algorithm).
func BenchmarkFFT(b *testing.B) {
	dev := ctx.CPU(0)
	for _, n := range []int{4096, 4099} {
		z := ndtest.Rand(dev, 1, -1, 1, 64, n, 2).AsType(nd.Float32)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				fft.FFT(z, 0, -1, "").Release()
			}
			b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "signals/s")
		})
	}
}
