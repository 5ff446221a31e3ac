package ndtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// This file holds the entry point of the backend conformance suite and the
// helpers every family shares: a test environment (dev, dtype), input
// generation on the host, the comparison with tolerances, and small shape
// utilities for the references. The references themselves are plain Go
// loops over []float64 and never call nd.
//
// The cases for the ops of nd/X.go (their conformance family and gradient
// cases) are in ndtest/X.go; the package documentation (doc.go) has the
// table.

// Conformance runs the backend conformance suite on dev: every op family
// (creation, elementwise, reductions, matrix products, shape ops, softmax,
// indexing, convolution, pooling, batch norm, dropout, copies, views) as a
// sub-test, each for float32 and float64, comparing the op's forward values
// against naive host references with the same tolerances on every backend
// (as gonum's blas/testblas does for BLAS implementations).
//
// Conformance reseeds the global generators (nd.Seed) and opens nd scopes,
// which are process-wide: do not run it in parallel with other nd work.
func Conformance(t *testing.T, dev ctx.Context) {
	t.Helper()
	for _, fam := range confFamilies {
		t.Run(fam.name, func(t *testing.T) {
			for _, dt := range confDTypesOn(dev) {
				t.Run(dt.String(), func(t *testing.T) {
					s := nd.NewScope()
					defer s.Close()
					defer confRecover(t)
					fam.run(confEnv{T: t, dev: dev, dt: dt})
				})
			}
		})
	}
}

// confFamilies lists the op families in the order they run.
var confFamilies = []struct {
	name string
	run  func(e confEnv)
}{
	{"creation", confCreation},       // create.go, random.go
	{"unary", confUnary},             // unary.go
	{"binary", confBinary},           // binary.go
	{"reduce", confReduce},           // reduce.go
	{"argmax", confArgMax},           // reduce.go
	{"matmul", confMatMul},           // matmul.go
	{"shape", confShape},             // shape.go
	{"softmax", confSoftmax},         // softmax.go
	{"pick", confPick},               // pick.go
	{"softmaxce", confSoftmaxCE},     // softmaxce.go
	{"conv2d", confConv2D},           // conv.go
	{"conv1d", confConv1D},           // conv1d.go
	{"deconv", confDeconv},           // deconv.go
	{"pool2d", confPool2D},           // pool.go
	{"batchnorm", confBatchNorm},     // batchnorm.go
	{"biasrelu", confBiasRelu},       // biasrelu.go
	{"addrelu", confAddRelu},         // biasrelu.go
	{"dropout", confDropout},         // dropout.go
	{"copy", confCopy},               // copy.go
	{"views", confViews},             // ndarray.go
	{"dtypes", confDTypes},           // dtype.go
	{"index", confIndex},             // index.go, pad.go, slice.go, sort.go, math.go
	{"activation", confActivation},   // activation.go
	{"layernorm", confLayerNorm},     // layernorm.go
	{"interpolate", confInterpolate}, // interpolate.go
	{"einsum", confEinsum},           // einsum.go
	{"conv3d", confConv3D},           // conv3d.go
	{"gridsample", confGridSample},   // gridsample.go
	{"autograd", confAutograd},       // backward.go, checkpoint.go
	{"matrix", confMatrix},           // matrix.go, search.go
	{"extra", confExtra},             // products.go, blocks.go, calculus.go, cov.go, histc.go, pdist.go, gcd.go, affinegrid.go
}

// confRecover turns a panic inside a case (an *nd.Error from an op that
// rejects valid arguments, or a crash in a kernel) into a test failure, so
// that one broken op does not hide the results of the others.
func confRecover(t *testing.T) {
	if r := recover(); r != nil {
		t.Errorf("panic: %v\n%s", r, debug.Stack())
	}
}

// confTol is one pair of tolerances: got matches want when
// |got-want| <= atol + rtol*|want|.
type confTol struct{ atol, rtol float64 }

// confTols holds the tolerances of a check for each dtype.
type confTols struct{ f32, f64 confTol }

var (
	// confTolDefault covers results of a few floating-point operations per
	// element: float64 to a few ulps of the result (atol 1e-12, rtol 1e-10)
	// and float32 to a few hundred ulps (atol 1e-5, rtol 1e-4), which
	// leaves room for fused multiply-adds, fast device intrinsics and
	// different summation orders but not for wrong formulas.
	confTolDefault = confTols{f32: confTol{1e-5, 1e-4}, f64: confTol{1e-12, 1e-10}}
	// confTolExact is for results that involve no rounding at all: copies,
	// shape ops, comparisons, max/min, clipping, sign, negation.
	confTolExact = confTols{}
	// confTolLongSum is for dot products and convolutions whose terms are in
	// [-1, 1] and number up to ~1000: float32 rounding of the partial sums
	// grows like sqrt(K)·ulp(Σ), so the absolute tolerance is 1e-4 instead
	// of 1e-5; float64 keeps the default.
	confTolLongSum = confTols{f32: confTol{1e-4, 1e-4}, f64: confTol{1e-12, 1e-10}}
)

// confEnv is the state of one sub-test: the testing.T, the device under test
// and the dtype of the inputs.
type confEnv struct {
	*testing.T
	dev ctx.Context
	dt  nd.DType
}

// run runs f as a named sub-test with the same device and dtype.
func (e confEnv) run(name string, f func(e confEnv)) {
	e.T.Helper()
	e.T.Run(name, func(t *testing.T) {
		defer confRecover(t)
		f(confEnv{T: t, dev: e.dev, dt: e.dt})
	})
}

// tol picks the tolerance for e's dtype. Half-precision ops compute in
// float32 and round their result (and, in composite ops, intermediate
// results) to the half dtype, so their tolerance is float32's with the
// absolute part ten times larger and 4 units of the half dtype's rounding
// (2⁻¹¹ for Float16, 2⁻⁸ for BFloat16) added to the relative part; exact
// checks stay exact.
func (e confEnv) tol(tl confTols) confTol {
	switch {
	case e.dt == nd.Float32:
		return tl.f32
	case e.dt.IsHalf() && tl.f32 == (confTol{}):
		return confTol{}
	case e.dt.IsHalf():
		return confTol{atol: 10 * tl.f32.atol, rtol: tl.f32.rtol + 4*halfUnit(e.dt)}
	}
	return tl.f64
}

// halfUnit is the unit roundoff of a half dtype: half its epsilon.
func halfUnit(dt nd.DType) float64 {
	if dt == nd.BFloat16 {
		return 1.0 / (1 << 8)
	}
	return 1.0 / (1 << 11)
}

// confDTypesOn lists the dtypes the suite runs on dev: Float32 and
// Float64, and Float16 and BFloat16 where dev's backend holds them.
func confDTypesOn(dev ctx.Context) []nd.DType {
	dts := []nd.DType{nd.Float32, nd.Float64}
	if nd.Catch(func() { nd.Zeros(dev, nd.Float16, 1).Release() }) == nil {
		dts = append(dts, nd.Float16, nd.BFloat16)
	}
	return dts
}

// roundTo rounds x to dt as an array of dt holds it.
func roundTo(dt nd.DType, x float64) float64 {
	switch dt {
	case nd.Float32:
		return float64(float32(x))
	case nd.Float16:
		return float64(nd.F16From(float32(x)).Float32())
	case nd.BFloat16:
		return float64(nd.BF16From(float32(x)).Float32())
	}
	return x
}

// round returns v rounded to e's dtype, as the device will hold it, so that
// the references start from exactly the device's inputs.
func (e confEnv) round(v []float64) []float64 {
	out := slices.Clone(v)
	for i, x := range out {
		out[i] = roundTo(e.dt, x)
	}
	return out
}

// arr uploads v (converted to e's dtype) to e's device with the given shape.
func (e confEnv) arr(v []float64, shape ...int) *nd.NDArray {
	if shape == nil {
		shape = []int{len(v)}
	}
	switch e.dt {
	case nd.Float32, nd.Float16, nd.BFloat16:
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return nd.FromSlice(e.dev, f, shape...).AsType(e.dt)
	}
	return nd.FromSlice(e.dev, slices.Clone(v), shape...)
}

// rand returns an array of uniform values in [lo, hi) drawn from a host
// generator seeded with seed, and its values (rounded to e's dtype).
func (e confEnv) rand(seed uint64, lo, hi float64, shape ...int) (*nd.NDArray, []float64) {
	v := e.round(confUniform(seed, refNumel(shape), lo, hi))
	return e.arr(v, shape...), v
}

// confUniform returns n deterministic uniform values in [lo, hi).
func confUniform(seed uint64, n int, lo, hi float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
	}
	return v
}

// confInts returns n deterministic integers in [lo, hi] as floats; small
// ranges make ties and equal elements frequent.
func confInts(seed uint64, n, lo, hi int) []float64 {
	r := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(lo + r.IntN(hi-lo+1))
	}
	return v
}

// confConst returns n copies of v.
func confConst(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// check compares got with the reference (shape, values) under tl and also
// checks that got lives on e's device with e's dtype.
func (e confEnv) check(got *nd.NDArray, shape []int, want []float64, tl confTols) {
	e.T.Helper()
	e.checkAs(got, e.dt, shape, want, tl)
}

// checkAs is check for a result whose dtype is dt.
func (e confEnv) checkAs(got *nd.NDArray, dt nd.DType, shape []int, want []float64, tl confTols) {
	e.T.Helper()
	if got == nil {
		e.Fatalf("result is nil")
	}
	if got.Context() != e.dev {
		e.Errorf("result on %v, want %v", got.Context(), e.dev)
	}
	if got.DType() != dt {
		e.Errorf("result dtype %v, want %v", got.DType(), dt)
	}
	if !slices.Equal(got.Shape(), shape) {
		v := got.Float64s()
		e.Fatalf("result shape %v, want %v (values %.6g)", got.Shape(), shape, v[:min(len(v), 20)])
	}
	if len(want) != refNumel(shape) {
		e.Fatalf("reference has %d values for shape %v (bug in the suite)", len(want), shape)
	}
	e.checkVals(got.Float64s(), want, e.tol(tl))
}

// checkVals compares values element by element, reporting the first few
// mismatches and their count. NaNs match NaNs and infinities match
// infinities of the same sign.
func (e confEnv) checkVals(got, want []float64, tl confTol) {
	e.T.Helper()
	if len(got) != len(want) {
		e.Fatalf("%d values, want %d", len(got), len(want))
	}
	bad := 0
	for i := range want {
		g, w := got[i], want[i]
		if confClose(g, w, tl) {
			continue
		}
		if bad < 5 {
			e.Errorf("element %d: got %.10g, want %.10g (diff %.3g, atol %g rtol %g)", i, g, w, math.Abs(g-w), tl.atol, tl.rtol)
		}
		bad++
	}
	if bad > 5 {
		e.Errorf("... %d of %d elements differ", bad, len(want))
	}
}

// confClose reports whether g matches w within tl.
func confClose(g, w float64, tl confTol) bool {
	switch {
	case math.IsNaN(w) || math.IsNaN(g):
		return math.IsNaN(w) && math.IsNaN(g)
	case math.IsInf(w, 0) || math.IsInf(g, 0):
		return g == w
	}
	return math.Abs(g-w) <= tl.atol+tl.rtol*math.Abs(w)
}

// refNumel is the number of elements of shape.
func refNumel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// refStrides returns the row-major strides of shape.
func refStrides(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for d := len(shape) - 1; d >= 0; d-- {
		st[d] = s
		s *= shape[d]
	}
	return st
}

// refUnravel writes the multi-index of flat index i in shape into idx.
func refUnravel(i int, shape, idx []int) {
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = i % shape[d]
		i /= shape[d]
	}
}

// refAxis maps a possibly negative axis to [0, ndim).
func refAxis(axis, ndim int) int {
	if axis < 0 {
		return axis + ndim
	}
	return axis
}

// confShapeName formats shapes for sub-test names: "2x3_vs_3".
func confShapeName(shapes ...[]int) string {
	s := ""
	for i, sh := range shapes {
		if i > 0 {
			s += "_vs_"
		}
		s += confDims(sh)
	}
	return s
}

// confDims formats one shape as "2x3" ("scalar" for a 0-d shape).
func confDims(sh []int) string {
	if len(sh) == 0 {
		return "scalar"
	}
	s := ""
	for i, d := range sh {
		if i > 0 {
			s += "x"
		}
		s += fmt.Sprint(d)
	}
	return s
}
