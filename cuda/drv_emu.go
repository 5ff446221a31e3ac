//go:build cudaemu

package cuda

/*
#cgo CXXFLAGS: -O2 -std=c++14 -pthread
#cgo LDFLAGS: -pthread
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int goluon_emu_launch(const char* name, unsigned int grid, unsigned int block, const char* blob,
		const int* offs, int n);
int goluon_emu_has_kernel(const char* name);
void goluon_emu_gemm(int f64, int half, int ta, int tb, int m, int n, int k, double alpha, uintptr_t a, int lda,
		long long sa, uintptr_t b, int ldb, long long sb, double beta, uintptr_t c, int ldc, long long sc,
		int batch);

static uintptr_t emu_alloc(long long n) {
	void* p = NULL;
	if (n > (1LL << 36)) return 0; // the emulated device holds 64 GiB
	if (posix_memalign(&p, 256, (size_t)n) != 0) return 0;
	memset(p, 0xff, (size_t)n); // NaN-filled, as uninitialised device memory may be
	return (uintptr_t)p;
}
static void emu_free(uintptr_t p) { free((void*)p); }
static void* emu_host_alloc(long long n) { return malloc((size_t)n); }
static void emu_copy(uintptr_t dst, uintptr_t src, long long n) { memmove((void*)dst, (void*)src, (size_t)n); }
*/
import "C"

import (
	"embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// This file emulates the driver on the host for -tags cudaemu: device
// memory is host memory, kernels are the CUDA C sources compiled as C++
// (emu_kernels.cc) and cuBLAS is a naive gemm. Streams are asynchronous
// like the real ones: each has an executor goroutine running its work in
// order, with random short delays, so that host code which forgets to wait
// for a stream reads stale data here too. Copies follow the driver's rules
// for pageable host memory (host-to-device returns once the source is
// staged; device-to-host returns when done). It lets the whole backend,
// from nd's calls down to the kernels' indexing, run the conformance suite
// on a machine without a GPU. GOLUON_EMU_GPUS sets the number of emulated
// physical devices (default 1).

// kernelSources makes the package's build depend on the kernels' sources:
// emu_kernels.cc #includes them from kernels/, which the go command does not
// track, so without this an edited kernel would leave the emulator running
// the cached old one.
//
//go:embed kernels/*.cu kernels/*.cuh
var kernelSources embed.FS

// dptr is a device address (a host address in the emulator).
type dptr uintptr

// stream is an emulated stream. Work is queued only by the owning device's
// worker, which is also the only caller of streamSync.
type stream struct{ q *emuQueue }

type emuQueue struct {
	ch      chan func()
	pending sync.WaitGroup
	rng     *rand.Rand // used by the executor only
	// capture is the work recorded while the stream captures (nil when
	// it does not); only the worker touches it.
	capture *[]func()
}

func (q *emuQueue) run() {
	for f := range q.ch {
		if q.rng.IntN(16) == 0 {
			time.Sleep(time.Duration(q.rng.IntN(100)) * time.Microsecond)
		}
		f()
		q.pending.Done()
	}
}

func (s stream) enqueue(f func()) {
	if s.q.capture != nil {
		*s.q.capture = append(*s.q.capture, f)
		return
	}
	s.q.pending.Add(1)
	s.q.ch <- f
}

// graphExec is a captured graph: the recorded work, in order.
type graphExec struct{ fns []func() }

// valid reports whether g holds a recording.
func (g graphExec) valid() bool { return g.fns != nil }

// streamBeginCapture starts recording the work queued on s.
func streamBeginCapture(s stream) error {
	if s.q.capture != nil {
		return errors.New("emulated device: the stream is already capturing")
	}
	s.q.capture = new([]func())
	return nil
}

// streamEndCapture stops recording and returns the recorded work.
func streamEndCapture(s stream) (graphExec, error) {
	if s.q.capture == nil {
		return graphExec{}, errors.New("emulated device: the stream is not capturing")
	}
	g := graphExec{fns: *s.q.capture}
	s.q.capture = nil
	return g, nil
}

// graphLaunch queues the recorded work on s as one task.
func graphLaunch(g graphExec, s stream) error {
	s.enqueue(func() {
		for _, f := range g.fns {
			f()
		}
	})
	return nil
}

func graphDestroy(graphExec) error { return nil }

// physHandle holds nothing in the emulator.
type physHandle struct{}

// errOOM is the emulated out-of-memory error.
var errOOM = errors.New("emulated device: out of memory")

func isOOM(err error) bool { return err != nil && errors.Is(err, errOOM) }

func drvNumDevices() (int, error) {
	if s := os.Getenv("GOLUON_EMU_GPUS"); s != "" {
		return strconv.Atoi(s)
	}
	return 1, nil
}

func (p *physical) load() error {
	p.name = fmt.Sprintf("emulated GPU %d", p.ordinal)
	p.sms, p.maxTPB, p.maxTPSM = 2, 1024, 2048
	mods, err := ptxModules()
	if err != nil {
		return err
	}
	p.fns = map[string]*function{}
	for _, m := range mods {
		for name, params := range m.kernels {
			if !emuHasKernel(name) {
				return fmt.Errorf("emulated device: kernel %s of %s is not in emu_kernels.cc's table", name, m.name)
			}
			p.fns[name] = &function{name: name, params: params}
		}
	}
	return nil
}

// emuHasKernel reports whether the emulator can run the kernel called name.
func emuHasKernel(name string) bool {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.goluon_emu_has_kernel(cs) != 0
}

func (p *physical) makeCurrent() error { return nil }

var emuSeed atomic.Uint64

func newStream() (stream, error) {
	q := &emuQueue{ch: make(chan func(), 1<<14), rng: rand.New(rand.NewPCG(emuSeed.Add(1), 99))}
	go q.run()
	return stream{q}, nil
}

// defaultSpin is short on the emulator, whose tests share a few cores
// with the emulated streams.
const defaultSpin = 50 * time.Microsecond

// event is an emulated event: each record replaces its channel with a new
// one that the recording stream closes when it reaches the record.
type event = *emuEvent

type emuEvent struct {
	mu sync.Mutex
	ch chan struct{}
	at time.Time // when the stream reached the latest record
}

func newEvent() (event, error) {
	ch := make(chan struct{})
	close(ch)
	return &emuEvent{ch: ch}, nil
}

func eventRecord(e event, s stream) error {
	ch := make(chan struct{})
	e.mu.Lock()
	e.ch = ch
	e.at = time.Time{} // not reached until the stream gets here
	e.mu.Unlock()
	s.enqueue(func() {
		e.mu.Lock()
		e.at = time.Now()
		e.mu.Unlock()
		close(ch)
	})
	return nil
}

// newTimingEvent returns an event that keeps the time it was reached.
func newTimingEvent() (event, error) { return newEvent() }

// eventElapsed returns the time between two reached events, or an error
// (as the driver's "not ready") when either has not been reached.
func eventElapsed(start, end event) (time.Duration, error) {
	start.mu.Lock()
	a := start.at
	start.mu.Unlock()
	end.mu.Lock()
	b := end.at
	end.mu.Unlock()
	if a.IsZero() || b.IsZero() {
		return 0, errors.New("emulated event not reached")
	}
	return b.Sub(a), nil
}

// pinned records the emulated page-locked blocks: a copy from one is read
// when the stream reaches it, as the GPU's DMA reads it, not staged when it
// is queued as a copy from pageable memory is.
var pinned struct {
	mu sync.Mutex
	m  map[uintptr]int64
}

// drvHostAlloc stands for page-locked host memory.
func drvHostAlloc(n int64) (unsafe.Pointer, error) {
	p := C.emu_host_alloc(C.longlong(n))
	if p == nil {
		return nil, errOOM
	}
	pinned.mu.Lock()
	if pinned.m == nil {
		pinned.m = map[uintptr]int64{}
	}
	pinned.m[uintptr(p)] = n
	pinned.mu.Unlock()
	return p, nil
}

func drvHostFree(p unsafe.Pointer) error {
	pinned.mu.Lock()
	delete(pinned.m, uintptr(p))
	pinned.mu.Unlock()
	C.free(p)
	return nil
}

func isPinned(p unsafe.Pointer) bool {
	pinned.mu.Lock()
	defer pinned.mu.Unlock()
	for base, n := range pinned.m {
		if uintptr(p) >= base && uintptr(p) < base+uintptr(n) {
			return true
		}
	}
	return false
}

// eventSync waits until the emulated stream has reached e's latest record.
func eventSync(e event) error {
	e.mu.Lock()
	ch := e.ch
	e.mu.Unlock()
	<-ch
	return nil
}

// streamWaitEvent makes s's executor wait, at this point of its queue, for
// the record of e current now (as cuStreamWaitEvent).
func streamWaitEvent(s stream, e event) error {
	e.mu.Lock()
	ch := e.ch
	e.mu.Unlock()
	s.enqueue(func() { <-ch })
	return nil
}

func streamSync(s stream) error {
	if s.q.capture != nil { // as the driver: a capture cannot wait for its own work
		return errors.New("emulated device: stream synchronisation while the stream captures (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)")
	}
	s.q.pending.Wait()
	select {
	case err := <-emuFailures:
		return err
	default:
		return nil
	}
}

var (
	driverAlloc = func(n int64) (dptr, error) {
		p := C.emu_alloc(C.longlong(n))
		if p == 0 {
			return 0, errOOM
		}
		return dptr(p), nil
	}
	driverFree = func(p dptr) error {
		C.emu_free(C.uintptr_t(p))
		return nil
	}
)

func drvMemInfo() (free, total int64, err error) { return 1 << 30, 1 << 30, nil }

// drvHtoD stages the host bytes at once and queues the device write.
func drvHtoD(dst dptr, src unsafe.Pointer, n int64, s stream) error {
	if isPinned(src) { // read late, as a DMA engine behind other work would
		s.enqueue(func() {
			time.Sleep(200 * time.Microsecond)
			C.emu_copy(C.uintptr_t(dst), C.uintptr_t(uintptr(src)), C.longlong(n))
		})
		return nil
	}
	staged := C.GoBytes(src, C.int(n))
	s.enqueue(func() {
		C.emu_copy(C.uintptr_t(dst), C.uintptr_t(uintptr(unsafe.Pointer(&staged[0]))), C.longlong(n))
	})
	return nil
}

// drvDtoH queues the copy and returns when it (and so everything queued
// before it) is done.
func drvDtoH(dst unsafe.Pointer, src dptr, n int64, s stream) error {
	done := make(chan struct{})
	s.enqueue(func() {
		C.emu_copy(C.uintptr_t(uintptr(dst)), C.uintptr_t(src), C.longlong(n))
		close(done)
	})
	<-done
	return nil
}

func drvDtoD(dst, src dptr, n int64, s stream) error {
	s.enqueue(func() { C.emu_copy(C.uintptr_t(dst), C.uintptr_t(src), C.longlong(n)) })
	return nil
}

func drvPeer(dst dptr, _ *physical, src dptr, _ *physical, n int64, s stream) error {
	return drvDtoD(dst, src, n, s)
}

// emuNullLaunch (GOLUON_EMU_NULL_LAUNCH=1) makes launches do nothing, to
// measure the host-side cost of an op alone.
var emuNullLaunch = os.Getenv("GOLUON_EMU_NULL_LAUNCH") == "1"

// emuFailures records kernels that failed on an executor (a bug in the
// emulator or an unknown kernel); the next launch reports them.
var emuFailures = make(chan error, 16)

// launchKernel copies the parameters (as cuLaunchKernel does) and queues
// the kernel.
func launchKernel(fn *function, grid, block, _ int, s stream, a *args) error {
	select {
	case err := <-emuFailures:
		return err
	default:
	}
	if emuNullLaunch {
		return nil
	}
	if grid < 1 || block < 1 || block > 1024 {
		return fmt.Errorf("emulated launch of %s: invalid configuration %d x %d", fn.name, grid, block)
	}
	blob := append([]byte(nil), a.b...)
	offs := append([]int32(nil), a.offs...)
	s.enqueue(func() {
		name := C.CString(fn.name)
		defer C.free(unsafe.Pointer(name))
		var bp *C.char
		if len(blob) > 0 {
			bp = (*C.char)(unsafe.Pointer(&blob[0]))
		}
		var op *C.int
		if len(offs) > 0 {
			op = (*C.int)(unsafe.Pointer(&offs[0]))
		}
		if r := C.goluon_emu_launch(name, C.uint(grid), C.uint(block), bp, op, C.int(len(offs))); r != 0 {
			select {
			case emuFailures <- fmt.Errorf("emulated launch of %s failed (%d)", fn.name, int(r)):
			default:
			}
		}
	})
	return nil
}

// blasHandle stands for a cuBLAS handle bound to a stream.
type blasHandle struct{ s stream }

func loadCublas() (string, error) { return "emulated", nil }

// CublasPath returns the cuBLAS library in use ("emulated" here).
func CublasPath() (string, error) { return loadCublas() }

func newBlasHandle(s stream) (*blasHandle, error) { return &blasHandle{s: s}, nil }

// halfGemmWhy returns "": the emulated cuBLAS has GemmEx.
func halfGemmWhy() string { return "" }

// run queues the product on the handle's stream.
func (h *blasHandle) run(g gemmCall) error {
	h.s.enqueue(func() { emuGemm(g) })
	return nil
}

func emuGemm(g gemmCall) {
	b2i := func(b bool) C.int {
		if b {
			return 1
		}
		return 0
	}
	C.goluon_emu_gemm(b2i(g.f64), C.int(g.half), b2i(g.transA), b2i(g.transB), C.int(g.m), C.int(g.n), C.int(g.k),
		C.double(g.alpha), C.uintptr_t(g.a), C.int(g.lda), C.longlong(g.strideA),
		C.uintptr_t(g.b), C.int(g.ldb), C.longlong(g.strideB),
		C.double(g.beta), C.uintptr_t(g.c), C.int(g.ldc), C.longlong(g.strideC), C.int(g.batch))
}
