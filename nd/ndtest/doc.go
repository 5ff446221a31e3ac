// Package ndtest holds test helpers shared by every backend: a numerical
// gradient checker and the conformance suite. A backend's tests call
// Conformance and GradChecks with one of its contexts, so the CPU and CUDA
// backends run exactly the same op tables with the same tolerances (as
// gonum's blas/testblas does for BLAS implementations).
//
// # Where an op's cases are
//
// The cases for the ops of nd/X.go are in ndtest/X.go: its conformance
// family (forward values against a plain-Go reference) and its gradient
// cases, side by side.
//
//	nd/binary.go     binary.go     Add, Sub, Mul, Div, Pow, Maximum, Minimum, comparisons
//	nd/unary.go      unary.go      Neg, Exp, Log, ..., the scalar ops, Clip
//	nd/math.go       math.go       Erf, Log1p, Expm1, Sin, Cos, Rsqrt, Reciprocal, LogSumExp
//	nd/activation.go activation.go LeakyReLU, PReLU, ELU, GELU, SiLU
//	nd/layernorm.go  layernorm.go  LayerNorm, GroupNorm, InstanceNorm
//	nd/reduce.go     reduce.go     Sum, Mean, Max, Min (KeepDims forms), ArgMax
//	nd/sort.go       sort.go       Cumsum, Sort, TopK, Norm, Var, Std
//	nd/matmul.go     matmul.go     MatMul, Dot, FullyConnected
//	nd/shape.go      shape.go      Reshape, Flatten, ..., Concat, Split, Stack, BroadcastTo
//	nd/slice.go      slice.go      Slice, Flip, SwapAxes, Tile, Repeat
//	nd/pad.go        pad.go        Pad
//	nd/index.go      index.go      Take, Gather, ScatterAdd, IndexAdd
//	nd/where.go      where.go      Where, MaskedFill
//	nd/softmax.go    softmax.go    Softmax, LogSoftmax
//	nd/pick.go       pick.go       Pick, OneHot
//	nd/softmaxce.go  softmaxce.go  SoftmaxCrossEntropy
//	nd/conv.go       conv.go       Conv2D
//	nd/pool.go       pool.go       Pool2D and its wrappers
//	nd/batchnorm.go  batchnorm.go  BatchNorm
//	nd/biasrelu.go   biasrelu.go   BiasRelu
//	nd/dropout.go    dropout.go    Dropout
//	nd/copy.go       copy.go       CopyTo, AsIn, Copy, AsType, Assign, AddTo, ...
//	nd/create.go     create.go     Zeros, Ones, Full, FromSlice, Arange, ...
//	nd/random.go     random.go     RandomUniform, RandomNormal
//	nd/ndarray.go    ndarray.go    views: ops on slices and reshapes
//	nd/dtype.go      dtype.go      integer and Bool arrays through many ops
//
// The ops of nd/products.go, blocks.go, calculus.go, cov.go, histc.go,
// pdist.go, gcd.go and affinegrid.go (Kron, Cross, Tensordot, BlockDiag,
// CartesianProd, Vander, Diff, Rot90, the trapezoidal rules, Cov,
// Corrcoef, Histc, Pdist, Gcd, Lcm, AffineGrid) have their conformance
// family in extra.go and their gradient cases in extra_grad.go.
//
// The shared machinery is in conformance.go (Conformance, its list of
// families, tolerances and reference helpers), gradcases.go (GradChecks,
// its list of case groups, input helpers and the end-to-end composite)
// and gradcheck.go (CheckGrad).
package ndtest
