// Package nd is Goluon's n-dimensional array: an NDArray of one element
// type that lives on exactly one context (cpu(i) or gpu(i)),
// the ops on it with their gradients, the autograd tape, and deterministic
// memory release.
//
// # Contexts
//
// Every op requires all its array inputs on one context; cpu(0) and cpu(1)
// are different contexts. Move data explicitly with CopyTo or AsIn. The
// device behind a context is reached only through a backend.Backend; the
// CPU backend is always present and others register themselves.
//
// # Errors
//
// There is one error style for the whole project. Programmer mistakes —
// inputs on different contexts, incompatible shapes, mixed dtypes, a bad
// axis, use of a released array, backward without a recorded graph — make
// the op panic with an *Error, before it allocates or computes anything.
// Its text names the op and the contexts or shapes involved:
//
//	nd.Add: context mismatch: cpu(0) vs cpu(1) (shapes [2 3] and [2 3]); copy one input with CopyTo or AsIn first
//	nd.Dot: shape error: inner dimensions differ: [2 3] and [2 3]
//
// Catch converts such a panic into an error for callers that want one, and
// errors.Is(err, &nd.Error{Kind: nd.ErrContext}) tests its kind. Failures
// of the environment (I/O, corrupt files) are returned as errors by the
// APIs that can meet them; device failures inside an op panic with kind
// ErrDevice. No code in this module calls os.Exit or log.Fatal.
//
// # Element types
//
// Float32, Float64, Float16, BFloat16, Int32, Int64, Uint8 and Bool. The
// ops of one call take one dtype; the exceptions (comparisons return Bool,
// integer sums Int64, index results Int64, index operands any integer
// dtype) and the reasons are in dtype.go. Gradients flow only through the
// floating dtypes. Float16 and BFloat16 ops compute in float32 and round
// their result (half.go); in an autocast scope ops choose their dtype by
// class (autocast.go).
//
// # Argument order
//
// One rule for every op, NumPy's: the arrays come first, then the other
// operands, then the axis or axes, then options — Take(x, idx, axis, mode),
// Gather(x, idx, axis), ScatterAdd(x, idx, src, axis), Split(x, n, axis),
// Repeat(x, n, axis), SliceAxis(x, begin, end, axis), Sort(x, axis,
// descending), Concat(arrs, axis), Sum(x, axes...). Reductions drop the
// reduced axes; their KeepDims twins (SumKeepDims, NormKeepDims, ...) keep
// them with size 1. Constructors take the dtype right after the context:
// Zeros(dev, dt, shape...), Full(dev, dt, v, shape...), Arange(dev, dt,
// start, stop, step). Option structs take Gluon's defaults from their zero
// value and write any other value explicitly (BatchNormOpts' pointers).
//
// # Indexing
//
// Take, Gather, ScatterAdd, IndexAdd, Where, MaskedFill, Pick and OneHot
// take integer index or Bool mask arrays; Slice takes Python-style ranges
// (All, Span, SpanStep, From, Every) on every axis. Scatter-adds (and so
// every gather's gradient) visit repeated indices in a fixed order, so
// results are the same on every run and with any number of contexts.
//
// # Autograd
//
// Inside a recording scope (package autograd, or EnterRecording), every op
// whose inputs need a gradient records a node: its inputs and a backward
// closure, written next to the forward computation. Backward sorts the
// nodes reachable from the heads and walks them once in reverse. Leaves are
// arrays with AttachGrad; their GradReq says whether a gradient overwrites
// (write), accumulates (add) or is skipped (null).
//
// # Higher-order derivatives
//
// GradWith with CreateGraph (PyTorch's create_graph) runs each op's
// differentiable backward function instead: the same gradient computed
// with recorded ops on the output gradient and the op's inputs and output,
// so that the gradients it returns can be differentiated again, to any
// order (gradient penalties, Hessian-vector products, meta-learning). The
// ops that have one: every elementwise unary op but Digamma and Trigamma;
// Add, Sub, Mul, Div, DivScalar, Pow, Maximum, Minimum, Mod, Fmod, Atan2,
// Hypot and Where with broadcasting; Sum, Mean, Max, Min, Norm, Cumsum,
// LogSumExp and Logcumsumexp; Dot, MatMul, FullyConnected and Einsum;
// Reshape, Transpose, BroadcastTo, Slice, SliceAxis, Concat, Stack, Pad
// and the ops made of them; Take, Gather, Pick, ScatterAdd, IndexAdd and
// Sort; Softmax, LogSoftmax and SoftmaxCrossEntropy; the activations (ReLU
// and its fused forms, LeakyReLU, ELU, GELU, SiLU, PReLU, ...); Conv1D,
// Conv2D, Conv3D and their transposes, with fused bias and ReLU; max and
// average pooling; Cdist, GridSample and Interpolate; BatchNorm (batch or running statistics), LayerNorm,
// GroupNorm and InstanceNorm; Dropout; CopyTo and AsType; Logit, Xlogy and
// NanToNum; nd/fft's transforms, STFT and complex helpers. A derivative of a piecewise-linear op (ReLU, Abs, Clip, max
// pooling) is taken as constant, as in PyTorch. Ops outside the list
// (Pdist, the linear algebra package, hybridized graphs,
// activation checkpoints, half-precision kernels) fail with ErrGraph
// naming the op. ndtest.GradGradChecks checks every listed op's second
// derivatives against central differences on every backend.
//
// # Memory
//
// Each context has a pool. Release returns an array's memory at once; a
// Scope releases every array its session made while it was open except
// those kept; arrays made with PersistentSession() are never tracked.
// Views (Reshape, Detach, first-axis SliceAxis) share memory through a
// reference count, so releasing one view never frees memory another still
// uses. Without explicit release the garbage collector reclaims memory.
//
// # Concurrency
//
// Ops on different arrays may run concurrently; the CPU kernels themselves
// spread work over GOMAXPROCS goroutines and give bitwise identical results
// from run to run. Recording, training mode, scopes and random generators
// belong to a Session, which travels with the arrays: per-device forward
// and backward passes run in goroutines inside one recording scope, and
// independent goroutine trees (a learner and a server) each use a Session
// of their own. The Session type documents the rules.
package nd
