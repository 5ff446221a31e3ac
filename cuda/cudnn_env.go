//go:build cuda || cudaemu

package cuda

// CudnnLibEnv names the environment variable that, when set, is the first
// path tried for cuDNN; CudnnEnv set to 0 turns cuDNN off (convolutions then
// use im2col and cuBLAS); CudnnTF32Env set to 1 lets cuDNN use TF32 tensor
// cores (PyTorch's default for convolutions; 10-bit mantissas, so results
// differ from the CPU's by about 1e-3 relative); CudnnFindEnv set to 0 picks
// algorithms by cuDNN's heuristics instead of timing each once per shape.
const (
	CudnnFindEnv = "GOLUON_CUDNN_FIND"
	CudnnLibEnv  = "CUDNN_LIB"
	CudnnEnv     = "GOLUON_CUDNN"
	CudnnTF32Env = "GOLUON_CUDNN_TF32"
)

// dnnOff makes every convolution take the im2col path (tests of that path
// set it).
var dnnOff bool
