package probability

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// Distributions whose densities need log Γ: Gamma, Beta, Dirichlet and
// Poisson, and the Exponential and Laplace distributions. Gamma, Beta and
// Dirichlet samples are drawn on the host (Marsaglia and Tsang's method)
// from the parameters' values and are not differentiable.

// Gamma is the gamma distribution of shape Concentration (α) and rate Rate
// (β): density β^α x^(α−1) e^(−βx) / Γ(α) (torch's Gamma).
type Gamma struct {
	Concentration, Rate *nd.NDArray
}

// NewGamma returns Gamma(concentration, rate).
func NewGamma(concentration, rate *nd.NDArray) Gamma {
	check("probability.Gamma", concentration, rate)
	return Gamma{Concentration: concentration, Rate: rate}
}

// LogProb returns α log β + (α − 1) log x − βx − log Γ(α).
func (d Gamma) LogProb(x *nd.NDArray) *nd.NDArray {
	a, b := d.Concentration, d.Rate
	t := nd.Add(nd.Xlogy(a, b), nd.Xlogy(nd.AddScalar(a, -1), x))
	return nd.Sub(nd.Sub(t, nd.Mul(b, x)), nd.Lgamma(a))
}

// Entropy returns α − log β + log Γ(α) + (1 − α)ψ(α).
func (d Gamma) Entropy() *nd.NDArray {
	a, b := d.Concentration, d.Rate
	t := nd.Add(nd.Sub(a, nd.Log(b)), nd.Lgamma(a))
	return nd.Add(t, nd.Mul(nd.RSubScalar(1, a), nd.Digamma(a)))
}

// Mean returns α/β.
func (d Gamma) Mean() *nd.NDArray { return nd.Div(d.Concentration, d.Rate) }

// Variance returns α/β².
func (d Gamma) Variance() *nd.NDArray { return nd.Div(d.Concentration, nd.Square(d.Rate)) }

// Sample draws values of the batch shape on the host.
func (d Gamma) Sample() *nd.NDArray {
	shape := batchShape(d.Concentration, d.Rate)
	a := nd.BroadcastTo(d.Concentration, shape...).AsType(nd.Float64).Float64s()
	b := nd.BroadcastTo(d.Rate, shape...).AsType(nd.Float64).Float64s()
	g := gammaDraws(d.Concentration, a)
	for i := range g {
		g[i] /= b[i]
	}
	return upload(d.Concentration, g, shape)
}

// Beta is the beta distribution on [0, 1] with concentrations
// Concentration1 (α) and Concentration0 (β) (torch's Beta).
type Beta struct {
	Concentration1, Concentration0 *nd.NDArray
}

// NewBeta returns Beta(α, β).
func NewBeta(alpha, beta *nd.NDArray) Beta {
	check("probability.Beta", alpha, beta)
	return Beta{Concentration1: alpha, Concentration0: beta}
}

// lbeta is log B(α, β) = log Γ(α) + log Γ(β) − log Γ(α + β).
func lbeta(a, b *nd.NDArray) *nd.NDArray {
	return nd.Sub(nd.Add(nd.Lgamma(a), nd.Lgamma(b)), nd.Lgamma(nd.Add(a, b)))
}

// LogProb returns (α − 1) log x + (β − 1) log(1 − x) − log B(α, β).
func (d Beta) LogProb(x *nd.NDArray) *nd.NDArray {
	a, b := d.Concentration1, d.Concentration0
	t := nd.Add(nd.Xlogy(nd.AddScalar(a, -1), x), nd.Xlogy(nd.AddScalar(b, -1), nd.RSubScalar(1, x)))
	return nd.Sub(t, lbeta(a, b))
}

// Entropy returns log B(α, β) − (α − 1)ψ(α) − (β − 1)ψ(β) + (α + β − 2)ψ(α + β).
func (d Beta) Entropy() *nd.NDArray {
	a, b := d.Concentration1, d.Concentration0
	t := nd.Sub(lbeta(a, b), nd.Mul(nd.AddScalar(a, -1), nd.Digamma(a)))
	t = nd.Sub(t, nd.Mul(nd.AddScalar(b, -1), nd.Digamma(b)))
	ab := nd.Add(a, b)
	return nd.Add(t, nd.Mul(nd.AddScalar(ab, -2), nd.Digamma(ab)))
}

// Mean returns α/(α + β).
func (d Beta) Mean() *nd.NDArray {
	return nd.Div(d.Concentration1, nd.Add(d.Concentration1, d.Concentration0))
}

// Sample draws values of the batch shape on the host, as X/(X + Y) of two
// gamma draws.
func (d Beta) Sample() *nd.NDArray {
	shape := batchShape(d.Concentration1, d.Concentration0)
	a := nd.BroadcastTo(d.Concentration1, shape...).AsType(nd.Float64).Float64s()
	b := nd.BroadcastTo(d.Concentration0, shape...).AsType(nd.Float64).Float64s()
	x, y := gammaDraws(d.Concentration1, a), gammaDraws(d.Concentration1, b)
	for i := range x {
		x[i] /= x[i] + y[i]
	}
	return upload(d.Concentration1, x, shape)
}

// Dirichlet is the Dirichlet distribution over the simplex of the last
// axis of Concentration [..., K] (torch's Dirichlet).
type Dirichlet struct {
	Concentration *nd.NDArray
}

// NewDirichlet returns Dirichlet(concentration).
func NewDirichlet(concentration *nd.NDArray) Dirichlet {
	check("probability.Dirichlet", concentration)
	if concentration.NDim() == 0 {
		nd.Panicf("probability.Dirichlet", nd.ErrShape, "the concentration needs an event axis")
	}
	return Dirichlet{Concentration: concentration}
}

// LogProb returns Σ(α − 1) log x + log Γ(Σα) − Σ log Γ(α) for x [..., K].
func (d Dirichlet) LogProb(x *nd.NDArray) *nd.NDArray {
	a := d.Concentration
	t := nd.Sum(nd.Xlogy(nd.AddScalar(a, -1), x), -1)
	return nd.Sub(nd.Add(t, nd.Lgamma(nd.Sum(a, -1))), nd.Sum(nd.Lgamma(a), -1))
}

// Entropy returns log B(α) + (α₀ − K)ψ(α₀) − Σ(α − 1)ψ(α), α₀ = Σα.
func (d Dirichlet) Entropy() *nd.NDArray {
	a := d.Concentration
	k := float64(a.Shape()[a.NDim()-1])
	a0 := nd.Sum(a, -1)
	lb := nd.Sub(nd.Sum(nd.Lgamma(a), -1), nd.Lgamma(a0))
	t := nd.Add(lb, nd.Mul(nd.AddScalar(a0, -k), nd.Digamma(a0)))
	return nd.Sub(t, nd.Sum(nd.Mul(nd.AddScalar(a, -1), nd.Digamma(a)), -1))
}

// Mean returns α/Σα.
func (d Dirichlet) Mean() *nd.NDArray {
	return nd.Div(d.Concentration, nd.SumKeepDims(d.Concentration, -1))
}

// Sample draws points of the simplex [..., K] on the host, as normalised
// gamma draws.
func (d Dirichlet) Sample() *nd.NDArray {
	shape := d.Concentration.Shape()
	a := d.Concentration.AsType(nd.Float64).Float64s()
	g := gammaDraws(d.Concentration, a)
	k := shape[len(shape)-1]
	for r := 0; r+k <= len(g) && k > 0; r += k {
		s := 0.0
		for _, v := range g[r : r+k] {
			s += v
		}
		for i := r; i < r+k; i++ {
			g[i] /= s
		}
	}
	return upload(d.Concentration, g, shape)
}

// Poisson is the Poisson distribution of rate Rate (torch's Poisson): the
// log-probability of counts (floats, as torch's) and the mean; it has no
// sampler.
type Poisson struct {
	Rate *nd.NDArray
}

// NewPoisson returns Poisson(rate).
func NewPoisson(rate *nd.NDArray) Poisson {
	check("probability.Poisson", rate)
	return Poisson{Rate: rate}
}

// LogProb returns k log λ − λ − log Γ(k + 1).
func (d Poisson) LogProb(k *nd.NDArray) *nd.NDArray {
	return nd.Sub(nd.Sub(nd.Xlogy(k, d.Rate), d.Rate), nd.Lgamma(nd.AddScalar(k, 1)))
}

// Mean returns λ.
func (d Poisson) Mean() *nd.NDArray { return d.Rate }

// Exponential is the exponential distribution of rate Rate (torch's
// Exponential).
type Exponential struct {
	Rate *nd.NDArray
}

// NewExponential returns Exponential(rate).
func NewExponential(rate *nd.NDArray) Exponential {
	check("probability.Exponential", rate)
	return Exponential{Rate: rate}
}

// RSample draws −log(1 − u)/λ, u ~ U(0, 1), with a gradient to the rate.
func (d Exponential) RSample() *nd.NDArray {
	u := d.Rate.Session().RandomUniform(d.Rate.Context(), d.Rate.DType(), 0, 1, d.Rate.Shape()...)
	return nd.Div(nd.Neg(nd.Log1p(nd.Neg(u))), d.Rate)
}

// Sample draws values of the rate's shape, not differentiable.
func (d Exponential) Sample() *nd.NDArray { return d.RSample().Detach() }

// LogProb returns log λ − λx.
func (d Exponential) LogProb(x *nd.NDArray) *nd.NDArray {
	return nd.Sub(nd.Log(d.Rate), nd.Mul(d.Rate, x))
}

// Entropy returns 1 − log λ.
func (d Exponential) Entropy() *nd.NDArray { return nd.RSubScalar(1, nd.Log(d.Rate)) }

// Laplace is the Laplace distribution of location Loc and scale Scale
// (torch's Laplace).
type Laplace struct {
	Loc, Scale *nd.NDArray
}

// NewLaplace returns Laplace(loc, scale).
func NewLaplace(loc, scale *nd.NDArray) Laplace {
	check("probability.Laplace", loc, scale)
	return Laplace{Loc: loc, Scale: scale}
}

// RSample draws μ − b·sign(u)·log(1 − |u|), u ~ U(−1, 1), with gradients
// to both parameters.
func (d Laplace) RSample() *nd.NDArray {
	shape := batchShape(d.Loc, d.Scale)
	u := d.Loc.Session().RandomUniform(d.Loc.Context(), d.Loc.DType(), -1, 1, shape...)
	return nd.Sub(d.Loc, nd.Mul(d.Scale, nd.Mul(nd.Sign(u), nd.Log1p(nd.Neg(nd.Abs(u))))))
}

// Sample draws values of the batch shape, not differentiable.
func (d Laplace) Sample() *nd.NDArray { return d.RSample().Detach() }

// LogProb returns −log 2b − |x − μ|/b.
func (d Laplace) LogProb(x *nd.NDArray) *nd.NDArray {
	return nd.Sub(nd.Neg(nd.Log(nd.MulScalar(d.Scale, 2))), nd.Div(nd.Abs(nd.Sub(x, d.Loc)), d.Scale))
}

// Entropy returns 1 + log 2b.
func (d Laplace) Entropy() *nd.NDArray {
	return nd.AddScalar(nd.Log(nd.MulScalar(nd.BroadcastTo(d.Scale, batchShape(d.Loc, d.Scale)...), 2)), 1)
}

// gammaDraws draws Gamma(a[i], 1) values with Marsaglia and Tsang's
// method, from normal and uniform draws of like's context generator (a
// shape below 1 is boosted: Gamma(a+1)·U^(1/a)).
func gammaDraws(like *nd.NDArray, a []float64) []float64 {
	out := make([]float64, len(a))
	s, dev := like.Session(), like.Context()
	todo := make([]int, len(a))
	for i := range todo {
		if !(a[i] > 0) {
			nd.Panicf("probability.Gamma", nd.ErrArgument, "concentration %g must be positive", a[i])
		}
		todo[i] = i
	}
	for len(todo) > 0 {
		n := len(todo)
		z := s.RandomNormal(dev, nd.Float64, 0, 1, n).Float64s()
		u := s.RandomUniform(dev, nd.Float64, 0, 1, 2*n).Float64s()
		var again []int
		for j, i := range todo {
			ai := a[i]
			boost := 1.0
			if ai < 1 {
				boost = math.Pow(u[n+j], 1/ai)
				ai++
			}
			dd := ai - 1.0/3
			c := 1 / math.Sqrt(9*dd)
			v := 1 + c*z[j]
			if v <= 0 {
				again = append(again, i)
				continue
			}
			v = v * v * v
			if math.Log(u[j]) < 0.5*z[j]*z[j]+dd-dd*v+dd*math.Log(v) {
				out[i] = dd * v * boost
			} else {
				again = append(again, i)
			}
		}
		todo = again
	}
	return out
}

// upload makes an array of like's dtype, session and context from v.
func upload(like *nd.NDArray, v []float64, shape []int) *nd.NDArray {
	a := like.Session().FromSlice(like.Context(), v, len(v))
	a = nd.Reshape(a, shape...)
	if like.DType() != nd.Float64 {
		a = a.AsType(like.DType())
	}
	return a
}

// KLGamma returns KL(p‖q) of two gamma distributions:
// (αp − αq)ψ(αp) − log Γ(αp) + log Γ(αq) + αq(log βp − log βq) + αp(βq − βp)/βp.
func KLGamma(p, q Gamma) *nd.NDArray {
	ap, bp, aq, bq := p.Concentration, p.Rate, q.Concentration, q.Rate
	t := nd.Sub(nd.Mul(nd.Sub(ap, aq), nd.Digamma(ap)), nd.Lgamma(ap))
	t = nd.Add(t, nd.Lgamma(aq))
	t = nd.Add(t, nd.Mul(aq, nd.Sub(nd.Log(bp), nd.Log(bq))))
	return nd.Add(t, nd.Div(nd.Mul(ap, nd.Sub(bq, bp)), bp))
}

// KLBeta returns KL(p‖q) of two beta distributions.
func KLBeta(p, q Beta) *nd.NDArray {
	a1, b1, a2, b2 := p.Concentration1, p.Concentration0, q.Concentration1, q.Concentration0
	t := nd.Sub(lbeta(a2, b2), lbeta(a1, b1))
	t = nd.Add(t, nd.Mul(nd.Sub(a1, a2), nd.Digamma(a1)))
	t = nd.Add(t, nd.Mul(nd.Sub(b1, b2), nd.Digamma(b1)))
	return nd.Add(t, nd.Mul(nd.Sub(nd.Add(a2, b2), nd.Add(a1, b1)), nd.Digamma(nd.Add(a1, b1))))
}

// KLDirichlet returns KL(p‖q) of two Dirichlet distributions over the last
// axis.
func KLDirichlet(p, q Dirichlet) *nd.NDArray {
	a, b := p.Concentration, q.Concentration
	a0, b0 := nd.Sum(a, -1), nd.Sum(b, -1)
	t := nd.Sub(nd.Lgamma(a0), nd.Sum(nd.Lgamma(a), -1))
	t = nd.Sub(t, nd.Lgamma(b0))
	t = nd.Add(t, nd.Sum(nd.Lgamma(b), -1))
	d := nd.Sub(nd.Digamma(a), nd.ExpandDims(nd.Digamma(a0), -1))
	return nd.Add(t, nd.Sum(nd.Mul(nd.Sub(a, b), d), -1))
}

// KLExponential returns KL(p‖q) = log λp − log λq + λq/λp − 1.
func KLExponential(p, q Exponential) *nd.NDArray {
	r := nd.Div(q.Rate, p.Rate)
	return nd.AddScalar(nd.Sub(r, nd.Log(r)), -1)
}

// KLLaplace returns KL(p‖q) = log(bq/bp) + |μp − μq|/bq + (bp/bq)·e^(−|μp−μq|/bp) − 1.
func KLLaplace(p, q Laplace) *nd.NDArray {
	d := nd.Abs(nd.Sub(p.Loc, q.Loc))
	r := nd.Div(p.Scale, q.Scale)
	t := nd.Add(nd.Neg(nd.Log(r)), nd.Div(d, q.Scale))
	return nd.AddScalar(nd.Add(t, nd.Mul(r, nd.Exp(nd.Neg(nd.Div(d, p.Scale))))), -1)
}
