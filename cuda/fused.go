//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// Fused kernels. Optimizer updates (backend.OptimizerKernels): one kernel
// per update instead of one per step of the update's program (SGD with
// momentum has six, RMSProp up to fourteen); the kernel runs the program
// on each element with the composed ops' element functions
// (kernels/elementwise.cu: opt_update), so the results equal the composed
// ops' and the CPU's bit for bit.

var _ backend.OptimizerKernels = (*Backend)(nil)

// OptimizerUpdate implements backend.OptimizerKernels.
func (b *Backend) OptimizerUpdate(prog backend.OptProgram, w, g, s backend.Arg, n int) {
	if n == 0 {
		return
	}
	if len(prog.Steps) > backend.MaxOptSteps {
		panic(fmt.Sprintf("cuda: OptimizerUpdate: %d steps, at most %d", len(prog.Steps), backend.MaxOptSteps))
	}
	var a args
	a.ptr(w)
	a.ptr(g)
	if s.Buf != nil {
		a.ptr(s)
	} else {
		a.words(0) // null: no state
	}
	a.i64(n)
	// struct OptProgram: the step count, then MaxOptSteps steps of a code
	// word and two scalars.
	var prm [1 + 3*backend.MaxOptSteps]int64
	prm[0] = int64(len(prog.Steps))
	for k, st := range prog.Steps {
		var kind, op int64
		var ok bool
		if st.IsBinary {
			var c int
			c, ok = binaryCode(st.Binary)
			kind, op = 1, int64(c)
		} else {
			var c int
			c, ok = unaryCode(st.Unary)
			op = int64(c)
		}
		if !ok {
			panic(fmt.Sprintf("cuda: OptimizerUpdate: step %d: no kernel code for its op", k))
		}
		prm[1+3*k] = kind | op<<8 | int64(st.D)<<16 | int64(st.A)<<24 | int64(st.B)<<32
		prm[2+3*k] = int64(math.Float64bits(st.S1))
		prm[3+3*k] = int64(math.Float64bits(st.S2))
	}
	a.words(prm[:]...)
	devOf(w).launch("OptimizerUpdate", "opt_update"+suffix(buf(w).dt), n, 0, 0, 0, &a)
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

// BiasReluBackward implements backend.BiasReluKernels: with a bias
// gradient, one pass over g and y writes dx = g where y > 0 (else 0) and
// per-channel partial sums of dx (kernels/batchnorm.cu: bias_relu_sums),
// which a second kernel adds in order; without one, the ReLU gradient
// kernel.
func (b *Backend) BiasReluBackward(p backend.ChannelParams, dx, dbias, g, y backend.Arg) {
	n := p.Outer * p.C * p.Inner
	if dbias.Buf == nil || p.C == 0 {
		if n > 0 {
			b.Binary(backend.ReluGrad, []int{n}, dx, y, g)
		}
		return
	}
	const op = "BiasReluBackward"
	d, dt := devOf(dx), buf(dx).dt
	var a args
	a.ptr(dx)
	a.ptr(g)
	a.ptr(y)
	part, parts := b.channelSums(op, "bias_relu_sums", p, d, dt, &a)
	var f args
	f.ptr(backend.Arg{Buf: part})
	f.i64(parts)
	f.i64(p.C)
	f.ptr(dbias)
	d.launch(op, "channel_sum_finish"+suffix(dt), p.C, 0, 0, 0, &f)
	b.Free(d.dev, part)
}

var _ backend.SoftmaxCEKernels = (*Backend)(nil)

// SoftmaxCE implements backend.SoftmaxCEKernels: one kernel, a thread per
// position (kernels/gather.cu), where the composed loss took eight.
func (b *Backend) SoftmaxCE(p backend.ChannelParams, loss, lse, x, labels backend.Arg) {
	n := p.Outer * p.Inner
	if n == 0 {
		return
	}
	var a args
	a.ptr(loss)
	a.ptr(lse)
	a.ptr(x)
	a.ptr(labels)
	a.i64(int(buf(labels).dt))
	a.i64(p.Outer)
	a.i64(p.C)
	a.i64(p.Inner)
	devOf(x).launch("SoftmaxCE", "softmax_ce"+suffix(buf(x).dt), n, 0, 0, 0, &a)
}

// SoftmaxCEBackward implements backend.SoftmaxCEKernels.
func (b *Backend) SoftmaxCEBackward(p backend.ChannelParams, dx, g, x, lse, labels backend.Arg) {
	n := p.Outer * p.Inner
	if n == 0 {
		return
	}
	var a args
	a.ptr(dx)
	a.ptr(g)
	a.ptr(x)
	a.ptr(lse)
	a.ptr(labels)
	a.i64(int(buf(labels).dt))
	a.i64(p.Outer)
	a.i64(p.C)
	a.i64(p.Inner)
	devOf(x).launch("SoftmaxCEBackward", "softmax_ce_backward"+suffix(buf(x).dt), n, 0, 0, 0, &a)
}
