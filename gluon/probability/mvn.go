package probability

import (
	"math"
	"slices"

	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/linalg"
)

// MultivariateNormal is the normal distribution over vectors of size K
// with mean Loc [..., K] and covariance ScaleTril·ScaleTrilᵀ, ScaleTril
// [..., K, K] lower triangular with a positive diagonal (torch's
// MultivariateNormal). Its triangular solves and factorisations run
// through nd/linalg, on the host.
type MultivariateNormal struct {
	Loc, ScaleTril *nd.NDArray
}

// NewMultivariateNormal returns the distribution of mean loc and covariance
// cov [..., K, K] (symmetric positive-definite; its Cholesky factor is
// taken, with a gradient).
func NewMultivariateNormal(loc, cov *nd.NDArray) MultivariateNormal {
	check("probability.MultivariateNormal", loc, cov)
	return NewMultivariateNormalTril(loc, linalg.Cholesky(cov))
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
	// Only the lower triangle counts, as for torch's scale_tril: its upper
	// part gets no gradient.
	return MultivariateNormal{Loc: loc, ScaleTril: nd.Tril(scaleTril, 0)}
}

func (d MultivariateNormal) k() int { s := d.Loc.Shape(); return s[len(s)-1] }

// batch is the broadcast of the mean's and the scale's batch shapes.
func (d MultivariateNormal) batch() []int {
	ls, ss := d.Loc.Shape(), d.ScaleTril.Shape()
	return broadcast(ls[:len(ls)-1], ss[:len(ss)-2])
}

// RSample draws Loc + ScaleTril·ε, ε ~ N(0, I): [..., K], with gradients
// to both.
func (d MultivariateNormal) RSample() *nd.NDArray {
	shape := append(d.batch(), d.k(), 1)
	eps := d.Loc.Session().RandomNormal(d.Loc.Context(), d.Loc.DType(), 0, 1, shape...)
	return nd.Add(d.Loc, nd.Squeeze(nd.MatMul(d.ScaleTril, eps), -1))
}

// Sample draws vectors of the batch shape, not differentiable.
func (d MultivariateNormal) Sample() *nd.NDArray { return d.RSample().Detach() }

// halfLogDet is log det(ScaleTril) = Σ log diag, half the covariance's.
func (d MultivariateNormal) halfLogDet() *nd.NDArray {
	return nd.Sum(nd.Log(nd.Diagonal(d.ScaleTril, 0)), -1)
}

// LogProb returns log p(x) for x [..., K]: −½(K log 2π + ‖L⁻¹(x − μ)‖²) −
// log det L.
func (d MultivariateNormal) LogProb(x *nd.NDArray) *nd.NDArray {
	diff := nd.Sub(x, d.Loc)
	ds := diff.Shape()
	batch := broadcast(ds[:len(ds)-1], d.batch())
	l := nd.BroadcastTo(d.ScaleTril, append(slices.Clone(batch), d.k(), d.k())...)
	diff = nd.BroadcastTo(diff, append(slices.Clone(batch), d.k())...)
	z := linalg.Solve(l, diff)
	m := nd.Sum(nd.Square(z), -1)
	return nd.Sub(nd.AddScalar(nd.MulScalar(m, -0.5), -0.5*float64(d.k())*math.Log(2*math.Pi)), d.halfLogDet())
}

// Entropy returns ½K(1 + log 2π) + log det L.
func (d MultivariateNormal) Entropy() *nd.NDArray {
	h := nd.AddScalar(d.halfLogDet(), 0.5*float64(d.k())*(1+math.Log(2*math.Pi)))
	return nd.BroadcastTo(h, d.batch()...)
}

// Mean returns Loc broadcast to the batch shape.
func (d MultivariateNormal) Mean() *nd.NDArray {
	return nd.BroadcastTo(d.Loc, append(d.batch(), d.k())...)
}

// Covariance returns ScaleTril·ScaleTrilᵀ.
func (d MultivariateNormal) Covariance() *nd.NDArray {
	return nd.MatMul(d.ScaleTril, nd.SwapAxes(d.ScaleTril, -1, -2))
}
