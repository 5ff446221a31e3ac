package onnx_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
)

// closeTo reports where got differs from want by more than float32
// rounding allows (relative to the largest magnitude), or "".
func closeTo(got, want *nd.NDArray) string {
	if !slices.Equal(got.Shape(), want.Shape()) {
		return fmt.Sprintf("shape %v, want %v", got.Shape(), want.Shape())
	}
	g, w := got.Float64s(), want.Float64s()
	top := 1.0
	for _, v := range w {
		top = math.Max(top, math.Abs(v))
	}
	for i := range w {
		if math.Abs(g[i]-w[i]) > 2e-6*top {
			return fmt.Sprintf("element %d = %g, want %g", i, g[i], w[i])
		}
	}
	return ""
}

// scalarI64 is a 0-d int64 array.
func scalarI64(v int64) *nd.NDArray { return nd.Reshape(nd.FromSlice(ctx.CPU(0), []int64{v}, 1)) }

// TestImportDFT: DFT in its opset-17 (axis attribute) and opset-20 (axis
// input) forms, forward, inverse and one-sided, with dft_length padding
// and truncating, against nd/fft in float32.
func TestImportDFT(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(11)
	real := func(shape ...int) *nd.NDArray { return nd.RandomNormal(dev, nd.Float32, 0, 1, shape...) }
	sig := func(x *nd.NDArray) *nd.NDArray { // [..., 1] → [...]
		s := x.Shape()
		return nd.Reshape(x, s[:len(s)-1]...)
	}
	for _, c := range []struct {
		name   string
		opset  int
		x      *nd.NDArray
		length int64 // 0: no dft_length
		axis   *int64
		attrs  []*onnxpb.AttributeProto
		want   func(x *nd.NDArray) *nd.NDArray
	}{
		{"real", 17, real(2, 6, 1), 0, nil, nil,
			func(x *nd.NDArray) *nd.NDArray { return fft.FFT(fft.Complex(sig(x), nil), 0, 1, "") }},
		{"onesided", 17, real(2, 7, 1), 0, nil, []*onnxpb.AttributeProto{attr("onesided", 1)},
			func(x *nd.NDArray) *nd.NDArray { return fft.RFFT(sig(x), 0, 1, "") }},
		{"inverse", 17, real(2, 5, 2), 0, nil, []*onnxpb.AttributeProto{attr("inverse", 1)},
			func(x *nd.NDArray) *nd.NDArray { return fft.IFFT(x, 0, 1, "") }},
		{"axis-2", 17, real(2, 3, 4, 2), 0, nil, []*onnxpb.AttributeProto{attr("axis", 2)},
			func(x *nd.NDArray) *nd.NDArray { return fft.FFT(x, 0, 2, "") }},
		{"padded", 17, real(2, 5, 1), 8, nil, []*onnxpb.AttributeProto{attr("onesided", 1)},
			func(x *nd.NDArray) *nd.NDArray { return fft.RFFT(sig(x), 8, 1, "") }},
		{"truncated-inverse", 17, real(3, 6, 2), 4, nil, []*onnxpb.AttributeProto{attr("inverse", 1)},
			func(x *nd.NDArray) *nd.NDArray { return fft.IFFT(x, 4, 1, "") }},
		{"opset20-default-axis", 20, real(2, 3, 4, 2), 0, nil, nil,
			func(x *nd.NDArray) *nd.NDArray { return fft.FFT(x, 0, 2, "") }},
		{"opset20-axis-1", 20, real(2, 3, 4, 2), 5, ptr(int64(1)), nil,
			func(x *nd.NDArray) *nd.NDArray { return fft.FFT(x, 5, 1, "") }},
		{"opset20-negative-axis", 20, real(2, 3, 4, 1), 0, ptr(int64(-3)), []*onnxpb.AttributeProto{attr("onesided", 1)},
			func(x *nd.NDArray) *nd.NDArray { return fft.RFFT(sig(x), 0, 1, "") }},
		{"opset20-axis-0", 20, real(3, 4, 2), 0, ptr(int64(0)), []*onnxpb.AttributeProto{attr("inverse", 1)},
			func(x *nd.NDArray) *nd.NDArray { return fft.IFFT(x, 0, 0, "") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			inputs, args := []string{"x"}, []*nd.NDArray{c.x}
			if c.length > 0 || c.axis != nil {
				inputs = append(inputs, "")
				if c.length > 0 {
					inputs[1] = "n"
					args = append(args, scalarI64(c.length))
				}
			}
			if c.axis != nil {
				inputs = append(inputs, "axis")
				args = append(args, scalarI64(*c.axis))
			}
			m, err := nodeModel(t, "DFT", c.opset, inputs, c.attrs...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := run(m, args...)
			if err != nil {
				t.Fatal(err)
			}
			if why := closeTo(got, c.want(c.x)); why != "" {
				t.Error(why)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestImportSTFT: STFT with a window, a frame length or both, one- and
// two-sided, real and complex signals, against nd/fft's STFT without
// centring (and its FFT of the frames for a complex signal).
func TestImportSTFT(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(12)
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 30)
	win := nd.RandomUniform(dev, nd.Float32, 0, 1, 8)
	ref := func(o fft.STFTOpts) *nd.NDArray { // [B, F, T, 2] → [B, T, F, 2]
		o.NoCenter = true
		return nd.SwapAxes(fft.STFT(x, 8, o), 1, 2)
	}
	for _, c := range []struct {
		name   string
		inputs []string
		args   []*nd.NDArray
		attrs  []*onnxpb.AttributeProto
		want   *nd.NDArray
	}{
		{"window", []string{"x", "step", "w"}, []*nd.NDArray{nd.Reshape(x, 2, 30, 1), scalarI64(3), win}, nil,
			ref(fft.STFTOpts{Hop: 3, Window: win})},
		{"frame-length", []string{"x", "step", "", "n"}, []*nd.NDArray{nd.Reshape(x, 2, 30, 1), scalarI64(5), scalarI64(8)}, nil,
			ref(fft.STFTOpts{Hop: 5})},
		{"both-two-sided", []string{"x", "step", "w", "n"}, []*nd.NDArray{nd.Reshape(x, 2, 30, 1), scalarI64(4), win, scalarI64(8)},
			[]*onnxpb.AttributeProto{attr("onesided", 0)}, ref(fft.STFTOpts{Hop: 4, Window: win, TwoSided: true})},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := nodeModel(t, "STFT", 17, c.inputs, c.attrs...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := run(m, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if why := closeTo(got, c.want); why != "" {
				t.Error(why)
			}
		})
	}
	t.Run("complex", func(t *testing.T) {
		z := nd.RandomNormal(dev, nd.Float32, 0, 1, 1, 12, 2)
		m, err := nodeModel(t, "STFT", 17, []string{"x", "step", "w"}, attr("onesided", 0))
		if err != nil {
			t.Fatal(err)
		}
		w := nd.RandomUniform(dev, nd.Float32, 0, 1, 4)
		got, err := run(m, z, scalarI64(4), w)
		if err != nil {
			t.Fatal(err)
		}
		var frames []*nd.NDArray
		for k := range 3 {
			f := nd.SliceAxis(z, 4*k, 4*k+4, 1) // [1, 4, 2]
			frames = append(frames, fft.FFT(nd.Mul(f, nd.Reshape(w, 4, 1)), 0, 1, ""))
		}
		if why := closeTo(got, nd.Stack(frames, 1)); why != "" {
			t.Error(why)
		}
	})
}

// TestImportMelWeightMatrix: a case worked by hand (edges at bins 0, 1,
// 2 and 3 of 5), in float64, and an upper edge past the last bin (odd
// dft_length), whose rows are dropped.
func TestImportMelWeightMatrix(t *testing.T) {
	dev := ctx.CPU(0)
	f32 := func(v float32) *nd.NDArray { return nd.Reshape(nd.FromSlice(dev, []float32{v}, 1)) }
	m, err := nodeModel(t, "MelWeightMatrix", 17, []string{"m", "n", "sr", "lo", "hi"}, attr("output_datatype", 11))
	if err != nil {
		t.Fatal(err)
	}
	got, err := run(m, scalarI64(2), scalarI64(8), scalarI64(8), f32(0), f32(4))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 0, 1, 0, 0, 1, 0, 0, 0, 0}
	if got.DType() != nd.Float64 || !slices.Equal(got.Shape(), []int{5, 2}) || !slices.Equal(got.Float64s(), want) {
		t.Errorf("%v %v %v, want float64 [5 2] %v", got.DType(), got.Shape(), got.Float64s(), want)
	}
	m, err = nodeModel(t, "MelWeightMatrix", 17, []string{"m", "n", "sr", "lo", "hi"})
	if err != nil {
		t.Fatal(err)
	}
	got, err = run(m, scalarI64(4), scalarI64(15), scalarI64(16000), f32(0), f32(8000))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Shape(), []int{8, 4}) {
		t.Errorf("shape %v, want [8 4]", got.Shape())
	}
}

// TestImportFourierErrors: unsupported attribute values fail at load
// with the node and op named; malformed inputs fail at run time with an
// error, not a Go panic.
func TestImportFourierErrors(t *testing.T) {
	dev := ctx.CPU(0)
	for _, c := range []struct {
		op     string
		opset  int
		inputs []string
		attrs  []*onnxpb.AttributeProto
		want   string
	}{
		{"DFT", 17, []string{"x"}, []*onnxpb.AttributeProto{attr("inverse", 1), attr("onesided", 1)}, "inverse 1 with onesided 1"},
		{"DFT", 17, []string{"x"}, []*onnxpb.AttributeProto{attr("inverse", 2)}, "inverse 2"},
		{"DFT", 20, []string{"x"}, []*onnxpb.AttributeProto{attr("axis", 1)}, "axis attribute in opset 20"},
		{"DFT", 17, []string{"x", "", "axis"}, nil, "axis input in opset 17"},
		{"STFT", 17, []string{"x", "step"}, []*onnxpb.AttributeProto{attr("onesided", 3)}, "onesided 3"},
		{"STFT", 17, []string{"x"}, nil, "needs at least 2"},
		{"MelWeightMatrix", 17, []string{"a", "b", "c", "d", "e"}, []*onnxpb.AttributeProto{attr("output_datatype", 7)}, "output_datatype 7"},
	} {
		_, err := nodeModel(t, c.op, c.opset, c.inputs, c.attrs...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.op) {
			t.Errorf("%s %v: %v, want an error with %q", c.op, c.attrs, err, c.want)
		}
	}
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 6, 2)
	for _, c := range []struct {
		op     string
		opset  int
		inputs []string
		attrs  []*onnxpb.AttributeProto
		args   []*nd.NDArray
		want   string
	}{
		{"DFT", 17, []string{"x"}, []*onnxpb.AttributeProto{attr("onesided", 1)}, []*nd.NDArray{x}, "needs a real signal"},
		{"DFT", 17, []string{"x"}, []*onnxpb.AttributeProto{attr("axis", 2)}, []*nd.NDArray{x}, "axis 2"},
		{"DFT", 20, []string{"x", "", "a"}, nil, []*nd.NDArray{x, scalarI64(-1)}, "axis -1"},
		{"DFT", 17, []string{"x", "n"}, nil, []*nd.NDArray{x, scalarI64(0)}, "dft_length 0"},
		{"DFT", 17, []string{"x"}, nil, []*nd.NDArray{nd.Zeros(dev, nd.Float32, 2, 3)}, "1 or 2"},
		{"STFT", 17, []string{"x", "s", "w", "n"}, nil,
			[]*nd.NDArray{nd.Zeros(dev, nd.Float32, 1, 10, 1), scalarI64(2), nd.Zeros(dev, nd.Float32, 4), scalarI64(5)}, "want them equal"},
		{"STFT", 17, []string{"x", "s", "", "n"}, nil,
			[]*nd.NDArray{nd.Zeros(dev, nd.Float32, 1, 10, 1), scalarI64(2), scalarI64(11)}, "frame length 11"},
		{"STFT", 17, []string{"x", "s"}, nil, []*nd.NDArray{nd.Zeros(dev, nd.Float32, 1, 10, 1), scalarI64(2)}, "frame length is unknown"},
		{"STFT", 17, []string{"x", "s", "", "n"}, nil,
			[]*nd.NDArray{nd.Zeros(dev, nd.Float32, 1, 10, 2), scalarI64(2), scalarI64(4)}, "complex signal"},
	} {
		m, err := nodeModel(t, c.op, c.opset, c.inputs, c.attrs...)
		if err != nil {
			t.Errorf("%s %v: load: %v", c.op, c.inputs, err)
			continue
		}
		if _, err := run(m, c.args...); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "Go panic") {
			t.Errorf("%s %v: %v, want an error with %q", c.op, c.inputs, err, c.want)
		}
	}
}
