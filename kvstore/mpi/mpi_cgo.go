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

static int goluon_iallreduce(void *buf, int count, int dt, int op, MPI_Request *req) {
	return MPI_Iallreduce(MPI_IN_PLACE, buf, count, goluon_dtype(dt), goluon_op(op), MPI_COMM_WORLD, req);
}

static int goluon_ibcast(void *buf, int count, int dt, int root, MPI_Request *req) {
	return MPI_Ibcast(buf, count, goluon_dtype(dt), root, MPI_COMM_WORLD, req);
}

static int goluon_ibarrier(MPI_Request *req) {
	return MPI_Ibarrier(MPI_COMM_WORLD, req);
}

// goluon_poll drives MPI's progress engine with MPI_Test for up to spin_ns
// nanoseconds and reports whether the request completed.
static int goluon_poll(MPI_Request *req, long spin_ns, int *done) {
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int rc = MPI_Test(req, done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || *done) return rc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long el = (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec);
		if (el >= spin_ns) return MPI_SUCCESS;
	}
}

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
)

// commImpl holds the request of the collective in flight, in C memory.
type commImpl struct {
	req *C.MPI_Request
}

// initWorld starts the MPI goroutine, which locks itself to its OS thread,
// initialises MPI there and then serves calls until Finalize.
func initWorld() (*Comm, error) {
	// OpenMPI installs handlers for SIGSEGV, SIGBUS, SIGFPE and SIGILL
	// that print a trace and abort; they would take those signals from
	// the Go runtime (which turns nil dereferences into panics).
	if _, set := os.LookupEnv("OMPI_MCA_opal_signal"); !set {
		os.Setenv("OMPI_MCA_opal_signal", "")
	}
	c := &Comm{calls: make(chan func())}
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
		c.impl.req = (*C.MPI_Request)(C.malloc(C.sizeof_MPI_Request))
		ready <- result{}
		for f := range c.calls {
			f()
		}
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

// wait drives the request in c.req to completion or the deadline: it spins
// in MPI_Test for a while (lowest latency), then alternates short spins
// with sleeps that grow to a millisecond, so processes that share cores
// (mpirun --oversubscribe) leave each other time to run.
func (c *commImpl) wait(deadline time.Time) error {
	sleep := 20 * time.Microsecond
	spin := C.long(200_000) // first spin: 200 µs
	for {
		var done C.int
		if rc := C.goluon_poll(c.req, spin, &done); rc != C.MPI_SUCCESS {
			return fmt.Errorf("%s", errorString(rc))
		}
		if done != 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return ErrTimeout
		}
		time.Sleep(sleep)
		spin = 20_000
		if sleep < time.Millisecond {
			sleep *= 2
		}
	}
}

func (c *commImpl) allreduce(buf *Buffer, dt DType, count int, op Op, deadline time.Time) error {
	if count == 0 {
		return nil
	}
	if rc := C.goluon_iallreduce(buf.p, C.int(count), C.int(dt), C.int(op), c.req); rc != C.MPI_SUCCESS {
		return fmt.Errorf("%s", errorString(rc))
	}
	return c.wait(deadline)
}

func (c *commImpl) bcast(buf *Buffer, dt DType, count, root int, deadline time.Time) error {
	if count == 0 {
		return nil
	}
	if rc := C.goluon_ibcast(buf.p, C.int(count), C.int(dt), C.int(root), c.req); rc != C.MPI_SUCCESS {
		return fmt.Errorf("%s", errorString(rc))
	}
	return c.wait(deadline)
}

func (c *commImpl) barrier(deadline time.Time) error {
	if rc := C.goluon_ibarrier(c.req); rc != C.MPI_SUCCESS {
		return fmt.Errorf("%s", errorString(rc))
	}
	return c.wait(deadline)
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
