package nd

// Covariance and correlation matrices, PyTorch's cov and corrcoef, composed
// from reductions, elementwise ops and MatMul (so they run where the input
// lives and are differentiable); checking the weights and the degrees of
// freedom reads a few scalars back to the host, as PyTorch's does.

// Cov returns the covariance matrix of the variables in x's rows, whose
// columns are observations (PyTorch's cov): x is a floating matrix
// [V, N], or a vector (one variable) or scalar (one observation). The
// result is [V, V], or a 0-d array for one variable. correction is
// subtracted from the number of observations (1: the unbiased estimate, 0:
// the maximum-likelihood one). fweights, when not nil, is an integer
// vector of N non-negative frequencies; aweights a vector of N
// non-negative observation weights of x's dtype (NaN is an error, as in
// PyTorch); with both, each
// observation is weighted by their product. With aweights and a non-zero
// correction the normalisation is Σw − correction·Σ(w·aweights)/Σw, as in
// PyTorch. Degrees of freedom ≤ 0 divide by 0 (Inf and NaN, as PyTorch's
// after its warning); weights summing to 0 are an error. The covariance is
// differentiable in x and aweights.
func Cov(x *NDArray, correction int, fweights, aweights *NDArray) *NDArray {
	const op = "Cov"
	defer checkLive(op, x).done()
	if fweights != nil {
		defer checkLiveSameContext(op, x, fweights).done()
	}
	if aweights != nil {
		defer checkInputs(op, x, aweights).done()
	}
	checkFloat(op, x)
	if x.NDim() > 2 {
		fail(op, ErrShape, "x of shape %v: want at most two axes (variables, observations)", x.shape)
	}
	in := x
	if x.NDim() < 2 {
		in = Reshape(x, 1, x.Size())
	}
	obs := in.shape[1]
	s := sessionOf(op, x, fweights, aweights)
	var w, aw *NDArray // the product of the weights; aweights as a vector
	if fweights != nil {
		if !fweights.dtype.IsInt() {
			fail(op, ErrDType, "fweights are %v: want an integer dtype", fweights.dtype)
		}
		w = covWeights(op, s, "fweights", fweights, obs).AsType(x.dtype)
	}
	if aweights != nil {
		aw = covWeights(op, s, "aweights", aweights, obs)
		if w == nil {
			w = aw
		} else {
			w = Mul(w, aw)
		}
	}
	var avg, norm *NDArray // norm nil: normalise by normVal
	var normVal float64
	if w == nil {
		if obs > 0 {
			avg = DivScalar(Sum(in, 1), float64(obs))
		} else { // 0/0: NaN means, as PyTorch's
			avg = Div(Sum(in, 1), Reshape(s.Zeros(x.st.dev, x.dtype, 1)))
		}
		normVal = float64(obs - correction)
	} else {
		wsum := Sum(w)
		if wsum.Scalar() == 0 {
			fail(op, ErrArgument, "the weights sum to zero")
		}
		avg = Div(Sum(Mul(in, w), 1), wsum)
		if aw != nil && correction != 0 {
			norm = Sub(wsum, Div(MulScalar(Sum(Mul(w, aw)), float64(correction)), wsum))
		} else {
			norm = SubScalar(wsum, float64(correction))
		}
		normVal = norm.Scalar()
	}
	if normVal <= 0 { // PyTorch warns and divides by zero
		norm = Reshape(s.Zeros(x.st.dev, x.dtype, 1))
	}
	cen := Sub(in, ExpandDims(avg, 1))
	rhs := cen
	if w != nil {
		rhs = Mul(cen, w)
	}
	c := MatMul(cen, Transpose(rhs))
	if norm != nil {
		c = Div(c, norm)
	} else {
		c = DivScalar(c, normVal)
	}
	if c.shape[0] == 1 {
		return Reshape(c)
	}
	return c
}

// covWeights checks a weight array of Cov (at most one axis, n elements,
// none negative or NaN) and returns it as a vector.
func covWeights(op string, s *Session, name string, w *NDArray, n int) *NDArray {
	if w.NDim() > 1 || w.Size() != n {
		fail(op, ErrShape, "%s of shape %v: want a vector of %d weights, one per observation", name, w.shape, n)
	}
	v := Reshape(w, n)
	if n > 0 {
		// !(w >= 0), as PyTorch's check (min() >= 0): a NaN weight fails
		// it too.
		zero := Reshape(s.Zeros(w.st.dev, w.dtype, 1))
		if ok := AllTrue(GreaterEqual(v.Detach(), zero)); !ok.Bools()[0] {
			fail(op, ErrArgument, "%s hold a negative or NaN weight", name)
		}
	}
	return v
}

// Corrcoef returns the Pearson correlation coefficients of the variables
// in x's rows (PyTorch's corrcoef): Cov(x, 1, nil, nil) divided by the
// standard deviations of both variables, clipped to [−1, 1]. One variable
// gives a 0-d array, 1 (NaN where its variance is 0, Inf or NaN). A
// variable of zero variance gives NaN in its row and column. It is
// differentiable in x.
func Corrcoef(x *NDArray) *NDArray {
	const op = "Corrcoef"
	defer checkLive(op, x).done()
	if x.NDim() > 2 {
		fail(op, ErrShape, "x of shape %v: want at most two axes (variables, observations)", x.shape)
	}
	c := Cov(x, 1, nil, nil)
	if c.NDim() == 0 {
		return Div(c, c)
	}
	std := Sqrt(Diagonal(c, 0))
	v := std.shape[0]
	c = Div(c, Reshape(std, v, 1))
	c = Div(c, Reshape(std, 1, v))
	return Clip(c, -1, 1)
}
