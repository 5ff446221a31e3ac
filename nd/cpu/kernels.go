package cpu

// The kernel variables the callers (vec.go, biasrelu.go, batchnorm.go,
// pool_fast.go, winograd_rows.go, reduce.go) call: the AVX2 kernels of the
// *_amd64.s files, which kernels512_amd64.go's init replaces by their ZMM
// twins when the active level is AVX-512. Off amd64 they hold the stubs of
// vec_other.go and are never called (useAsmKernel is false there).
var (
	addF32k           = addF32
	subF32k           = subF32
	mulF32k           = mulF32
	divF32k           = divF32
	addScalarF32k     = addScalarF32
	subScalarF32k     = subScalarF32
	mulScalarF32k     = mulScalarF32
	divScalarF32k     = divScalarF32
	reluF32k          = reluF32
	reluGradF32k      = reluGradF32
	sqrtF32k          = sqrtF32
	copyRowsF32k      = copyRowsF32
	addRowsF32k       = addRowsF32
	sumF32k           = sumF32
	accF32k           = accF32
	addReluF32k       = addReluF32
	addReluScalarF32k = addReluScalarF32
	reluGradSumF32k   = reluGradSumF32
	bnSumsF32k        = bnSumsF32
	scaleShiftF32k    = scaleShiftF32
	axpbycF32k        = axpbycF32
	fmaF32k           = fmaF32

	maxPool2x2RowF32k     = maxPool2x2RowF32
	maxPool2x2BackRowF32k = maxPool2x2BackRowF32
	winoInputRowF32k      = winoInputRowF32
	winoOutputRowF32k     = winoOutputRowF32
	winoGradOutRowF32k    = winoGradOutRowF32
)
