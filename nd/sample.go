package nd

import (
	"math"

	"github.com/goluon/goluon/ctx"
)

// The samplers below draw on the host from dev's generator (one stream per
// context, reseeded by Seed) and upload the result, as RandomUniform does:
// the same seed gives the same draws on every backend.

// RandomInt draws integers uniformly from [lo, hi) into an array of the
// integer dtype dt (Int32, Int64 or Uint8), as PyTorch's randint.
func RandomInt(dev ctx.Context, dt DType, lo, hi int64, shape ...int) *NDArray {
	return creator().RandomInt(dev, dt, lo, hi, shape...)
}

// RandomInt is the package-level RandomInt making an array of s, from s's
// generators.
func (s *Session) RandomInt(dev ctx.Context, dt DType, lo, hi int64, shape ...int) *NDArray {
	const op = "RandomInt"
	checkShape(op, shape)
	if !dt.IsInt() {
		fail(op, ErrDType, "needs an integer dtype, got %v", dt)
	}
	if hi <= lo {
		fail(op, ErrArgument, "empty range [%d, %d)", lo, hi)
	}
	n := numel(shape)
	draw := func(s *Session) any {
		v := make([]int64, n)
		g := s.rngFor(dev)
		g.mu.Lock()
		for i := range v {
			v[i] = lo + g.r.Int64N(hi-lo)
		}
		g.mu.Unlock()
		return v
	}
	a := newArray(op, s, dev, dt, shape)
	if r := currentTrace(); r != nil {
		r.random(a, s, draw)
		return a
	}
	a.be().Write(a.st.buf, a.off, draw(s))
	return a
}

// Bernoulli draws 1 with probability p[i] and 0 otherwise for every
// element of p (a floating array of probabilities in [0, 1]), returning an
// array of p's shape and dtype, as PyTorch's bernoulli. It is not
// differentiable.
func Bernoulli(p *NDArray) *NDArray {
	const op = "Bernoulli"
	defer checkLive(op, p).done()
	checkFloat(op, p)
	probs := p.Float64s()
	for i, q := range probs {
		if !(q >= 0 && q <= 1) {
			fail(op, ErrArgument, "probability %g at element %d is outside [0, 1]", q, i)
		}
	}
	out := make([]float64, len(probs))
	g := p.Session().rngFor(p.st.dev)
	g.mu.Lock()
	for i, q := range probs {
		if g.r.Float64() < q {
			out[i] = 1
		}
	}
	g.mu.Unlock()
	a := newArray(op, p.Session(), p.st.dev, p.dtype, p.shape)
	a.be().Write(a.st.buf, a.off, out)
	return a
}

// Categorical draws n class indices per row from the distributions along
// the last axis of weights, returning Int64 indices of shape
// weights.shape[:-1] + [n] (PyTorch's multinomial with replacement; the
// sampling step of text generation). With logits, weights are
// unnormalised log-probabilities (softmax is applied, stably); otherwise
// they are non-negative probabilities or weights, normalised per row.
// A row whose weights are all zero, or that holds a negative, NaN or
// infinite weight, is an error.
func Categorical(weights *NDArray, n int, logits bool) *NDArray {
	const op = "Categorical"
	defer checkLive(op, weights).done()
	checkFloat(op, weights)
	if weights.NDim() == 0 || weights.shape[weights.NDim()-1] == 0 {
		fail(op, ErrShape, "weights of shape %v have no classes", weights.shape)
	}
	if n < 0 {
		fail(op, ErrArgument, "negative sample count %d", n)
	}
	k := weights.shape[weights.NDim()-1]
	w := weights.Float64s()
	rows := len(w) / k
	cdf := make([]float64, len(w))
	for r := range rows {
		row, c := w[r*k:(r+1)*k], cdf[r*k:(r+1)*k]
		top := math.Inf(-1)
		if logits {
			for _, v := range row {
				top = max(top, v)
			}
		}
		sum := 0.0
		for j, v := range row {
			if logits {
				v = math.Exp(v - top)
			}
			if !(v >= 0) || math.IsInf(v, 1) {
				fail(op, ErrArgument, "row %d has the weight %g at class %d", r, row[j], j)
			}
			sum += v
			c[j] = sum
		}
		if sum == 0 || math.IsInf(sum, 1) {
			fail(op, ErrArgument, "row %d's weights sum to %g", r, sum)
		}
		last := 0
		for j := range c {
			c[j] /= sum
			if j == 0 && c[0] > 0 || j > 0 && c[j] > c[j-1] {
				last = j
			}
		}
		// Rounding may leave the total just below 1: end the distribution
		// at exactly 1 from its last class of non-zero weight, so that a
		// zero-weight class is never drawn.
		for j := last; j < k; j++ {
			c[j] = 1
		}
	}
	out := make([]int64, rows*n)
	g := weights.Session().rngFor(weights.st.dev)
	g.mu.Lock()
	for r := range rows {
		c := cdf[r*k : (r+1)*k]
		for s := range n {
			u := g.r.Float64()
			j := 0
			for j < k-1 && c[j] <= u {
				j++
			}
			out[r*n+s] = int64(j)
		}
	}
	g.mu.Unlock()
	shape := append(weights.Shape()[:weights.NDim()-1], n)
	a := newArray(op, weights.Session(), weights.st.dev, Int64, shape)
	a.be().Write(a.st.buf, a.off, out)
	return a
}

// Permutation returns a random permutation of 0 … n−1 as an Int64 array
// (NumPy's permutation, PyTorch's randperm).
func Permutation(dev ctx.Context, n int) *NDArray {
	return creator().Permutation(dev, n)
}

// Permutation is the package-level Permutation making an array of s, from s's
// generators.
func (s *Session) Permutation(dev ctx.Context, n int) *NDArray {
	const op = "Permutation"
	if n < 0 {
		fail(op, ErrArgument, "negative length %d", n)
	}
	draw := func(s *Session) any {
		g := s.rngFor(dev)
		g.mu.Lock()
		p := g.r.Perm(n)
		g.mu.Unlock()
		v := make([]int64, n)
		for i, x := range p {
			v[i] = int64(x)
		}
		return v
	}
	a := newArray(op, s, dev, Int64, []int{n})
	if r := currentTrace(); r != nil {
		r.random(a, s, draw)
		return a
	}
	a.be().Write(a.st.buf, a.off, draw(s))
	return a
}
