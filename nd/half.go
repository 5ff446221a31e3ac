package nd

import (
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// Half-precision compute. Backends run their kernels on Float32 and
// Float64; an op given Float16 or BFloat16 arrays converts them to float32,
// runs the float32 kernel (which accumulates in float32: sums, GEMM and
// convolution included) and rounds the result to the inputs' dtype, to
// nearest even. Results are therefore exactly what PyTorch's CPU half ops
// give for elementwise ops: the float32 result of the rounded inputs,
// rounded once.
//
// A backend that computes an op on half arrays itself (backend.HalfGemmer,
// HalfConvolver, HalfElementwise, HalfPooler, HalfReducer: a GPU's tensor
// cores and half kernels) gets the half arrays directly instead
// (halfDirect for GEMM, convolution and pooling; the direct branches of
// unaryRaw, binaryInto and reduceRaw), rounding its float32 result once.
// Otherwise, three forms:
//   - the unrecorded kernels (unaryRaw, binaryInto, reduceRaw and the
//     in-place ops) convert with unrecorded casts, so the backward passes
//     built from them compute on half arrays too, rounding per op as
//     PyTorch does;
//   - convolution, GEMM and pooling run through halfNative (dropout has
//     its own form of it): forward and backward widen the half arrays and
//     round their results, and the tape keeps only the half arrays;
//   - the other ops with a backward of their own (BatchNorm, softmax,
//     norms, ...) run through viaFloat32: recorded casts
//     around the float32 op, so their backward runs in float32 and the
//     gradient is rounded once, where it reaches a half array. The tape
//     then keeps the float32 copies of those ops' inputs: in training,
//     their saved activations take float32's memory.

// halfOf returns the half-precision dtype among arrs; ok is false when
// none is half.
func halfOf(arrs ...*NDArray) (dt DType, ok bool) {
	for _, a := range arrs {
		if a != nil && a.dtype.IsHalf() {
			return a.dtype, true
		}
	}
	return 0, false
}

// widened returns a float32 copy of a, not recorded, when a is half
// precision, and a itself otherwise.
func widened(a *NDArray) *NDArray {
	if a == nil || !a.dtype.IsHalf() {
		return a
	}
	out := newArray("AsType", a.Session(), a.st.dev, Float32, a.shape)
	a.be().Cast(out.storageArg(), a.storageArg(), a.Size())
	return out
}

// narrowed returns a rounded to dt when a is Float32 (releasing a), and a
// itself otherwise (an op's Bool or Int64 result). Not recorded.
func narrowed(a *NDArray, dt DType) *NDArray {
	if a.dtype != Float32 || dt == Float32 {
		return a
	}
	out := newArray("AsType", a.Session(), a.st.dev, dt, a.shape)
	a.be().Cast(out.storageArg(), a.storageArg(), a.Size())
	a.Release()
	return out
}

// releaseWidened releases the arrays of w that are not the originals in
// in: the float32 copies widened or viaFloat32 made.
func releaseWidened(in, w []*NDArray) {
	for i := range w {
		if w[i] != in[i] {
			w[i].Release()
		}
	}
}

// inPlaceHalf runs the in-place kernel f on a float32 copy of dst (and
// float32 copies of the half arrays in srcs) and writes the result back
// into dst, rounded. It reports false, doing nothing, when neither dst nor
// any src is half precision.
func inPlaceHalf(dst *NDArray, srcs []*NDArray, f func(dst *NDArray, srcs []*NDArray)) bool {
	if _, ok := halfOf(append([]*NDArray{dst}, srcs...)...); !ok {
		return false
	}
	wd := widened(dst)
	ws := make([]*NDArray, len(srcs))
	for i, s := range srcs {
		ws[i] = widened(s)
	}
	f(wd, ws)
	if wd != dst {
		dst.be().Cast(dst.storageArg(), wd.storageArg(), dst.Size())
		wd.Release()
	}
	releaseWidened(srcs, ws)
	return true
}

// viaFloat32 computes the recorded op f on float32 forms of in: each half
// input is converted with a recorded AsType, so gradients flow back to it,
// rounded to its dtype. f's float32 result is rounded to dt, recorded.
// When nothing was recorded the float32 copies are released at once.
func viaFloat32(dt DType, f func(w []*NDArray) *NDArray, in ...*NDArray) *NDArray {
	w := make([]*NDArray, len(in))
	for i, a := range in {
		w[i] = a
		if a != nil && a.dtype.IsHalf() {
			w[i] = a.AsType(Float32)
		}
	}
	r := f(w)
	if r.dtype != Float32 { // an index or Bool result: nothing to round
		return r
	}
	out := r.AsType(dt)
	if !out.requiresGrad() { // nothing recorded: the float32 copies go now
		if r != out && !slices.Contains(in, r) {
			r.Release()
		}
		releaseWidened(in, w)
	}
	return out
}

// halfNative runs a recorded op on half-precision inputs in (one dtype)
// whose forward (fwd) and backward (bwd) are written for float32: both
// widen the half arrays with unrecorded casts, compute in float32 and
// round their results to the inputs' dtype. Unlike viaFloat32 the tape
// keeps only the half inputs, so training holds half the bytes of the
// float32 activations; the backward pass pays for widening them again.
//
// bwd gets the float32 form of the op's (rounded) output from y, for ops
// whose backward reads it, as max pooling does; only ops whose output
// rounds to itself (a maximum of half values) may use it.
func halfNative(op string, in []*NDArray, fwd func(w []*NDArray) *NDArray, bwd func(g *NDArray, w []*NDArray, y func() *NDArray, need []bool) []*NDArray) *NDArray {
	dt := sameHalf(op, in)
	widenAll := func() []*NDArray {
		w := make([]*NDArray, len(in))
		for i, a := range in {
			w[i] = widened(a)
		}
		return w
	}
	w := widenAll()
	out := narrowed(fwd(w), dt)
	releaseWidened(in, w)
	Record(op, out, in, func(g *NDArray, need []bool) []*NDArray {
		gw, w := widened(g), widenAll()
		var yw *NDArray
		y := func() *NDArray {
			if yw == nil {
				pc := checkMemory(op, out) // its memory gone since: ErrReleased
				yw = widened(out)
				pc.done()
			}
			return yw
		}
		grads := bwd(gw, w, y, need)
		if yw != nil {
			yw.Release()
		}
		for i, gr := range grads {
			if gr != nil {
				grads[i] = narrowed(gr, in[i].dtype)
			}
		}
		releaseWidened(in, w)
		if gw != g {
			gw.Release()
		}
		return grads
	})
	return out
}

// sameHalf returns the dtype of in, failing unless every array has it.
func sameHalf(op string, in []*NDArray) DType {
	dt := in[0].dtype
	for _, a := range in {
		if a.dtype != dt {
			fail(op, ErrDType, "%v and %v inputs (shapes %v and %v); convert with AsType", dt, a.dtype, in[0].shape, a.shape)
		}
	}
	return dt
}

// halfDirect is halfNative's form for a backend that computes the op on
// the half arrays itself (backend.HalfGemmer, HalfConvolver, HalfPooler):
// fwd and bwd get the arrays themselves and return half results, which
// the backend rounded once.
func halfDirect(op string, in []*NDArray, fwd func(w []*NDArray) *NDArray, bwd func(g *NDArray, w []*NDArray, y func() *NDArray, need []bool) []*NDArray) *NDArray {
	sameHalf(op, in)
	out := fwd(in)
	Record(op, out, in, func(g *NDArray, need []bool) []*NDArray { // g has out's dtype (Backward checks heads)
		return bwd(g, in, func() *NDArray {
			checkMemory(op, out).done() // its memory gone since: ErrReleased
			return out
		}, need)
	})
	return out
}

// halfGemmRunner returns halfDirect when a's backend multiplies dt
// matrices itself, else halfNative.
func halfGemmRunner(a *NDArray, dt DType) func(string, []*NDArray, func([]*NDArray) *NDArray, func(*NDArray, []*NDArray, func() *NDArray, []bool) []*NDArray) *NDArray {
	if nativeHalfGemm(a, dt) {
		return halfDirect
	}
	return halfNative
}

// nativeHalfGemm reports whether a's backend multiplies dt matrices itself.
func nativeHalfGemm(a *NDArray, dt DType) bool {
	h, ok := a.st.be.(backend.HalfGemmer)
	return ok && dt.IsHalf() && h.GemmHalf(dt)
}

// nativeHalfElem reports whether a's backend runs Unary and Binary on a's
// half dtype itself (backend.HalfElementwise).
func nativeHalfElem(a *NDArray) bool {
	h, ok := a.st.be.(backend.HalfElementwise)
	return ok && a.dtype.IsHalf() && h.ElementwiseHalf(a.dtype)
}

// optional returns in[i], or nil when in has no element i (an absent
// optional operand such as a bias).
func optional(in []*NDArray, i int) *NDArray {
	if i < len(in) {
		return in[i]
	}
	return nil
}
