//go:build cuda && !cudaemu

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

// Our own declarations of the cuDNN entry points we use (the legacy
// convolution API, present in cuDNN 8 and 9), so that no cuDNN header is
// needed: the library is found at run time.
typedef int dnStatus;
typedef void* dnHandle;
typedef void* dnDesc;

// cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t share this layout.
typedef struct {
	int algo;
	int status;
	float time;
	size_t memory;
	int determinism;
	int mathType;
	int reserved[3];
} dnPerf;

typedef dnStatus (*dnCreateFn)(dnHandle*);
typedef dnStatus (*dnSetStreamFn)(dnHandle, void*);
typedef dnStatus (*dnCreateDescFn)(dnDesc*);
typedef dnStatus (*dnSetTensor4dFn)(dnDesc, int, int, int, int, int, int);
typedef dnStatus (*dnSetFilter4dFn)(dnDesc, int, int, int, int, int, int);
typedef dnStatus (*dnSetConv2dFn)(dnDesc, int, int, int, int, int, int, int, int);
typedef dnStatus (*dnSetIntFn)(dnDesc, int);
typedef dnStatus (*dnGetAlgoFn)(dnHandle, dnDesc, dnDesc, dnDesc, dnDesc, int, int*, dnPerf*);
typedef dnStatus (*dnWsFn)(dnHandle, dnDesc, dnDesc, dnDesc, dnDesc, int, size_t*);
typedef dnStatus (*dnRunFn)(dnHandle, const void*, dnDesc, const void*, dnDesc, const void*, dnDesc, int,
	void*, size_t, const void*, dnDesc, void*);
typedef const char* (*dnErrFn)(dnStatus);
typedef size_t (*dnVersionFn)(void);

static dnCreateFn dnCreate;
static dnSetStreamFn dnSetStream;
static dnCreateDescFn dnCreateTensor, dnCreateFilter, dnCreateConv;
static dnSetTensor4dFn dnSetTensor4d;
static dnSetFilter4dFn dnSetFilter4d;
static dnSetConv2dFn dnSetConv2d;
static dnSetIntFn dnSetGroups, dnSetMath;
static dnGetAlgoFn dnAlgo[3], dnFind[3];
static dnWsFn dnWs[3];
static dnRunFn dnRun[3];
static dnErrFn dnErr;
static dnVersionFn dnVersion;

static void* dn_libs[4];

static void* dn_sym(const char* name) {
	for (int i = 0; i < 4; i++) {
		if (!dn_libs[i]) continue;
		void* p = dlsym(dn_libs[i], name);
		if (p) return p;
	}
	return NULL;
}

// dn_open loads cuDNN from path (and, for cuDNN 9, its sub-libraries
// libcudnn_ops and libcudnn_cnn beside it when the front library does not
// export a name) and resolves the entry points. It returns NULL on success,
// else a message.
static const char* dn_open(const char* path, const char* ops, const char* cnn) {
	static char missing[128];
	memset(dn_libs, 0, sizeof dn_libs);
	dn_libs[0] = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dn_libs[0]) return dlerror();
	if (ops[0]) dn_libs[1] = dlopen(ops, RTLD_NOW | RTLD_LOCAL);
	if (cnn[0]) dn_libs[2] = dlopen(cnn, RTLD_NOW | RTLD_LOCAL);
#define SYM(v, T, name) if (!(v = (T)dn_sym(name))) { snprintf(missing, sizeof missing, "%s not found", name); return missing; }
	SYM(dnCreate, dnCreateFn, "cudnnCreate")
	SYM(dnSetStream, dnSetStreamFn, "cudnnSetStream")
	SYM(dnCreateTensor, dnCreateDescFn, "cudnnCreateTensorDescriptor")
	SYM(dnCreateFilter, dnCreateDescFn, "cudnnCreateFilterDescriptor")
	SYM(dnCreateConv, dnCreateDescFn, "cudnnCreateConvolutionDescriptor")
	SYM(dnSetTensor4d, dnSetTensor4dFn, "cudnnSetTensor4dDescriptor")
	SYM(dnSetFilter4d, dnSetFilter4dFn, "cudnnSetFilter4dDescriptor")
	SYM(dnSetConv2d, dnSetConv2dFn, "cudnnSetConvolution2dDescriptor")
	SYM(dnSetGroups, dnSetIntFn, "cudnnSetConvolutionGroupCount")
	SYM(dnSetMath, dnSetIntFn, "cudnnSetConvolutionMathType")
	SYM(dnAlgo[0], dnGetAlgoFn, "cudnnGetConvolutionForwardAlgorithm_v7")
	SYM(dnAlgo[1], dnGetAlgoFn, "cudnnGetConvolutionBackwardDataAlgorithm_v7")
	SYM(dnAlgo[2], dnGetAlgoFn, "cudnnGetConvolutionBackwardFilterAlgorithm_v7")
	SYM(dnFind[0], dnGetAlgoFn, "cudnnFindConvolutionForwardAlgorithm")
	SYM(dnFind[1], dnGetAlgoFn, "cudnnFindConvolutionBackwardDataAlgorithm")
	SYM(dnFind[2], dnGetAlgoFn, "cudnnFindConvolutionBackwardFilterAlgorithm")
	SYM(dnWs[0], dnWsFn, "cudnnGetConvolutionForwardWorkspaceSize")
	SYM(dnWs[1], dnWsFn, "cudnnGetConvolutionBackwardDataWorkspaceSize")
	SYM(dnWs[2], dnWsFn, "cudnnGetConvolutionBackwardFilterWorkspaceSize")
	SYM(dnRun[0], dnRunFn, "cudnnConvolutionForward")
	SYM(dnRun[1], dnRunFn, "cudnnConvolutionBackwardData")
	SYM(dnRun[2], dnRunFn, "cudnnConvolutionBackwardFilter")
	SYM(dnErr, dnErrFn, "cudnnGetErrorString")
	SYM(dnVersion, dnVersionFn, "cudnnGetVersion")
#undef SYM
	return NULL;
}

static long long dn_version(void) { return (long long)dnVersion(); }
static const char* dn_err(dnStatus s) { return dnErr(s); }
static dnStatus dn_create(dnHandle* h, void* stream) {
	dnStatus s = dnCreate(h);
	if (s) return s;
	return dnSetStream(*h, stream);
}

// dn_winograd reports whether algo of pass p is one of the Winograd
// algorithms (forward 6 and 7, backward data 4 and 5, backward filter 4 and
// 5), which plans skip: measured on an H100 with cuDNN 9.14, the
// non-fused ones lose about three digits with 5x5 kernels (largest error
// 2e-3 of the largest value), where every other algorithm stays at 1e-6.
static int dn_winograd(int p, int algo) {
	return p == 0 ? (algo == 6 || algo == 7) : (algo == 4 || algo == 5);
}

// dn_plan describes one convolution: x [n,c,h,w], w [k,c/groups,kh,kw],
// y [n,k,oh,ow]; dt the cudnnDataType_t of the arrays (0 float32, 1
// float64, 2 half, 9 bfloat16; the half types compute in float32); math 3
// (FMA: no TF32), 1 (tensor cores) or 0.
// It fills the descriptors and, per pass (forward, backward data, backward
// filter), the first algorithm in cuDNN's ranking that succeeds, is
// deterministic when det is set, is not a Winograd one, and needs at most
// wsMax bytes. The ranking
// is by measured time when find is set (cudnnFind*: each algorithm is run
// once on scratch memory), else by cuDNN's heuristics. ms gets the chosen
// algorithm's measured time and best the fastest one's, deterministic or
// not (find only; else -1).
static dnStatus dn_plan(dnHandle h, int dt, int math, int det, int find, const int* force, long long wsMax,
		int n, int c, int hh, int ww, int k, int kh, int kw, int oh, int ow,
		int ph, int pw, int sh, int sw, int dh, int dw, int groups,
		dnDesc* xd, dnDesc* wd, dnDesc* yd, dnDesc* cd, int* algo, long long* ws, float* ms, float* best) {
	dnStatus s;
	if ((s = dnCreateTensor(xd)) || (s = dnCreateTensor(yd)) || (s = dnCreateFilter(wd)) || (s = dnCreateConv(cd))) return s;
	if ((s = dnSetTensor4d(*xd, 0, dt, n, c, hh, ww))) return s;
	if ((s = dnSetTensor4d(*yd, 0, dt, n, k, oh, ow))) return s;
	if ((s = dnSetFilter4d(*wd, dt, 0, k, c / groups, kh, kw))) return s;
	if ((s = dnSetConv2d(*cd, ph, pw, sh, sw, dh, dw, 1, dt == 1 ? 1 : 0))) return s;
	if ((s = dnSetGroups(*cd, groups))) return s;
	if ((s = dnSetMath(*cd, math))) return s;
	for (int p = 0; p < 3; p++) {
		dnPerf perf[16];
		int got = 0;
		dnDesc a = *xd, b = *wd, cc = *cd, d = *yd; // forward: x, w, conv, y
		if (p == 1) { a = *wd; b = *yd; d = *xd; } // backward data: w, dy, conv, dx
		if (p == 2) { a = *xd; b = *yd; d = *wd; } // backward filter: x, dy, conv, dw
		algo[p] = -1;
		ms[p] = best[p] = -1;
		if (force[p] >= 0) {
			size_t sz = 0;
			if (dnWs[p](h, a, b, cc, d, force[p], &sz) == 0 && (long long)sz <= wsMax) {
				algo[p] = force[p];
				ws[p] = (long long)sz;
			}
			continue;
		}
		if ((s = (find ? dnFind : dnAlgo)[p](h, a, b, cc, d, 16, &got, perf))) return s;
		for (int i = 0; i < got; i++) {
			if (perf[i].status != 0) continue;
			if (find && best[p] < 0) best[p] = perf[i].time;
			if (det && perf[i].determinism != 1) continue;
			if (dn_winograd(p, perf[i].algo)) continue;
			size_t sz = 0;
			if (dnWs[p](h, a, b, cc, d, perf[i].algo, &sz) != 0 || (long long)sz > wsMax) continue;
			algo[p] = perf[i].algo;
			ws[p] = (long long)sz;
			if (find) ms[p] = perf[i].time;
			break;
		}
	}
	return 0;
}

// dn_run runs pass p with the plan's descriptors: out = op(in1, in2);
// pointers are device addresses, alpha 1 and beta 0 in the compute type
// (double for float64 data, else float).
static dnStatus dn_run(int p, int dt, dnHandle h, dnDesc xd, dnDesc wd, dnDesc yd, dnDesc cd, int algo,
		unsigned long long ws, long long wsSize, unsigned long long in1, unsigned long long in2,
		unsigned long long out) {
	float f1 = 1, f0 = 0;
	double d1 = 1, d0 = 0;
	const void* one = dt == 1 ? (const void*)&d1 : (const void*)&f1;
	const void* zero = dt == 1 ? (const void*)&d0 : (const void*)&f0;
	dnDesc a = xd, b = wd, d = yd; // forward: x, w -> y
	if (p == 1) { a = wd; b = yd; d = xd; } // backward data: w, dy -> dx
	if (p == 2) { a = xd; b = yd; d = wd; } // backward filter: x, dy -> dw
	return dnRun[p](h, one, a, (const void*)in1, b, (const void*)in2, cd, algo, (void*)ws, (size_t)wsSize,
		zero, d, (void*)out);
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

var cudnnLoad struct {
	once    sync.Once
	path    string
	version int
	err     error
}

// loadCudnn dlopens cuDNN once per process: $CUDNN_LIB, then cuDNN 9 and 8
// by soname and under /usr/local/cuda/lib64.
func loadCudnn() (string, error) {
	cudnnLoad.once.Do(func() {
		if os.Getenv(CudnnEnv) == "0" {
			cudnnLoad.err = fmt.Errorf("cuda: cuDNN turned off (%s=0)", CudnnEnv)
			return
		}
		type try struct{ lib, ops, cnn string }
		var tries []try
		if p := os.Getenv(CudnnLibEnv); p != "" {
			dir := p[:strings.LastIndex(p, "/")+1]
			tries = append(tries, try{p, dir + "libcudnn_ops.so.9", dir + "libcudnn_cnn.so.9"})
		}
		for _, dir := range []string{"", "/usr/local/cuda/lib64/"} {
			tries = append(tries, try{dir + "libcudnn.so.9", dir + "libcudnn_ops.so.9", dir + "libcudnn_cnn.so.9"},
				try{dir + "libcudnn.so.8", dir + "libcudnn_ops_infer.so.8", dir + "libcudnn_cnn_infer.so.8"})
		}
		var msgs []string
		for _, t := range tries {
			cl, co, cc := C.CString(t.lib), C.CString(t.ops), C.CString(t.cnn)
			msg := C.dn_open(cl, co, cc)
			C.free(unsafe.Pointer(cl))
			C.free(unsafe.Pointer(co))
			C.free(unsafe.Pointer(cc))
			if msg == nil {
				cudnnLoad.path, cudnnLoad.version = t.lib, int(C.dn_version())
				return
			}
			msgs = append(msgs, t.lib+": "+C.GoString(msg))
		}
		cudnnLoad.err = fmt.Errorf("cuda: cannot load cuDNN (set %s to its path): %s", CudnnLibEnv, strings.Join(msgs, "; "))
	})
	return cudnnLoad.path, cudnnLoad.err
}

// CudnnPath returns the cuDNN library in use and its version (e.g. 91900),
// or why convolutions run without it.
func CudnnPath() (string, int, error) {
	p, err := loadCudnn()
	return p, cudnnLoad.version, err
}

var cudnnTF32 = os.Getenv(CudnnTF32Env) == "1"

// cudnnFind is 1 unless GOLUON_CUDNN_FIND=0: algorithms are then ranked by
// cuDNN's heuristics instead of by measurement.
var cudnnFind = C.int(1)

// dnnForce holds, per pass, an algorithm that plans use instead of
// choosing one (-1: choose); GOLUON_CUDNN_ALGO=f,d,w sets it, for
// diagnosis.
var dnnForce = [3]int{-1, -1, -1}

func init() {
	if os.Getenv(CudnnFindEnv) == "0" {
		cudnnFind = 0
	}
	if v := os.Getenv("GOLUON_CUDNN_ALGO"); v != "" {
		for i, f := range strings.SplitN(v, ",", 3) {
			if n, err := strconv.Atoi(f); err == nil {
				dnnForce[i] = n
			}
		}
	}
}

// dnnWorkspaceMax bounds an algorithm's workspace.
const dnnWorkspaceMax = 256 << 20

// dnnPlan is a convolution's cuDNN descriptors and algorithms; plans live
// in their device's map and are made and used on its worker thread only.
type dnnPlan struct {
	x, w, y, conv C.dnDesc
	algo          [3]C.int
	ws            [3]C.longlong
	ms, best      [3]C.float // measured ms of the chosen and the fastest algorithm (-1: not measured)
	err           error
}

// dnnState is a device's cuDNN handle (worker thread only) and its plans
// (under mu: the host looks a plan up before asking the worker for one).
type dnnState struct {
	h     C.dnHandle
	err   error
	mu    sync.Mutex
	plans map[backend.ConvParams]*dnnPlan
}

func dnnError(what string, s C.dnStatus) error {
	if s == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s (cuDNN status %d)", what, C.GoString(C.dn_err(s)), int(s))
}

// dnnPlanFor returns p's plan, making the handle and the plan on first
// use. It runs on the worker thread.
func (d *device) dnnPlanFor(p backend.ConvParams) *dnnPlan {
	st := &d.dnn
	if st.h == nil && st.err == nil {
		var h C.dnHandle
		st.err = dnnError("cudnnCreate", C.dn_create(&h, streamHandle(d.stream)))
		st.h = h
	}
	if st.err != nil {
		return &dnnPlan{err: st.err}
	}
	st.mu.Lock()
	pl := st.plans[p]
	st.mu.Unlock()
	if pl != nil {
		return pl
	}
	pl = &dnnPlan{}
	dt, math := dnnDataType(p.DType), C.int(3)
	switch {
	case p.DType.IsHalf():
		math = 1 // CUDNN_TENSOR_OP_MATH
	case cudnnTF32:
		math = 0
	}
	force := [3]C.int{C.int(dnnForce[0]), C.int(dnnForce[1]), C.int(dnnForce[2])}
	pl.err = dnnError("cuDNN convolution plan", C.dn_plan(st.h, dt, math, 1, cudnnFind, &force[0], dnnWorkspaceMax,
		C.int(p.N), C.int(p.InC), C.int(p.InH), C.int(p.InW), C.int(p.OutC), C.int(p.KH), C.int(p.KW),
		C.int(p.OutH), C.int(p.OutW), C.int(p.PadH), C.int(p.PadW), C.int(p.StrideH), C.int(p.StrideW),
		C.int(max(p.DilateH, 1)), C.int(max(p.DilateW, 1)), C.int(p.Groups),
		&pl.x, &pl.w, &pl.y, &pl.conv, &pl.algo[0], &pl.ws[0], &pl.ms[0], &pl.best[0]))
	st.mu.Lock()
	if st.plans == nil {
		st.plans = map[backend.ConvParams]*dnnPlan{}
	}
	st.plans[p] = pl
	st.mu.Unlock()
	return pl
}

// dnnDataType is cuDNN's cudnnDataType_t of dt.
func dnnDataType(dt backend.DType) C.int {
	switch dt {
	case backend.Float64:
		return 1 // CUDNN_DATA_DOUBLE
	case backend.Float16:
		return 2 // CUDNN_DATA_HALF
	case backend.BFloat16:
		return 9 // CUDNN_DATA_BFLOAT16
	}
	return 0 // CUDNN_DATA_FLOAT
}

// ConvHalf reports whether the device's cuDNN runs the Float16 or BFloat16
// convolution p (p.DType) in every pass on dev, computing in float32 on
// tensor cores (backend.HalfConvolver): unless HalfEnv is 0, cuDNN is
// loaded and has an algorithm for each pass. The first call for a shape
// makes its plan.
func (b *Backend) ConvHalf(dev ctx.Context, p backend.ConvParams) bool {
	if !p.DType.IsHalf() || halfOff || !dnnUsable(p) {
		return false
	}
	d := b.started(dev)
	if d == nil {
		return false
	}
	d.dnn.mu.Lock()
	pl := d.dnn.plans[p]
	d.dnn.mu.Unlock()
	if pl == nil {
		if err := d.call("Conv2D plan", func() error { pl = d.dnnPlanFor(p); return nil }); err != nil {
			deviceFail("Conv2D", d.dev, err) // an earlier asynchronous failure, reported as dnnConv does
		}
	}
	return pl.err == nil && pl.algo[0] >= 0 && pl.algo[1] >= 0 && pl.algo[2] >= 0
}

// dnnUsable reports whether convolution p goes through cuDNN: float32,
// float64, float16 or bfloat16 with cuDNN loaded and sizes cuDNN's int32
// descriptors hold.
func dnnUsable(p backend.ConvParams) bool {
	if dnnOff || p.DType != backend.Float32 && p.DType != backend.Float64 && !p.DType.IsHalf() {
		return false
	}
	if _, err := loadCudnn(); err != nil {
		return false
	}
	const lim = 1 << 31
	return p.N*p.InC*p.InH*p.InW < lim && p.N*p.OutC*p.OutH*p.OutW < lim && p.Groups > 0
}

// dnnConv queues pass (0 forward y = conv(x, w), 1 backward data
// dx = conv_bwd(dy, w), 2 backward filter dw = conv_bwd(x, dy)) of p
// through cuDNN: out = op(in1, in2) with in1, in2 as cuDNN takes them
// (x, w; w, dy; x, dy). It reports false, having queued nothing, when no
// algorithm fits; the caller then takes the im2col path.
func (b *Backend) dnnConv(pass int, p backend.ConvParams, out, in1, in2 backend.Arg) bool {
	d := devOf(out)
	d.dnn.mu.Lock()
	pl := d.dnn.plans[p]
	d.dnn.mu.Unlock()
	if pl == nil {
		if err := d.call("Conv2D plan", func() error { pl = d.dnnPlanFor(p); return nil }); err != nil {
			deviceFail("Conv2D", d.dev, err)
		}
	}
	if pl.err != nil || pl.algo[pass] < 0 {
		return false
	}
	var ws *Buffer
	var wsPtr dptr
	if n := int64(pl.ws[pass]); n > 0 {
		ws = b.temp("Conv2D", d, backend.Uint8, int(n))
		wsPtr = ws.ptr
	}
	dt := dnnDataType(p.DType)
	o, a, c := devPtr(out), devPtr(in1), devPtr(in2)
	op := [...]string{"Conv2D cudnn", "Conv2DBackwardData cudnn", "Conv2DBackwardFilter cudnn"}[pass]
	d.async(op, func() error {
		return dnnError(op, C.dn_run(C.int(pass), dt, d.dnn.h, pl.x, pl.w, pl.y, pl.conv, pl.algo[pass],
			C.ulonglong(wsPtr), pl.ws[pass], C.ulonglong(a), C.ulonglong(c), C.ulonglong(o)))
	})
	if ws != nil {
		b.Free(d.dev, ws)
	}
	return true
}
