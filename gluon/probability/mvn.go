package probability

import (
	"math"
	"slices"

	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/linalg"
)

// MultivariateNormal is the normal distribution over vectors of size K
// with mean Loc [..., K] and covariance L·Lᵀ, L = ScaleTril() [..., K, K]
// lower triangular with a positive diagonal (torch's MultivariateNormal).
// Its triangular solves and factorisations run through nd/linalg, on the
// host.
type MultivariateNormal struct {
	Loc  *nd.NDArray
	tril *nd.NDArray // as given: only its lower triangle counts
	cov  *nd.NDArray // or the covariance, factorised when used
}

// NewMultivariateNormal returns the distribution of mean loc and covariance
// cov [..., K, K] (symmetric positive-definite; its Cholesky factor is
// taken, with a gradient).
func NewMultivariateNormal(loc, cov *nd.NDArray) MultivariateNormal {
	d := NewMultivariateNormalTril(loc, cov) // the same shapes
	d.tril, d.cov = nil, cov
	return d
}

// NewMultivariateNormalTril returns the distribution of mean loc and
// covariance L·Lᵀ for the lower triangle L of scaleTril.
func NewMultivariateNormalTril(loc, scaleTril *nd.NDArray) MultivariateNormal {
	const op = "probability.MultivariateNormal"
	check(op, loc, scaleTril)
	ls, ss := loc.Shape(), scaleTril.Shape()
	if len(ls) < 1 || len(ss) < 2 || ss[len(ss)-1] != ls[len(ls)-1] || ss[len(ss)-2] != ls[len(ls)-1] {
		nd.Panicf(op, nd.ErrShape, "mean of shape %v and scale of shape %v: want [..., K] and [..., K, K]", ls, ss)
	}
	return MultivariateNormal{Loc: loc, tril: scaleTril}
}

// ScaleTril returns L: the lower triangle of the scale given (its upper
// part gets no gradient, as torch's), or the covariance's Cholesky factor.
func (d MultivariateNormal) ScaleTril() *nd.NDArray {
	if d.cov != nil {
		return linalg.Cholesky(d.cov)
	}
	return nd.Tril(d.tril, 0)
}

func (d MultivariateNormal) scaleShape() []int {
	if d.cov != nil {
		return d.cov.Shape()
	}
	return d.tril.Shape()
}

func (d MultivariateNormal) k() int { s := d.Loc.Shape(); return s[len(s)-1] }

// batch is the broadcast of the mean's and the scale's batch shapes.
func (d MultivariateNormal) batch() []int {
	ls, ss := d.Loc.Shape(), d.scaleShape()
	return broadcast(ls[:len(ls)-1], ss[:len(ss)-2])
}

// RSample draws Loc + ScaleTril·ε, ε ~ N(0, I): [..., K], with gradients
// to both.
func (d MultivariateNormal) RSample() *nd.NDArray {
	shape := append(d.batch(), d.k(), 1)
	eps := d.Loc.Session().RandomNormal(d.Loc.Context(), d.Loc.DType(), 0, 1, shape...)
	return nd.Add(d.Loc, nd.Squeeze(nd.MatMul(d.ScaleTril(), eps), -1))
}

// Sample draws vectors of the batch shape, not differentiable.
func (d MultivariateNormal) Sample() *nd.NDArray { return d.RSample().Detach() }

// halfLogDet is log det L = Σ log diag L, half the covariance's.
func halfLogDet(l *nd.NDArray) *nd.NDArray {
	return nd.Sum(nd.Log(nd.Diagonal(l, 0)), -1)
}

// LogProb returns log p(x) for x [..., K]: −½(K log 2π + ‖L⁻¹(x − μ)‖²) −
// log det L.
func (d MultivariateNormal) LogProb(x *nd.NDArray) *nd.NDArray {
	diff := nd.Sub(x, d.Loc)
	ds := diff.Shape()
	batch := broadcast(ds[:len(ds)-1], d.batch())
	tril := d.ScaleTril()
	l := nd.BroadcastTo(tril, append(slices.Clone(batch), d.k(), d.k())...)
	diff = nd.BroadcastTo(diff, append(slices.Clone(batch), d.k())...)
	z := linalg.Solve(l, diff)
	m := nd.Sum(nd.Square(z), -1)
	return nd.Sub(nd.AddScalar(nd.MulScalar(m, -0.5), -0.5*float64(d.k())*math.Log(2*math.Pi)), halfLogDet(tril))
}

// Entropy returns ½K(1 + log 2π) + log det L.
func (d MultivariateNormal) Entropy() *nd.NDArray {
	h := nd.AddScalar(halfLogDet(d.ScaleTril()), 0.5*float64(d.k())*(1+math.Log(2*math.Pi)))
	return nd.BroadcastTo(h, d.batch()...)
}

// Mean returns Loc broadcast to the batch shape.
func (d MultivariateNormal) Mean() *nd.NDArray {
	return nd.BroadcastTo(d.Loc, append(d.batch(), d.k())...)
}

// Covariance returns L·Lᵀ, broadcast to the batch shape.
func (d MultivariateNormal) Covariance() *nd.NDArray {
	l := d.ScaleTril()
	return nd.BroadcastTo(nd.MatMul(l, nd.SwapAxes(l, -1, -2)), append(d.batch(), d.k(), d.k())...)
}
