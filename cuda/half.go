//go:build cuda || cudaemu

package cuda

import (
	"os"

	"github.com/goluon/goluon/nd/backend"
)

// The device's own Float16 and BFloat16 paths: package nd hands half
// arrays to the kernels these report, instead of widening them to float32
// copies (nd/half.go).

// HalfEnv names the environment variable that, set to 0, keeps Float16
// and BFloat16 ops off the device's own half-precision kernels, cuBLAS
// GemmEx and cuDNN's half path: package nd then widens their operands to
// float32 copies and rounds the results, as it does on the CPU.
const HalfEnv = "GOLUON_CUDA_HALF"

// GemmHalf reports whether Gemm multiplies dt (Float16 or BFloat16)
// matrices itself, with float32 accumulation (cuBLAS's GemmEx, on tensor
// cores where the GPU has them; backend.HalfGemmer): unless HalfEnv
// is 0, whenever the cuBLAS in use has GemmEx.
func (b *Backend) GemmHalf(dt backend.DType) bool {
	return dt.IsHalf() && !halfOff && halfGemmWhy() == ""
}

// ElementwiseHalf reports that Unary and Binary take Float16 and BFloat16
// operands (elementwise.cu's half kernels; backend.HalfElementwise).
func (b *Backend) ElementwiseHalf(dt backend.DType) bool { return dt.IsHalf() && !halfOff }

// PoolHalf reports that Pool2D and Pool2DBackward take Float16 and
// BFloat16 operands (pool.cu's half instances; backend.HalfPooler).
func (b *Backend) PoolHalf(dt backend.DType) bool { return dt.IsHalf() && !halfOff }

// ReduceHalf reports that Reduce takes Float16 and BFloat16 operands
// (reduce.cu's half instances; backend.HalfReducer).
func (b *Backend) ReduceHalf(dt backend.DType) bool { return dt.IsHalf() && !halfOff }

// BatchNormHalf reports that the fused batch-normalisation kernels take
// Float16 and BFloat16 elements beside float32 per-channel arrays
// (batchnorm.cu's half instances; backend.HalfBatchNormer).
func (b *Backend) BatchNormHalf(dt backend.DType) bool { return dt.IsHalf() && !halfOff }

// halfOff is HalfEnv set to 0 (tests set it to compare the two paths).
var halfOff = os.Getenv(HalfEnv) == "0"

// cudaDataType is cuBLAS's code of a dtype for GemmEx (library_types.h),
// 0 where it has none here.
func cudaDataType(dt backend.DType) int {
	switch dt {
	case backend.Float16:
		return 2 // CUDA_R_16F
	case backend.BFloat16:
		return 14 // CUDA_R_16BF
	}
	return 0
}
