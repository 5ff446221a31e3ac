// Package amp is automatic mixed precision, as MXNet's mx.amp and
// PyTorch's torch.autocast with GradScaler: parameters stay float32, the
// ops that gain from it run in float16 or bfloat16, and a dynamic loss
// scale keeps float16's small gradients from flushing to zero.
//
//	amp.Init(nd.Float16)                      // the default session's ops autocast
//	scaler := amp.NewLossScaler(amp.ScalerOpts{})
//	trainer.SetGradScaler(scaler)             // unscale, skip steps that overflow
//	...
//	autograd.Record(func() {
//		loss = lossFn(net.Forward(x), y)  // float32: losses are in the float32 list
//		loss = scaler.Scale(loss)
//	})
//	autograd.Backward(loss)
//	trainer.Step(batch)
//
// # The lists
//
// While a session autocasts (Init, Enable, or nd.Session.Autocast for a
// scope), each op converts its floating-point inputs by its class, with
// recorded conversions, so gradients reach the float32 parameters in
// float32. Float64 arrays are never converted.
//
//   - Low precision — run in the autocast dtype: nd.Dot and MatMul,
//     FullyConnected (nn.Dense), Conv1D, Conv2D, Conv2DTranspose, and so
//     the RNN/LSTM/GRU cells' gate products and attention's products.
//   - Float32 — half inputs converted to float32: Exp, Log, Log1p, Expm1,
//     Rsqrt, Reciprocal, Softrelu, Pow and PowScalar, Tan, Asin, Acos,
//     Sinh, Cosh, Log2, Log10, Erfinv, Softmax,
//     LogSoftmax, LogSumExp, Sum, Mean, Norm, Var, Std, Cumsum,
//     LayerNorm, GroupNorm, InstanceNorm, SoftmaxCrossEntropy, and so the
//     losses built on them.
//   - Neutral — run in their input's dtype: BatchNorm (its scale, shift
//     and running statistics stay float32), pooling, Relu and the other
//     activations, Dropout, GELU, Pad, Take, Gather, Pick, reshapes,
//     transposes and slices.
//   - Widest — when the inputs mix float32 and a half dtype, all are
//     converted to float32: Add, Sub, Mul, Div, Maximum, Minimum, the
//     comparisons, Where, Concat, Stack, BiasRelu, PReLU, ScatterAdd,
//     IndexAdd.
//
// # Where it runs
//
// On the CPU every op computes in float32 (AVX2 and AVX-512 have no
// float16 arithmetic; F16C and AVX512_BF16 only convert): a half array's
// op converts its inputs to float32, computes, and rounds its result. So
// mixed precision on these CPUs reproduces half precision's numerics and
// halves the memory of the arrays held in half, but it is not faster —
// the conversions make it slower. It is there to train and check models
// that will run in half precision, and to read and write half-precision
// weights. On GPUs without native half kernels the same conversions run.
//
// # Loss scaling
//
// LossScaler is PyTorch's GradScaler with its defaults: the scale starts
// at 2¹⁶, doubles after 2,000 steps in a row with finite gradients, up to
// 2²⁴, and halves on a step whose gradients hold an Inf or NaN, which the
// Trainer then skips. bfloat16 has float32's exponent range and needs no
// scaling: NewLossScaler with ScalerOpts{DType: nd.BFloat16} returns a
// scaler fixed at 1 that still skips non-finite steps.
package amp

import (
	"github.com/goluon/goluon/nd"
)

// Init makes the default session's ops autocast to dt (nd.Float16 or
// nd.BFloat16) from now on, as MXNet's amp.init(): every op of every
// goroutine tree of the default session, those started later included,
// follows the lists of the package documentation. Sessions made with
// nd.NewSession (a server beside the learner) are not affected. It
// returns the function that turns it off again.
func Init(dt nd.DType) (off func()) { return Enable(nd.DefaultSession(), dt) }

// Enable makes s's ops autocast to dt until the returned function is
// called (in the default session: the ops of every goroutine tree,
// nd.Session.EnterAutocastAll).
func Enable(s *nd.Session, dt nd.DType) (off func()) {
	if !dt.IsHalf() {
		nd.Panicf("amp.Enable", nd.ErrDType, "mixed precision runs in float16 or bfloat16, not %v", dt)
	}
	return s.EnterAutocastAll(dt)
}
