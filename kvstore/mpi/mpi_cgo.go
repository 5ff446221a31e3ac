//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int goluon_init(int want, int *got) {
	int inited = 0;
	MPI_Initialized(&inited);
	if (inited) {
		return MPI_Query_thread(got);
	}
	int rc = MPI_Init_thread(NULL, NULL, want, got);
	if (rc != MPI_SUCCESS) {
		return rc;
	}
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static int goluon_level(int l) {
	switch (l) {
	case 0: return MPI_THREAD_SINGLE;
	case 1: return MPI_THREAD_FUNNELED;
	case 2: return MPI_THREAD_SERIALIZED;
	default: return MPI_THREAD_MULTIPLE;
	}
}

static int goluon_level_index(int l) {
	if (l == MPI_THREAD_SINGLE) return 0;
	if (l == MPI_THREAD_FUNNELED) return 1;
	if (l == MPI_THREAD_SERIALIZED) return 2;
	return 3;
}

static int goluon_rank_size(int *rank, int *size) {
	int rc = MPI_Comm_rank(MPI_COMM_WORLD, rank);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_size(MPI_COMM_WORLD, size);
}

static MPI_Datatype goluon_dtype(int d) {
	switch (d) {
	case 0: return MPI_FLOAT;
	case 1: return MPI_DOUBLE;
	default: return MPI_INT64_T;
	}
}

static MPI_Op goluon_op(int o) {
	switch (o) {
	case 1: return MPI_MAX;
	case 2: return MPI_MIN;
	default: return MPI_SUM;
	}
}

static int goluon_allreduce(void *buf, int count, int dt, int op) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, count, goluon_dtype(dt), goluon_op(op), MPI_COMM_WORLD);
}

static int goluon_iallreduce(void *buf, int count, int dt, int op, MPI_Request **out) {
	MPI_Request *r = malloc(sizeof(MPI_Request));
	if (r == NULL) return MPI_ERR_NO_MEM;
	int rc = MPI_Iallreduce(MPI_IN_PLACE, buf, count, goluon_dtype(dt), goluon_op(op), MPI_COMM_WORLD, r);
	if (rc != MPI_SUCCESS) {
		free(r);
		return rc;
	}
	*out = r;
	return MPI_SUCCESS;
}

static long goluon_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

// goluon_progress tests the n requests not yet done (done[i] == 0) until
// all are done, or flags[0] (wake: a call waits for the MPI goroutine) is
// set, or flags[1] (waiting: a Wait is blocked) is set and one completed.
// While nobody waits, it sleeps poll_ns between tests once spin_ns passed
// without a completion. A completed request is freed; a failed one is
// marked done with its code in codes[i].
static int goluon_progress(MPI_Request **reqs, int *done, int *codes, int n, int *flags, long spin_ns, long poll_ns) {
	long last = goluon_now_ns();
	int newly = 0;
	for (;;) {
		int left = 0;
		for (int i = 0; i < n; i++) {
			if (done[i]) continue;
			int flag = 0;
			int rc = MPI_Test(reqs[i], &flag, MPI_STATUS_IGNORE);
			if (rc != MPI_SUCCESS || flag) {
				free(reqs[i]);
				reqs[i] = NULL;
				done[i] = 1;
				codes[i] = rc;
				newly++;
				last = goluon_now_ns();
				continue;
			}
			left++;
		}
		if (left == 0) return newly;
		if (__atomic_load_n(&flags[0], __ATOMIC_ACQUIRE)) return newly;
		int waiting = __atomic_load_n(&flags[1], __ATOMIC_ACQUIRE);
		if (waiting && newly) return newly;
		if (!waiting && goluon_now_ns() - last > spin_ns) {
			struct timespec ts = {poll_ns / 1000000000L, poll_ns % 1000000000L};
			nanosleep(&ts, NULL);
		}
	}
}

static int goluon_bcast(void *buf, int count, int dt, int root) {
	return MPI_Bcast(buf, count, goluon_dtype(dt), root, MPI_COMM_WORLD);
}

static int goluon_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }

static void goluon_error_string(int code, char *out, int cap) {
	char msg[MPI_MAX_ERROR_STRING];
	int n = 0;
	if (MPI_Error_string(code, msg, &n) != MPI_SUCCESS) n = 0;
	if (n >= cap) n = cap - 1;
	memcpy(out, msg, n);
	out[n] = 0;
}

static int goluon_finalize(void) { return MPI_Finalize(); }
static int goluon_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"time"
	"unsafe"
)

// commImpl has no state of its own: MPI's is global.
type commImpl struct{}

// initWorld starts the MPI goroutine, which locks itself to its OS thread,
// initialises MPI there and then serves calls until Finalize.
func initWorld() (*Comm, error) {
	// OpenMPI installs handlers for SIGSEGV, SIGBUS, SIGFPE and SIGILL
	// that print a trace and abort; they would take those signals from
	// the Go runtime (which turns nil dereferences into panics).
	if _, set := os.LookupEnv("OMPI_MCA_opal_signal"); !set {
		os.Setenv("OMPI_MCA_opal_signal", "")
	}
	c := &Comm{calls: make(chan func()), flags: allocFlags()}
	type result struct {
		err error
	}
	ready := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: this thread is MPI's
		var got C.int
		if rc := C.goluon_init(C.goluon_level(C.int(ThreadFunneled)), &got); rc != C.MPI_SUCCESS {
			ready <- result{fmt.Errorf("mpi: MPI_Init_thread: %s", errorString(rc))}
			return
		}
		c.level = ThreadLevel(C.goluon_level_index(got))
		if c.level < ThreadFunneled {
			ready <- result{fmt.Errorf("mpi: MPI provided %v; Goluon needs at least %v", c.level, ThreadFunneled)}
			return
		}
		var rank, size C.int
		if rc := C.goluon_rank_size(&rank, &size); rc != C.MPI_SUCCESS {
			ready <- result{fmt.Errorf("mpi: rank and size: %s", errorString(rc))}
			return
		}
		c.rank, c.size = int(rank), int(size)
		ready <- result{}
		c.serve()
	}()
	if r := <-ready; r.err != nil {
		return nil, r.err
	}
	return c, nil
}

func errorString(rc C.int) string {
	var buf [512]C.char
	C.goluon_error_string(rc, &buf[0], C.int(len(buf)))
	s := C.GoString(&buf[0])
	if s == "" {
		s = "unknown MPI error"
	}
	return fmt.Sprintf("%s (code %d)", s, int(rc))
}

func (c *commImpl) allreduce(buf *Buffer, dt DType, count int, op Op) error {
	if count == 0 {
		return nil
	}
	if rc := C.goluon_allreduce(buf.p, C.int(count), C.int(dt), C.int(op)); rc != C.MPI_SUCCESS {
		return fmt.Errorf("%s", errorString(rc))
	}
	return nil
}

// reqHandle is a started non-blocking collective (C memory); nil means
// there was nothing to do.
type reqHandle = *C.MPI_Request

func (c *commImpl) iallreduce(buf *Buffer, dt DType, count int, op Op) (reqHandle, error) {
	if count == 0 {
		return nil, nil
	}
	var r *C.MPI_Request
	if rc := C.goluon_iallreduce(buf.p, C.int(count), C.int(dt), C.int(op), &r); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("%s", errorString(rc))
	}
	return r, nil
}

// progress drives the requests in flight (see goluon_progress) and
// returns, per request, whether it is done and its error.
func (c *commImpl) progress(ps []pending, flags *[2]int32, spin, poll time.Duration) ([]bool, []error) {
	n := len(ps)
	mem := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(uintptr(0))+2*C.sizeof_int))
	defer C.free(mem)
	reqs := unsafe.Slice((**C.MPI_Request)(mem), n)
	done := unsafe.Slice((*C.int)(unsafe.Add(mem, n*int(unsafe.Sizeof(uintptr(0))))), n)
	codes := unsafe.Slice((*C.int)(unsafe.Add(mem, n*int(unsafe.Sizeof(uintptr(0)))+n*C.sizeof_int)), n)
	for i, p := range ps {
		reqs[i] = p.h
	}
	C.goluon_progress(&reqs[0], &done[0], &codes[0], C.int(n), (*C.int)(unsafe.Pointer(&flags[0])), C.long(spin.Nanoseconds()), C.long(poll.Nanoseconds()))
	fin, errs := make([]bool, n), make([]error, n)
	for i := range ps {
		fin[i] = done[i] != 0
		if fin[i] && codes[i] != C.MPI_SUCCESS {
			errs[i] = fmt.Errorf("%s", errorString(codes[i]))
		}
	}
	return fin, errs
}

// allocFlags returns the wake and waiting flags in C memory.
func allocFlags() *[2]int32 { return (*[2]int32)(C.calloc(2, 4)) }

func (c *commImpl) bcast(buf *Buffer, dt DType, count, root int) error {
	if count == 0 {
		return nil
	}
	if rc := C.goluon_bcast(buf.p, C.int(count), C.int(dt), C.int(root)); rc != C.MPI_SUCCESS {
		return fmt.Errorf("%s", errorString(rc))
	}
	return nil
}

func (c *commImpl) barrier() error {
	if rc := C.goluon_barrier(); rc != C.MPI_SUCCESS {
		return fmt.Errorf("%s", errorString(rc))
	}
	return nil
}

func (c *commImpl) finalize() error {
	if rc := C.goluon_finalize(); rc != C.MPI_SUCCESS {
		return fmt.Errorf("mpi: MPI_Finalize: %s", errorString(rc))
	}
	return nil
}

func (c *commImpl) abort(code int) error {
	if rc := C.goluon_abort(C.int(code)); rc != C.MPI_SUCCESS {
		return fmt.Errorf("mpi: MPI_Abort: %s", errorString(rc))
	}
	return nil
}

func allocMem(b *Buffer) error {
	p := C.calloc(C.size_t(b.n), 1)
	if p == nil {
		return fmt.Errorf("mpi: cannot allocate a buffer of %d bytes", b.n)
	}
	b.p = p
	return nil
}

func freeMem(b *Buffer) { C.free(b.p) }
