package nd

import (
	"slices"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// tracer stands in for a backend while a goroutine traces (trace.go): each
// kernel call becomes a step of the recording, with its buffers turned into
// slots, and is not run. It implements every optional kernel interface;
// the ops ask kernelsOf (below), which answers for the real backend.
type tracer struct {
	real backend.Backend
	r    *recording
}

// kernelsOf returns be as the optional kernel interface K when the backend
// behind it implements K: a tracer answers for the backend it records.
func kernelsOf[K any](be backend.Backend) (K, bool) {
	if t, ok := be.(*tracer); ok {
		if _, ok := t.real.(K); !ok {
			var zero K
			return zero, false
		}
	}
	k, ok := be.(K)
	return k, ok
}

// backwardKernels returns the kernels K of the backend that runs the
// backward pass of g: the tracer while a trace walks a node recorded
// eagerly (its kernels must be recorded as steps, not run on the dry
// run's buffers), else k, those the forward pass used.
func backwardKernels[K any](g *NDArray, k K) K {
	if kg, ok := kernelsOf[K](g.be()); ok {
		return kg
	}
	return k
}

func (t *tracer) Name() string { return t.real.Name() }

func (t *tracer) Alloc(dev ctx.Context, dt backend.DType, n int) (backend.Buffer, error) {
	return t.real.Alloc(dev, dt, n)
}

func (t *tracer) Free(dev ctx.Context, b backend.Buffer)     { t.real.Free(dev, b) }
func (t *tracer) Stats(dev ctx.Context) backend.MemStats     { return t.real.Stats(dev) }
func (t *tracer) ReleaseCache(dev ctx.Context)               { t.real.ReleaseCache(dev) }
func (t *tracer) Sync(dev ctx.Context)                       {}
func (t *tracer) Read(src backend.Buffer, off int, dst any)  { t.r.hostRead() }
func (t *tracer) Write(dst backend.Buffer, off int, src any) { t.r.write(t.real, dst, off, src) }
func (t *tracer) add(run func(e *replay), refs ...ref)       { t.r.add(run, refs...) }
func (t *tracer) ref(a backend.Arg) ref                      { return t.r.ref(a) }
func (t *tracer) refs(a ...backend.Arg) []ref                { return t.r.refsOf(a) }

func (t *tracer) Fill(dst backend.Arg, n int, v float64) {
	be, d := t.real, t.ref(dst)
	t.add(func(e *replay) { be.Fill(d.arg(e), n, v) }, d)
}

func (t *tracer) Cast(dst, src backend.Arg, n int) {
	be, d, s := t.real, t.ref(dst), t.ref(src)
	t.add(func(e *replay) { be.Cast(d.arg(e), s.arg(e), n) }, d, s)
}

func (t *tracer) Copy(shape []int, dst, src backend.Arg) {
	be, sh, d, s := t.real, slices.Clone(shape), t.ref(dst), t.ref(src)
	t.add(func(e *replay) { be.Copy(sh, d.arg(e), s.arg(e)) }, d, s)
}

func (t *tracer) Unary(op backend.UnaryOp, dst, x backend.Arg, n int, p1, p2 float64) {
	be, d, a := t.real, t.ref(dst), t.ref(x)
	t.add(func(e *replay) { be.Unary(op, d.arg(e), a.arg(e), n, p1, p2) }, d, a)
	t.r.describe(&kernelInfo{kind: kindUnary, unary: op, n: n, refs: []ref{d, a}})
}

func (t *tracer) Binary(op backend.BinaryOp, shape []int, dst, a, b backend.Arg) {
	be, sh, d, x, y := t.real, slices.Clone(shape), t.ref(dst), t.ref(a), t.ref(b)
	t.add(func(e *replay) { be.Binary(op, sh, d.arg(e), x.arg(e), y.arg(e)) }, d, x, y)
}

func (t *tracer) Reduce(op backend.ReduceOp, shape []int, axes []bool, dst, src backend.Arg) {
	be, sh, ax, d, s := t.real, slices.Clone(shape), slices.Clone(axes), t.ref(dst), t.ref(src)
	t.add(func(e *replay) { be.Reduce(op, sh, ax, d.arg(e), s.arg(e)) }, d, s)
}

func (t *tracer) Gemm(p backend.GemmParams) {
	be, a, b, c := t.real, t.ref(p.A), t.ref(p.B), t.ref(p.C)
	t.add(func(e *replay) {
		q := p
		q.A, q.B, q.C = a.arg(e), b.arg(e), c.arg(e)
		be.Gemm(q)
	}, a, b, c)
}

func (t *tracer) Conv2D(p backend.ConvParams, y, x, w backend.Arg) {
	be, r := t.real, t.refs(y, x, w)
	t.add(func(e *replay) { be.Conv2D(p, r[0].arg(e), r[1].arg(e), r[2].arg(e)) }, r...)
	t.r.describe(&kernelInfo{kind: kindConv, be: be, conv: p, refs: append(r, ref{slot: -1})})
}

func (t *tracer) Conv2DBackwardData(p backend.ConvParams, dx, dy, w backend.Arg) {
	be, r := t.real, t.refs(dx, dy, w)
	t.add(func(e *replay) { be.Conv2DBackwardData(p, r[0].arg(e), r[1].arg(e), r[2].arg(e)) }, r...)
}

func (t *tracer) Conv2DBackwardFilter(p backend.ConvParams, dw, x, dy backend.Arg) {
	be, r := t.real, t.refs(dw, x, dy)
	t.add(func(e *replay) { be.Conv2DBackwardFilter(p, r[0].arg(e), r[1].arg(e), r[2].arg(e)) }, r...)
}

func (t *tracer) Pool2D(p backend.PoolParams, y, x backend.Arg) {
	be, r := t.real, t.refs(y, x)
	t.add(func(e *replay) { be.Pool2D(p, r[0].arg(e), r[1].arg(e)) }, r...)
}

func (t *tracer) Pool2DBackward(p backend.PoolParams, dx, x, y, dy backend.Arg) {
	be, r := t.real, t.refs(dx, x, y, dy)
	t.add(func(e *replay) { be.Pool2DBackward(p, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e)) }, r...)
	t.r.describe(&kernelInfo{kind: kindPoolBwd, be: be, pool: p, refs: r})
}

func (t *tracer) Pick(outer, n, inner int, dst, x, idx backend.Arg) {
	be, r := t.real, t.refs(dst, x, idx)
	t.add(func(e *replay) { be.Pick(outer, n, inner, r[0].arg(e), r[1].arg(e), r[2].arg(e)) }, r...)
}

func (t *tracer) PickBackward(outer, n, inner int, dx, dy, idx backend.Arg) {
	be, r := t.real, t.refs(dx, dy, idx)
	t.add(func(e *replay) { be.PickBackward(outer, n, inner, r[0].arg(e), r[1].arg(e), r[2].arg(e)) }, r...)
}

func (t *tracer) OneHot(n, depth int, dst, idx backend.Arg, on, off float64) {
	be, r := t.real, t.refs(dst, idx)
	t.add(func(e *replay) { be.OneHot(n, depth, r[0].arg(e), r[1].arg(e), on, off) }, r...)
}

func (t *tracer) BatchNormStats(p backend.ChannelParams, mean, variance, x backend.Arg) {
	be, r := t.real.(backend.BatchNormKernels), t.refs(mean, variance, x)
	t.add(func(e *replay) { be.BatchNormStats(p, r[0].arg(e), r[1].arg(e), r[2].arg(e)) }, r...)
}

func (t *tracer) BatchNormApply(p backend.ChannelParams, y, x, mean, invstd, gamma, beta backend.Arg) {
	be, r := t.real.(backend.BatchNormKernels), t.refs(y, x, mean, invstd, gamma, beta)
	t.add(func(e *replay) {
		be.BatchNormApply(p, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e), r[4].arg(e), r[5].arg(e))
	}, r...)
	t.r.describe(&kernelInfo{kind: kindBNApply, channel: p, refs: r})
}

func (t *tracer) BatchNormApplyRelu(p backend.ChannelParams, y, x, mean, invstd, gamma, beta backend.Arg) {
	be, r := t.real.(backend.BatchNormReluKernels), t.refs(y, x, mean, invstd, gamma, beta)
	t.add(func(e *replay) {
		be.BatchNormApplyRelu(p, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e), r[4].arg(e), r[5].arg(e))
	}, r...)
	t.r.describe(&kernelInfo{kind: kindBNApply, relu: true, channel: p, refs: r})
}

func (t *tracer) BatchNormTrainStats(p backend.ChannelParams, invstd, mean, variance, runMean, runVar backend.Arg, eps, momentum, varScale float64) {
	be, r := t.real.(backend.BatchNormStatsKernels), t.refs(invstd, mean, variance, runMean, runVar)
	t.add(func(e *replay) {
		be.BatchNormTrainStats(p, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e), r[4].arg(e), eps, momentum, varScale)
	}, r...)
}

func (t *tracer) BatchNormEvalStats(p backend.ChannelParams, mean, invstd, runMean, runVar backend.Arg, eps float64) {
	be, r := t.real.(backend.BatchNormStatsKernels), t.refs(mean, invstd, runMean, runVar)
	t.add(func(e *replay) { be.BatchNormEvalStats(p, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e), eps) }, r...)
}

func (t *tracer) BatchNormBackward(p backend.ChannelParams, batchStats bool, dx, dgamma, dbeta, g, x, mean, invstd, gamma backend.Arg) {
	be, r := t.real.(backend.BatchNormKernels), t.refs(dx, dgamma, dbeta, g, x, mean, invstd, gamma)
	t.add(func(e *replay) {
		be.BatchNormBackward(p, batchStats, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e),
			r[4].arg(e), r[5].arg(e), r[6].arg(e), r[7].arg(e))
	}, r...)
}

func (t *tracer) Conv2DBias(p backend.ConvParams, y, x, w, bias backend.Arg) {
	be, r := t.real.(backend.ConvBiasKernels), t.refs(y, x, w, bias)
	t.add(func(e *replay) { be.Conv2DBias(p, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e)) }, r...)
	t.r.describe(&kernelInfo{kind: kindConv, be: t.real, conv: p, refs: r})
}

func (t *tracer) Conv2DBiasRelu(p backend.ConvParams, y, x, w, bias backend.Arg) {
	be, r := t.real.(backend.ConvBiasReluKernels), t.refs(y, x, w, bias)
	t.add(func(e *replay) { be.Conv2DBiasRelu(p, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e)) }, r...)
}

func (t *tracer) BiasRelu(p backend.ChannelParams, y, x, bias backend.Arg) {
	be, r := t.real.(backend.BiasReluKernels), t.refs(y, x, bias)
	t.add(func(e *replay) { be.BiasRelu(p, r[0].arg(e), r[1].arg(e), r[2].arg(e)) }, r...)
}

func (t *tracer) BiasReluBackward(p backend.ChannelParams, dx, dbias, g, y backend.Arg) {
	be, r := t.real.(backend.BiasReluKernels), t.refs(dx, dbias, g, y)
	t.add(func(e *replay) { be.BiasReluBackward(p, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e)) }, r...)
	t.r.describe(&kernelInfo{kind: kindBiasReluBwd, channel: p, refs: r})
}

func (t *tracer) GELU(dt backend.DType, tanh bool, y, s, x backend.Arg, n int) {
	be, r := t.real.(backend.GELUKernels), t.refs(y, s, x)
	t.add(func(e *replay) { be.GELU(dt, tanh, r[0].arg(e), r[1].arg(e), r[2].arg(e), n) }, r...)
}

func (t *tracer) GELUBackward(dt backend.DType, tanh bool, dx, g, x, s backend.Arg, n int) {
	be, r := t.real.(backend.GELUKernels), t.refs(dx, g, x, s)
	t.add(func(e *replay) { be.GELUBackward(dt, tanh, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e), n) }, r...)
}

func (t *tracer) SoftmaxCE(p backend.ChannelParams, loss, lse, x, labels backend.Arg) {
	be, r := t.real.(backend.SoftmaxCEKernels), t.refs(loss, lse, x, labels)
	t.add(func(e *replay) { be.SoftmaxCE(p, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e)) }, r...)
}

func (t *tracer) SoftmaxCEBackward(p backend.ChannelParams, dx, g, x, lse, labels backend.Arg) {
	be, r := t.real.(backend.SoftmaxCEKernels), t.refs(dx, g, x, lse, labels)
	t.add(func(e *replay) {
		be.SoftmaxCEBackward(p, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e), r[4].arg(e))
	}, r...)
}

// DropoutMask is never reached through the tracer: dropoutMask records its
// mask with recording.dropout, which draws a fresh seed on every replay.
func (t *tracer) DropoutMask(dst backend.Arg, n int, seed uint64, thr uint32, keep float64) {
	t.r.fail("a dropout mask with a fixed seed")
}

func (t *tracer) DropoutApply(dst, src, seed backend.Arg, n int, thr uint32, keep float64) {
	be, r := t.real.(backend.DropoutApplyKernels), t.refs(dst, src, seed)
	t.add(func(e *replay) { be.DropoutApply(r[0].arg(e), r[1].arg(e), r[2].arg(e), n, thr, keep) }, r...)
}

func (t *tracer) OptimizerUpdate(prog backend.OptProgram, w, g, s backend.Arg, n int) {
	prog.Steps = slices.Clone(prog.Steps)
	be, r := t.real.(backend.OptimizerKernels), t.refs(w, g, s)
	t.add(func(e *replay) { be.OptimizerUpdate(prog, r[0].arg(e), r[1].arg(e), r[2].arg(e), n) }, r...)
}

func (t *tracer) Gather(p backend.GatherParams, dst, x, idx backend.Arg) {
	be, r := t.real.(backend.IndexKernels), t.refs(dst, x, idx)
	t.add(func(e *replay) { be.Gather(p, r[0].arg(e), r[1].arg(e), r[2].arg(e)) }, r...)
}

func (t *tracer) ScatterAdd(p backend.GatherParams, dst, src, idx backend.Arg) {
	be, r := t.real.(backend.IndexKernels), t.refs(dst, src, idx)
	t.add(func(e *replay) { be.ScatterAdd(p, r[0].arg(e), r[1].arg(e), r[2].arg(e)) }, r...)
}

func (t *tracer) Where(shape []int, dst, cond, a, b backend.Arg) {
	be, sh, r := t.real.(backend.IndexKernels), slices.Clone(shape), t.refs(dst, cond, a, b)
	t.add(func(e *replay) { be.Where(sh, r[0].arg(e), r[1].arg(e), r[2].arg(e), r[3].arg(e)) }, r...)
}

func (t *tracer) Cumsum(outer, n, inner int, dst, src backend.Arg) {
	be, r := t.real.(backend.IndexKernels), t.refs(dst, src)
	t.add(func(e *replay) { be.Cumsum(outer, n, inner, r[0].arg(e), r[1].arg(e)) }, r...)
}

func (t *tracer) Sort(outer, n, inner int, desc bool, vals, idx, src backend.Arg) {
	be, r := t.real.(backend.IndexKernels), t.refs(vals, idx, src)
	t.add(func(e *replay) { be.Sort(outer, n, inner, desc, r[0].arg(e), r[1].arg(e), r[2].arg(e)) }, r...)
}

var (
	_ backend.Backend              = (*tracer)(nil)
	_ backend.BatchNormKernels     = (*tracer)(nil)
	_ backend.BatchNormReluKernels = (*tracer)(nil)
	_ backend.ConvBiasKernels      = (*tracer)(nil)
	_ backend.ConvBiasReluKernels  = (*tracer)(nil)
	_ backend.BiasReluKernels      = (*tracer)(nil)
	_ backend.GELUKernels          = (*tracer)(nil)
	_ backend.SoftmaxCEKernels     = (*tracer)(nil)
	_ backend.DropoutKernels       = (*tracer)(nil)
	_ backend.DropoutApplyKernels  = (*tracer)(nil)
	_ backend.OptimizerKernels     = (*tracer)(nil)
	_ backend.IndexKernels         = (*tracer)(nil)
)
