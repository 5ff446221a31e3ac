package audio

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd/fft"
)

// The Blocks' ONNX forms (gluon.ONNXExporter, opset 17; see
// gluon/onnx.Export). Spectrograms are ONNX's STFT on the centred signal,
// Fourier transforms its DFT, and the filter banks and DCT matrices
// constants multiplied with MatMul, so the signal's length stays free in
// the graph (ExportOpts.FreeAxes) wherever the Block's own options do not
// fix it.

// onnxShape returns the shape value x takes on the example input.
func onnxShape(g gluon.ONNXGraph, x, what string) ([]int, error) {
	sg, ok := g.(gluon.ONNXShapes)
	if !ok {
		return nil, fmt.Errorf("%s needs its input's shape: the ONNX graph does not give shapes (gluon.ONNXShapes)", what)
	}
	return sg.Shape(x)
}

// onnxConst adds float32 constant values of the given shape (none: a
// scalar).
func onnxConst(g gluon.ONNXGraph, v []float64, shape ...int) string {
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return g.Const(f, shape...)
}

// onnxInts adds a one-dimensional int64 constant.
func onnxInts(g gluon.ONNXGraph, v ...int) string {
	w := make([]int64, len(v))
	for i, x := range v {
		w[i] = int64(x)
	}
	return g.Const(w, len(w))
}

// onnxOp appends a node of one output.
func onnxOp(g gluon.ONNXGraph, op string, in []string, attrs map[string]any) string {
	return g.Op(op, in, attrs, 1)[0]
}

// onnxScale multiplies x by s unless s is 1 (within rounding: an
// inverse step's 1/n·n).
func onnxScale(g gluon.ONNXGraph, x string, s float64) string {
	if math.Abs(s-1) < 1e-12 {
		return x
	}
	return onnxOp(g, "Mul", []string{x, onnxConst(g, []float64{s})}, nil)
}

// onnxArith appends x op c for the scalar constant c (Add, Sub, Mul or
// Div), the form of nd's scalar ops.
func onnxArith(g gluon.ONNXGraph, op, x string, c float64) string {
	return onnxOp(g, op, []string{x, onnxConst(g, []float64{c})}, nil)
}

// onnxPadLast pads the last axis of a rank-r value by lo and hi samples
// in ONNX Pad's mode (constant zeros, reflect or edge).
func onnxPadLast(g gluon.ONNXGraph, x string, r, lo, hi int, mode string) string {
	pads := make([]int, 2*r)
	pads[r-1], pads[2*r-1] = lo, hi
	return onnxOp(g, "Pad", []string{x, onnxInts(g, pads...)}, map[string]any{"mode": mode})
}

// onnxCentre writes STFT's centring padding of p samples on both sides of
// the last axis of a rank-r signal, in PadMode mode.
func onnxCentre(g gluon.ONNXGraph, x string, r, p int, mode string) string {
	if p == 0 {
		return x
	}
	switch mode {
	case "", "reflect":
		return onnxPadLast(g, x, r, p, p, "reflect")
	case "replicate":
		return onnxPadLast(g, x, r, p, p, "edge")
	case "circular": // the last p samples, the signal, the first p
		tail := onnxOp(g, "Slice", []string{x, onnxInts(g, -p), onnxInts(g, math.MaxInt64), onnxInts(g, r-1)}, nil)
		head := onnxOp(g, "Slice", []string{x, onnxInts(g, 0), onnxInts(g, p), onnxInts(g, r-1)}, nil)
		return onnxOp(g, "Concat", []string{tail, x, head}, map[string]any{"axis": r - 1})
	}
	return onnxPadLast(g, x, r, p, p, "constant")
}

// onnxMatMulLeft writes m·x for the constant matrix m [rows, cols]
// (row-major values) and x [..., cols, T]: [..., rows, T].
func onnxMatMulLeft(g gluon.ONNXGraph, x string, m []float64, rows, cols int) string {
	return onnxOp(g, "MatMul", []string{onnxConst(g, m, rows, cols), x}, nil)
}

// transposed returns the row-major values of the transpose of the
// matrix v [rows, cols].
func transposed(v []float64, rows, cols int) []float64 {
	t := make([]float64, len(v))
	for i := range rows {
		for j := range cols {
			t[j*rows+i] = v[i*cols+j]
		}
	}
	return t
}

// ExportONNX writes the spectrogram: the padding, the centring padding,
// ONNX's STFT of the signals flattened to [B, L, 1] with the window padded
// to NFFT points (two-sided, then cut to NFFT/2+1 bins unless TwoSided),
// its frames and bins swapped back to [..., F, T, 2], the
// normalisation, and the power of the magnitude (ReduceSumSquare over the
// pair, then Sqrt or Pow) unless Complex.
func (s *Spectrogram) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	shape, err := onnxShape(g, x, "Spectrogram")
	if err != nil {
		return "", err
	}
	r, o := len(shape), s.o
	if r < 1 {
		return "", fmt.Errorf("spectrogram of a scalar input")
	}
	y := x
	if o.Pad > 0 {
		y = onnxPadLast(g, y, r, o.Pad, o.Pad, "constant")
	}
	if !o.NoCenter {
		y = onnxCentre(g, y, r, o.NFFT/2, o.PadMode)
	}
	y = onnxOp(g, "Flatten", []string{y}, map[string]any{"axis": r - 1})
	y = onnxOp(g, "Reshape", []string{y, onnxInts(g, 0, -1, 1)}, nil)
	win := make([]float64, o.NFFT)
	copy(win[(o.NFFT-o.WinLength)/2:], s.window.values)
	// A two-sided STFT, cut to the one-sided bins: ONNX 1.12's shape
	// inference gets a one-sided STFT's number of frames wrong (it takes
	// the bins for the frame length), and the checker then refuses a
	// graph of a fixed signal length.
	y = onnxOp(g, "STFT", []string{y, g.Const([]int64{int64(o.HopLength)}), onnxConst(g, win, o.NFFT), g.Const([]int64{int64(o.NFFT)})},
		map[string]any{"onesided": 0})
	f := s.Bins()
	if !o.TwoSided {
		y = onnxOp(g, "Slice", []string{y, onnxInts(g, 0), onnxInts(g, f), onnxInts(g, 2)}, nil)
	}
	y = onnxOp(g, "Transpose", []string{y}, map[string]any{"perm": []int{0, 2, 1, 3}}) // [B, F, T, 2]
	switch r {
	case 1:
		y = onnxOp(g, "Reshape", []string{y, onnxInts(g, f, -1, 2)}, nil)
	case 2: // B is the one leading axis
	default:
		lead := onnxOp(g, "Shape", []string{x}, map[string]any{"end": r - 1})
		to := onnxOp(g, "Concat", []string{lead, onnxInts(g, f, -1, 2)}, map[string]any{"axis": 0})
		y = onnxOp(g, "Reshape", []string{y, to}, nil)
	}
	switch o.Normalized {
	case NormFrameLength:
		y = onnxScale(g, y, 1/math.Sqrt(float64(o.NFFT)))
	case NormWindow:
		y = onnxScale(g, y, 1/s.wnorm)
	}
	if o.Complex {
		return y, nil
	}
	y = onnxOp(g, "ReduceSumSquare", []string{y}, map[string]any{"axes": []int{-1}, "keepdims": 0})
	switch o.Power {
	case 2:
		return y, nil
	case 1:
		return onnxOp(g, "Sqrt", []string{y}, nil), nil
	}
	return onnxOp(g, "Pow", []string{y, onnxConst(g, []float64{o.Power / 2})}, nil), nil
}

// ExportONNX writes the mel projection: the transposed filter bank
// [NMels, F] times the spectrogram [..., F, T].
func (m *MelScale) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return onnxMatMulLeft(g, x, transposed(m.fb.values, m.nStft, m.o.NMels), m.o.NMels, m.nStft), nil
}

// ExportONNX writes the Spectrogram's form and the MelScale's.
func (m *MelSpectrogram) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := g.Block(m.Spectrogram, x)
	if err != nil {
		return "", err
	}
	return g.Block(m.MelScale, y)
}

// ExportONNX writes the conversion to decibels: Max with 10⁻¹⁰, Log
// scaled to m·log₁₀, and with a TopDB the floor below the maximum over
// the last three axes (two for a 2-D input).
func (a *AmplitudeToDB) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	var axes []int
	if a.o.floored() {
		shape, err := onnxShape(g, x, "AmplitudeToDB")
		if err != nil {
			return "", err
		}
		switch r := len(shape); {
		case r < 2:
			return "", fmt.Errorf("a top dB floor needs a spectrogram of at least 2 axes, got shape %v", shape)
		case r == 2:
			axes = []int{0, 1}
		default:
			axes = []int{r - 3, r - 2, r - 1}
		}
	}
	mult := 10.0
	if a.o.SType == Magnitude {
		mult = 20
	}
	y := onnxOp(g, "Max", []string{x, onnxConst(g, []float64{dbAmin})}, nil)
	y = onnxScale(g, onnxOp(g, "Log", []string{y}, nil), mult/math.Ln10)
	if axes == nil {
		return y, nil
	}
	top := onnxOp(g, "ReduceMax", []string{y}, map[string]any{"axes": axes, "keepdims": 1})
	floor := onnxOp(g, "Sub", []string{top, onnxConst(g, []float64{a.o.TopDB})}, nil)
	return onnxOp(g, "Max", []string{y, floor}, nil), nil
}

// ExportONNX writes the mel spectrogram, its decibels (or logarithm with
// LogMels) and the transposed DCT matrix [NMFCC, NMels] times it.
func (m *MFCC) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	mel, err := g.Block(m.MelSpectrogram, x)
	if err != nil {
		return "", err
	}
	if m.o.LogMels {
		mel = onnxOp(g, "Log", []string{onnxOp(g, "Add", []string{mel, onnxConst(g, []float64{1e-6})}, nil)}, nil)
	} else if mel, err = g.Block(m.AmplitudeToDB, mel); err != nil {
		return "", err
	}
	return onnxMatMulLeft(g, mel, transposed(m.dct.values, m.o.Mel.NMels, m.o.NMFCC), m.o.NMFCC, m.o.Mel.NMels), nil
}

// onnxSteps writes the one-dimensional transforms steps (fft.Spec.Steps)
// on x of shape shape (a trailing pair axis when complex) as DFT nodes,
// and returns the result. A Sized step pads or truncates its axis to its
// length whatever the input's; another only where the example's length
// differs from it.
func onnxSteps(g gluon.ONNXGraph, x string, shape []int, steps []fft.Step) string {
	shape = append([]int(nil), shape...)
	for _, st := range steps {
		x, shape = onnxStep(g, x, shape, st)
	}
	return x
}

// onnxStep writes one step on x of shape shape and returns the result and
// its shape. DFT's axis 0 is the batch axis in opset 17: a step along
// axis 0 runs on the value with an axis of 1 put in front.
func onnxStep(g gluon.ONNXGraph, x string, shape []int, st fft.Step) (string, []int) {
	if st.Axis == 0 {
		x = onnxOp(g, "Unsqueeze", []string{x, onnxInts(g, 0)}, nil)
		st.Axis = 1
		y, s := onnxStep(g, x, append([]int{1}, shape...), st)
		return onnxOp(g, "Squeeze", []string{y, onnxInts(g, 0)}, nil), s[1:]
	}
	ax, n := st.Axis, st.N
	dft := func(in string, inverse int, onesided int, have int) string {
		ins := []string{in}
		if st.Sized || have != n {
			ins = append(ins, g.Const([]int64{int64(n)}))
		}
		return onnxOp(g, "DFT", ins, map[string]any{"axis": ax, "inverse": inverse, "onesided": onesided})
	}
	out := append([]int(nil), shape...)
	switch st.Kind {
	case fft.KindRFFT: // a real signal: a trailing axis of 1, a one-sided DFT
		r := len(shape)
		y := onnxOp(g, "Unsqueeze", []string{x, onnxInts(g, r)}, nil)
		out[ax] = n/2 + 1
		return onnxScale(g, dft(y, 0, 1, shape[ax]), st.Scale), append(out, 2)
	case fft.KindFFT:
		out[ax] = n
		return onnxScale(g, dft(x, 0, 0, shape[ax]), st.Scale), out
	case fft.KindIFFT: // DFT's inverse divides by n itself
		out[ax] = n
		return onnxScale(g, dft(x, 1, 0, shape[ax]), st.Scale*float64(n)), out
	}
	// KindIRFFT: the half spectrum cut or padded to n/2+1 bins, extended
	// by the conjugates of bins n−h … 1 in reverse, the inverse DFT's real
	// part. The imaginary parts of bin 0 and (even n) bin n/2 only reach
	// the imaginary part, as IRFFT ignores them.
	r, h := len(shape), n/2+1
	switch m := shape[ax]; {
	case st.Sized: // zeros past the end, then the first h bins
		pads := make([]int, 2*r)
		pads[r+ax] = h
		x = onnxOp(g, "Pad", []string{x, onnxInts(g, pads...)}, nil)
		x = onnxOp(g, "Slice", []string{x, onnxInts(g, 0), onnxInts(g, h), onnxInts(g, ax)}, nil)
	case m > h:
		x = onnxOp(g, "Slice", []string{x, onnxInts(g, 0), onnxInts(g, h), onnxInts(g, ax)}, nil)
	case m < h:
		pads := make([]int, 2*r)
		pads[r+ax] = h - m
		x = onnxOp(g, "Pad", []string{x, onnxInts(g, pads...)}, nil)
	}
	full := x
	if n-h > 0 { // bins n−h … 1, counted from the end so that h stays free
		mirror := onnxOp(g, "Slice", []string{x, onnxInts(g, n-2*h), onnxInts(g, 0), onnxInts(g, ax), onnxInts(g, -1)}, nil)
		mirror = onnxOp(g, "Mul", []string{mirror, onnxConst(g, []float64{1, -1}, 2)}, nil)
		full = onnxOp(g, "Concat", []string{x, mirror}, map[string]any{"axis": ax})
	}
	y := onnxOp(g, "DFT", []string{full}, map[string]any{"axis": ax, "inverse": 1, "onesided": 0})
	y = onnxOp(g, "Gather", []string{y, g.Const([]int64{0})}, map[string]any{"axis": r - 1})
	out = out[:r-1]
	out[ax] = n
	return onnxScale(g, y, st.Scale*float64(n)), out
}
