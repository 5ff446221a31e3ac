//go:build cuda && !cudaemu

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// Our own declarations of the few cuBLAS entry points we use, so that no
// cuBLAS header (and no link-time cuBLAS) is needed: the library is found
// at run time, whatever its major version.
typedef int glStatus;
typedef void* glHandle;

typedef glStatus (*glCreateFn)(glHandle*);
typedef glStatus (*glSetStreamFn)(glHandle, void*);
typedef glStatus (*glSgemmFn)(glHandle, int, int, int, int, int, const float*, const float*, int,
	const float*, int, const float*, float*, int);
typedef glStatus (*glDgemmFn)(glHandle, int, int, int, int, int, const double*, const double*, int,
	const double*, int, const double*, double*, int);
typedef glStatus (*glSgemmSBFn)(glHandle, int, int, int, int, int, const float*, const float*, int,
	long long, const float*, int, long long, const float*, float*, int, long long, int);
typedef glStatus (*glDgemmSBFn)(glHandle, int, int, int, int, int, const double*, const double*, int,
	long long, const double*, int, long long, const double*, double*, int, long long, int);
// GemmEx and its strided-batched form (cuBLAS 11 and later: the compute
// type is a cublasComputeType_t).
typedef glStatus (*glGemmExFn)(glHandle, int, int, int, int, int, const void*, const void*, int, int,
	const void*, int, int, const void*, void*, int, int, int, int);
typedef glStatus (*glGemmSBExFn)(glHandle, int, int, int, int, int, const void*, const void*, int, int,
	long long, const void*, int, int, long long, const void*, void*, int, int, long long, int, int, int);

static glCreateFn glCreate;
static glSetStreamFn glSetStream;
static glSgemmFn glSgemm;
static glDgemmFn glDgemm;
static glSgemmSBFn glSgemmSB;
static glDgemmSBFn glDgemmSB;
static glGemmExFn glGemmEx;         // NULL when this cuBLAS lacks it
static glGemmSBExFn glGemmSBEx;

// gl_cublas_open loads cuBLAS from path and resolves the entry points. It
// returns NULL on success, else a message (dlerror's or the missing name).
static const char* gl_cublas_open(const char* path) {
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
	if (!(glCreate = (glCreateFn)dlsym(h, "cublasCreate_v2"))) return "cublasCreate_v2 not found";
	if (!(glSetStream = (glSetStreamFn)dlsym(h, "cublasSetStream_v2"))) return "cublasSetStream_v2 not found";
	if (!(glSgemm = (glSgemmFn)dlsym(h, "cublasSgemm_v2"))) return "cublasSgemm_v2 not found";
	if (!(glDgemm = (glDgemmFn)dlsym(h, "cublasDgemm_v2"))) return "cublasDgemm_v2 not found";
	if (!(glSgemmSB = (glSgemmSBFn)dlsym(h, "cublasSgemmStridedBatched"))) return "cublasSgemmStridedBatched not found";
	if (!(glDgemmSB = (glDgemmSBFn)dlsym(h, "cublasDgemmStridedBatched"))) return "cublasDgemmStridedBatched not found";
	glGemmEx = (glGemmExFn)dlsym(h, "cublasGemmEx");
	glGemmSBEx = (glGemmSBExFn)dlsym(h, "cublasGemmStridedBatchedEx");
	return NULL;
}

static int gl_has_gemm_ex(void) { return glGemmEx != NULL && glGemmSBEx != NULL; }

// gl_gemm_ex runs a column-major, strided-batched product whose A, B and C
// have the cudaDataType dt (half or bfloat16), accumulating in float32
// (CUBLAS_COMPUTE_32F = 68) with cuBLAS's default algorithm choice
// (CUBLAS_GEMM_DEFAULT = -1), which takes the tensor cores for these types.
static glStatus gl_gemm_ex(int dt, glHandle h, int ta, int tb, int m, int n, int k, double alpha,
		unsigned long long a, int lda, long long sa, unsigned long long b, int ldb, long long sb,
		double beta, unsigned long long c, int ldc, long long sc, int batch) {
	float fa = (float)alpha, fb = (float)beta;
	if (batch == 1)
		return glGemmEx(h, ta, tb, m, n, k, &fa, (const void*)a, dt, lda, (const void*)b, dt, ldb, &fb,
			(void*)c, dt, ldc, 68, -1);
	return glGemmSBEx(h, ta, tb, m, n, k, &fa, (const void*)a, dt, lda, sa, (const void*)b, dt, ldb, sb,
		&fb, (void*)c, dt, ldc, sc, batch, 68, -1);
}

static glStatus gl_create(glHandle* h) { return glCreate(h); }
static glStatus gl_set_stream(glHandle h, void* s) { return glSetStream(h, s); }

// gl_gemm runs a column-major, strided-batched product in float32 (f64 == 0)
// or float64; pointers are device addresses.
static glStatus gl_gemm(int f64, glHandle h, int ta, int tb, int m, int n, int k, double alpha,
		unsigned long long a, int lda, long long sa, unsigned long long b, int ldb, long long sb,
		double beta, unsigned long long c, int ldc, long long sc, int batch) {
	if (f64) {
		if (batch == 1)
			return glDgemm(h, ta, tb, m, n, k, &alpha, (const double*)a, lda, (const double*)b, ldb, &beta,
				(double*)c, ldc);
		return glDgemmSB(h, ta, tb, m, n, k, &alpha, (const double*)a, lda, sa, (const double*)b, ldb, sb,
			&beta, (double*)c, ldc, sc, batch);
	}
	float fa = (float)alpha, fb = (float)beta;
	if (batch == 1)
		return glSgemm(h, ta, tb, m, n, k, &fa, (const float*)a, lda, (const float*)b, ldb, &fb, (float*)c, ldc);
	return glSgemmSB(h, ta, tb, m, n, k, &fa, (const float*)a, lda, sa, (const float*)b, ldb, sb, &fb,
		(float*)c, ldc, sc, batch);
}
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"
)

// CublasLibEnv names the environment variable that, when set, is the
// first path tried for the cuBLAS library.
const CublasLibEnv = "CUBLAS_LIB"

var cublasLoad struct {
	once sync.Once
	path string
	err  error
}

// loadCublas dlopens cuBLAS once per process: $CUBLAS_LIB, then the
// sonames of cuBLAS 13, 12 and 11 (each also under /usr/local/cuda/lib64).
func loadCublas() (string, error) {
	cublasLoad.once.Do(func() {
		var tries []string
		if p := os.Getenv(CublasLibEnv); p != "" {
			tries = append(tries, p)
		}
		for _, v := range []string{"13", "12", "11"} {
			tries = append(tries, "libcublas.so."+v, "/usr/local/cuda/lib64/libcublas.so."+v)
		}
		tries = append(tries, "libcublas.so")
		var msgs []string
		for _, p := range tries {
			cp := C.CString(p)
			msg := C.gl_cublas_open(cp)
			C.free(unsafe.Pointer(cp))
			if msg == nil {
				cublasLoad.path = p
				return
			}
			msgs = append(msgs, p+": "+C.GoString(msg))
		}
		cublasLoad.err = fmt.Errorf("cuda: cannot load cuBLAS (set %s to its path): %s", CublasLibEnv, strings.Join(msgs, "; "))
	})
	return cublasLoad.path, cublasLoad.err
}

// CublasPath returns the cuBLAS library in use, loading it if needed.
func CublasPath() (string, error) { return loadCublas() }

// blasHandle is a cuBLAS handle bound to one device's stream. It is
// created and used only on the device's worker thread.
type blasHandle struct {
	h C.glHandle
}

// cublasStatusNames names the cuBLAS status codes.
var cublasStatusNames = map[int]string{
	1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED", 7: "CUBLAS_STATUS_INVALID_VALUE",
	8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR", 13: "CUBLAS_STATUS_EXECUTION_FAILED",
	14: "CUBLAS_STATUS_INTERNAL_ERROR", 15: "CUBLAS_STATUS_NOT_SUPPORTED", 16: "CUBLAS_STATUS_LICENSE_ERROR",
}

func cublasError(what string, status C.glStatus) error {
	if status == 0 {
		return nil
	}
	name := cublasStatusNames[int(status)]
	if name == "" {
		name = fmt.Sprintf("cuBLAS status %d", int(status))
	}
	return fmt.Errorf("%s: %s", what, name)
}

// newBlasHandle creates a handle in the current context and binds it to
// stream. Call it on the worker thread.
func newBlasHandle(s stream) (*blasHandle, error) {
	if _, err := loadCublas(); err != nil {
		return nil, err
	}
	var h C.glHandle
	if err := cublasError("cublasCreate", C.gl_create(&h)); err != nil {
		return nil, err
	}
	if err := cublasError("cublasSetStream", C.gl_set_stream(h, streamHandle(s))); err != nil {
		return nil, err
	}
	return &blasHandle{h: h}, nil
}

// halfGemmWhy returns why this process has no half-precision GEMM (cuBLAS
// missing, or without GemmEx), or "" when it has one.
func halfGemmWhy() string {
	if _, err := loadCublas(); err != nil {
		return err.Error()
	}
	if C.gl_has_gemm_ex() == 0 {
		return "this cuBLAS has no cublasGemmEx"
	}
	return ""
}

// run issues the product on the handle's stream.
func (h *blasHandle) run(g gemmCall) error {
	b2i := func(b bool) C.int {
		if b {
			return 1
		}
		return 0
	}
	if g.half != 0 {
		st := C.gl_gemm_ex(C.int(g.half), h.h, b2i(g.transA), b2i(g.transB), C.int(g.m), C.int(g.n), C.int(g.k),
			C.double(g.alpha), C.ulonglong(g.a), C.int(g.lda), C.longlong(g.strideA),
			C.ulonglong(g.b), C.int(g.ldb), C.longlong(g.strideB),
			C.double(g.beta), C.ulonglong(g.c), C.int(g.ldc), C.longlong(g.strideC), C.int(g.batch))
		return cublasError("cublasGemmEx", st)
	}
	st := C.gl_gemm(b2i(g.f64), h.h, b2i(g.transA), b2i(g.transB), C.int(g.m), C.int(g.n), C.int(g.k),
		C.double(g.alpha), C.ulonglong(g.a), C.int(g.lda), C.longlong(g.strideA),
		C.ulonglong(g.b), C.int(g.ldb), C.longlong(g.strideB),
		C.double(g.beta), C.ulonglong(g.c), C.int(g.ldc), C.longlong(g.strideC), C.int(g.batch))
	return cublasError("cublas gemm", st)
}
