// The C side of package mpi (built with -tags mpi): see goluon_mpi.c.

#include <mpi.h>
#include <stdint.h>

// A started non-blocking collective (opaque to Go).
typedef struct goluon_slot goluon_slot;

enum { GOLUON_ALLREDUCE, GOLUON_BCAST, GOLUON_BARRIER };
enum { GOLUON_LOCK_TIMEOUT = -1 };

int goluon_library(char *out, int cap);
int goluon_init(int want, int *got);
int goluon_level(int l);
int goluon_level_index(int l);
int goluon_rank_size(int *rank, int *size);
int64_t goluon_now_ns(void);
int goluon_start_progress(int64_t spin_ns, int64_t poll_ns);
int goluon_start(int kind, void *buf, int count, int dt, int arg, int64_t deadline, int kick, goluon_slot **out);
int goluon_wait(goluon_slot *s, int64_t deadline, int64_t spin_ns, int64_t yield_ns, int64_t poll_ns, int *code, int64_t *ago_ns);
void goluon_error_string(int code, char *out, int cap);
int goluon_finalize(int64_t deadline);
int goluon_abort(int code);
