//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"os"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/ndtest"
)

// needGPUs skips the test unless at least n GPU contexts are available.
// (A test binary linked with gorgonia.org/cu exits in the package's init
// when the machine has no CUDA driver at all; a driver with no usable
// device lands here.)
func needGPUs(t testing.TB, n int) {
	t.Helper()
	if got := ctx.NumGPUs(); got < n {
		why := ""
		if err := InitError(); err != nil {
			why = ": " + err.Error()
		}
		t.Skipf("need %d GPU context(s), have %d (set %s=%d to test on virtual GPUs)%s", n, got, VirtualGPUsEnv, n, why)
	}
}

// TestMain prints what the tests run on: the device, the number of GPU
// contexts and the cuBLAS library, or why there is no GPU.
func TestMain(m *testing.M) {
	if ctx.NumGPUs() == 0 {
		fmt.Fprintf(os.Stderr, "cuda: no GPU context (init error: %v)\n", InitError())
	} else if name, err := DeviceName(ctx.GPU(0)); err != nil {
		fmt.Fprintf(os.Stderr, "cuda: gpu(0) unavailable: %v\n", err)
	} else {
		lib, berr := CublasPath()
		if berr != nil {
			lib = berr.Error()
		}
		free, total, _ := MemInfo(ctx.GPU(0))
		dnn, version, err := CudnnPath()
		if err != nil {
			dnn = err.Error()
		} else {
			dnn = fmt.Sprintf("%s (%d)", dnn, version)
		}
		fmt.Fprintf(os.Stderr, "cuda: gpu(0) is %s (%d of %d MiB free); %d GPU context(s); cuBLAS: %s; cuDNN: %s\n",
			name, free>>20, total>>20, ctx.NumGPUs(), lib, dnn)
	}
	os.Exit(m.Run())
}

// TestConformanceGPU0 runs the backend conformance suite on gpu(0).
func TestConformanceGPU0(t *testing.T) {
	needGPUs(t, 1)
	ndtest.Conformance(t, ctx.GPU(0))
}

// TestConformanceGPU1 runs the suite on gpu(1): a second physical device,
// or a second virtual GPU with its own stream, worker and pool.
func TestConformanceGPU1(t *testing.T) {
	needGPUs(t, 2)
	ndtest.Conformance(t, ctx.GPU(1))
}

// TestGradChecksGPU0 runs the float64 numerical gradient checks on gpu(0);
// with two GPUs their copy case goes to gpu(1) and back.
func TestGradChecksGPU0(t *testing.T) {
	needGPUs(t, 1)
	ndtest.GradChecks(t, ctx.GPU(0))
}

// TestGradGradChecksGPU0 checks the second derivatives GradWith's
// CreateGraph records, for every gradient case, on gpu(0).
func TestGradGradChecksGPU0(t *testing.T) {
	needGPUs(t, 1)
	ndtest.GradGradChecks(t, ctx.GPU(0))
}

// TestSessionChecksGPU0 runs every gradient case in a session of its own
// on gpu(0), the indexing and sorting kernels' temporaries included.
func TestSessionChecksGPU0(t *testing.T) {
	needGPUs(t, 1)
	ndtest.SessionChecks(t, ctx.GPU(0))
}

// TestGradChecksGPU1 runs the gradient checks on gpu(1).
func TestGradChecksGPU1(t *testing.T) {
	needGPUs(t, 2)
	ndtest.GradChecks(t, ctx.GPU(1))
}
