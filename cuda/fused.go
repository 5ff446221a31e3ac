//go:build cuda || cudaemu

package cuda

import "github.com/goluon/goluon/nd/backend"

// Fused kernels. Optimizer updates (backend.OptimizerKernels): one kernel per
// update instead of one per elementwise step (SGD with momentum composes
// six, RMSProp eleven), each element going through the composed ops' steps
// in their order and types (kernels/elementwise.cu), so the results equal
// the composed ops' and the CPU's bit for bit.

var _ backend.OptimizerKernels = (*Backend)(nil)

// SGDUpdate implements backend.OptimizerKernels.
func (b *Backend) SGDUpdate(p backend.OptimizerParams, w, g, mom backend.Arg, n int) {
	if n == 0 {
		return
	}
	flags := 0
	var a args
	a.ptr(w)
	a.ptr(g)
	if mom.Buf != nil {
		flags |= 1
		if p.Nesterov {
			flags |= 2
		}
		a.ptr(mom)
	} else {
		a.ptr(w) // unused
	}
	a.i64(n)
	a.f64(p.LR)
	a.f64(p.WD)
	a.f64(p.RescaleGrad)
	a.f64(p.ClipGradient)
	a.f64(p.Momentum)
	a.i64(flags)
	devOf(w).launch("SGDUpdate", "sgd_update"+suffix(buf(w).dt), n, 0, 0, 0, &a)
}

// RMSPropUpdate implements backend.OptimizerKernels.
func (b *Backend) RMSPropUpdate(p backend.OptimizerParams, w, g, s backend.Arg, n int) {
	if n == 0 {
		return
	}
	flags := 0
	if p.KerasEpsilon {
		flags = 1
	}
	var a args
	a.ptr(w)
	a.ptr(g)
	a.ptr(s)
	a.i64(n)
	a.f64(p.LR)
	a.f64(p.WD)
	a.f64(p.RescaleGrad)
	a.f64(p.ClipGradient)
	a.f64(p.Gamma1)
	a.f64(p.Epsilon)
	a.f64(p.ClipWeights)
	a.i64(flags)
	devOf(w).launch("RMSPropUpdate", "rmsprop_update"+suffix(buf(w).dt), n, 0, 0, 0, &a)
}

var _ backend.DropoutKernels = (*Backend)(nil)

// DropoutMask implements backend.DropoutKernels: the mask is drawn on the
// GPU (the same counter-based values as nd's host mask) instead of being
// drawn on the host and copied, megabytes per layer and step.
func (b *Backend) DropoutMask(dst backend.Arg, n int, seed uint64, thr uint32, keep float64) {
	if n == 0 {
		return
	}
	var a args
	a.ptr(dst)
	a.i64(n)
	a.words(int64(seed))
	a.i64(int(thr))
	a.f64(keep)
	devOf(dst).launch("Dropout", "dropout_mask"+suffix(buf(dst).dt), n, 0, 0, 0, &a)
}

var _ backend.BiasReluKernels = (*Backend)(nil)

// BiasRelu implements backend.BiasReluKernels: one pass, y = relu(x + b[c]).
func (b *Backend) BiasRelu(p backend.ChannelParams, y, x, bias backend.Arg) {
	n := p.Outer * p.C * p.Inner
	if n == 0 {
		return
	}
	var a args
	a.ptr(y)
	a.ptr(x)
	a.ptr(bias)
	a.i64(n)
	a.i64(p.C)
	a.i64(p.Inner)
	devOf(y).launch("BiasRelu", "bias_relu"+suffix(buf(y).dt), n, 0, 0, 0, &a)
}

// BiasReluBackward implements backend.BiasReluKernels: dx = g where y > 0
// (the ReLU gradient kernel), then dbias as the channel sums of dx (the
// reduction kernels) — the composed path's passes, without its
// broadcasting bookkeeping.
func (b *Backend) BiasReluBackward(p backend.ChannelParams, dx, dbias, g, y backend.Arg) {
	n := p.Outer * p.C * p.Inner
	if n > 0 {
		b.Binary(backend.ReluGrad, []int{n}, dx, y, g)
	}
	if dbias.Buf != nil {
		b.Reduce(backend.Sum, []int{p.Outer, p.C, p.Inner}, []bool{true, false, true}, dbias, dx)
	}
}
