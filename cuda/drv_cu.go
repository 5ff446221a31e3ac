//go:build cuda && !cudaemu

package cuda

/*
#cgo LDFLAGS: -lcuda
#cgo linux CFLAGS: -I/usr/local/cuda/include
#cgo linux LDFLAGS: -L/usr/local/cuda/lib64
#include <cuda.h>

#define GOLUON_MAX_PARAMS 64

// goluon_launch launches f with n parameters packed in blob at offs: a
// kernel parameter may be a struct of any size, which cu.Function.Launch
// (8 bytes per parameter) cannot pass.
static CUresult goluon_launch(void* f, unsigned int gx, unsigned int bx, unsigned int shmem,
		void* stream, const char* blob, const int* offs, int n) {
	void* params[GOLUON_MAX_PARAMS];
	if (n > GOLUON_MAX_PARAMS) return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < n; i++) params[i] = (void*)(blob + offs[i]);
	return cuLaunchKernel((CUfunction)f, gx, 1, 1, bx, 1, 1, shmem, (CUstream)stream, params, NULL);
}

static CUresult goluon_host_alloc(void** p, size_t n) { return cuMemAllocHost(p, n); }

// Stream capture into a CUDA graph (relaxed mode: the worker thread may
// still allocate while the stream captures).
static CUresult goluon_begin_capture(void* s) {
	return cuStreamBeginCapture((CUstream)s, CU_STREAM_CAPTURE_MODE_RELAXED);
}
static CUresult goluon_end_capture(void* s, void** exec) {
	CUgraph g = NULL;
	CUresult r = cuStreamEndCapture((CUstream)s, &g);
	if (r != CUDA_SUCCESS) return r;
	r = cuGraphInstantiateWithFlags((CUgraphExec*)exec, g, 0);
	cuGraphDestroy(g);
	return r;
}
static CUresult goluon_graph_launch(void* exec, void* s) { return cuGraphLaunch((CUgraphExec)exec, (CUstream)s); }
static CUresult goluon_graph_destroy(void* exec) { return cuGraphExecDestroy((CUgraphExec)exec); }
static CUresult goluon_host_free(void* p) { return cuMemFreeHost(p); }
*/
import "C"

import (
	"errors"
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"gorgonia.org/cu"
)

// This file is the seam between the backend and the CUDA driver
// (gorgonia.org/cu plus one cgo launch helper). drv_emu.go implements the
// same functions on the host for -tags cudaemu.

// dptr is a device address.
type dptr = cu.DevicePtr

// stream is a CUDA stream.
type stream = cu.Stream

// physHandle holds the driver objects of a physical device.
type physHandle struct {
	dev   cu.Device
	cuctx cu.CUContext
}

// errOOM is the driver's out-of-memory error.
var errOOM error = cu.OutOfMemory

func isOOM(err error) bool { return err != nil && errors.Is(err, cu.OutOfMemory) }

func drvNumDevices() (int, error) { return cu.NumDevices() }

// load retains the primary context, makes it current on the calling
// (locked) thread, reads the device properties and loads the PTX modules.
// The primary context is kept for the life of the process; it is never
// wrapped in cu.CtxFromCUContext, whose finalizer would destroy it.
func (p *physical) load() error {
	dev, err := cu.GetDevice(p.ordinal)
	if err != nil {
		return fmt.Errorf("cuda: device %d: %w", p.ordinal, err)
	}
	p.h.dev = dev
	if p.h.cuctx, err = dev.RetainPrimaryCtx(); err != nil {
		return fmt.Errorf("cuda: device %d: retaining the primary context: %w", p.ordinal, err)
	}
	if err := p.makeCurrent(); err != nil {
		return err
	}
	p.name, _ = dev.Name()
	for _, q := range []struct {
		attr cu.DeviceAttribute
		dst  *int
	}{
		{cu.MultiprocessorCount, &p.sms},
		{cu.MaxThreadsPerBlock, &p.maxTPB},
		{cu.MaxThreadsPerMultiprocessor, &p.maxTPSM},
	} {
		v, err := dev.Attribute(q.attr)
		if err != nil {
			return fmt.Errorf("cuda: device %d: reading attribute %v: %w", p.ordinal, q.attr, err)
		}
		*q.dst = v
	}
	mods, err := ptxModules()
	if err != nil {
		return fmt.Errorf("cuda: reading the embedded PTX: %w", err)
	}
	p.fns = map[string]*function{}
	for _, m := range mods {
		mod, err := cu.LoadData(m.image)
		if err != nil {
			return fmt.Errorf("cuda: device %d (%s): loading PTX module %s: %w", p.ordinal, p.name, m.name, err)
		}
		for name, params := range m.kernels {
			f, err := mod.Function(name)
			if err != nil {
				return fmt.Errorf("cuda: device %d: kernel %s in %s: %w", p.ordinal, name, m.name, err)
			}
			// A cu.Function is a struct whose only field is the CUfunction.
			p.fns[name] = &function{name: name, handle: *(*unsafe.Pointer)(unsafe.Pointer(&f)), params: params}
		}
	}
	return nil
}

// makeCurrent makes the device's primary context current on this thread.
func (p *physical) makeCurrent() error {
	if err := cu.SetCurrentContext(p.h.cuctx); err != nil {
		return fmt.Errorf("cuda: device %d: making the context current: %w", p.ordinal, err)
	}
	return nil
}

// newStream creates a stream that does not synchronise with the legacy
// default stream.
func newStream() (stream, error) { return cu.MakeStream(cu.NonBlocking) }

func streamSync(s stream) error { return s.Synchronize() }

// defaultSpin is how long a device worker and a caller waiting for it poll
// before they park (see spinFor).
const defaultSpin = time.Millisecond

// event is a driver event (created without timing, the cheaper kind).
type event = *cu.Event

func newEvent() (event, error) {
	e, err := cu.MakeEvent(cu.DisableTiming)
	if err != nil {
		return nil, err
	}
	return &e, nil
}

func eventRecord(e event, s stream) error { return e.Record(s) }

// newTimingEvent returns an event that records a time stamp (for
// eventElapsed), the dearer kind.
func newTimingEvent() (event, error) {
	e, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// eventElapsed returns the time between two completed timing events.
func eventElapsed(start, end event) (time.Duration, error) {
	ms, err := start.Elapsed(*end)
	return time.Duration(ms * 1e6), err
}

// streamWaitEvent makes work queued on s after this call wait for the
// work before e's latest record.
func streamWaitEvent(s stream, e event) error { return s.Wait(*e, 0) }

// streamHandle returns the CUstream behind a stream.
func streamHandle(s stream) unsafe.Pointer { return unsafe.Pointer(s.C()) }

// driverAlloc and driverFree are the driver calls behind the pool; tests
// replace driverAlloc to simulate an out-of-memory device. They run on the
// device's worker.
var (
	driverAlloc = cu.MemAlloc
	driverFree  = cu.MemFree
)

func drvMemInfo() (free, total int64, err error) { return cu.MemInfo() }

func drvHtoD(dst dptr, src unsafe.Pointer, n int64, s stream) error {
	return cu.MemcpyHtoDAsync(dst, src, n, s)
}

func drvDtoH(dst unsafe.Pointer, src dptr, n int64, s stream) error {
	return cu.MemcpyDtoHAsync(dst, src, n, s)
}

func drvDtoD(dst, src dptr, n int64, s stream) error { return cu.MemcpyDtoDAsync(dst, src, n, s) }

// drvPeer copies between the memory of two physical devices (the driver
// stages it through the host when peer access is not enabled).
func drvPeer(dst dptr, dp *physical, src dptr, sp *physical, n int64, s stream) error {
	return cu.MemcpyPeerAsync(dst, dp.h.cuctx, src, sp.h.cuctx, n, s)
}

// launchKernel launches fn on stream s with a one-dimensional grid. It must
// run on the device's worker thread.
func launchKernel(fn *function, grid, block, shmem int, s stream, a *args) error {
	var blob *C.char
	if len(a.b) > 0 {
		blob = (*C.char)(unsafe.Pointer(&a.b[0]))
	}
	var offs *C.int
	if len(a.offs) > 0 {
		offs = (*C.int)(unsafe.Pointer(&a.offs[0]))
	}
	r := C.goluon_launch(fn.handle, C.uint(grid), C.uint(block), C.uint(shmem), streamHandle(s),
		blob, offs, C.int(len(a.offs)))
	return resultError(int(r))
}

// drvHostAlloc allocates n bytes of page-locked host memory, which the
// GPU reads by DMA: a copy from it is asynchronous. Call it on a worker.
func drvHostAlloc(n int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := resultError(int(C.goluon_host_alloc(&p, C.size_t(n)))); err != nil {
		return nil, err
	}
	return p, nil
}

// drvHostFree frees memory from drvHostAlloc. Call it on a worker.
func drvHostFree(p unsafe.Pointer) error { return resultError(int(C.goluon_host_free(p))) }

// eventSync waits until the work before e's latest record has finished.
func eventSync(e event) error { return e.Synchronize() }

// resultError turns a CUresult into the same error value gorgonia.org/cu
// returns for it (comparable with cu.OutOfMemory and friends), or nil.
func resultError(code int) error {
	if code == 0 {
		return nil
	}
	v := cu.Success
	reflect.ValueOf(&v).Elem().SetInt(int64(code))
	return v
}

// graphExec is an instantiated CUDA graph.
type graphExec struct{ h unsafe.Pointer }

// valid reports whether g was instantiated.
func (g graphExec) valid() bool { return g.h != nil }

// streamBeginCapture starts capturing s. Call it on the worker thread.
func streamBeginCapture(s stream) error {
	return resultError(int(C.goluon_begin_capture(streamHandle(s))))
}

// streamEndCapture ends s's capture and instantiates the graph. Call it
// on the worker thread.
func streamEndCapture(s stream) (graphExec, error) {
	var g graphExec
	err := resultError(int(C.goluon_end_capture(streamHandle(s), &g.h)))
	return g, err
}

// graphLaunch queues g on s. Call it on the worker thread.
func graphLaunch(g graphExec, s stream) error {
	return resultError(int(C.goluon_graph_launch(g.h, streamHandle(s))))
}

// graphDestroy frees g (its queued launches still run). Call it on the
// worker thread.
func graphDestroy(g graphExec) error { return resultError(int(C.goluon_graph_destroy(g.h))) }
