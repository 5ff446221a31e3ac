//go:build cuda && !cudaemu

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <stddef.h>

// Our own declarations of the NCCL entry points we use (stable since NCCL
// 2.0), so that no NCCL header is needed: the library is found at run time.
typedef int ncResult;
typedef void* ncComm;
typedef ncResult (*ncVersionFn)(int*);
typedef ncResult (*ncInitAllFn)(ncComm*, int, const int*);
typedef ncResult (*ncAllReduceFn)(const void*, void*, size_t, int, int, ncComm, void*);
typedef ncResult (*ncDestroyFn)(ncComm);
typedef const char* (*ncErrFn)(ncResult);

static ncVersionFn ncVersion;
static ncInitAllFn ncInitAll;
static ncAllReduceFn ncAllReduce;
static ncDestroyFn ncDestroy;
static ncErrFn ncErr;

// nc_open loads NCCL from path and resolves the entry points; it returns
// NULL on success, else a message.
static const char* nc_open(const char* path) {
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
	ncVersion = (ncVersionFn)dlsym(h, "ncclGetVersion");
	ncInitAll = (ncInitAllFn)dlsym(h, "ncclCommInitAll");
	ncAllReduce = (ncAllReduceFn)dlsym(h, "ncclAllReduce");
	ncDestroy = (ncDestroyFn)dlsym(h, "ncclCommDestroy");
	ncErr = (ncErrFn)dlsym(h, "ncclGetErrorString");
	if (!ncVersion || !ncInitAll || !ncAllReduce || !ncDestroy || !ncErr) return "an NCCL entry point is missing";
	return NULL;
}

static int nc_version(void) { int v = 0; ncVersion(&v); return v; }
static ncResult nc_init_all(ncComm* comms, int n, const int* devs) { return ncInitAll(comms, n, devs); }
static ncResult nc_all_reduce(unsigned long long addr, size_t n, int dt, ncComm c, void* stream) {
	void* buf = (void*)addr; // a device address
	return ncAllReduce(buf, buf, n, dt, 0, c, stream); // 0: ncclSum
}
static const char* nc_err(ncResult r) { return ncErr(r); }
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/goluon/goluon/nd/backend"
)

// NCCLLibEnv names the environment variable that, when set, is the first
// path tried for NCCL; NCCLEnv set to 0 turns NCCL off.
const (
	NCCLLibEnv = "NCCL_LIB"
	NCCLEnv    = "GOLUON_NCCL"
)

var ncclLoad struct {
	once    sync.Once
	path    string
	version int
	err     error
}

// ncclCandidates lists where NCCL is looked for: $NCCL_LIB, the soname,
// CUDA's directory and the NVIDIA wheels of Python installations (PyTorch
// brings NCCL in nvidia/nccl/lib).
func ncclCandidates() []string {
	var out []string
	if p := os.Getenv(NCCLLibEnv); p != "" {
		out = append(out, p)
	}
	out = append(out, "libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2")
	for _, pat := range []string{
		"/opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
		"/usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2",
		"/usr/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2",
	} {
		m, _ := filepath.Glob(pat)
		out = append(out, m...)
	}
	return out
}

// loadNCCL dlopens NCCL once per process.
func loadNCCL() (string, error) {
	ncclLoad.once.Do(func() {
		if os.Getenv(NCCLEnv) == "0" {
			ncclLoad.err = fmt.Errorf("cuda: NCCL turned off (%s=0)", NCCLEnv)
			return
		}
		var msgs []string
		for _, p := range ncclCandidates() {
			cp := C.CString(p)
			msg := C.nc_open(cp)
			C.free(unsafe.Pointer(cp))
			if msg == nil {
				ncclLoad.path, ncclLoad.version = p, int(C.nc_version())
				return
			}
			msgs = append(msgs, p+": "+C.GoString(msg))
		}
		ncclLoad.err = fmt.Errorf("cuda: cannot load NCCL (set %s to its path): %s", NCCLLibEnv, strings.Join(msgs, "; "))
	})
	return ncclLoad.path, ncclLoad.err
}

// NCCLPath returns the NCCL library in use and its version (e.g. 22803
// for 2.28.3), or why reductions between GPUs run without it.
func NCCLPath() (string, int, error) {
	p, err := loadNCCL()
	return p, ncclLoad.version, err
}

// ncclComms are the communicators of one set of devices (one per device,
// ranks in the set's order), made once and kept for the process.
type ncclComms struct {
	once  sync.Once
	comms []C.ncComm
	err   error
}

var (
	ncclMu      sync.Mutex
	ncclSets    = map[string]*ncclComms{}
	ncclQueueMu sync.Mutex // held while one all-reduce is queued on every GPU
)

// commsFor returns the communicators of devs, whose physical devices must
// be distinct (NCCL takes one rank per GPU).
func commsFor(devs []*device) ([]C.ncComm, error) {
	var key strings.Builder
	ords := make([]C.int, len(devs))
	for i, d := range devs {
		fmt.Fprintf(&key, "%d,", d.id)
		ords[i] = C.int(d.phys.ordinal)
	}
	ncclMu.Lock()
	s := ncclSets[key.String()]
	if s == nil {
		s = &ncclComms{}
		ncclSets[key.String()] = s
	}
	ncclMu.Unlock()
	s.once.Do(func() {
		// ncclCommInitAll sets the calling thread's current device: run it
		// on a thread of its own, which exits with the goroutine.
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread()
			comms := make([]C.ncComm, len(devs))
			if r := C.nc_init_all(&comms[0], C.int(len(devs)), &ords[0]); r != 0 {
				s.err = fmt.Errorf("ncclCommInitAll over %d device(s): %s", len(devs), C.GoString(C.nc_err(r)))
				return
			}
			s.comms = comms
		}()
		<-done
	})
	return s.comms, s.err
}

// allReduceNCCL is AllReduceSum through NCCL: the buffers' first n
// elements are summed in place, each device's part queued on its stream
// by its worker (one thread per GPU, as NCCL allows), so that it runs
// after the work queued there before. It applies to float32 and float64
// buffers on distinct physical GPUs, with NCCL loaded, and declines
// anything else.
func (b *Backend) allReduceNCCL(bufs []backend.Arg, n int) (bool, error) {
	devs := make([]*device, len(bufs))
	seen := map[*physical]bool{}
	dt := buf(bufs[0]).dt
	for i, a := range bufs {
		devs[i] = devOf(a)
		if seen[devs[i].phys] || buf(a).dt != dt {
			return false, nil
		}
		seen[devs[i].phys] = true
	}
	var ncdt C.int
	switch dt {
	case backend.Float32:
		ncdt = 7 // ncclFloat32
	case backend.Float64:
		ncdt = 8 // ncclFloat64
	default:
		return false, nil
	}
	if _, err := loadNCCL(); err != nil {
		return false, nil
	}
	comms, err := commsFor(devs)
	if err != nil {
		return false, err
	}
	// Every GPU must see the collectives in one order: two buckets queued
	// at once from two goroutines could otherwise interleave differently
	// on different GPUs, and NCCL would hang or pair the wrong buffers.
	ncclQueueMu.Lock()
	defer ncclQueueMu.Unlock()
	// Every rank is queued, or none: a rank left out would hang the others.
	for _, d := range devs {
		if err := d.takeErr(); err != nil {
			return false, fmt.Errorf("AllReduceSum on %v: an earlier asynchronous operation failed: %w", d.dev, err)
		}
	}
	forbid("AllReduceSum", devs...)
	for _, d := range devs { // out of any other goroutine's capture
		defer d.cap.enter()()
	}
	for i, d := range devs {
		p, c := devPtr(bufs[i]), comms[i]
		// Queued without GOLUON_CUDA_SYNC's wait: rank i's kernel waits
		// for the other ranks, which are queued after it.
		d.q <- task{op: "AllReduceSum", fn: func() error {
			if r := C.nc_all_reduce(C.ulonglong(p), C.size_t(n), ncdt, c, streamHandle(d.stream)); r != 0 {
				return fmt.Errorf("ncclAllReduce: %s", C.GoString(C.nc_err(r)))
			}
			return nil
		}}
	}
	for _, d := range devs {
		if d.syncEach {
			if err := d.synchronize("AllReduceSum"); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}
