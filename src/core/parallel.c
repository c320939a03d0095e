/* parallel.c — a minimal dynamic parallel-for on pthreads. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/parallel.h"

typedef struct par_job {
    int64_t n;
    _Atomic int64_t next;
    parallel_fn fn;
    void *arg;
} par_job;

int parallel_threads(void) {
    const char *env = getenv("GDNBENCH_THREADS");
    if (env && atoi(env) > 0) return atoi(env);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void *par_worker(void *p) {
    par_job *job = p;
    for (;;) {
        int64_t i = atomic_fetch_add(&job->next, 1);
        if (i >= job->n) break;
        job->fn(i, job->arg);
    }
    return NULL;
}

void parallel_for(int64_t n, parallel_fn fn, void *arg) {
    if (n <= 0) return;
    par_job job = {.n = n, .fn = fn, .arg = arg};
    atomic_init(&job.next, 0);
    int nt = parallel_threads();
    if (nt > n) nt = (int)n;
    if (nt > 64) nt = 64;
    pthread_t th[64];
    int started = 0;
    for (int i = 1; i < nt; i++) {
        if (pthread_create(&th[started], NULL, par_worker, &job) == 0) started++;
    }
    par_worker(&job); /* the caller works too */
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
}
