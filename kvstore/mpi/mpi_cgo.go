//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <stdlib.h>
#include "goluon_mpi.h"
*/
import "C"

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime"
	"time"
	"unsafe"
)

// pollSettings returns how long the progress thread (and a waiting
// caller) tests non-blocking collectives without pause, and the pause
// between tests after that: GOLUON_MPI_SPIN and GOLUON_MPI_POLL (Go
// durations; the pause must be positive), default 50µs and 20µs. A
// waiting caller spins only while it is the only waiter, and yields the
// CPU between tests until yieldFor before it takes the pause.
func pollSettings() (spin, poll time.Duration) {
	spin, poll = 50*time.Microsecond, 20*time.Microsecond
	if d, err := time.ParseDuration(os.Getenv("GOLUON_MPI_SPIN")); err == nil && d >= 0 {
		spin = d
	}
	if d, err := time.ParseDuration(os.Getenv("GOLUON_MPI_POLL")); err == nil && d > 0 {
		poll = d
	}
	return spin, poll
}

// iallreduceAlgorithmEnv selects OpenMPI's MPI_Iallreduce algorithm.
const iallreduceAlgorithmEnv = "OMPI_MCA_coll_libnbc_iallreduce_algorithm"

// errLockTimeout: the MPI lock stayed taken until the deadline, so an
// earlier call of this process is stuck inside MPI.
var errLockTimeout = fmt.Errorf("the MPI lock stayed taken: an earlier MPI call of this process is stuck (%w)", ErrTimeout)

// commImpl has no state of its own: MPI's is global.
type commImpl struct{}

// initWorld starts the MPI goroutine, which locks itself to its OS thread,
// initialises MPI there, starts the progress thread and then waits to
// run Finalize's call (the thread that initialises MPI must finalise it).
func initWorld() (*Comm, error) {
	// OpenMPI installs handlers for SIGSEGV, SIGBUS, SIGFPE and SIGILL
	// that print a trace and abort; they would take those signals from
	// the Go runtime (which turns nil dereferences into panics).
	if _, set := os.LookupEnv("OMPI_MCA_opal_signal"); !set {
		os.Setenv("OMPI_MCA_opal_signal", "")
	}
	// OpenMPI's non-blocking allreduce (coll/libnbc) reduces in place by
	// a binomial tree, a reduce to rank 0 and a broadcast back, whatever
	// the size; gradient buckets are large, and a reduce-scatter followed
	// by an allgather (algorithm 3, which falls back to a ring for fewer
	// elements than the largest power of two not above the number of
	// processes: see Comm.padded) moves each process's share once. Only
	// where that ring sums in-place buffers correctly (selectAlgorithm); a
	// value set in the environment wins.
	var lib [256]C.char
	C.goluon_library(&lib[0], C.int(len(lib)))
	if _, set := os.LookupEnv(iallreduceAlgorithmEnv); !set && selectAlgorithm(C.GoString(&lib[0])) {
		os.Setenv(iallreduceAlgorithmEnv, "3")
	}
	c := &Comm{finalize: make(chan func())}
	type result struct {
		err error
	}
	ready := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: this thread is MPI's
		var got C.int
		// MULTIPLE, though calls are serialised: Open MPI before 4.1.7 and
		// 5.0.4 sets UCX up for one thread unless MULTIPLE is asked for.
		if rc := C.goluon_init(C.goluon_level(C.int(ThreadMultiple)), &got); rc != C.MPI_SUCCESS {
			ready <- result{fmt.Errorf("mpi: MPI_Init_thread: %s", errorString(rc))}
			return
		}
		c.level = ThreadLevel(C.goluon_level_index(got))
		if c.level < ThreadSerialized {
			ready <- result{fmt.Errorf("mpi: MPI provided %v; Goluon needs at least %v (collectives run on their callers' threads, one at a time)", c.level, ThreadSerialized)}
			return
		}
		var rank, size C.int
		if rc := C.goluon_rank_size(&rank, &size); rc != C.MPI_SUCCESS {
			ready <- result{fmt.Errorf("mpi: rank and size: %s", errorString(rc))}
			return
		}
		c.rank, c.size = int(rank), int(size)
		if os.Getenv(iallreduceAlgorithmEnv) == "3" {
			c.padTo = 1 << (bits.Len(uint(c.size)) - 1) // the largest power of two not above size
		}
		c.spin, c.poll = pollSettings()
		if rc := C.goluon_start_progress(C.int64_t(c.spin.Nanoseconds()), C.int64_t(c.poll.Nanoseconds())); rc != 0 {
			ready <- result{fmt.Errorf("mpi: cannot start the progress thread (error %d)", int(rc))}
			return
		}
		ready <- result{}
		// This thread initialised MPI and must finalise it: it runs
		// Finalize's call, then ends.
		if f, ok := <-c.finalize; ok {
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

// reqHandle is a started non-blocking collective (C memory).
type reqHandle = *C.goluon_slot

// deadlineNs converts a time from now to CLOCK_MONOTONIC nanoseconds,
// saturating.
func deadlineNs(d time.Duration) C.int64_t {
	now := int64(C.goluon_now_ns())
	if d.Nanoseconds() > math.MaxInt64-now {
		return math.MaxInt64
	}
	return C.int64_t(now + d.Nanoseconds())
}

// start starts a non-blocking collective on the caller's thread (with
// kick, the progress thread drives it until somebody waits for it); it
// reports errLockTimeout when the MPI lock stayed taken until timeout.
func (commImpl) start(k kind, buf *Buffer, dt DType, count, arg int, timeout time.Duration, kick bool) (reqHandle, error) {
	var p unsafe.Pointer
	if buf != nil {
		p = buf.p
	}
	var s *C.goluon_slot
	rc := C.goluon_start(C.int(k), p, C.int(count), C.int(dt), C.int(arg), deadlineNs(timeout), cBool(kick), &s)
	switch {
	case rc == C.GOLUON_LOCK_TIMEOUT:
		return nil, errLockTimeout
	case rc != C.MPI_SUCCESS:
		return nil, fmt.Errorf("%s", errorString(rc))
	}
	return s, nil
}

// wait drives h on the caller's thread until it completes (and returns
// how long ago it did, with its error) or timeout passes (done false): it
// tests without pause for spin, yields the CPU between tests until yield,
// then sleeps poll between tests.
func (commImpl) wait(h reqHandle, timeout, spin, yield, poll time.Duration) (ago time.Duration, done bool, err error) {
	var code C.int
	var agoNs C.int64_t
	if C.goluon_wait(h, deadlineNs(timeout), C.int64_t(spin.Nanoseconds()), C.int64_t(yield.Nanoseconds()), C.int64_t(poll.Nanoseconds()), &code, &agoNs) == 0 {
		return 0, false, nil
	}
	if code != C.MPI_SUCCESS {
		err = fmt.Errorf("%s", errorString(code))
	}
	return time.Duration(agoNs), true, err
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func (commImpl) finalize(timeout time.Duration) error {
	if rc := C.goluon_finalize(deadlineNs(timeout)); rc != C.MPI_SUCCESS {
		if rc == C.GOLUON_LOCK_TIMEOUT {
			return fmt.Errorf("mpi: MPI_Finalize: %w", errLockTimeout)
		}
		return fmt.Errorf("mpi: MPI_Finalize: %s", errorString(rc))
	}
	return nil
}

func (commImpl) abort(code int) error {
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
