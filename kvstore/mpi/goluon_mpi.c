//go:build mpi

// The C side of package mpi. MPI is initialised with
// MPI_THREAD_MULTIPLE (MPI_THREAD_SERIALIZED suffices where that is all
// the library gives): any thread may call it, and this file makes the
// calls one at a time, under goluon_lock, held only for calls that return
// at once (starting a non-blocking collective, MPI_Test). A collective
// therefore runs on its caller's thread, with no hand-over to another
// thread. A progress thread (a pthread, outside the Go scheduler) tests
// the collectives in flight while nobody waits for them, since OpenMPI
// progresses a collective only inside MPI calls.

#include "goluon_mpi.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int goluon_library(char *out, int cap) {
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0;
	int rc = MPI_Get_library_version(v, &n);
	if (rc != MPI_SUCCESS) n = 0;
	if (n >= cap) n = cap - 1;
	memcpy(out, v, n);
	out[n] = 0;
	return rc;
}

int goluon_init(int want, int *got) {
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

int goluon_level(int l) {
	switch (l) {
	case 0: return MPI_THREAD_SINGLE;
	case 1: return MPI_THREAD_FUNNELED;
	case 2: return MPI_THREAD_SERIALIZED;
	default: return MPI_THREAD_MULTIPLE;
	}
}

int goluon_level_index(int l) {
	if (l == MPI_THREAD_SINGLE) return 0;
	if (l == MPI_THREAD_FUNNELED) return 1;
	if (l == MPI_THREAD_SERIALIZED) return 2;
	return 3;
}

int goluon_rank_size(int *rank, int *size) {
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

int64_t goluon_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void goluon_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

// goluon_nap sleeps ns, but not past deadline.
static void goluon_nap(int64_t ns, int64_t deadline) {
	int64_t left = deadline - goluon_now_ns();
	if (ns > left) ns = left;
	if (ns <= 0) return;
	struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	nanosleep(&ts, NULL);
}

// goluon_pause waits a little in a polling loop that has waited for
// waited ns: it spins (a pause instruction) before spin_ns, yields the CPU
// before yield_ns (when processes outnumber cores, the one waited for may
// need this core), and then sleeps poll_ns, not past deadline.
static void goluon_pause(int64_t waited, int64_t spin_ns, int64_t yield_ns, int64_t poll_ns, int64_t deadline) {
	if (waited < spin_ns) goluon_relax();
	else if (waited < yield_ns) sched_yield();
	else goluon_nap(poll_ns, deadline);
}

// The pause between tests once a wait has gone on long (GOLUON_MPI_POLL)
// and how long the progress thread tests without pause after a
// completion (GOLUON_MPI_SPIN).
static int64_t goluon_spin_ns = 50000, goluon_poll_ns = 20000;

// The MPI lock. want counts threads that want it (callers, waiters); the
// progress thread does not take it while any does.
static int goluon_lockword;
static int goluon_want;

static int goluon_trylock(void) {
	int zero = 0;
	return __atomic_compare_exchange_n(&goluon_lockword, &zero, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void goluon_unlock(void) { __atomic_store_n(&goluon_lockword, 0, __ATOMIC_RELEASE); }

// goluon_lock takes the lock, pausing between tries (goluon_pause: spin for
// 50 µs, yield up to a millisecond, as the holder may be descheduled when
// processes outnumber cores, then the poll pause). It returns 0 if
// deadline (CLOCK_MONOTONIC ns) passed first.
static int goluon_lock(int64_t deadline) {
	if (goluon_trylock()) return 1;
	__atomic_add_fetch(&goluon_want, 1, __ATOMIC_ACQ_REL);
	int64_t start = goluon_now_ns();
	int ok = 0;
	for (;;) {
		if (goluon_trylock()) {
			ok = 1;
			break;
		}
		int64_t t = goluon_now_ns();
		if (t > deadline) break;
		goluon_pause(t - start, 50000, 1000000, goluon_poll_ns, deadline);
	}
	__atomic_sub_fetch(&goluon_want, 1, __ATOMIC_ACQ_REL);
	return ok;
}

// A started non-blocking collective. state: 1 in flight, 2 done (code
// holds MPI_Test's result, done_ns when it was seen), 3 abandoned after a
// timeout (never tested again: the communicator is broken). In-flight
// slots are listed in goluon_act (under the lock).
struct goluon_slot {
	MPI_Request req;
	int bg; // the progress thread drives it while nobody waits
	int state;
	int code;
	int64_t done_ns;
};

static goluon_slot **goluon_act;
static int goluon_nact, goluon_cap;
static int goluon_nbg; // in-flight slots with bg set

// goluon_drop takes the i-th slot off the in-flight list (the lock held).
static void goluon_drop(int i) {
	if (goluon_act[i]->bg) __atomic_sub_fetch(&goluon_nbg, 1, __ATOMIC_ACQ_REL);
	int n = goluon_nact - 1;
	goluon_act[i] = goluon_act[n];
	__atomic_store_n(&goluon_nact, n, __ATOMIC_RELEASE);
}

// goluon_test tests the i-th slot (the lock held) and, once it is done,
// takes it off the in-flight list. Callers walk the list from the end, so
// the slot moved into place i has been tested already.
static void goluon_test(int i) {
	goluon_slot *s = goluon_act[i];
	int flag = 0;
	int rc = MPI_Test(&s->req, &flag, MPI_STATUS_IGNORE);
	if (rc == MPI_SUCCESS && !flag) return;
	s->code = rc;
	s->done_ns = goluon_now_ns();
	goluon_drop(i);
	__atomic_store_n(&s->state, 2, __ATOMIC_RELEASE);
}

// goluon_test_all tests every collective in flight (the lock held) and
// returns how many are left.
static int goluon_test_all(void) {
	for (int i = goluon_nact - 1; i >= 0; i--) goluon_test(i);
	return goluon_nact;
}

// The progress thread's state, under goluon_pm.
static pthread_t goluon_pt;
static pthread_mutex_t goluon_pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t goluon_pc = PTHREAD_COND_INITIALIZER;
static int goluon_kicked, goluon_running, goluon_stop, goluon_started;
static int goluon_waiters; // callers inside goluon_wait (atomic)

// goluon_kick tells the progress thread that collectives are in flight.
static void goluon_kick(void) {
	pthread_mutex_lock(&goluon_pm);
	goluon_kicked = 1;
	if (!goluon_running) pthread_cond_signal(&goluon_pc);
	pthread_mutex_unlock(&goluon_pm);
}

static int goluon_quiet(void) {
	return __atomic_load_n(&goluon_stop, __ATOMIC_ACQUIRE) || __atomic_load_n(&goluon_waiters, __ATOMIC_ACQUIRE);
}

// goluon_progress_loop tests the collectives in flight until none is
// left, a caller waits (that caller drives progress, and kicks the thread
// again on leaving if some are left), or the thread is stopped. It first
// sleeps one pause, so that a caller who waits at once takes over; it
// leaves the lock to any thread that wants it, tests without pause for
// the spin time after a completion and then sleeps the pause between
// tests, leaving the core to the compute threads.
static void goluon_progress_loop(void) {
	goluon_nap(goluon_poll_ns, INT64_MAX);
	int64_t last = goluon_now_ns();
	for (;;) {
		if (goluon_quiet()) return;
		if (__atomic_load_n(&goluon_want, __ATOMIC_ACQUIRE) == 0 && goluon_trylock()) {
			int before = goluon_nact;
			int left = goluon_test_all();
			goluon_unlock();
			if (left == 0) return;
			if (left < before) last = goluon_now_ns();
		}
		if (goluon_now_ns() - last > goluon_spin_ns) goluon_nap(goluon_poll_ns, INT64_MAX);
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

int goluon_start_progress(int64_t spin_ns, int64_t poll_ns) {
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

// goluon_start starts a non-blocking collective (kind, with arg the op of
// an allreduce or the root of a broadcast) on the caller's thread and
// returns its slot in *out; with kick, the progress thread drives it
// until somebody waits for it. It returns an MPI error code, or
// GOLUON_LOCK_TIMEOUT when the lock was not free by the deadline.
int goluon_start(int kind, void *buf, int count, int dt, int arg, int64_t deadline, int kick, goluon_slot **out) {
	goluon_slot *s = calloc(1, sizeof(goluon_slot));
	if (s == NULL) return MPI_ERR_NO_MEM;
	if (!goluon_lock(deadline)) {
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
	// Test the collectives already in flight: where processes outnumber
	// cores the progress thread gets little CPU, and a start is then what
	// progresses the buckets started before it.
	goluon_test_all();
	s->bg = kick;
	if (kick) __atomic_add_fetch(&goluon_nbg, 1, __ATOMIC_ACQ_REL);
	goluon_act[goluon_nact] = s;
	__atomic_store_n(&goluon_nact, goluon_nact + 1, __ATOMIC_RELEASE);
	goluon_unlock();
	*out = s;
	if (kick) goluon_kick();
	return MPI_SUCCESS;
}

// goluon_wait drives the collectives in flight on the caller's thread
// until s is done, then frees s and returns 1 with its MPI code in *code
// and how long ago it completed in *ago_ns. It tests without pause for
// spin_ns (as the only waiter), then yields the CPU between tests until
// yield_ns (when processes outnumber cores, the one it waits for may need
// this core), then sleeps the poll pause between tests. If deadline passes first it
// abandons s (it stays in MPI's hands, never tested again) and returns 0.
// On the way out it kicks the progress thread if collectives started for
// it (with kick) are left.
int goluon_wait(goluon_slot *s, int64_t deadline, int64_t spin_ns, int64_t yield_ns, int64_t poll_ns, int *code, int64_t *ago_ns) {
	__atomic_add_fetch(&goluon_waiters, 1, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&goluon_want, 1, __ATOMIC_ACQ_REL);
	int64_t start = goluon_now_ns();
	int ok = 0;
	for (;;) {
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == 2) {
			ok = 1;
			break;
		}
		if (goluon_trylock()) {
			goluon_test_all();
			goluon_unlock();
			if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == 2) continue;
		}
		int64_t t = goluon_now_ns();
		if (t > deadline) break;
		// Spin only as the only waiter: others mean threads that may
		// outnumber the cores.
		int alone = __atomic_load_n(&goluon_waiters, __ATOMIC_ACQUIRE) == 1;
		goluon_pause(t - start, alone ? spin_ns : 0, yield_ns, poll_ns, deadline);
	}
	__atomic_sub_fetch(&goluon_want, 1, __ATOMIC_ACQ_REL);
	if (!ok && goluon_lock(goluon_now_ns() + 1000000000)) {
		// Another waiter may have completed s since the deadline check.
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == 2) {
			ok = 1;
		} else {
			for (int i = 0; i < goluon_nact; i++) {
				if (goluon_act[i] == s) {
					goluon_drop(i);
					__atomic_store_n(&s->state, 3, __ATOMIC_RELEASE);
					break;
				}
			}
		}
		goluon_unlock();
	}
	if (ok) {
		*code = s->code;
		*ago_ns = goluon_now_ns() - s->done_ns;
		free(s);
	}
	if (__atomic_sub_fetch(&goluon_waiters, 1, __ATOMIC_ACQ_REL) == 0 && __atomic_load_n(&goluon_nbg, __ATOMIC_ACQUIRE) > 0) goluon_kick();
	return ok;
}

// goluon_error_string is an MPI call too, so it takes the lock (for at
// most a second: an error is reported even when the lock is stuck).
void goluon_error_string(int code, char *out, int cap) {
	char msg[MPI_MAX_ERROR_STRING];
	int n = 0;
	int locked = goluon_lock(goluon_now_ns() + 1000000000);
	if (MPI_Error_string(code, msg, &n) != MPI_SUCCESS) n = 0;
	if (locked) goluon_unlock();
	if (n >= cap) n = cap - 1;
	memcpy(out, msg, n);
	out[n] = 0;
}

// goluon_finalize stops the progress thread and shuts MPI down.
int goluon_finalize(int64_t deadline) {
	goluon_stop_progress();
	if (!goluon_lock(deadline)) return GOLUON_LOCK_TIMEOUT;
	int rc = MPI_Finalize();
	goluon_unlock();
	return rc;
}

// goluon_abort ends the job; it waits up to a second for the lock and
// then calls MPI_Abort anyway.
int goluon_abort(int code) {
	int locked = goluon_lock(goluon_now_ns() + 1000000000);
	int rc = MPI_Abort(MPI_COMM_WORLD, code);
	if (locked) goluon_unlock();
	return rc;
}
