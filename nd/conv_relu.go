package nd

import "github.com/goluon/goluon/nd/backend"

// Conv2DBiasRelu is BiasRelu(Conv2D(x, w, nil, o), bias, 1): a
// convolution layer with a ReLU. Where the backend has the fused kernel
// (backend.ConvBiasReluKernels) the bias and the ReLU are applied to each
// image's output while it is in cache instead of in a pass of their own;
// outputs and gradients equal the composition's bit for bit (the backward
// pass is BiasRelu's, then the convolution's). Elsewhere, and under
// autocast or for half-precision arrays, it is the composition.
func Conv2DBiasRelu(x, w, bias *NDArray, o ConvOpts) *NDArray {
	const op = "Conv2DBiasRelu"
	if x == nil || w == nil || bias == nil {
		fail(op, ErrArgument, "x, w and bias must not be nil")
	}
	defer checkLive(op, x, w, bias).done() // pinned while the kernel reads them
	composed := func() *NDArray { return BiasRelu(Conv2D(x, w, nil, o), bias, 1) }
	if autocasting.Load() != 0 || x.dtype.IsHalf() || !fusedKernels() {
		return composed()
	}
	be := x.be()
	ck, ok := kernelsOf[backend.ConvBiasReluKernels](be)
	bk, ok2 := kernelsOf[backend.BiasReluKernels](be)
	if !ok || !ok2 {
		return composed()
	}
	inputs := convInputs(op, x, w, bias)
	p := convParams(op, x, w, o)
	if bias.NDim() != 1 || bias.shape[0] != p.OutC {
		fail(op, ErrShape, "bias shape %v does not match %d output channels", bias.shape, p.OutC)
	}
	sess := sessionOf(op, inputs...)
	dev, dt := x.st.dev, x.dtype
	y := newArray(op, sess, dev, dt, []int{p.N, p.OutC, p.OutH, p.OutW})
	ck.Conv2DBiasRelu(p, y.arg(), x.arg(), w.arg(), bias.arg())
	convD := convDiff(p, x, w, y.shape, true, false)
	RecordDiff(op, y, inputs, func(g *NDArray, need []bool) []*NDArray {
		defer checkMemory(op, y).done() // the backward pass reads the output
		cp := backend.ChannelParams{Outer: p.N, C: p.OutC, Inner: p.OutH * p.OutW, DType: dt, Device: dev}
		dz := newArray(op, sess, dev, dt, y.shape) // the gradient of the convolution's output
		var db *NDArray
		var dbArg backend.Arg
		if need[2] {
			db = newArray(op, sess, dev, dt, []int{p.OutC})
			dbArg = db.arg()
		}
		backwardKernels(g, bk).BiasReluBackward(cp, dz.arg(), dbArg, g.arg(), y.arg())
		grads := convGrads(op, dz, x, w, false, p, false, 4, need[:2])
		dz.Release()
		return []*NDArray{grads[0], grads[1], db}
	}, func(g *NDArray, need []bool) []*NDArray { return convD(Mul(g, positiveMask(y)), need) })
	return y
}
