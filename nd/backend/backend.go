// Package backend is the seam between package nd and the devices.
//
// An NDArray reaches its device only through a Backend: allocation, copies
// and a small set of kernels. Every op in nd is written in terms of these
// kernels, so a new device (the CUDA backend under -tags cuda) implements
// this interface once and every op, its gradient and the conformance suite
// (package nd/ndtest) run on it unchanged.
//
// Matrix multiply (Gemm) and convolution (Conv2D*) are one method each: a
// faster kernel replaces them without touching op code.
//
// Backends are registered per device kind with Register; package nd looks
// them up with For. Kernels are called only after nd has validated shapes,
// dtypes and contexts, so they may assume well-formed arguments.
package backend

import (
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
)

// Buffer is a block of device memory holding Len elements of one DType.
type Buffer interface {
	Len() int
	DType() DType
}

// Arg is one operand of a kernel: a buffer, an element offset into it and,
// where a kernel takes strided operands, the element strides of each
// dimension (a stride of 0 broadcasts). Nil strides mean contiguous.
type Arg struct {
	Buf     Buffer
	Off     int
	Strides []int
}

// MemStats reports a device's memory in bytes.
type MemStats struct {
	InUse     int64 // held by live buffers
	Peak      int64 // the most InUse has been
	Cached    int64 // freed buffers kept for reuse
	Allocated int64 // total ever requested from the system (grows only on pool misses)
	Allocs    int64 // number of Alloc calls
	Misses    int64 // Alloc calls not served from the cache
}

// Backend is one kind of device.
type Backend interface {
	// Name names the backend ("cpu", "cuda").
	Name() string

	// Alloc returns a buffer of n elements on dev. Its contents are
	// unspecified. An error means the device could not provide the memory.
	Alloc(dev ctx.Context, dt DType, n int) (Buffer, error)
	// Free returns b to dev's cache; b must not be used afterwards.
	Free(dev ctx.Context, b Buffer)
	// Stats reports dev's memory use.
	Stats(dev ctx.Context) MemStats
	// ReleaseCache gives dev's cached buffers back to the system.
	ReleaseCache(dev ctx.Context)

	// Write copies host data into dst starting at element off. src is a
	// []float32, []float64, []int32, []int64, []uint8 or []bool and is
	// converted to the buffer's dtype as Cast converts. The copy is
	// ordered after the work queued on dst's device; src may be reused
	// when Write returns.
	Write(dst Buffer, off int, src any)
	// Read copies len(dst) elements starting at off into the host slice dst
	// (any type Write accepts), converting as Cast converts. It waits for
	// the work queued on src's device, so the values are final: callers
	// need no Sync before it.
	Read(src Buffer, off int, dst any)
	// Sync waits until all work queued on dev has finished.
	Sync(dev ctx.Context)

	Kernels
}

// SyncStats counts how often the host waited on a device.
type SyncStats struct {
	HostSyncs   int64 // waits for the device's queued work to finish (Sync, Read)
	WorkerCalls int64 // round trips to the device's issuing thread (no wait for the device itself)
}

// SyncCounter is implemented by asynchronous backends, which count the
// host's waits on each device.
type SyncCounter interface {
	SyncStats(dev ctx.Context) SyncStats
}

// Collective is implemented by backends with collectives of their own
// for their devices (a kernel over virtual GPUs, NCCL). AllReduceSum sums
// the first n elements of the buffers, one per device, in place; it
// returns false, having done nothing, when no collective applies to these
// buffers (the caller then reduces with Copy and Binary). The sum's order
// is the collective's.
type Collective interface {
	AllReduceSum(bufs []Arg, n int) (bool, error)
}

// HostMemory is implemented by backends whose buffers are host memory.
// HostView returns n elements of buf from element off as the Go slice that
// holds them (a []float32, []float64, []int32, []int64 or []uint8 sharing
// the buffer's memory, no copy), or false where the buffer has no such
// slice. Copies between a host backend and a device then read or write
// the buffer in place instead of staging through a temporary slice.
type HostMemory interface {
	HostView(buf Buffer, off, n int) (any, bool)
}

// Kernels are the computations a backend provides. Offsets and strides are
// in elements. Unless a method says otherwise, dst is contiguous and does
// not overlap the inputs.
type Kernels interface {
	// Fill sets n elements of dst to v converted to dst's dtype (as Cast
	// converts a float64).
	Fill(dst Arg, n int, v float64)
	// Cast converts n contiguous elements of src into dst (dtypes may
	// differ). Floats become integers by truncation toward zero, saturating
	// at the integer type's range, with NaN becoming 0; anything becomes
	// Bool as "is not zero" (NaN is true); Bool becomes 0 or 1.
	Cast(dst, src Arg, n int)
	// Copy copies a strided view of src with the given shape into a strided
	// view of dst (both use Strides). It implements transpose, slicing,
	// concatenation and broadcasting. Strides may be negative (a reversed
	// view, whose Off is the element at index 0). dst and src may live on
	// two devices of the backend: the copy (and Cast's) is then ordered
	// after the work queued so far on src's device and before the work
	// queued on it later, without the caller waiting for either device.
	Copy(shape []int, dst, src Arg)
	// Unary computes dst[i] = op(x[i]; p1, p2) for n contiguous elements.
	// dst may equal x (in place). dst and x have one dtype; integer dtypes
	// support the ops IntUnaryOps lists, Bool only LogicalNot.
	Unary(op UnaryOp, dst, x Arg, n int, p1, p2 float64)
	// Binary computes dst = op(a, b) over shape; a and b are strided (a
	// stride of 0 broadcasts), dst is contiguous. dst may be the same
	// contiguous memory as a or b (in place). a and b have one dtype; dst has
	// it too, except that comparisons (Equal ... LessEqual) may write a Bool
	// dst. Integer dtypes support the ops IntBinaryOps lists (Div truncates
	// toward zero, and x/0 is 0), Bool the comparisons and the logical ops.
	Binary(op BinaryOp, shape []int, dst, a, b Arg)
	// Reduce reduces the contiguous src of the given shape over the axes
	// marked in axes, writing the contiguous dst whose shape is src's with
	// those axes removed (or set to 1). dst has src's dtype, except that
	// ArgMax and ArgMin (which require exactly one axis) write the index of
	// the first extreme into a dst of any dtype. NaN is the extreme of Max,
	// Min, ArgMax and ArgMin where it occurs (the first NaN wins). Integer
	// sums wrap around like Go's integer arithmetic.
	Reduce(op ReduceOp, shape []int, axes []bool, dst, src Arg)
	// Gemm computes a batch of row-major products C = alpha*op(A)*op(B) + beta*C.
	Gemm(p GemmParams)
	// Conv2D computes the NCHW convolution y = conv(x, w).
	Conv2D(p ConvParams, y, x, w Arg)
	// Conv2DBackwardData computes dx from dy and w (overwriting dx).
	Conv2DBackwardData(p ConvParams, dx, dy, w Arg)
	// Conv2DBackwardFilter computes dw from x and dy (overwriting dw).
	Conv2DBackwardFilter(p ConvParams, dw, x, dy Arg)
	// Pool2D pools x (NCHW) into y.
	Pool2D(p PoolParams, y, x Arg)
	// Pool2DBackward computes dx (overwriting it) from x, y and dy.
	Pool2DBackward(p PoolParams, dx, x, y, dy Arg)
	// Pick gathers dst[o,i] = x[o, idx[o,i], i] for x of shape
	// [outer, n, inner] and idx of shape [outer, inner]. Indices (of any
	// dtype; floats are truncated) are clipped to [0, n).
	Pick(outer, n, inner int, dst, x, idx Arg)
	// PickBackward scatters dy into the zero-filled dx: dx[o, idx[o,i], i] += dy[o,i].
	PickBackward(outer, n, inner int, dx, dy, idx Arg)
	// OneHot writes dst[i, j] = on if idx[i] == j else off, for i < n, j < depth;
	// idx may have any dtype.
	OneHot(n, depth int, dst, idx Arg, on, off float64)
}

// GemmParams describes a batch of row-major matrix products
// C[i] = Alpha * op(A[i]) * op(B[i]) + Beta * C[i], where op(A) is M×K and
// op(B) is K×N. LDx are leading dimensions (row strides) and StrideX the
// element distance between consecutive matrices of the batch.
type GemmParams struct {
	TransA, TransB bool
	M, N, K        int
	Alpha, Beta    float64
	A, B, C        Arg
	LDA, LDB, LDC  int
	Batch          int
	StrideA        int
	StrideB        int
	StrideC        int
}

// ConvParams describes a 2-D NCHW convolution with weights of shape
// [OutC, InC/Groups, KH, KW].
type ConvParams struct {
	N, InC, InH, InW   int
	OutC, OutH, OutW   int
	KH, KW             int
	StrideH, StrideW   int
	PadH, PadW         int
	DilateH, DilateW   int
	Groups             int
	DType              DType
	Device             ctx.Context
	InputGradNotNeeded bool // reserved for backends that fuse passes
}

// PoolType is max or average pooling.
type PoolType uint8

// The pooling types.
const (
	PoolMax PoolType = iota
	PoolAvg
)

// PoolParams describes 2-D NCHW pooling of x [N, C, InH, InW] into
// y [N, C, OutH, OutW].
type PoolParams struct {
	Type             PoolType
	N, C, InH, InW   int
	OutH, OutW       int
	KH, KW           int
	StrideH, StrideW int
	PadH, PadW       int
	// ExcludePad makes average pooling divide by the number of input
	// elements in the window; by default (false) it divides by the full
	// window, padding included, as nd.PoolOpts and PyTorch do.
	ExcludePad bool
	DType      DType
	Device     ctx.Context
}

// backends holds the registered backend of each device kind. Register
// replaces the whole table (rare), so that For, on every op's path, is
// one atomic load.
var (
	regMu    sync.Mutex
	backends atomic.Pointer[[256]Backend]
)

// Register makes b the backend for devices of kind k.
func Register(k ctx.Kind, b Backend) {
	regMu.Lock()
	defer regMu.Unlock()
	var t [256]Backend
	if old := backends.Load(); old != nil {
		t = *old
	}
	t[k] = b
	backends.Store(&t)
}

// For returns the backend for dev's kind, or nil when none is registered.
func For(dev ctx.Context) Backend {
	if t := backends.Load(); t != nil {
		return t[dev.Kind]
	}
	return nil
}

// ChannelParams describes a contiguous array viewed as [Outer, C, Inner]
// for per-channel kernels: channel c of the middle axis has M = Outer·Inner
// values, in Outer runs of Inner contiguous values.
type ChannelParams struct {
	Outer, C, Inner int
	DType           DType
	Device          ctx.Context
}

// BatchNormKernels are fused batch-normalisation kernels, each of which
// reads its large operands once or twice. A backend may implement them;
// package nd uses them when it does and composes Reduce, Unary and Binary
// otherwise (the reference the fused kernels are tested against). Arg
// values with a nil Buf stand for absent operands, as documented per
// method; per-channel operands hold C contiguous values.
type BatchNormKernels interface {
	// BatchNormStats writes each channel's mean and biased variance of x.
	BatchNormStats(p ChannelParams, mean, variance, x Arg)
	// BatchNormApply writes y = (x − mean)·invstd·gamma + beta per
	// channel; a nil gamma is 1 and a nil beta 0.
	BatchNormApply(p ChannelParams, y, x, mean, invstd, gamma, beta Arg)
	// BatchNormBackward computes, with x̂ = (x − mean)·invstd and g the
	// output gradient, dbeta = Σ g and dgamma = Σ g·x̂ per channel, and,
	// unless dx has a nil Buf, dx = gamma·invstd·(g − (dbeta + x̂·dgamma)/M)
	// when batchStats (mean and invstd came from this batch) or
	// gamma·invstd·g when they did not. A nil gamma is 1.
	BatchNormBackward(p ChannelParams, batchStats bool, dx, dgamma, dbeta, g, x, mean, invstd, gamma Arg)
}

// BatchNormReluKernels end a batch normalisation with a ReLU in the same
// pass over the output (a normalisation followed by a ReLU, as in most
// convolutional networks). A backend may implement them; package nd runs
// BatchNormApply and then Unary's Relu otherwise.
type BatchNormReluKernels interface {
	// BatchNormApplyRelu writes y = max(BatchNormApply's value, 0): each
	// value rounded as BatchNormApply rounds it, then as Unary's Relu
	// (−0 and NaN pass through), so the same bits as the two calls.
	BatchNormApplyRelu(p ChannelParams, y, x, mean, invstd, gamma, beta Arg)
}

// BatchNormStatsKernels compute BatchNorm's per-channel coefficients and
// running statistics in one pass over the channels, where package nd
// otherwise runs up to eight small Unary and Binary calls (a GPU's launch
// each). A backend may implement them; each value must be rounded as
// those calls round it, so the results are the same bits.
type BatchNormStatsKernels interface {
	// BatchNormTrainStats writes invstd = RSqrt(variance + eps) and
	// updates the running statistics that have a Buf (ChannelParams.C
	// values each): run = run·momentum + batch·((1 − momentum)·scale),
	// with scale 1 for runMean and varScale for runVar; each product, the
	// sum and the scalars rounded as Unary's MulScalar and AddScalar and
	// Binary's Add round them.
	BatchNormTrainStats(p ChannelParams, invstd, mean, variance, runMean, runVar Arg, eps, momentum, varScale float64)
	// BatchNormEvalStats writes mean = runMean and invstd =
	// RSqrt(runVar + eps), as Unary's MulScalar by 1, AddScalar and RSqrt.
	BatchNormEvalStats(p ChannelParams, mean, invstd, runMean, runVar Arg, eps float64)
}

// ConvBiasKernels add a convolution's bias in the convolution's own pass
// over its output instead of a second one. A backend may implement them;
// package nd runs Conv2D and then Binary's Add otherwise.
type ConvBiasKernels interface {
	// Conv2DBias computes y = Conv2D(x, w) + bias[channel]: each output's
	// sum rounded as Conv2D rounds it, then its bias added as Binary's Add
	// adds it, so the result equals the composed one bit for bit.
	Conv2DBias(p ConvParams, y, x, w, bias Arg)
}

// ConvBiasReluKernels end a convolution with its bias and a ReLU in the
// convolution's own pass over its output (a convolution layer with a ReLU
// activation). A backend may implement them; package nd runs Conv2D and
// BiasRelu otherwise.
type ConvBiasReluKernels interface {
	// Conv2DBiasRelu computes y = max(Conv2D(x, w) + bias[channel], 0):
	// each sum rounded as Conv2D rounds it, then bias and ReLU as BiasRelu
	// applies them (a NaN or −0 passes through), so the result equals the
	// composed one bit for bit.
	Conv2DBiasRelu(p ConvParams, y, x, w, bias Arg)
}

// BiasReluKernels fuse a per-channel bias with a ReLU, the end of most
// convolution and dense layers. A backend may implement them; package nd
// composes Binary, Unary and Reduce otherwise.
type BiasReluKernels interface {
	// BiasRelu writes y = max(x + bias[c], 0), where a NaN or −0 sum passes
	// through unchanged (as the Relu unary op does). y may equal x.
	BiasRelu(p ChannelParams, y, x, bias Arg)
	// BiasReluBackward writes dx = g where y > 0 and 0 elsewhere, and, unless
	// dbias has a nil Buf, dbias[c] = the sum of dx over channel c. dx may
	// equal g.
	BiasReluBackward(p ChannelParams, dx, dbias, g, y Arg)
}

// PoolReluBackwardKernels fuse the backward passes of a pooling and of
// the bias + ReLU whose output it pools (convolution, bias, ReLU, max
// pooling: LeNet's and most small CNNs' blocks), which a traced graph's
// backward pass runs back to back: each plane's gradient is routed
// through the pooling and masked by the ReLU while it is in cache, instead
// of being written whole by one kernel and read again by the next. A
// backend may implement them; a graph runs the two kernels otherwise.
type PoolReluBackwardKernels interface {
	// FusesPoolReluBackward reports whether PoolReluBackward takes pp and
	// cp.
	FusesPoolReluBackward(pp PoolParams, cp ChannelParams) bool
	// PoolReluBackward writes into dx and dbias what Pool2DBackward(pp, t,
	// x, y, dy) followed by BiasReluBackward(cp, dx, dbias, t, x) would,
	// bit for bit (t a temporary), where x is both the ReLU's output and
	// the pooling's input, y the pooling's output and dy its gradient.
	// dbias may have a nil Buf.
	PoolReluBackward(pp PoolParams, cp ChannelParams, dx, dbias, x, y, dy Arg)
}

// GELUKernels compute the GELU activation and its gradient in one pass
// each (the composed form takes five elementwise passes forward and about
// eight backward). A backend may implement them; package nd composes
// elementwise ops otherwise. With tanh the approximation
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) is used, else x·Φ(x) with
// Φ(x) = (1 + erf(x/√2))/2.
type GELUKernels interface {
	// GELU writes y = GELU(x) for n values of dtype dt, and into s the
	// gate the backward pass reuses: Φ(x), or (1 + tanh(u))/2.
	GELU(dt DType, tanh bool, y, s, x Arg, n int)
	// GELUBackward writes dx = g·GELU'(x) for n values from x and the gate
	// s that GELU wrote (a kernel may recompute what s holds where s's
	// precision would not do); dx may equal g.
	GELUBackward(dt DType, tanh bool, dx, g, x, s Arg, n int)
}

// SoftmaxCEKernels compute the softmax cross-entropy of logits against
// class indices in one pass over the logits forward and one backward (the
// composed LogSoftmax, Pick and Neg take about eight passes forward and as
// many backward, with logit-sized temporaries). A backend may implement
// them; package nd composes those ops otherwise. x is viewed as
// [Outer, C, Inner] with the classes on the middle axis; labels hold
// Outer·Inner class indices of an integer dtype, or whole numbers of a
// float one, clipped to [0, C) as Pick clips them.
type SoftmaxCEKernels interface {
	// SoftmaxCE writes, per position, lse = log Σ exp(x) over the classes
	// (float64, computed stably) and loss = lse − x[label] in x's dtype.
	SoftmaxCE(p ChannelParams, loss, lse, x, labels Arg)
	// SoftmaxCEBackward writes dx = g·(exp(x − lse) − [class = label]),
	// with g one value per position.
	SoftmaxCEBackward(p ChannelParams, dx, g, x, lse, labels Arg)
}

// DropoutKernels draw dropout masks on the device instead of on the host
// (where a mask is drawn and then copied, megabytes per layer and step). A
// backend may implement them; package nd draws on the host otherwise. The
// values must equal the host's bit for bit.
type DropoutKernels interface {
	// DropoutMask writes n values of dst's float dtype: keep where the
	// value's 32 random bits are at least thr, else 0. The bits of values
	// 2k and 2k+1 are the low and high halves of splitmix64(seed + k).
	DropoutMask(dst Arg, n int, seed uint64, thr uint32, keep float64)
}

// DropoutApplyKernels apply a dropout mask without storing it: each value
// is computed where it is used, from a seed the kernels read from the
// device, so a forward pass and its backward pass draw the same mask from
// one 8-byte seed instead of keeping a mask as large as the activation. A
// backend may implement them; package nd stores the mask
// (DropoutKernels, or on the host) otherwise.
type DropoutApplyKernels interface {
	// DropoutApply writes dst[i] = src[i] · m_i for i < n in dst's float
	// dtype (src's), where m_i is value i of DropoutMask's mask for the
	// seed held as the first element of seed (Int64), in that dtype.
	DropoutApply(dst, src, seed Arg, n int, thr uint32, keep float64)
}

// DropoutBits returns the 64 random bits of dropout mask values 2k and
// 2k+1 for seed (low and high halves): splitmix64(seed + k), the output
// function of the SplitMix64 generator (Steele, Lea and Flood, 2014).
func DropoutBits(seed, k uint64) uint64 {
	x := seed + k + 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// DropoutValue is a mask value's float64 bits: keepBits (those of 1/(1−p))
// when its random bits u are at least thr, else 0 (+0), chosen with a bit
// mask rather than a branch, which would mispredict on a random half of
// the values.
func DropoutValue(u, thr uint32, keepBits uint64) uint64 {
	lt := (uint64(u) - uint64(thr)) >> 63 // 1 when u < thr
	return keepBits & (lt - 1)
}

// OptimizerParams are the scalars of an optimizer update, already
// resolved for this update of this parameter: LR and WD include the
// parameter's multipliers and the schedule, RescaleGrad is never 0 (1 for
// none), and ClipGradient and ClipWeights are 0 for none. SGDProgram and
// RMSPropProgram (optprog.go) turn them into the update's program.
type OptimizerParams struct {
	LR, WD, RescaleGrad, ClipGradient float64
	// Momentum and Nesterov select SGD's form.
	Momentum float64
	Nesterov bool
	// Gamma1, Epsilon, KerasEpsilon and ClipWeights are RMSProp's (the
	// uncentred form).
	Gamma1, Epsilon, ClipWeights float64
	KerasEpsilon                 bool
}

// OptimizerKernels update a weight in place in one pass over the weight,
// its gradient and its state, instead of one pass per step of the
// update's program. A backend may implement them; package nd runs the
// program's steps with Unary and Binary otherwise.
type OptimizerKernels interface {
	// OptimizerUpdate runs prog (optprog.go) on each of n contiguous
	// elements of w, g and s, each step rounded to the element type as
	// Unary and Binary round, so that the result equals the composed
	// steps' bit for bit. s has a nil Buf when prog does not use the
	// state.
	OptimizerUpdate(prog OptProgram, w, g, s Arg, n int)
}

// GatherParams describes an indexed gather or scatter along one axis: the
// data operand viewed as [Outer, N, Inner], the index and gathered operands
// as [Outer, M, Inner]. An index k selects position k of the N axis;
// indices outside [0, N) are clipped, or wrapped (k mod N) with Wrap.
type GatherParams struct {
	Outer, N, M, Inner int
	Wrap               bool
}

// IndexKernels are the kernels of indexing, masking, scans and sorting. A
// backend may implement them; package nd runs these ops through the CPU
// backend on host copies of the operands when it does not (correct, and as
// slow as the copies). Index operands have an integer dtype (or a float
// one holding whole numbers) and Strides of the [Outer, M, Inner] view (0
// to broadcast).
type IndexKernels interface {
	// Gather writes dst[o,j,i] = x[o, k, i] where k is the index at
	// (o,j,i); dst is contiguous.
	Gather(p GatherParams, dst, x, idx Arg)
	// ScatterAdd adds src[o,j,i] into dst[o, k, i] (k as in Gather),
	// visiting j in increasing order for each (o, i), so that the sums are
	// the same on every run; dst and src are contiguous.
	ScatterAdd(p GatherParams, dst, src, idx Arg)
	// Where writes dst = a where cond is true and b elsewhere over shape;
	// cond (Bool), a and b are strided (0 broadcasts), dst is contiguous.
	Where(shape []int, dst, cond, a, b Arg)
	// Cumsum writes the inclusive running sum of src along the middle axis
	// of [outer, n, inner] into dst (both contiguous), in order.
	Cumsum(outer, n, inner int, dst, src Arg)
	// Sort sorts src along the middle axis of [outer, n, inner] into vals
	// (src's dtype) and idx (Int64 positions), stably, ascending or with
	// desc descending; NaN sorts above every number (last ascending, first
	// descending).
	Sort(outer, n, inner int, desc bool, vals, idx, src Arg)
}
