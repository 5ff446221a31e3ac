//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <pthread.h>
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

static long goluon_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void goluon_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void goluon_nap(long ns) {
	struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
	nanosleep(&ts, NULL);
}

// The MPI lock. MPI is initialised with MPI_THREAD_SERIALIZED: any thread
// may call it, one at a time. Callers hold this lock only for MPI calls
// that return at once (starting a non-blocking collective, MPI_Test), so
// a collective runs on its caller's thread, with no hand-over to another
// thread. want counts threads waiting for the lock; the background
// progress loop does not take it while any does.
static int goluon_lockword;
static int goluon_want;

static int goluon_trylock(void) {
	int zero = 0;
	return __atomic_compare_exchange_n(&goluon_lockword, &zero, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void goluon_unlock(void) { __atomic_store_n(&goluon_lockword, 0, __ATOMIC_RELEASE); }

// goluon_lock takes the lock, spinning for spin_ns and then sleeping
// poll_ns between tries; it returns 0 if deadline (CLOCK_MONOTONIC ns)
// passed first.
static int goluon_lock(long deadline, long spin_ns, long poll_ns) {
	if (goluon_trylock()) return 1;
	__atomic_add_fetch(&goluon_want, 1, __ATOMIC_ACQ_REL);
	long start = goluon_now_ns();
	for (;;) {
		if (goluon_trylock()) {
			__atomic_sub_fetch(&goluon_want, 1, __ATOMIC_ACQ_REL);
			return 1;
		}
		long t = goluon_now_ns();
		if (t > deadline) {
			__atomic_sub_fetch(&goluon_want, 1, __ATOMIC_ACQ_REL);
			return 0;
		}
		if (t - start > spin_ns) goluon_nap(poll_ns);
		else goluon_relax();
	}
}

// A started non-blocking collective. state: 1 in flight, 2 done (code
// holds MPI_Test's result, done_ns when it was seen). In-flight slots are
// listed in goluon_act (under the lock) so that the progress loop can
// test them.
typedef struct {
	MPI_Request req;
	int state;
	int code;
	long done_ns;
} goluon_slot;

static goluon_slot **goluon_act;
static int goluon_nact, goluon_cap;

// goluon_test tests s (the lock held) and, once it is done, takes it off
// the in-flight list.
static void goluon_test(goluon_slot *s, int i) {
	int flag = 0;
	int rc = MPI_Test(&s->req, &flag, MPI_STATUS_IGNORE);
	if (rc == MPI_SUCCESS && !flag) return;
	s->code = rc;
	s->done_ns = goluon_now_ns();
	int n = goluon_nact - 1;
	goluon_act[i] = goluon_act[n];
	__atomic_store_n(&goluon_nact, n, __ATOMIC_RELEASE);
	__atomic_store_n(&s->state, 2, __ATOMIC_RELEASE);
}

static int goluon_index(goluon_slot *s) {
	for (int i = 0; i < goluon_nact; i++) {
		if (goluon_act[i] == s) return i;
	}
	return -1;
}

static void goluon_kick(void);

enum { GOLUON_ALLREDUCE, GOLUON_BCAST, GOLUON_BARRIER };
enum { GOLUON_LOCK_TIMEOUT = -1 };

// goluon_start starts a non-blocking collective (kind, with arg the op of
// an allreduce or the root of a broadcast) on the caller's thread and
// returns its slot in *out; with kick, the progress thread drives it
// until somebody waits for it. It returns an MPI error code, or
// GOLUON_LOCK_TIMEOUT when the lock was not free by the deadline.
static int goluon_start(int kind, void *buf, int count, int dt, int arg, long deadline, long spin_ns, long poll_ns, int kick, goluon_slot **out) {
	goluon_slot *s = calloc(1, sizeof(goluon_slot));
	if (s == NULL) return MPI_ERR_NO_MEM;
	if (!goluon_lock(deadline, spin_ns, poll_ns)) {
		free(s);
		return GOLUON_LOCK_TIMEOUT;
	}
	if (goluon_nact == goluon_cap) {
		int cap = goluon_cap ? 2 * goluon_cap : 64;
		goluon_slot **a = realloc(goluon_act, cap * sizeof(goluon_slot *));
		if (a == NULL) {
			goluon_unlock();
			free(s);
			return MPI_ERR_NO_MEM;
		}
		goluon_act = a;
		goluon_cap = cap;
	}
	int rc;
	switch (kind) {
	case GOLUON_ALLREDUCE:
		rc = MPI_Iallreduce(MPI_IN_PLACE, buf, count, goluon_dtype(dt), goluon_op(arg), MPI_COMM_WORLD, &s->req);
		break;
	case GOLUON_BCAST:
		rc = MPI_Ibcast(buf, count, goluon_dtype(dt), arg, MPI_COMM_WORLD, &s->req);
		break;
	default:
		rc = MPI_Ibarrier(MPI_COMM_WORLD, &s->req);
	}
	if (rc != MPI_SUCCESS) {
		goluon_unlock();
		free(s);
		return rc;
	}
	s->state = 1;
	__atomic_store_n(&goluon_nact, goluon_nact + 1, __ATOMIC_RELEASE);
	goluon_act[goluon_nact - 1] = s;
	goluon_unlock();
	*out = s;
	if (kick) goluon_kick();
	return MPI_SUCCESS;
}

// The progress thread: a C thread (no Go scheduling involved, so it runs
// even while the compute goroutines hold every P) that tests the
// collectives in flight while nobody waits for them, since OpenMPI
// progresses a collective only inside MPI calls. Starting a collective
// kicks it; it sleeps when none is left, and while a caller waits (that
// caller drives progress itself).
static pthread_t goluon_pt;
static pthread_mutex_t goluon_pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t goluon_pc = PTHREAD_COND_INITIALIZER;
static int goluon_kicked, goluon_running, goluon_stop, goluon_started;
static int goluon_waiters;
static long goluon_spin_ns, goluon_poll_ns;

static void goluon_kick(void) {
	pthread_mutex_lock(&goluon_pm);
	goluon_kicked = 1;
	if (!goluon_running) pthread_cond_signal(&goluon_pc);
	pthread_mutex_unlock(&goluon_pm);
}

// goluon_progress_loop tests the collectives in flight until none is
// left, a caller waits, or the thread is stopped. It leaves the lock to
// any thread that wants it, tests without pause for spin_ns after a
// completion and then sleeps poll_ns between tests, leaving the core to
// the compute threads.
static void goluon_progress_loop(void) {
	long last = goluon_now_ns();
	for (;;) {
		if (__atomic_load_n(&goluon_stop, __ATOMIC_ACQUIRE)) return;
		if (__atomic_load_n(&goluon_waiters, __ATOMIC_ACQUIRE)) return;
		if (__atomic_load_n(&goluon_want, __ATOMIC_ACQUIRE) == 0 && goluon_trylock()) {
			int before = goluon_nact;
			for (int i = goluon_nact - 1; i >= 0; i--) goluon_test(goluon_act[i], i);
			int left = goluon_nact;
			goluon_unlock();
			if (left == 0) return;
			if (left < before) last = goluon_now_ns();
		}
		if (goluon_now_ns() - last > goluon_spin_ns) goluon_nap(goluon_poll_ns);
		else goluon_relax();
	}
}

static void *goluon_progress_main(void *arg) {
	(void)arg;
	pthread_mutex_lock(&goluon_pm);
	for (;;) {
		while (!goluon_kicked && !goluon_stop) pthread_cond_wait(&goluon_pc, &goluon_pm);
		if (goluon_stop) break;
		goluon_kicked = 0;
		goluon_running = 1;
		pthread_mutex_unlock(&goluon_pm);
		goluon_progress_loop();
		pthread_mutex_lock(&goluon_pm);
		goluon_running = 0;
	}
	pthread_mutex_unlock(&goluon_pm);
	return NULL;
}

static int goluon_start_progress(long spin_ns, long poll_ns) {
	goluon_spin_ns = spin_ns;
	goluon_poll_ns = poll_ns;
	int rc = pthread_create(&goluon_pt, NULL, goluon_progress_main, NULL);
	if (rc == 0) goluon_started = 1;
	return rc;
}

static void goluon_stop_progress(void) {
	if (!goluon_started) return;
	pthread_mutex_lock(&goluon_pm);
	__atomic_store_n(&goluon_stop, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&goluon_pc);
	pthread_mutex_unlock(&goluon_pm);
	pthread_join(goluon_pt, NULL);
	goluon_started = 0;
}

// goluon_wait drives s on the caller's thread until it is done, then
// frees it and returns 1 with its MPI code in *code and how long ago it
// completed in *ago_ns. It spins for spin_ns and then sleeps poll_ns
// between tests. It returns 0, leaving s in flight, if deadline passed.
// On the way out it kicks the progress thread if collectives are left.
static int goluon_wait(goluon_slot *s, long deadline, long spin_ns, long poll_ns, int *code, long *ago_ns) {
	__atomic_add_fetch(&goluon_waiters, 1, __ATOMIC_ACQ_REL);
	long start = goluon_now_ns();
	int ok = 0;
	for (;;) {
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == 2) {
			*code = s->code;
			*ago_ns = goluon_now_ns() - s->done_ns;
			free(s);
			ok = 1;
			break;
		}
		if (goluon_trylock()) {
			if (s->state == 1) {
				int i = goluon_index(s);
				if (i >= 0) goluon_test(s, i);
			}
			goluon_unlock();
			if (s->state == 2) continue;
		}
		long t = goluon_now_ns();
		if (t > deadline) break;
		if (t - start > spin_ns) goluon_nap(poll_ns);
		else goluon_relax();
	}
	if (__atomic_sub_fetch(&goluon_waiters, 1, __ATOMIC_ACQ_REL) == 0 && __atomic_load_n(&goluon_nact, __ATOMIC_ACQUIRE) > 0) goluon_kick();
	return ok;
}

// goluon_error_string is an MPI call too, so it takes the lock (for at
// most a second: an error is reported even when the lock is stuck).
static void goluon_error_string(int code, char *out, int cap) {
	char msg[MPI_MAX_ERROR_STRING];
	int n = 0;
	int locked = goluon_lock(goluon_now_ns() + 1000000000L, 1000000L, 20000L);
	if (MPI_Error_string(code, msg, &n) != MPI_SUCCESS) n = 0;
	if (locked) goluon_unlock();
	if (n >= cap) n = cap - 1;
	memcpy(out, msg, n);
	out[n] = 0;
}

// goluon_finalize stops the progress thread, takes the lock for good and
// shuts MPI down.
static int goluon_finalize(long deadline) {
	goluon_stop_progress();
	if (!goluon_lock(deadline, 1000000L, 20000L)) return GOLUON_LOCK_TIMEOUT;
	return MPI_Finalize();
}

// goluon_abort ends the job; it waits up to a second for the lock and
// then calls MPI_Abort anyway.
static int goluon_abort(int code) {
	goluon_lock(goluon_now_ns() + 1000000000L, 1000000L, 20000L);
	return MPI_Abort(MPI_COMM_WORLD, code);
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"time"
	"unsafe"
)

// iallreduceAlgorithmEnv selects OpenMPI's MPI_Iallreduce algorithm.
const iallreduceAlgorithmEnv = "OMPI_MCA_coll_libnbc_iallreduce_algorithm"

// commImpl has no state of its own: MPI's is global.
type commImpl struct{}

// initWorld starts the MPI goroutine, which locks itself to its OS thread,
// initialises MPI there (the thread that initialises MPI must finalise
// it), starts the progress thread and then waits for Finalize.
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
	// elements than half the world) moves each process's share once. A
	// value set by the user wins.
	if _, set := os.LookupEnv(iallreduceAlgorithmEnv); !set {
		os.Setenv(iallreduceAlgorithmEnv, "3")
	}
	c := &Comm{calls: make(chan func())}
	type result struct {
		err error
	}
	ready := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: this thread is MPI's
		var got C.int
		if rc := C.goluon_init(C.goluon_level(C.int(ThreadSerialized)), &got); rc != C.MPI_SUCCESS {
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
		spin, poll := pollSettings()
		if rc := C.goluon_start_progress(C.long(spin.Nanoseconds()), C.long(poll.Nanoseconds())); rc != 0 {
			ready <- result{fmt.Errorf("mpi: cannot start the progress thread (error %d)", int(rc))}
			return
		}
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

// reqHandle is a started non-blocking collective (C memory).
type reqHandle = *C.goluon_slot

// deadlineNs converts a time to CLOCK_MONOTONIC nanoseconds.
func deadlineNs(d time.Duration) C.long { return C.goluon_now_ns() + C.long(d.Nanoseconds()) }

// start starts a non-blocking collective on the caller's thread (with
// kick, the progress thread drives it until somebody waits for it); it
// reports errLockTimeout when the MPI lock stayed taken until timeout.
func (commImpl) start(k kind, buf *Buffer, dt DType, count, arg int, timeout, spin, poll time.Duration, kick bool) (reqHandle, error) {
	var p unsafe.Pointer
	if buf != nil {
		p = buf.p
	}
	var s *C.goluon_slot
	rc := C.goluon_start(C.int(k), p, C.int(count), C.int(dt), C.int(arg), deadlineNs(timeout), C.long(spin.Nanoseconds()), C.long(poll.Nanoseconds()), cBool(kick), &s)
	switch {
	case rc == C.GOLUON_LOCK_TIMEOUT:
		return nil, errLockTimeout
	case rc != C.MPI_SUCCESS:
		return nil, fmt.Errorf("%s", errorString(rc))
	}
	return s, nil
}

// wait drives h on the caller's thread until it completes (and returns
// how long ago it did, with its error) or timeout passes (done false).
func (commImpl) wait(h reqHandle, timeout, spin, poll time.Duration) (ago time.Duration, done bool, err error) {
	var code C.int
	var agoNs C.long
	if C.goluon_wait(h, deadlineNs(timeout), C.long(spin.Nanoseconds()), C.long(poll.Nanoseconds()), &code, &agoNs) == 0 {
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
