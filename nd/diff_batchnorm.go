package nd

// bnDiff returns BatchNorm's differentiable backward function for x
// normalised over every axis but ax. In training mode the batch
// statistics are computed again from x with recorded ops, so that their
// dependence on x is differentiated too; with fixed statistics mean and
// invstd (c values each, copies taken when the op ran) are constants.
// With relu, g first passes where the output y is positive.
func bnDiff(x, gamma, mean, invstd, y *NDArray, ax int, eps float64, train, relu bool) BackwardFunc {
	c := x.shape[ax]
	kshape := make([]int, x.NDim())
	var axes []int
	for i := range kshape {
		kshape[i] = 1
		if i != ax {
			axes = append(axes, i)
		}
	}
	kshape[ax] = c
	m := float64(x.Size() / max(c, 1))
	return func(g *NDArray, need []bool) []*NDArray {
		if relu {
			g = Mul(g, positiveMask(y))
		}
		var xhat, is *NDArray
		if train {
			xc := Sub(x, MeanKeepDims(x, axes...))
			is = Rsqrt(AddScalar(MeanKeepDims(Square(xc), axes...), eps))
			xhat = Mul(xc, is)
		} else {
			is = Reshape(invstd.Detach(), kshape...).AsType(x.dtype)
			xhat = Mul(Sub(x, Reshape(mean.Detach(), kshape...).AsType(x.dtype)), is)
		}
		dbeta := SumKeepDims(g, axes...)
		dgamma := SumKeepDims(Mul(g, xhat), axes...)
		grads := make([]*NDArray, 3)
		if need[0] {
			var dx *NDArray
			if train { // invstd/M · (M·g − Σg − x̂·Σ(g·x̂))
				dx = Mul(MulScalar(Sub(Sub(MulScalar(g, m), dbeta), Mul(xhat, dgamma)), 1/m), is)
			} else {
				dx = Mul(g, is)
			}
			if gamma != nil {
				dx = Mul(dx, Reshape(gamma, kshape...))
			}
			grads[0] = dx
		}
		if need[1] {
			grads[1] = Reshape(dgamma, c)
		}
		if need[2] {
			grads[2] = Reshape(dbeta, c)
		}
		return grads
	}
}
