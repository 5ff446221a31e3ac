package nd

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// BatchNormOpts configures BatchNorm. The zero value is Gluon's default;
// a nil field takes its default, and any value is written with new(v):
// BatchNormOpts{Axis: new(-1), Momentum: new(0.0)}.
type BatchNormOpts struct {
	// Axis is the channel axis, negative counting from the end (default 1,
	// NCHW).
	Axis *int
	// Epsilon is added to the variance (default 1e-5).
	Epsilon *float64
	// Momentum weighs the old running statistics, as in MXNet/Gluon:
	// running = Momentum*running + (1-Momentum)*batch (default 0.9; this is
	// PyTorch's momentum 0.1). 0 makes them the last batch's.
	Momentum *float64
	// UseGlobalStats normalises with the running statistics even in
	// training mode.
	UseGlobalStats bool
	// Relu applies max(·, 0) to the output: Relu(BatchNorm(...)) with the
	// same bits, in the normalisation's own pass over the output where the
	// backend has the kernels (backend.BatchNormReluKernels), keeping only
	// the output (not the normalised values) for the backward pass, which
	// reads it as Exp's does: releasing it before the backward pass is an
	// ErrReleased error, and changing it in place changes the gradients.
	Relu bool
}

// bnParams are BatchNormOpts with the defaults filled in.
type bnParams struct {
	axis              int
	epsilon, momentum float64
	useGlobalStats    bool
}

// Resolved returns the channel axis, epsilon and momentum o stands for,
// its defaults filled in.
func (o BatchNormOpts) Resolved() (axis int, epsilon, momentum float64) {
	p := o.params()
	return p.axis, p.epsilon, p.momentum
}

func (o BatchNormOpts) params() bnParams {
	p := bnParams{axis: 1, epsilon: 1e-5, momentum: 0.9, useGlobalStats: o.UseGlobalStats}
	if o.Axis != nil {
		p.axis = *o.Axis
	}
	if o.Epsilon != nil {
		p.epsilon = *o.Epsilon
	}
	if o.Momentum != nil {
		p.momentum = *o.Momentum
	}
	return p
}

// BatchNorm normalises x per channel. In training mode (IsTraining and not
// UseGlobalStats) it uses the batch's mean and biased variance and updates
// runMean and runVar in place (the running variance takes the unbiased
// batch variance, as PyTorch does); otherwise it uses runMean and runVar.
// gamma and beta (scale and shift, one value per channel) may be nil.
// Gradients flow to x, gamma and beta; the running statistics are never
// differentiated.
func BatchNorm(x, gamma, beta, runMean, runVar *NDArray, o BatchNormOpts) *NDArray {
	const op = "BatchNorm"
	relu := o.Relu
	o.Relu = false
	if _, ok := halfOf(x, gamma, beta, runMean, runVar); ok && !nativeHalfBatchNorm(x, gamma, beta, runMean, runVar) {
		return reluIf(relu, batchNormHalf(x, gamma, beta, runMean, runVar, o))
	}
	p := o.params()
	if !(p.momentum >= 0 && p.momentum <= 1) || !(p.epsilon >= 0) {
		fail(op, ErrArgument, "momentum %g must be in [0, 1] and epsilon %g non-negative", p.momentum, p.epsilon)
	}
	check := checkInputs
	if x.dtype.IsHalf() { // float32 parameters and statistics (nativeHalfBatchNorm)
		check = checkLiveSameContext
	}
	defer check(op, x, runMean, runVar).done()
	checkFloat(op, x)
	ax := normAxis(op, p.axis, x.NDim())
	c := x.shape[ax]
	for _, v := range []*NDArray{gamma, beta, runMean, runVar} {
		if v == nil {
			continue
		}
		defer check(op, x, v).done()
		if v.NDim() != 1 || v.shape[0] != c {
			fail(op, ErrShape, "per-channel array of shape %v for input %v with %d channels on axis %d", v.shape, x.shape, c, ax)
		}
	}
	sess := sessionOf(op, x, gamma, beta, runMean, runVar)
	if sess != defaultSession {
		// Copies of the running statistics, the composed path's ops on gamma
		// and beta: everything BatchNorm makes must be sess's.
		l := sess.lift(op, x, gamma, beta, runMean, runVar)
		x, gamma, beta, runMean, runVar = l[0], l[1], l[2], l[3], l[4]
	}
	train := sess.IsTraining() && !p.useGlobalStats
	if bk, ok := kernelsOf[backend.BatchNormKernels](x.be()); ok && fusedKernels() {
		if train && x.Size()/max(c, 1) < 1 {
			fail(op, ErrShape, "no samples per channel in input %v", x.shape)
		}
		return batchNormFused(bk, x, gamma, beta, runMean, runVar, p, ax, c, train, relu)
	}
	mask := make([]bool, x.NDim())
	for i := range mask {
		mask[i] = i != ax
	}
	m := x.Size() / max(c, 1)
	kshape := keptShape(x.shape, mask)
	perChan := func(v *NDArray) backend.Arg { return channelArg(v, x.NDim(), ax) }

	var mean, invstd *NDArray // keepdims [1, C, 1, 1]
	if train {
		if m < 1 {
			fail(op, ErrShape, "no samples per channel in input %v", x.shape)
		}
		s := reduceRaw(op, backend.Sum, x, mask)
		mean = unaryRaw(op, backend.MulScalar, s, 1/float64(m), 0)
		xc := binaryRaw(op, bSub, x, mean)
		sq := unaryRaw(op, backend.Square, xc, 0, 0)
		vs := reduceRaw(op, backend.Sum, sq, mask)
		variance := unaryRaw(op, backend.MulScalar, vs, 1/float64(m), 0)
		invstd = unaryRaw(op, backend.AddScalar, variance, p.epsilon, 0)
		unaryInPlace(invstd, backend.RSqrt, 0, 0)
		updateRunning(runMean, mean, p.momentum, 1)
		updateRunning(runVar, variance, p.momentum, float64(m)/math.Max(float64(m-1), 1))
		release(s, xc, sq, vs, variance)
	} else {
		mean = runMean.view(0, kshape)
		invstd = newArray(op, sess, x.st.dev, x.dtype, kshape)
		x.be().Unary(backend.AddScalar, invstd.arg(), runVar.arg(), c, p.epsilon, 0)
		unaryInPlace(invstd, backend.RSqrt, 0, 0)
	}
	xhat := binaryRaw(op, bSub, x, mean)
	x.be().Binary(bMul, x.shape, xhat.arg(), xhat.arg(), bcastArg(invstd, x.shape))
	y := newArray(op, sess, x.st.dev, x.dtype, x.shape)
	copyInto(y, xhat)
	if gamma != nil {
		y.be().Binary(bMul, y.shape, y.arg(), y.arg(), perChan(gamma))
	}
	if beta != nil {
		y.be().Binary(bAdd, y.shape, y.arg(), y.arg(), perChan(beta))
	}
	var diff BackwardFunc
	if train {
		diff = bnDiff(x, gamma, nil, nil, y, ax, p.epsilon, true, false)
	} else if sess.IsRecording() { // (the running mean may change in place before the backward pass)
		diff = bnDiff(x, gamma, runMean.Copy(), invstd, y, ax, p.epsilon, false, false)
	}
	mean.Release()
	RecordDiff(op, y, []*NDArray{x, gamma, beta}, func(g *NDArray, need []bool) []*NDArray {
		grads := make([]*NDArray, 3)
		dbeta := reduceRaw(op, backend.Sum, g, mask) // keepdims
		gx := mulRaw(g, xhat)
		dgamma := reduceRaw(op, backend.Sum, gx, mask)
		gx.Release()
		if need[0] {
			grads[0] = bnInputGrad(g, xhat, invstd, gamma, dbeta, dgamma, m, train, perChan)
		}
		if need[1] {
			grads[1] = dgamma.view(0, []int{c})
		}
		if need[2] {
			grads[2] = dbeta.view(0, []int{c})
		}
		release(dbeta, dgamma)
		return grads
	}, diff)
	return reluIf(relu, y)
}

// reluIf returns Relu(y) when relu, else y.
func reluIf(relu bool, y *NDArray) *NDArray {
	if relu {
		return Relu(y)
	}
	return y
}

// bnInputGrad is dx = γ·invstd/M · (M·g − Σg − x̂·Σ(g·x̂)) in training mode
// and γ·invstd·g with fixed statistics.
func bnInputGrad(g, xhat, invstd, gamma, dbeta, dgamma *NDArray, m int, train bool, perChan func(*NDArray) backend.Arg) *NDArray {
	const op = "BatchNorm"
	var dx *NDArray
	if train {
		t := binaryRaw(op, bMul, xhat, dgamma)
		dx = unaryRaw(op, backend.MulScalar, g, float64(m), 0)
		dx.be().Binary(bSub, dx.shape, dx.arg(), dx.arg(), bcastArg(dbeta, dx.shape))
		dx.be().Binary(bSub, dx.shape, dx.arg(), dx.arg(), t.arg())
		t.Release()
		unaryInPlace(dx, backend.MulScalar, 1/float64(m), 0)
	} else {
		dx = unaryRaw(op, backend.MulScalar, g, 1, 0)
	}
	dx.be().Binary(bMul, dx.shape, dx.arg(), dx.arg(), bcastArg(invstd, dx.shape))
	if gamma != nil {
		dx.be().Binary(bMul, dx.shape, dx.arg(), dx.arg(), perChan(gamma))
	}
	return dx
}

// updateRunning sets run = momentum*run + (1-momentum)*scale*batch in place.
func updateRunning(run, batch *NDArray, momentum, scale float64) {
	if run == nil {
		return
	}
	b := unaryRaw("BatchNorm", backend.MulScalar, batch, (1-momentum)*scale, 0)
	unaryInPlace(run, backend.MulScalar, momentum, 0)
	run.be().Binary(bAdd, run.shape, run.arg(), run.arg(), b.arg())
	b.Release()
}

// nativeHalfBatchNorm reports whether x's backend normalises x's half
// dtype itself beside float32 (or absent) parameters and statistics, as
// mixed precision keeps them (backend.HalfBatchNormer, with the fused
// kernels on).
func nativeHalfBatchNorm(x *NDArray, perChannel ...*NDArray) bool {
	h, ok := x.st.be.(backend.HalfBatchNormer)
	if !ok || !x.dtype.IsHalf() || !h.BatchNormHalf(x.dtype) || !fusedKernels() {
		return false
	}
	if _, ok := x.st.be.(backend.BatchNormKernels); !ok {
		return false
	}
	for _, v := range perChannel {
		if v != nil && v.dtype != Float32 {
			return false
		}
	}
	return true
}

// batchNormHalf is BatchNorm with a half-precision input or parameters:
// it normalises in float32 and rounds the result to x's dtype. Half
// running statistics are updated through float32 copies and rounded
// back. Float32 parameters and statistics beside a half input, as AMP
// keeps them, are used as they are.
func batchNormHalf(x, gamma, beta, runMean, runVar *NDArray, o BatchNormOpts) *NDArray {
	const op = "BatchNorm"
	defer checkLive(op, nonNil([]*NDArray{x, gamma, beta, runMean, runVar})...).done()
	rm, rv := widened(runMean), widened(runVar)
	dt := x.dtype
	if !dt.IsHalf() {
		dt = Float32
	}
	y := viaFloat32(dt, func(w []*NDArray) *NDArray { return BatchNorm(w[0], w[1], w[2], rm, rv, o) }, x, gamma, beta)
	for _, s := range [][2]*NDArray{{runMean, rm}, {runVar, rv}} {
		if s[1] != s[0] {
			s[0].be().Cast(s[0].storageArg(), s[1].storageArg(), s[0].Size())
			s[1].Release()
		}
	}
	return y
}
