package ndtest

import (
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// gradCase is one numerical gradient check: the op and case that name its
// sub-test, how to build its float64 inputs, the function checked, the
// tolerances and the indices of inputs that get no gradient (labels,
// running statistics).
type gradCase struct {
	op, name string
	in       func() []*nd.NDArray
	f        func(in []*nd.NDArray) *nd.NDArray
	tol      GradTol
	noGrad   []int
	// skip, when set and returning a non-empty reason, skips the case
	// (for example when a second device of dev's kind is missing).
	skip func() string
	// chain marks a case whose f chains several ops, some of them on
	// inputs alone: SessionChecks adopts all its inputs or none.
	chain bool
}

// GradChecks runs the numerical gradient check of every differentiable op
// of package nd on context dev, in float64, as sub-tests named
// "<Op>/<case>" (for example "Add/row-broadcast"): broadcasting binary ops,
// unary ops, reductions, matrix products, shape ops, neural-network ops and
// one end-to-end composite. A backend's tests call it with one of the
// backend's contexts, so every backend is held to the same tables and
// tolerances. The cases of the ops of nd/X.go are in X.go of this package,
// next to their conformance family.
func GradChecks(t *testing.T, dev ctx.Context) {
	forEachGradCase(t, dev, func(t *testing.T, c gradCase) {
		CheckGrad(t, c.f, c.in(), c.tol, c.noGrad...)
	})
}

// gradCases returns every gradient case on dev, in table order.
func gradCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for _, group := range [][]gradCase{
		gradBinaryCases(dev),      // binary.go
		gradUnaryCases(dev),       // unary.go
		gradReduceCases(dev),      // reduce.go
		gradMatMulCases(dev),      // matmul.go
		gradShapeCases(dev),       // shape.go
		gradCopyCases(dev),        // copy.go
		gradSoftmaxCases(dev),     // softmax.go
		gradPickCases(dev),        // pick.go
		gradSoftmaxCECases(dev),   // softmaxce.go
		gradConvCases(dev),        // conv.go
		gradConv1DCases(dev),      // conv1d.go
		gradDeconvCases(dev),      // deconv.go
		gradBiasReluCases(dev),    // biasrelu.go
		gradAddReluCases(dev),     // biasrelu.go
		gradDropoutCases(dev),     // dropout.go
		gradCompositeCases(dev),   // below
		gradPoolCases(dev),        // pool.go
		gradBatchNormCases(dev),   // batchnorm.go
		gradIndexCases(dev),       // index.go
		gradWhereCases(dev),       // where.go
		gradSliceCases(dev),       // slice.go
		gradPadCases(dev),         // pad.go
		gradInterpolateCases(dev), // interpolate.go
		gradEinsumCases(dev),      // einsum.go
		gradConv3DCases(dev),      // conv3d.go
		gradGridSampleCases(dev),  // gridsample.go
		gradSortCases(dev),        // sort.go
		gradMathCases(dev),        // math.go
		gradActivationCases(dev),  // activation.go
		gradLayerNormCases(dev),   // layernorm.go
		gradMatrixCases(dev),      // matrix.go, search.go
		gradExtraCases(dev),       // products.go, blocks.go, calculus.go, cov.go, pdist.go, affinegrid.go
	} {
		cases = append(cases, group...)
	}
	return cases
}

// forEachGradCase runs check on every gradient case on dev as sub-tests
// "<Op>/<case>", skipping the cases whose skip says so.
func forEachGradCase(t *testing.T, dev ctx.Context, check func(t *testing.T, c gradCase)) {
	cases := gradCases(dev)
	// Group the cases by op, keeping the order of first appearance, so that
	// each op is one sub-test with one sub-test per case.
	var ops []string
	byOp := map[string][]gradCase{}
	for _, c := range cases {
		if _, ok := byOp[c.op]; !ok {
			ops = append(ops, c.op)
		}
		byOp[c.op] = append(byOp[c.op], c)
	}
	for _, op := range ops {
		t.Run(op, func(t *testing.T) {
			for _, c := range byOp[op] {
				t.Run(c.name, func(t *testing.T) {
					if c.skip != nil {
						if why := c.skip(); why != "" {
							t.Skip(why)
						}
					}
					check(t, c)
				})
			}
		})
	}
}

// gradIn returns its arguments as a slice; it keeps case tables short.
func gradIn(a ...*nd.NDArray) []*nd.NDArray { return a }

// gradSigned returns values uniform in [-1, 1).
func gradSigned(dev ctx.Context, seed uint64, shape ...int) *nd.NDArray {
	return Rand(dev, seed, -1, 1, shape...)
}

// gradPositive returns values uniform in [0.5, 2): safe for Log, Sqrt,
// non-integer powers and as denominators.
func gradPositive(dev ctx.Context, seed uint64, shape ...int) *nd.NDArray {
	return Rand(dev, seed, 0.5, 2, shape...)
}

// gradNonzero returns values in [-2, 2) at least 0.5 away from 0: denominators
// of either sign, and inputs of ops with a kink at 0.
func gradNonzero(dev ctx.Context, seed uint64, shape ...int) *nd.NDArray {
	return AwayFrom(dev, seed, -2, 2, 0.5, []float64{0}, shape...)
}

// gradDistinct returns a random permutation of evenly spaced values in
// [-1, 1), at least 2/n apart: inputs for Max, Min and max pooling, whose
// gradients are undefined at ties.
func gradDistinct(dev ctx.Context, seed uint64, shape ...int) *nd.NDArray {
	n := 1
	for _, d := range shape {
		n *= d
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	v := make([]float64, n)
	for i, p := range r.Perm(n) {
		v[i] = -1 + 2*float64(p)/float64(n)
	}
	return nd.FromSlice(dev, v, shape...)
}

// gradLabels returns integer class indices as a float64 array of the given
// shape, the form Pick expects.
func gradLabels(dev ctx.Context, vals []float64, shape ...int) *nd.NDArray {
	return nd.FromSlice(dev, vals, shape...)
}

// gradCompositeCases checks one end-to-end chain of ops from several nd
// files: a small classifier's loss.
func gradCompositeCases(dev ctx.Context) []gradCase {
	// Conv2D → Relu → Flatten → FullyConnected → LogSoftmax → Pick → Mean:
	// a classifier's loss, differentiated with respect to the input and
	// every parameter.
	return []gradCase{{
		op: "Composite", name: "conv-relu-fc-logsoftmax-pick-mean", noGrad: []int{5}, chain: true,
		in: func() []*nd.NDArray {
			return gradIn(
				gradSigned(dev, 71, 2, 1, 5, 5), // x
				gradSigned(dev, 72, 2, 1, 3, 3), // conv weight
				gradSigned(dev, 73, 2),          // conv bias
				gradSigned(dev, 74, 3, 18),      // dense weight
				gradSigned(dev, 75, 3),          // dense bias
				gradLabels(dev, []float64{2, 0}, 2),
			)
		},
		f: func(in []*nd.NDArray) *nd.NDArray {
			h := nd.Relu(nd.Conv2D(in[0], in[1], in[2], nd.ConvOpts{}))
			z := nd.FullyConnected(nd.Flatten(h), in[3], in[4])
			return nd.Mean(nd.Pick(nd.LogSoftmax(z, 1), in[5], 1))
		},
	}}
}

// gradBuilder collects the cases of the ops that came with the integer and
// Bool dtypes (indexing, masks, strided slices, padding, sorting, norms,
// LogSumExp). Most of them take Int64 indices or Bool masks: add gives
// each case a skip that fires, loudly, on a device that cannot hold such
// arrays.
type gradBuilder struct {
	dev   ctx.Context
	cases []gradCase
}

// ints is the skip of the cases of add.
func (g *gradBuilder) ints() string {
	if !(confEnv{dev: g.dev}).dtypeSupported() {
		return "SKIPPED: " + g.dev.String() + " cannot hold integer or bool arrays yet"
	}
	return ""
}

// add appends a case that skips on a device without integer arrays.
func (g *gradBuilder) add(op, name string, in func() []*nd.NDArray, f func(in []*nd.NDArray) *nd.NDArray) {
	g.cases = append(g.cases, gradCase{op: op, name: name, in: in, f: f, skip: g.ints})
}

// one returns the inputs of a one-input case: signed values (seed 61).
func (g *gradBuilder) one(shape ...int) func() []*nd.NDArray {
	return func() []*nd.NDArray { return gradIn(gradSigned(g.dev, 61, shape...)) }
}

// two returns the inputs of a two-input case: signed values (seeds 62
// and 63).
func (g *gradBuilder) two(a, b []int) func() []*nd.NDArray {
	return func() []*nd.NDArray { return gradIn(gradSigned(g.dev, 62, a...), gradSigned(g.dev, 63, b...)) }
}

// lazy returns a constructor of the Int64 array v, built when a case runs
// in the session of its inputs.
func (g *gradBuilder) lazy(v []int, shape ...int) func(in []*nd.NDArray) *nd.NDArray {
	return func(in []*nd.NDArray) *nd.NDArray { return sessionIn(in).FromSlice(g.dev, v, shape...) }
}

// sessionIn returns the session of the first input that belongs to one
// (the default session when none does): a case makes its constant arrays
// with it, as a goroutine working on a session's arrays should.
func sessionIn(in []*nd.NDArray) *nd.Session {
	for _, a := range in {
		if a.Bound() {
			return a.Session()
		}
	}
	return nd.DefaultSession()
}
