/* parallel.h — run a loop body over [0, n) on all cores with pthreads.
 *
 * The CPU references parallelise over (batch, head) with this; iterations are
 * handed out dynamically in order, so uneven work still balances. */
#ifndef GDN_PARALLEL_H
#define GDN_PARALLEL_H

#include <stdint.h>

typedef void (*parallel_fn)(int64_t i, void *arg);

/* Calls fn(i, arg) for every i in [0, n), on up to parallel_threads() threads.
 * Returns when all calls are done. */
void parallel_for(int64_t n, parallel_fn fn, void *arg);

/* Number of worker threads (online cores, or GDNBENCH_THREADS when set). */
int parallel_threads(void);

#endif
