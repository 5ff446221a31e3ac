package onnx

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/fft"
)

// The Fourier ops of opset 17 (DFT also in its opset-20 form), computed
// by nd/fft: complex values are a trailing axis of 2 (real, imaginary),
// ONNX's layout and nd/fft's, and a real signal ends in an axis of 1.

var fourierOps = map[string]opFunc{
	"DFT":             opDFT,
	"STFT":            opSTFT,
	"MelWeightMatrix": opMelWeightMatrix,
}

// checkFourier rejects at load the attribute values of DFT, STFT and
// MelWeightMatrix that the importer does not support: inverse and
// onesided other than 0 and 1, an inverse one-sided DFT (whose input and
// output layouts opset 17 leaves undefined), DFT's axis attribute in
// opset 20 and later (an input there) and a non-floating-point
// MelWeightMatrix.
func checkFourier(n *onnxpb.NodeProto, a attrs, opset int) error {
	name, op := n.GetName(), n.GetOpType()
	for _, k := range []string{"inverse", "onesided"} {
		if v := a.int(k, 0); v != 0 && v != 1 {
			return fmt.Errorf("node %q (%s): %s %d: want 0 or 1", name, op, k, v)
		}
	}
	switch op {
	case "DFT":
		if a.int("inverse", 0) == 1 && a.int("onesided", 0) == 1 {
			return fmt.Errorf("node %q (DFT): inverse 1 with onesided 1 is not supported (a one-sided inverse DFT; use onesided 0 on the full spectrum)", name)
		}
		if _, ok := a["axis"]; ok && opset >= 20 {
			return fmt.Errorf("node %q (DFT): an axis attribute in opset %d: from opset 20 the axis is DFT's third input", name, opset)
		}
		if len(n.GetInput()) > 2 && n.GetInput()[2] != "" && opset < 20 {
			return fmt.Errorf("node %q (DFT): an axis input in opset %d: before opset 20 the axis is an attribute", name, opset)
		}
	case "MelWeightMatrix":
		dt, err := dtypeOf(int64(a.int("output_datatype", 1)))
		if err != nil || !dt.IsFloat() {
			return fmt.Errorf("node %q (MelWeightMatrix): output_datatype %d is not a floating-point type nd has", name, a.int("output_datatype", 1))
		}
	}
	return nil
}

// intInput reads input i, a one-element integer (or float) tensor; def
// when it is omitted.
func (n *node) intInput(in []*nd.NDArray, i int, what string, def int) int {
	if i >= len(in) || in[i] == nil {
		return def
	}
	if in[i].Size() != 1 {
		n.fail("%s (input %d) of shape %v: want a scalar", what, i, in[i].Shape())
	}
	return int(in[i].AsType(nd.Int64).Int64s()[0])
}

// opDFT is DFT: a forward or inverse (divided by the length) transform
// of x [batch, signal..., 1 or 2] along axis (opset 17: attribute,
// default 1; opset 20: input 2, default −2; negative counts from the
// back), of dft_length points (input 1; default the axis's length: the
// signal is padded with zeros or truncated to it), all of them or, with
// onesided and a real input, the length/2+1 non-negative frequencies.
func opDFT(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	s := x.Shape()
	r := len(s)
	if r < 2 || (s[r-1] != 1 && s[r-1] != 2) {
		n.fail("input of shape %v: want [batch, signal..., 1 or 2] (real, or real and imaginary parts)", s)
	}
	axis := n.a.int("axis", 1)
	if n.opset >= 20 {
		axis = n.intInput(in, 2, "axis", -2)
	}
	if axis < -r || axis > r-2 || axis == -1 {
		n.fail("axis %d for an input of shape %v: want a signal axis, in [%d, -2] or [0, %d]", axis, s, -r, r-2)
	}
	if axis < 0 {
		axis += r
	}
	length := n.intInput(in, 1, "dft_length", s[axis])
	if length < 1 {
		n.fail("dft_length %d: want at least 1", length)
	}
	inverse, onesided := n.a.int("inverse", 0) == 1, n.a.int("onesided", 0) == 1
	real := s[r-1] == 1
	z := x
	if real {
		z = nd.Reshape(x, s[:r-1]...)
	}
	switch {
	case onesided && !real:
		n.fail("onesided 1 with a complex input (shape %v): a one-sided spectrum needs a real signal", s)
	case onesided:
		return []*nd.NDArray{fft.RFFT(z, length, axis, fft.Backward)}
	case real:
		z = fft.Complex(z, nil)
	}
	if inverse {
		return []*nd.NDArray{fft.IFFT(z, length, axis, fft.Backward)}
	}
	return []*nd.NDArray{fft.FFT(z, length, axis, fft.Backward)}
}

// opSTFT is STFT: the transforms of the frames of the signal
// [batch, length, 1 or 2], frame_length samples (input 3, or the
// window's length) every frame_step (input 1), each multiplied by the
// window (input 2, optional), as [batch, frames, bins, 2]: frame_length/2+1
// bins when onesided (the default, for real signals), all of them
// otherwise. The frames start at sample 0, and those that would run past
// the end are not taken.
func opSTFT(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	s := x.Shape()
	if len(s) != 3 || (s[2] != 1 && s[2] != 2) {
		n.fail("signal of shape %v: want [batch, length, 1 or 2]", s)
	}
	step := n.intInput(in, 1, "frame_step", 0)
	if step < 1 {
		n.fail("frame_step %d: want at least 1", step)
	}
	var win *nd.NDArray
	if len(in) > 2 && in[2] != nil {
		win = in[2]
		if win.NDim() != 1 {
			n.fail("window of shape %v: want one axis", win.Shape())
		}
	}
	length := n.intInput(in, 3, "frame_length", 0)
	switch {
	case win != nil && length != 0 && length != win.Shape()[0]:
		n.fail("frame_length %d and a window of %d points: want them equal", length, win.Shape()[0])
	case win != nil:
		length = win.Shape()[0]
	case len(in) <= 3 || in[3] == nil:
		n.fail("neither a window nor a frame_length: the frame length is unknown")
	}
	if length < 1 || length > s[1] {
		n.fail("frame length %d for a signal of %d samples: want 1 to the signal's length", length, s[1])
	}
	frames := 1 + (s[1]-length)/step
	at := make([]int64, 0, frames*length)
	for t := range frames {
		for k := range length {
			at = append(at, int64(t*step+k))
		}
	}
	f := nd.Take(x, nd.FromSlice(x.Context(), at, frames, length), 1) // [batch, frames, length, 1|2]
	if win != nil {
		w := win
		if w.Context() != x.Context() {
			w = w.CopyTo(x.Context())
		}
		if w.DType() != x.DType() {
			w = w.AsType(x.DType())
		}
		f = nd.Mul(f, nd.Reshape(w, length, 1))
	}
	onesided := n.a.int("onesided", 1) == 1
	if s[2] == 2 {
		if onesided {
			n.fail("onesided 1 with a complex signal (shape %v): set onesided 0", s)
		}
		return []*nd.NDArray{fft.FFT(f, 0, -1, fft.Backward)}
	}
	f = nd.Reshape(f, s[0], frames, length)
	if onesided {
		return []*nd.NDArray{fft.RFFT(f, 0, -1, fft.Backward)}
	}
	return []*nd.NDArray{fft.FFT(fft.Complex(f, nil), 0, -1, fft.Backward)}
}

// opMelWeightMatrix is MelWeightMatrix: [dft_length/2+1, num_mel_bins]
// triangles on the HTK mel scale (2595·log₁₀(1 + f/700)), each peaking at
// 1, between num_mel_bins+2 edges that split [lower_edge_hertz,
// upper_edge_hertz] into num_mel_bins+2 equal steps in mels (the last
// edge one step short of the upper edge, as ONNX's reference and ONNX
// Runtime compute it) and are then rounded down to spectrogram bins,
// ⌊(dft_length+1)·f/sample_rate⌋. An edge beyond the last bin
// contributes no rows.
func opMelWeightMatrix(n *node, in []*nd.NDArray) []*nd.NDArray {
	mels := n.intInput(in, 0, "num_mel_bins", 0)
	dftLen := n.intInput(in, 1, "dft_length", 0)
	rate := n.intInput(in, 2, "sample_rate", 0)
	lo, hi := scalarOf(in[3]), scalarOf(in[4])
	if mels < 1 || dftLen < 1 || rate < 1 {
		n.fail("num_mel_bins %d, dft_length %d, sample_rate %d: want each at least 1", mels, dftLen, rate)
	}
	if !(lo >= 0 && hi > lo) || math.IsInf(hi, 0) {
		n.fail("edges %g Hz to %g Hz: want 0 ≤ lower < upper < ∞", lo, hi)
	}
	toMel := func(f float64) float64 { return 2595 * math.Log10(1+f/700) }
	loMel, hiMel := toMel(lo), toMel(hi)
	stepMel := (hiMel - loMel) / float64(mels+2)
	edges := make([]int, mels+2)
	for i := range edges {
		hz := 700 * (math.Pow(10, (loMel+float64(i)*stepMel)/2595) - 1)
		edges[i] = int(math.Floor(float64(dftLen+1) * hz / float64(rate)))
	}
	bins := dftLen/2 + 1
	w := make([]float64, bins*mels)
	set := func(row, col int, v float64) {
		if row >= 0 && row < bins {
			w[row*mels+col] = v
		}
	}
	for j := range mels {
		left, centre, right := edges[j], edges[j+1], edges[j+2]
		if rise := centre - left; rise == 0 {
			set(centre, j, 1)
		} else {
			for k := left; k <= centre; k++ {
				set(k, j, float64(k-left)/float64(rise))
			}
		}
		if fall := right - centre; fall > 0 {
			for k := centre; k < right; k++ {
				set(k, j, float64(right-k)/float64(fall))
			}
		}
	}
	dt, err := dtypeOf(int64(n.a.int("output_datatype", 1)))
	if err != nil {
		n.fail("%v", err)
	}
	return []*nd.NDArray{nd.FromSlice(n.dev, w, bins, mels).AsType(dt)}
}
