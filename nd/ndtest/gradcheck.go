package ndtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// GradTol are the tolerances of CheckGrad: an analytic gradient a matches a
// numerical one n when |a-n| <= Atol + Rtol*|n|.
type GradTol struct {
	Step float64 // central-difference step (default 1e-6)
	Atol float64 // default 1e-6
	Rtol float64 // default 1e-4
	// Train runs f in training mode for both the analytic and the numerical
	// evaluations (batch norm with batch statistics, dropout active).
	Train bool
}

func (o GradTol) withDefaults() GradTol {
	if o.Step == 0 {
		o.Step = 1e-6
	}
	if o.Atol == 0 {
		o.Atol = 1e-6
	}
	if o.Rtol == 0 {
		o.Rtol = 1e-4
	}
	return o
}

// gradSeed reseeds the generators before every evaluation so that ops that
// draw random numbers (dropout) see the same draws each time.
const gradSeed = 12345

// CheckGrad checks the gradients of f at inputs (float64 arrays) against
// central differences. The scalar checked is Σ f(inputs)·r for a fixed
// random r of f's output shape, so every output element's gradient is
// exercised. Inputs listed in noGrad (by index) get no gradient and are not
// checked (labels, indices). f must not keep state between calls, other
// than state that does not affect its output (running statistics).
func CheckGrad(t testing.TB, f func(in []*nd.NDArray) *nd.NDArray, inputs []*nd.NDArray, tol GradTol, noGrad ...int) {
	t.Helper()
	tol = tol.withDefaults()
	skip := map[int]bool{}
	for _, i := range noGrad {
		skip[i] = true
	}
	dev := inputs[0].Context()
	var weights *nd.NDArray
	eval := func() float64 {
		var loss float64
		run := func() {
			nd.Seed(gradSeed)
			out := f(inputs)
			if weights == nil {
				nd.Seed(gradSeed + 1)
				weights = nd.RandomUniform(dev, nd.Float64, -1, 1, out.Shape()...)
			}
			loss = nd.Sum(nd.Mul(out, weights)).Scalar()
		}
		if tol.Train {
			nd.DefaultSession().TrainMode(run)
		} else {
			run()
		}
		return loss
	}
	eval() // fixes the weights

	for i, in := range inputs {
		if in.DType() != nd.Float64 {
			t.Fatalf("CheckGrad: input %d is %v; gradient checks need float64", i, in.DType())
		}
		if !skip[i] {
			in.AttachGrad(nd.GradWrite)
		}
	}
	nd.DefaultSession().RecordMode(tol.Train, func() {
		nd.Seed(gradSeed)
		out := f(inputs)
		nd.Backward([]*nd.NDArray{nd.Sum(nd.Mul(out, weights))}, nil, false)
	})

	for i, in := range inputs {
		if skip[i] {
			continue
		}
		if !compareCentral(t, "gradient", i, in, in.Grad().Float64s(), tol, eval) {
			return
		}
	}
}

// compareCentral compares analytic, the derivative of eval with respect
// to each element of input i (in), with central differences of eval,
// restoring in afterwards; it reports the first mismatch through t and
// returns false then. what names the derivative in the message.
func compareCentral(t testing.TB, what string, i int, in *nd.NDArray, analytic []float64, tol GradTol, eval func() float64) bool {
	t.Helper()
	dev := in.Context()
	vals := in.Float64s()
	for j := range vals {
		orig := vals[j]
		vals[j] = orig + tol.Step
		nd.Assign(in, nd.FromSlice(dev, vals, in.Shape()...))
		lp := eval()
		vals[j] = orig - tol.Step
		nd.Assign(in, nd.FromSlice(dev, vals, in.Shape()...))
		lm := eval()
		vals[j] = orig
		nd.Assign(in, nd.FromSlice(dev, vals, in.Shape()...))
		num := (lp - lm) / (2 * tol.Step)
		if d := math.Abs(analytic[j] - num); !(d <= tol.Atol+tol.Rtol*math.Abs(num)) {
			t.Errorf("input %d %v, element %d: analytic %s %.8g, numerical %.8g (diff %.3g)", i, in.Shape(), j, what, analytic[j], num, d)
			return false
		}
	}
	return true
}

// Rand returns a float64 array on dev with values uniform in [lo, hi),
// drawn from a generator seeded with seed.
func Rand(dev ctx.Context, seed uint64, lo, hi float64, shape ...int) *nd.NDArray {
	nd.Seed(seed)
	return nd.RandomUniform(dev, nd.Float64, lo, hi, shape...)
}

// AwayFrom returns a float64 array like Rand whose values keep at least gap
// away from each point in kinks (e.g. 0 for relu, abs), so that central
// differences do not straddle a kink.
func AwayFrom(dev ctx.Context, seed uint64, lo, hi, gap float64, kinks []float64, shape ...int) *nd.NDArray {
	v := Rand(dev, seed, lo, hi, shape...).Float64s()
	for i := range v {
		for _, k := range kinks {
			if math.Abs(v[i]-k) < gap {
				if v[i] >= k {
					v[i] = k + gap
				} else {
					v[i] = k - gap
				}
			}
		}
	}
	return nd.FromSlice(dev, v, shape...)
}

// Describe formats a case name for sub-tests.
func Describe(op string, shapes ...[]int) string { return fmt.Sprintf("%s%v", op, shapes) }
