// Package cuda is the CUDA GPU backend of package nd, built only with
// -tags cuda. Importing it (a blank import is enough) registers gpu(i)
// contexts with packages ctx and nd/backend, so that ctx.NumGPUs reports the
// devices and every nd op, its gradient and the gluon layers run on them.
//
// Without the tag this package is empty and GPU contexts are unavailable:
// ctx.Check and nd ops on gpu(i) explain that the binary needs -tags cuda.
//
// The backend talks to the CUDA driver through gorgonia.org/cu. Each device
// has its primary context, one stream and one goroutine locked to an OS
// thread through which every driver call for that device is made; work is
// queued on the stream asynchronously and Read, Sync and cross-context
// copies wait for it. Kernels are CUDA C (kernels/*.cu) compiled to PTX by
// `go generate -tags cuda ./cuda` and committed (ptx/*.ptx); matrix
// products and the convolutions' products use cuBLAS, loaded at run time
// with dlopen. Device memory comes from a caching allocator per context.
//
// GOLUON_VIRTUAL_GPUS=N exposes N logical GPUs backed by physical device 0,
// each with its own stream, worker and memory accounting, so multi-GPU code
// paths run on a one-GPU machine. See README.md for building and testing.
package cuda
