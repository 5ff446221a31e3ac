package fft

import "github.com/goluon/goluon/nd"

// Kind names one of the transforms a Spec describes.
type Kind string

// The kinds of Spec: the N-dimensional transforms and, as a Step's kind,
// the one-dimensional ones they are made of.
const (
	// KindFFT is FFTN, complex to complex (the zero Kind too).
	KindFFT Kind = "fft"
	// KindIFFT is IFFTN, its inverse.
	KindIFFT Kind = "ifft"
	// KindRFFT is RFFTN, a real signal to a spectrum halved along the
	// last axis.
	KindRFFT Kind = "rfft"
	// KindIRFFT is IRFFTN, a half spectrum to a real signal.
	KindIRFFT Kind = "irfft"
)

// Spec is a transform and its arguments as a value, for code that keeps
// a transform to apply later (a Block) or describes it elsewhere (an
// ONNX form, from Steps). S, Dims and Norm are the arguments of FFTN,
// IFFTN, RFFTN and IRFFTN: nil Dims and S transform every axis; Dims
// {-1} is the one-dimensional transform along the last axis, and S {n}
// its length n.
type Spec struct {
	Kind Kind
	S    []int
	Dims []int
	Norm Norm
}

// Apply returns the transform of x.
func (sp Spec) Apply(x *nd.NDArray) *nd.NDArray {
	switch sp.kind("fft.Spec.Apply") {
	case KindIFFT:
		return IFFTN(x, sp.S, sp.Dims, sp.Norm)
	case KindRFFT:
		return RFFTN(x, sp.S, sp.Dims, sp.Norm)
	case KindIRFFT:
		return IRFFTN(x, sp.S, sp.Dims, sp.Norm)
	}
	return FFTN(x, sp.S, sp.Dims, sp.Norm)
}

// kind resolves the zero Kind and rejects unknown ones.
func (sp Spec) kind(op string) Kind {
	switch sp.Kind {
	case "":
		return KindFFT
	case KindFFT, KindIFFT, KindRFFT, KindIRFFT:
		return sp.Kind
	}
	nd.Panicf(op, nd.ErrArgument, "kind %q: want %q, %q, %q or %q", string(sp.Kind), KindFFT, KindIFFT, KindRFFT, KindIRFFT)
	return ""
}

// Step is one of the one-dimensional transforms Apply performs, in
// order: along Axis of the signal (counted without the pair axis, from
// 0), of N points, the input first padded with zeros or truncated along
// Axis to N points (to N/2+1 bins for KindIRFFT). Kind is KindFFT or
// KindIFFT (complex to complex), KindRFFT (real to N/2+1 bins) or
// KindIRFFT (N/2+1 bins to N real points, the imaginary parts of bin 0
// and, for even N, of bin N/2 ignored). Scale multiplies the unnormalised
// sum Σ x_j e^{∓2πijk/N}: 1/N for an inverse step under the Backward
// norm, say. Sized says that N comes from the Spec's S rather than from
// the input's length, so that a description of the step for inputs of
// other lengths pads or truncates to N.
type Step struct {
	Kind  Kind
	Axis  int
	N     int
	Scale float64
	Sized bool
}

// Steps returns the one-dimensional transforms Apply performs on an
// input of the given shape (with the trailing pair axis for the complex
// inputs of KindFFT, KindIFFT and KindIRFFT). Arguments Apply would
// refuse panic with the same *nd.Error.
func (sp Spec) Steps(shape []int) []Step {
	const op = "fft.Spec.Steps"
	k := sp.kind(op)
	sig := shape
	if k != KindRFFT {
		if len(shape) < 2 || shape[len(shape)-1] != 2 {
			nd.Panicf(op, nd.ErrShape, "needs a complex array: at least one axis and a trailing axis of 2 (real, imaginary), got shape %v", shape)
		}
		sig = shape[:len(shape)-1]
	} else if len(shape) == 0 {
		nd.Panicf(op, nd.ErrShape, "needs at least one axis, got a scalar")
	}
	p := resolve(op, sig, sp.S, sp.Dims, k == KindIRFFT)
	var in []step
	switch k {
	case KindFFT, KindIFFT:
		scale(op, sp.Norm, true, 1)
		in = c2cSteps(op, p, sp.Norm, k == KindFFT, false)
	case KindRFFT:
		needAxes(op, p)
		ax, n := last(p)
		in = append([]step{{kind: r2c, axis: ax, n: n, scale: scale(op, sp.Norm, true, n)}},
			c2cSteps(op, p, sp.Norm, true, true)...)
	case KindIRFFT:
		needAxes(op, p)
		ax, n := last(p)
		in = append(c2cSteps(op, p, sp.Norm, false, true),
			step{kind: c2r, axis: ax, n: n, scale: scale(op, sp.Norm, false, n)})
	}
	sized := map[int]bool{}
	for i, ax := range p.axes {
		sized[ax] = sp.S != nil && sp.S[i] > 0
	}
	out := make([]Step, len(in))
	for i, s := range in {
		out[i] = Step{Kind: KindFFT, Axis: s.axis, N: s.n, Scale: s.scale, Sized: sized[s.axis]}
		switch {
		case s.kind == r2c:
			out[i].Kind = KindRFFT
		case s.kind == c2r:
			out[i].Kind = KindIRFFT
		case s.backward:
			out[i].Kind = KindIFFT
		}
	}
	return out
}
