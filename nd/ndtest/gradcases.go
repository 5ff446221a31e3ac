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
}

// GradChecks runs the numerical gradient check of every differentiable op
// of package nd on context dev, in float64, as sub-tests named
// "<Op>/<case>" (for example "Add/row-broadcast"): broadcasting binary ops,
// unary ops, reductions, matrix products, shape ops, neural-network ops and
// one end-to-end composite. A backend's tests call it with one of the
// backend's contexts, so every backend is held to the same tables and
// tolerances.
func GradChecks(t *testing.T, dev ctx.Context) {
	var cases []gradCase
	for _, group := range [][]gradCase{
		gradBinaryCases(dev),
		gradUnaryCases(dev),
		gradReduceCases(dev),
		gradLinalgCases(dev),
		gradShapeCases(dev),
		gradCopyCases(dev),
		gradNNCases(dev),
		gradPoolCases(dev),
		gradNormCases(dev),
		gradIndexCases(dev),
	} {
		cases = append(cases, group...)
	}
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
					CheckGrad(t, c.f, c.in(), c.tol, c.noGrad...)
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
