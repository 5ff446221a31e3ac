package ndtest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// errNoSecondOrder marks a case whose graph holds an op without a
// differentiable backward function.
var errNoSecondOrder = errors.New("no second derivative")

// CheckGradGrad checks second derivatives of f at inputs (float64 arrays),
// as PyTorch's gradgradcheck: with s = Σ f(inputs)·w for a fixed random w,
// and the first-order gradients ∂s/∂x_i taken by nd.GradWith with
// CreateGraph, the scalar F = Σ_i Σ (∂s/∂x_i)·v_i (v_i fixed and random) is
// differentiated by Backward. Three things are compared: the recorded
// first-order gradients with the plain ones, bit for bit; ∂F/∂x with
// central differences of F computed from plain first-order gradients; and
// ∂F/∂w — the derivative through the output gradient, which is all there
// is for linear and piecewise-linear ops — with central differences of
// Σ f·(each w element) along v. It returns an error wrapping
// errNoSecondOrder when an op on the path has no differentiable backward
// function, and reports mismatches through t.
func CheckGradGrad(t testing.TB, f func(in []*nd.NDArray) *nd.NDArray, inputs []*nd.NDArray, tol GradTol, noGrad ...int) error {
	t.Helper()
	tol = tol.withDefaults()
	skip := map[int]bool{}
	for _, i := range noGrad {
		skip[i] = true
	}
	var vars []int
	for i, in := range inputs {
		if in.DType() != nd.Float64 {
			t.Fatalf("CheckGradGrad: input %d is %v; gradient checks need float64", i, in.DType())
		}
		if !skip[i] {
			vars = append(vars, i)
		}
	}
	dev := inputs[0].Context()
	var w *nd.NDArray
	v := make([]*nd.NDArray, len(inputs))
	for k, i := range vars {
		v[i] = Rand(dev, gradSeed+10+uint64(k), -1, 1, inputs[i].Shape()...)
	}
	// total computes F, recording its graph when create is set (and then
	// backpropagating it into the inputs' and w's gradient buffers); it
	// also returns the first-order gradients' values.
	total := func(create bool) (*nd.NDArray, [][]float64) {
		for _, i := range vars {
			inputs[i].AttachGrad(nd.GradWrite)
		}
		var F *nd.NDArray
		var firsts [][]float64
		nd.DefaultSession().RecordMode(tol.Train, func() {
			nd.Seed(gradSeed)
			out := f(inputs)
			if w == nil {
				nd.Seed(gradSeed + 1)
				w = nd.RandomUniform(dev, nd.Float64, -1, 1, out.Shape()...)
			}
			if create {
				w.AttachGrad(nd.GradWrite)
			}
			s := nd.Sum(nd.Mul(out, w))
			vs := make([]*nd.NDArray, len(vars))
			for k, i := range vars {
				vs[k] = inputs[i]
			}
			gs := nd.GradWith([]*nd.NDArray{s}, vs, nd.GradOpts{CreateGraph: create})
			firsts = make([][]float64, len(gs))
			for k, g := range gs {
				if g == nil {
					continue
				}
				firsts[k] = g.Float64s()
				term := nd.Sum(nd.Mul(g, v[vars[k]]))
				if F == nil {
					F = term
				} else {
					F = nd.Add(F, term)
				}
			}
			if F != nil && create && F.RequiresGrad() {
				nd.Backward([]*nd.NDArray{F}, nil, false)
			}
		})
		return F, firsts
	}
	var analytic [][]float64
	var analyticW []float64
	var firstsCreate [][]float64
	if err := nd.Catch(func() {
		var F *nd.NDArray
		F, firstsCreate = total(true)
		analytic = make([][]float64, len(inputs))
		for _, i := range vars {
			if F == nil || !F.RequiresGrad() {
				analytic[i] = make([]float64, inputs[i].Size())
			} else {
				analytic[i] = inputs[i].Grad().Float64s()
			}
		}
		analyticW = w.Grad().Float64s()
	}); err != nil {
		if strings.Contains(err.Error(), "cannot be differentiated again") {
			return fmt.Errorf("%w: %v", errNoSecondOrder, err)
		}
		return err
	}
	_, firstsPlain := total(false)
	for k := range firstsPlain {
		for j := range firstsPlain[k] {
			// The differentiable forms round otherwise than fused kernels
			// (Tanh's gradient in float32, say): the case's tolerance.
			p, c := firstsPlain[k][j], firstsCreate[k][j]
			if d := math.Abs(p - c); !(d <= tol.Atol+tol.Rtol*math.Abs(p)) && !(math.IsNaN(p) && math.IsNaN(c)) {
				t.Errorf("input %d, element %d: first-order gradient %.17g under CreateGraph, %.17g without", vars[k], j, c, p)
				return nil
			}
		}
	}
	eval := func() float64 {
		F, _ := total(false)
		if F == nil {
			return 0
		}
		return F.Scalar()
	}
	// ∂F/∂w_j = Σ_i ∂f_j/∂x_i·v_i: f's derivative along v, by central
	// differences of f.
	along := func(eps float64) []float64 {
		saved := make([][]float64, len(inputs))
		for _, i := range vars {
			saved[i] = inputs[i].Float64s()
			moved := slices.Clone(saved[i])
			for j, d := range v[i].Float64s() {
				moved[j] += eps * d
			}
			nd.Assign(inputs[i], nd.FromSlice(dev, moved, inputs[i].Shape()...))
		}
		var out []float64
		nd.DefaultSession().PauseMode(tol.Train, func() {
			nd.Seed(gradSeed)
			out = f(inputs).Float64s()
		})
		for _, i := range vars {
			nd.Assign(inputs[i], nd.FromSlice(dev, saved[i], inputs[i].Shape()...))
		}
		return out
	}
	if len(vars) > 0 {
		fp, fm := along(tol.Step), along(-tol.Step)
		for j := range analyticW {
			num := (fp[j] - fm[j]) / (2 * tol.Step)
			if d := math.Abs(analyticW[j] - num); !(d <= tol.Atol+tol.Rtol*math.Abs(num)) {
				t.Errorf("output element %d: derivative through the output gradient %.8g, numerical %.8g (diff %.3g)", j, analyticW[j], num, d)
				return nil
			}
		}
	}
	for _, i := range vars {
		if !compareCentral(t, "second derivative", i, inputs[i], analytic[i], tol, eval) {
			return nil
		}
	}
	return nil
}

// GradGradChecks runs CheckGradGrad on every gradient case of GradChecks
// on context dev. A case whose ops include one without a differentiable
// backward function must be listed in NoSecondOrder (and one listed
// there must not pass), so that the list stays the exact account of what
// CreateGraph covers.
func GradGradChecks(t *testing.T, dev ctx.Context) {
	forEachGradCase(t, dev, func(t *testing.T, c gradCase) {
		tol := c.tol
		tol.Step = math.Max(tol.Step, 1e-5) // differences of gradients, not of values
		tol.Atol = math.Max(tol.Atol, 1e-5)
		tol.Rtol = math.Max(tol.Rtol, 1e-4)
		err := CheckGradGrad(t, c.f, c.in(), tol, c.noGrad...)
		listed := NoSecondOrder[c.op]
		switch {
		case errors.Is(err, errNoSecondOrder) && listed:
			t.Skipf("%s has no second derivative here: %v", c.op, err)
		case errors.Is(err, errNoSecondOrder):
			t.Errorf("%v (add a differentiable backward function, or list %s in NoSecondOrder)", err, c.op)
		case err != nil:
			t.Error(err)
		case listed:
			t.Errorf("%s is listed in NoSecondOrder but its second derivatives pass: remove it", c.op)
		}
	})
}

// NoSecondOrder lists the gradient cases (by op) whose graphs hold an op
// without a differentiable backward function: GradWith with CreateGraph
// fails on them with ErrGraph, naming the op.
var NoSecondOrder = map[string]bool{
	"Digamma": true, // its derivative, Trigamma, is not differentiable here
	"Pdist":   true, // its backward function reads detached distances
}
