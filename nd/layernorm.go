package nd

// The normalisations of sequence models, composed from reductions and
// elementwise ops: each normalises x over some axes to zero mean and unit
// (biased) variance, x̂ = (x − mean)/√(var + eps), then applies a
// per-channel scale and shift. gamma and beta may be nil (no scale, no
// shift). Gradients reach x, gamma and beta.

// LayerNorm normalises x over axis (Gluon's LayerNorm(axis), PyTorch's
// layer_norm over the last dimension when axis is −1); gamma and beta
// hold one value per index of that axis.
func LayerNorm(x, gamma, beta *NDArray, axis int, eps float64) *NDArray {
	return dispatch("LayerNorm", castFloat32, []*NDArray{x, gamma, beta}, func(in []*NDArray) *NDArray { return layerNormOp(in[0], in[1], in[2], axis, eps) })
}

func layerNormOp(x, gamma, beta *NDArray, axis int, eps float64) *NDArray {
	const op = "LayerNorm"
	in := lifted(op, x, gamma, beta)
	x, gamma, beta = in[0], in[1], in[2]
	ax := normAxis(op, axis, x.NDim())
	checkAffine(op, x, gamma, beta, ax)
	return affine(normalize(op, x, eps, ax), gamma, beta, ax)
}

// GroupNorm splits the channels (axis 1) of x, shaped [N, C, ...], into
// groups of C/groups and normalises each sample's group over its channels
// and positions (PyTorch's group_norm); gamma and beta hold one value per
// channel.
func GroupNorm(x, gamma, beta *NDArray, groups int, eps float64) *NDArray {
	return dispatch("GroupNorm", castFloat32, []*NDArray{x, gamma, beta}, func(in []*NDArray) *NDArray { return groupNormOp(in[0], in[1], in[2], groups, eps) })
}

func groupNormOp(x, gamma, beta *NDArray, groups int, eps float64) *NDArray {
	const op = "GroupNorm"
	in := lifted(op, x, gamma, beta)
	x, gamma, beta = in[0], in[1], in[2]
	if x.NDim() < 2 {
		fail(op, ErrShape, "want an input [N, C, ...], got %v", x.shape)
	}
	c := x.shape[1]
	if groups < 1 || c%groups != 0 {
		fail(op, ErrArgument, "%d groups do not divide %d channels", groups, c)
	}
	checkAffine(op, x, gamma, beta, 1)
	g := Reshape(x, x.shape[0], groups, -1)
	y := Reshape(normalize(op, g, eps, 2), x.shape...)
	return affine(y, gamma, beta, 1)
}

// InstanceNorm normalises each sample's channel of x, shaped [N, C, ...],
// over its positions (PyTorch's instance_norm without running statistics):
// GroupNorm with one channel per group.
func InstanceNorm(x, gamma, beta *NDArray, eps float64) *NDArray {
	return dispatch("InstanceNorm", castFloat32, []*NDArray{x, gamma, beta}, func(in []*NDArray) *NDArray { return instanceNormOp(in[0], in[1], in[2], eps) })
}

func instanceNormOp(x, gamma, beta *NDArray, eps float64) *NDArray {
	defer checkLive("InstanceNorm", x).done()
	if x.NDim() < 2 {
		fail("InstanceNorm", ErrShape, "want an input [N, C, ...], got %v", x.shape)
	}
	return GroupNorm(x, gamma, beta, x.shape[1], eps)
}

// normalize returns (x − mean)/√(var + eps) over axis ax.
func normalize(op string, x *NDArray, eps float64, ax int) *NDArray {
	if eps < 0 {
		fail(op, ErrArgument, "negative eps %g", eps)
	}
	d := Sub(x, MeanKeepDims(x, ax))
	v := MeanKeepDims(Square(d), ax)
	return Mul(d, Rsqrt(AddScalar(v, eps)))
}

// checkAffine checks that gamma and beta (either may be nil) are vectors
// as long as x's axis ax.
func checkAffine(op string, x, gamma, beta *NDArray, ax int) {
	for _, p := range []*NDArray{gamma, beta} {
		if p != nil && (p.NDim() != 1 || p.shape[0] != x.shape[ax]) {
			fail(op, ErrShape, "scale or shift of shape %v for input %v: want [%d] (axis %d)", p.shape, x.shape, x.shape[ax], ax)
		}
	}
}

// affine returns y·gamma + beta, the vectors broadcast along axis ax.
func affine(y, gamma, beta *NDArray, ax int) *NDArray {
	if gamma != nil {
		y = Mul(y, Reshape(gamma, channelShape(y.NDim(), ax, gamma.shape[0])...))
	}
	if beta != nil {
		y = Add(y, Reshape(beta, channelShape(y.NDim(), ax, beta.shape[0])...))
	}
	return y
}
