//go:build cuda || cudaemu

package cuda

import "github.com/goluon/goluon/nd/backend"

// Fused batch normalisation (backend.BatchNormKernels,
// kernels/batchnorm.cu): the statistics and the parameter gradients are
// one pass of per-channel sums (split over several blocks per channel
// when channels are few, the partials added in order by a finish kernel)
// and applying the normalisation and the input gradient one elementwise
// pass each, with nd/cpu's arithmetic. The composed ops took about 15
// kernels forward and 20 backward.

var (
	_ backend.BatchNormKernels      = (*Backend)(nil)
	_ backend.BatchNormReluKernels  = (*Backend)(nil)
	_ backend.BatchNormStatsKernels = (*Backend)(nil)
	_ backend.HalfBatchNormer       = (*Backend)(nil)
)

// BatchNormTrainStats implements backend.BatchNormStatsKernels: one launch
// instead of eight over the channels.
func (b *Backend) BatchNormTrainStats(p backend.ChannelParams, invstd, mean, variance, runMean, runVar backend.Arg, eps, momentum, varScale float64) {
	if p.C == 0 {
		return
	}
	var a args
	a.i64(p.C)
	a.ptr(invstd)
	a.ptr(mean)
	a.ptr(variance)
	a.optPtr(runMean)
	a.optPtr(runVar)
	a.f64(eps)
	a.f64(momentum)
	a.f64(1 - momentum)
	a.f64((1 - momentum) * varScale)
	devOf(invstd).launch("BatchNormTrainStats", "bn_train_stats"+suffix(buf(invstd).dt), p.C, 0, 0, 0, &a)
}

// BatchNormEvalStats implements backend.BatchNormStatsKernels.
func (b *Backend) BatchNormEvalStats(p backend.ChannelParams, mean, invstd, runMean, runVar backend.Arg, eps float64) {
	if p.C == 0 {
		return
	}
	var a args
	a.i64(p.C)
	a.ptr(mean)
	a.ptr(invstd)
	a.ptr(runMean)
	a.ptr(runVar)
	a.f64(eps)
	devOf(mean).launch("BatchNormEvalStats", "bn_eval_stats"+suffix(buf(mean).dt), p.C, 0, 0, 0, &a)
}

// channelSums queues kernel (bn_sums or bias_relu_sums, whose parameters
// up to the array shape are in a) over p's channels and returns the
// buffer of partials (2·C·parts doubles, to Free after the finish kernel)
// and parts.
func (b *Backend) channelSums(op, kernel string, p backend.ChannelParams, d *device, dt backend.DType, a *args) (*Buffer, int) {
	parts, block, blocks := d.blockReduce(p.C, p.Outer*p.Inner)
	part := b.temp(op, d, backend.Float64, 2*p.C*parts)
	a.i64(p.Outer)
	a.i64(p.C)
	a.i64(p.Inner)
	a.i64(parts)
	a.ptr(backend.Arg{Buf: part})
	d.launch(op, kernel+suffix(dt), 0, blocks, block, 2*8*block, a)
	return part, parts
}

// bnSums queues the per-channel sums Σa1 and Σa1·a2 (channelSums).
func (b *Backend) bnSums(op string, p backend.ChannelParams, a1, a2 backend.Arg) (*Buffer, int) {
	var a args
	a.ptr(a1)
	a.ptr(a2)
	return b.channelSums(op, "bn_sums", p, devOf(a1), buf(a1).dt, &a)
}

// optPtr adds a pointer parameter, or a null one for an absent operand.
func (a *args) optPtr(x backend.Arg) {
	if x.Buf == nil {
		a.words(0)
		return
	}
	a.ptr(x)
}

// BatchNormStats implements backend.BatchNormKernels.
func (b *Backend) BatchNormStats(p backend.ChannelParams, mean, variance, x backend.Arg) {
	if p.C == 0 {
		return
	}
	part, parts := b.bnSums("BatchNormStats", p, x, x)
	var a args
	a.ptr(backend.Arg{Buf: part})
	a.i64(parts)
	a.i64(p.C)
	a.f64(float64(p.Outer * p.Inner))
	a.ptr(mean)
	a.ptr(variance)
	d := devOf(x)
	d.launch("BatchNormStats", "bn_stats_finish"+suffix(buf(mean).dt), p.C, 0, 0, 0, &a)
	b.Free(d.dev, part)
}

// BatchNormApply implements backend.BatchNormKernels.
func (b *Backend) BatchNormApply(p backend.ChannelParams, y, x, mean, invstd, gamma, beta backend.Arg) {
	bnApply("BatchNormApply", "bn_apply", p, y, x, mean, invstd, gamma, beta)
}

// BatchNormApplyRelu implements backend.BatchNormReluKernels.
func (b *Backend) BatchNormApplyRelu(p backend.ChannelParams, y, x, mean, invstd, gamma, beta backend.Arg) {
	bnApply("BatchNormApplyRelu", "bn_apply_relu", p, y, x, mean, invstd, gamma, beta)
}

// bnApply launches kernel (bn_apply or bn_apply_relu) over y.
func bnApply(op, kernel string, p backend.ChannelParams, y, x, mean, invstd, gamma, beta backend.Arg) {
	n := p.Outer * p.C * p.Inner
	if n == 0 {
		return
	}
	var a args
	a.ptr(y)
	a.ptr(x)
	a.i64(n)
	a.i64(p.C)
	a.i64(p.Inner)
	a.ptr(mean)
	a.ptr(invstd)
	a.optPtr(gamma)
	a.optPtr(beta)
	devOf(y).launch(op, kernel+suffix(buf(y).dt), n, 0, 0, 0, &a)
}

// BatchNormBackward implements backend.BatchNormKernels.
func (b *Backend) BatchNormBackward(p backend.ChannelParams, batchStats bool, dx, dgamma, dbeta, g, x, mean, invstd, gamma backend.Arg) {
	if p.C == 0 {
		return
	}
	const op = "BatchNormBackward"
	d, sfx, csfx := devOf(g), suffix(buf(g).dt), suffix(buf(mean).dt) // elements, channels
	stats := 0
	if batchStats {
		stats = 1
	}
	part, parts := b.bnSums(op, p, g, x)
	coef := b.temp(op, d, buf(mean).dt, 3*p.C)
	var f args
	f.ptr(backend.Arg{Buf: part})
	f.i64(parts)
	f.i64(p.C)
	f.f64(float64(p.Outer * p.Inner))
	f.ptr(mean)
	f.ptr(invstd)
	f.optPtr(gamma)
	f.i64(stats)
	f.ptr(dgamma)
	f.ptr(dbeta)
	f.ptr(backend.Arg{Buf: coef})
	d.launch(op, "bn_backward_finish"+csfx, p.C, 0, 0, 0, &f)
	if n := p.Outer * p.C * p.Inner; dx.Buf != nil && n > 0 {
		var a args
		a.ptr(dx)
		a.ptr(g)
		a.ptr(x)
		a.i64(n)
		a.i64(p.C)
		a.i64(p.Inner)
		a.ptr(backend.Arg{Buf: coef})
		a.i64(stats)
		d.launch(op, "bn_dx"+sfx, n, 0, 0, 0, &a)
	}
	b.Free(d.dev, part)
	b.Free(d.dev, coef)
}
