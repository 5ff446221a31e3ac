package nd

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// optArg is a's argument, or an Arg with a nil Buf for an absent operand.
func optArg(a *NDArray) backend.Arg {
	if a == nil {
		return backend.Arg{}
	}
	return a.arg()
}

// statsLike reports whether the running statistics that are present are
// arrays of c values of dtype dt on x's device and backend, as the fused
// statistics kernels (backend.BatchNormStatsKernels) take them.
func statsLike(x *NDArray, dt DType, c int, runs ...*NDArray) bool {
	for _, r := range runs {
		if r != nil && (r.dtype != dt || r.Size() != c || r.st.dev != x.st.dev || r.st.be != x.st.be) {
			return false
		}
	}
	return true
}

// batchNormFused is BatchNorm on a backend with backend.BatchNormKernels:
// one or two passes over x forward and over x and the output gradient
// backward, keeping only the per-channel mean and inverse standard
// deviation for the backward pass (x̂ is recomputed from x). A half x
// reaches it only on a backend.HalfBatchNormer (nativeHalfBatchNorm), with
// float32 per-channel arrays: the elements' operands are storageArg.
func batchNormFused(bk backend.BatchNormKernels, x, gamma, beta, runMean, runVar *NDArray, o bnParams, ax, c int, train, relu bool) *NDArray {
	const op = "BatchNorm"
	dev, dt := x.st.dev, x.dtype
	cdt := dt // the per-channel arrays' dtype
	if dt.IsHalf() {
		cdt = Float32
	}
	sess := sessionOf(op, x, gamma, beta, runMean, runVar)
	p := backend.ChannelParams{Outer: numel(x.shape[:ax]), C: c, Inner: numel(x.shape[ax+1:]), DType: dt, Device: dev}
	pc := p // the per-channel kernels'
	pc.DType = cdt
	m := p.Outer * p.Inner
	var mean, invstd *NDArray // [C]
	sk, fusedStats := kernelsOf[backend.BatchNormStatsKernels](x.be())
	fusedStats = fusedStats && statsLike(x, cdt, c, runMean, runVar)
	varScale := float64(m) / math.Max(float64(m-1), 1)
	switch {
	case train && fusedStats:
		mean = newArray(op, sess, dev, cdt, []int{c})
		variance := newArray(op, sess, dev, cdt, []int{c})
		invstd = newArray(op, sess, dev, cdt, []int{c})
		bk.BatchNormStats(p, mean.arg(), variance.arg(), x.storageArg())
		sk.BatchNormTrainStats(pc, invstd.arg(), mean.arg(), variance.arg(), optArg(runMean), optArg(runVar), o.epsilon, o.momentum, varScale)
		variance.Release()
	case train:
		mean = newArray(op, sess, dev, cdt, []int{c})
		variance := newArray(op, sess, dev, cdt, []int{c})
		bk.BatchNormStats(p, mean.arg(), variance.arg(), x.storageArg())
		invstd = unaryRaw(op, backend.AddScalar, variance, o.epsilon, 0)
		unaryInPlace(invstd, backend.RSqrt, 0, 0)
		updateRunning(runMean, mean, o.momentum, 1)
		updateRunning(runVar, variance, o.momentum, varScale)
		variance.Release()
	case fusedStats && runMean != nil && runVar != nil:
		mean = newArray(op, sess, dev, cdt, []int{c})
		invstd = newArray(op, sess, dev, cdt, []int{c})
		sk.BatchNormEvalStats(pc, mean.arg(), invstd.arg(), runMean.arg(), runVar.arg(), o.epsilon)
	default:
		// Copies: the running statistics may be updated in place before
		// this output's backward pass runs.
		mean = unaryRaw(op, backend.MulScalar, runMean, 1, 0)
		invstd = unaryRaw(op, backend.AddScalar, runVar, o.epsilon, 0)
		unaryInPlace(invstd, backend.RSqrt, 0, 0)
	}
	y := newArray(op, sess, dev, dt, x.shape)
	if rk, ok := kernelsOf[backend.BatchNormReluKernels](x.be()); relu && ok {
		rk.BatchNormApplyRelu(p, y.storageArg(), x.storageArg(), mean.arg(), invstd.arg(), optArg(gamma), optArg(beta))
	} else {
		bk.BatchNormApply(p, y.storageArg(), x.storageArg(), mean.arg(), invstd.arg(), optArg(gamma), optArg(beta))
		if relu {
			unaryInPlace(y, backend.Relu, 0, 0)
		}
	}
	if !sess.IsRecording() {
		release(mean, invstd)
		return y
	}
	sess.recordDiff(op, y, []*NDArray{x, gamma, beta}, func(g *NDArray, need []bool) []*NDArray {
		if relu { // the normalisation's gradient: g where the output is positive, as Relu's backward pass gives it
			defer checkLive(op, g).done()
			defer checkMemory(op, y).done()
			gr := newArray(op, sess, dev, dt, x.shape)
			g.be().Binary(backend.ReluGrad, x.shape, gr.storageArg(), y.storageArg(), g.storageArg())
			defer gr.Release()
			g = gr
		}
		dgamma := newArray(op, sess, dev, cdt, []int{c})
		dbeta := newArray(op, sess, dev, cdt, []int{c})
		grads := make([]*NDArray, 3)
		var dx backend.Arg
		if need[0] {
			grads[0] = newArray(op, sess, dev, dt, x.shape)
			dx = grads[0].storageArg()
		}
		backwardKernels(g, bk).BatchNormBackward(p, train, dx, dgamma.arg(), dbeta.arg(), g.storageArg(), x.storageArg(), mean.arg(), invstd.arg(), optArg(gamma))
		grads[1], grads[2] = dgamma, dbeta
		if !need[1] {
			dgamma.Release()
			grads[1] = nil
		}
		if !need[2] {
			dbeta.Release()
			grads[2] = nil
		}
		return grads
	}, bnDiff(x, gamma, mean, invstd, y, ax, o.epsilon, train, relu))
	return y
}
