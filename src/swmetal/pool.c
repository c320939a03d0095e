/* pool.c — the software device's worker threads: one per core (parallel_threads()),
 * started on first use and kept for the process.  A dispatch hands its job to every
 * worker at once; each claims threadgroups from the job's counter and runs them
 * (group.c) until none is left or the job is abandoned.  A worker's hardware-fault
 * landing site (fault.c jumps there) is here too. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/parallel.h"
#include "swmetal/checks_internal.h"
#include "swmetal/count_internal.h"
#include "swmetal/exec_internal.h"

static struct {
    pthread_once_t once;
    pthread_mutex_t dispatch_mu;  /* one dispatch at a time on the pool */
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    int n;
    sw_worker **workers;
    sw_job *job;
    uint64_t seq;
    int remaining;
    int init_failed;
} pool = {PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
          PTHREAD_COND_INITIALIZER, 0, NULL, NULL, 0, 0, 0};

static void worker_run_job(sw_worker *w, sw_job *job) {
    w->nsamples = 0;
    w->job = job;
    w->log = NULL;
    int landed = sigsetjmp(w->fault_jmp, 1);
    if (landed != 0) {
        /* 1: a hardware fault in kernel code; 2: a plain-loop threadgroup abandoned
         * after its report (sw_exec_abandon_current); 3: stopped by the watchdog
         * (sw_pool_run reports where) */
        if (!w->group.looping) sw_fiber_note_landed();
        if (landed == 1 && w->group.lanes_running) {
            /* which lane?  The same group again with fibers: they fault at the same
             * access, naming the thread (landing here again, with lanes_off). */
            w->group.lanes_running = 0;
            if (!w->group.looping) sw_group_reset_stacks(w); /* the simdgroups' fibers */
            w->group.looping = 0;
            w->lanes_off = 1;
            int rc = sw_group_run(w, job, w->group.linear);
            w->lanes_off = 0;
            if (rc == 0) sw_fault_report(w); /* they did not: report it as it was */
        } else if (landed == 1) {
            sw_fault_report(w);
        }
        w->lanes_off = 0;
        sw_group_reset_stacks(w);
        w->group.looping = 0;
        w->group.ranging = 0;
        w->group.lanes_running = 0;
        sw_atomics_group_end(w, 0);
        return;
    }
    for (;;) {
        if (atomic_load_explicit(&job->abandoned, memory_order_relaxed)) return;
        uint64_t k0 = atomic_fetch_add(&job->next, job->claim);
        if (k0 >= job->ngroups) return;
        uint64_t k1 = k0 + job->claim < job->ngroups ? k0 + job->claim : job->ngroups;
        for (uint64_t k = k0; k < k1; k++) {
            if (k > k0 && atomic_load_explicit(&job->abandoned, memory_order_relaxed)) return;
            uint64_t linear = job->order ? job->order[k] : k;
            if (job->cnt && sw_cnt_group_begin(w, 0) != 0) return;
            sw_atomics_group_begin(w, k);
            int rc = sw_group_run(w, job, linear);
            sw_atomics_group_end(w, rc == 0);
            if (rc == 0 && job->cnt) sw_cnt_group_end(w);
            if (rc != 0) return;
        }
    }
}

static int worker_setup(sw_worker *w) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    w->altstack_size = SW_ALTSTACK_BYTES;
#ifdef _SC_MINSIGSTKSZ
    /* The kernel's signal frame grows with the vector state (arm64 SVE/SME, x86 AVX-512):
     * glibc reports what this machine needs (AT_MINSIGSTKSZ); the handler adds little. */
    long min_sig = sysconf(_SC_MINSIGSTKSZ);
    if (min_sig > 0 && (size_t)min_sig + 16384 > w->altstack_size) w->altstack_size = (size_t)min_sig + 16384;
#endif
    w->altstack = malloc(w->altstack_size);
    w->threads = calloc(SW_MAX_THREADS_PER_GROUP, sizeof *w->threads);
    w->run = calloc(SW_MAX_THREADS_PER_GROUP, sizeof *w->run);
    w->next = calloc(SW_MAX_THREADS_PER_GROUP, sizeof *w->next);
    w->simd_slots = calloc((size_t)SW_MAX_SIMDGROUPS * SW_SIMD_BANKS * SW_SIMD_BANK_SLOTS * SW_SIMD_SLOT_BYTES, 1);
    size_t arena_bytes = (SW_TG_MEM_LIMIT + page - 1) / page * page;
    w->arena_map_size = arena_bytes + page;
    w->arena_map = mmap(NULL, w->arena_map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (w->arena_map == MAP_FAILED) w->arena_map = NULL;
    if (!w->altstack || !w->threads || !w->run || !w->next || !w->simd_slots || !w->arena_map) return -1;
    if (mprotect(w->arena_map + arena_bytes, page, PROT_NONE) != 0) return -1;
    w->arena = w->arena_map + arena_bytes - SW_TG_MEM_LIMIT;
    sw_fiber_init_native(&w->sched);
    return 0;
}

static void worker_teardown(sw_worker *w) {
    free(w->shadow);
    sw_cnt_worker_free(w);
    free(w->altstack);
    free(w->threads);
    free(w->run);
    free(w->next);
    free(w->simd_slots);
    if (w->mma_logs) munmap(w->mma_logs, SW_MMA_LOGS_BYTES);
    if (w->arena_map) munmap(w->arena_map, w->arena_map_size);
    free(w);
}

static void *worker_main(void *arg) {
    sw_worker *w = arg;
    sw_tls_worker = w;
    /* Faults in kernel code are handled on this stack (sigaltstack is per thread). */
    stack_t ss = {.ss_sp = w->altstack, .ss_size = w->altstack_size, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        fprintf(stderr, "gdnbench: sw worker %d: sigaltstack failed: %s\n", w->id, strerror(errno));
        abort();
    }
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool.mu);
        while (pool.seq == seen) pthread_cond_wait(&pool.work_cv, &pool.mu);
        seen = pool.seq;
        sw_job *job = pool.job;
        w->busy = 1;
        pthread_mutex_unlock(&pool.mu);
        worker_run_job(w, job);
        pthread_mutex_lock(&pool.mu);
        w->busy = 0;
        if (--pool.remaining == 0) pthread_cond_signal(&pool.done_cv);
        pthread_mutex_unlock(&pool.mu);
    }
    return NULL;
}

static void pool_init(void) {
    int n = parallel_threads();
    if (n < 1) n = 1;
    pool.workers = calloc((size_t)n, sizeof *pool.workers);
    if (!pool.workers) {
        pool.init_failed = 1;
        return;
    }
    sw_fault_install_handlers();
    for (int i = 0; i < n; i++) {
        sw_worker *w = calloc(1, sizeof *w);
        if (!w) break;
        w->id = i;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        /* The worker's own stack only runs the scheduler and signal bookkeeping. */
        pthread_attr_setstacksize(&attr, 1 << 20);
        int ok = worker_setup(w) == 0 && pthread_create(&w->th, &attr, worker_main, w) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) {
            worker_teardown(w);
            break;
        }
        pool.workers[pool.n++] = w;
    }
    if (pool.n == 0) pool.init_failed = 1;
}

int sw_exec_workers(void) {
    pthread_once(&pool.once, pool_init);
    return pool.n;
}

/* The device's own setup stays off its clock: fiber stacks for a whole threadgroup
 * are mapped before the dispatch starts (the workers are idle), not by the first
 * threadgroups inside it.  As many workers as there are claims of groups get them; a
 * worker beyond those that still takes a claim maps its own, on the clock.  On
 * failure writes why into `why`. */
static void map_stacks_off_the_clock(const sw_job *job, char *why, size_t n) {
    const sw_dispatch *d = job->d;
    uint32_t per_group = d->tg_size[0] * d->tg_size[1] * d->tg_size[2];
    uint64_t claims = (job->ngroups + job->claim - 1) / job->claim;
    int busy = claims < (uint64_t)pool.n ? (int)claims : pool.n;
    for (int i = 0; i < busy; i++)
        if (sw_group_ensure_stacks(pool.workers[i], per_group) != 0) {
            snprintf(why, n, "cannot map %u fiber stacks of %d KB: %s", per_group, SW_FIBER_STACK_BYTES / 1024,
                     strerror(errno));
            return;
        }
}

/* Waits (pool.mu held) until the workers are done or `deadline` passes.  Returns 1
 * when they are done. */
static int wait_done_until(const struct timespec *deadline) {
    while (pool.remaining > 0)
        if (pthread_cond_timedwait(&pool.done_cv, &pool.mu, deadline) == ETIMEDOUT) return pool.remaining == 0;
    return 1;
}

static struct timespec after(double seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* pthread_cond_timedwait's clock (macOS has no other) */
    double whole = (double)(long long)seconds;
    ts.tv_sec += (time_t)whole;
    ts.tv_nsec += (long)((seconds - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    return ts;
}

/* Signals every worker still on the job, then waits up to `seconds` for them. */
static int poke_busy_workers(double seconds) {
    for (int i = 0; i < pool.n; i++)
        if (pool.workers[i]->busy) pthread_kill(pool.workers[i]->th, SW_WATCHDOG_SIGNAL);
    struct timespec dl = after(seconds);
    return wait_done_until(&dl);
}

/* The dispatch ran past its timeout (pool.mu held): sample where its running threads
 * are a few times, then stop them, each where it is (fault.c), and wait for every
 * worker.  A worker outside the kernel's code is signalled again until it is in it,
 * or it reaches a synchronisation point and sees the job abandoned. */
static void watchdog_stop(sw_job *job) {
    if (sw_fault_code_range((const void *)job->d->entry, &job->kcode_lo, &job->kcode_hi) != 0)
        job->kcode_lo = job->kcode_hi = 0;
    atomic_store(&job->watchdog, SW_WATCH_SAMPLE);
    for (int k = 0; k < SW_WATCH_SAMPLES / 2; k++)
        if (poke_busy_workers(0.005)) break;
    atomic_store(&job->watchdog, SW_WATCH_STOP);
    atomic_store(&job->abandoned, 1);
    pthread_mutex_unlock(&pool.mu);
    sw_atomics_wake(job); /* workers waiting for their turn stop too */
    pthread_mutex_lock(&pool.mu);
    while (!poke_busy_workers(0.01)) {
    }
}

int sw_pool_run(sw_job *job, char *why, size_t whylen) {
    pthread_mutex_lock(&pool.dispatch_mu);
    why[0] = '\0';
    if (sw_exec_workers() == 0 || pool.init_failed)
        snprintf(why, whylen, "could not start the software device's worker threads");
    else if (!job->loop)
        map_stacks_off_the_clock(job, why, whylen);
    if (why[0]) {
        pthread_mutex_unlock(&pool.dispatch_mu);
        return -1;
    }
    /* Buffers keep their device shadow between dispatches: one dispatch at a time
     * sets it up, uses and clears it. */
    if (job->d->instrumented) sw_checks_dispatch_begin(job);
    job->res->start_s = sw_exec_now();
    pthread_mutex_lock(&pool.mu);
    pool.job = job;
    pool.remaining = pool.n;
    pool.seq++;
    pthread_cond_broadcast(&pool.work_cv);
    double limit = job->d->timeout_s;
    struct timespec deadline = after(limit);
    int stopped = limit > 0 && !wait_done_until(&deadline);
    if (stopped) watchdog_stop(job);
    while (pool.remaining > 0) pthread_cond_wait(&pool.done_cv, &pool.mu);
    pool.job = NULL;
    pthread_mutex_unlock(&pool.mu);
    job->res->end_s = sw_exec_now();
    if (stopped) sw_fault_report_timeout(job, pool.workers, pool.n);
    sw_checks_dispatch_end(job);
    pthread_mutex_unlock(&pool.dispatch_mu);
    return 0;
}
