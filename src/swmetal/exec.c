/* exec.c — the software device's executor: worker pool, per-threadgroup fiber
 * scheduler, and the sw_rt_* services compiled kernels call (sw_abi.h).
 *
 * Scheduling of one threadgroup: runnable fibers wait in a ring; a fiber that
 * suspends (threadgroup barrier, simd sync) or returns switches straight to the
 * ring's head.  A simd sync resolves the moment the last live lane of its simdgroup
 * arrives at the same site: the lanes become runnable together and receive their
 * mask.  Only when the ring is empty does control return to the scheduler, which
 * settles what remains: for each simdgroup with lanes waiting at a simd sync (lanes
 * split over several sites, or some at a barrier), the lanes waiting at the same
 * site as the lowest waiting lane resume together; when nothing waits at a simd
 * sync, every live thread waits at a barrier: at the same line they are released, at
 * different lines it is a divergent barrier (an error).  Threads that returned are
 * not waited for.  The order fibers enter the ring follows the schedule setting, so
 * a kernel whose result depends on it shows its race. */
#include "swmetal/exec.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#ifdef __APPLE__
#include <sys/ucontext.h>
#else
#include <ucontext.h>
#endif

#include "core/parallel.h"
#include "swmetal/checks_internal.h"
#include "swmetal/exec_internal.h"

#define SW_FIBER_STACK_BYTES (256 * 1024)
#define SW_ALTSTACK_BYTES (64 * 1024)
/* A worker's simdgroup-matrix product logs, one block per simdgroup (sw_rt_mma_log). */
#define MMA_LOGS_BYTES ((size_t)SW_MAX_SIMDGROUPS * SW_MMA_LOG_BYTES)

static _Thread_local sw_worker *tls_worker;
#if SW_RT_CURRENT_TLS
__thread sw_current sw_rt_current; /* sw_abi.h: kernel code reads it directly */
#endif

/* The running thread changes: w->cur and what kernel code sees change together. */
static inline void set_current(sw_worker *w, sw_gpu_thread *t) {
    w->cur = t;
#if SW_RT_CURRENT_TLS
    if (t) sw_rt_current = t->view;
    else memset(&sw_rt_current, 0, sizeof sw_rt_current);
#endif
}

/* A thread record got its index: its view follows (the product log is per simdgroup).
 * For the running record, set_current then shows kernel code the new view. */
static inline void set_view(sw_worker *w, sw_gpu_thread *t) {
    t->view.ids = &t->ids;
    t->view.lane = t->lane;
    t->view.mma_log = w->mma_logs ? w->mma_logs + (size_t)t->sg * SW_MMA_LOG_BYTES : NULL;
}

/* ---- process-wide settings ---- */

static struct {
    pthread_mutex_t mu;
    int fiber_order;
    uint64_t fiber_seed;
    int group_order;
    uint64_t group_seed;
    int env_read;
    int fibers_only;             /* GDNBENCH_SW_FIBERS=1: sync-free kernels run as fibers too */
    int lanes_off;               /* sw_exec_set_lanes(0): lanes kernels run as fibers */
} settings = {PTHREAD_MUTEX_INITIALIZER, SW_ORDER_INORDER, 0, SW_ORDER_INORDER, 0, 0, 0, 0};

void sw_exec_set_lanes(int on) {
    pthread_mutex_lock(&settings.mu);
    settings.lanes_off = !on;
    pthread_mutex_unlock(&settings.mu);
}

static int parse_order(const char *spec, int *order, uint64_t *seed, char *err, size_t errlen) {
    if (strcmp(spec, "inorder") == 0) {
        *order = SW_ORDER_INORDER;
        *seed = 0;
        return 0;
    }
    if (strcmp(spec, "reverse") == 0) {
        *order = SW_ORDER_REVERSE;
        *seed = 0;
        return 0;
    }
    if (strncmp(spec, "random:", 7) == 0 && spec[7]) {
        char *end = NULL;
        errno = 0;
        unsigned long long s = strtoull(spec + 7, &end, 10);
        if (errno == 0 && end && *end == '\0') {
            *order = SW_ORDER_RANDOM;
            *seed = s;
            return 0;
        }
    }
    if (err) snprintf(err, errlen, "bad schedule '%s': use inorder, reverse or random:SEED (SEED a decimal integer)", spec);
    return -1;
}

int sw_exec_set_schedule(const char *spec, char *err, size_t errlen) {
    int order;
    uint64_t seed;
    if (parse_order(spec, &order, &seed, err, errlen) != 0) return -1;
    pthread_mutex_lock(&settings.mu);
    settings.fiber_order = order;
    settings.fiber_seed = seed;
    settings.env_read = 1;
    pthread_mutex_unlock(&settings.mu);
    return 0;
}

int sw_exec_set_threadgroup_order(const char *spec, char *err, size_t errlen) {
    int order;
    uint64_t seed;
    if (parse_order(spec, &order, &seed, err, errlen) != 0) return -1;
    pthread_mutex_lock(&settings.mu);
    settings.group_order = order;
    settings.group_seed = seed;
    pthread_mutex_unlock(&settings.mu);
    return 0;
}

/* GDNBENCH_SW_SCHEDULE applies until a setter is called.  GDNBENCH_SW_FIBERS=1 (read
 * once) keeps sync-free kernels on fibers, to compare the two ways of running them. */
static void read_settings(int *fiber_order, uint64_t *fiber_seed, int *group_order, uint64_t *group_seed,
                          int *fibers_only, int *lanes_off) {
    pthread_mutex_lock(&settings.mu);
    *lanes_off = settings.lanes_off;
    if (!settings.fibers_only) {
        const char *f = getenv("GDNBENCH_SW_FIBERS");
        settings.fibers_only = f && strcmp(f, "1") == 0 ? 1 : -1;
    }
    *fibers_only = settings.fibers_only == 1;
    if (!settings.env_read) {
        settings.env_read = 1;
        const char *env = getenv("GDNBENCH_SW_SCHEDULE");
        char err[160];
        if (env && *env && parse_order(env, &settings.fiber_order, &settings.fiber_seed, err, sizeof err) != 0)
            fprintf(stderr, "gdnbench: GDNBENCH_SW_SCHEDULE: %s; using inorder\n", err);
    }
    *fiber_order = settings.fiber_order;
    *fiber_seed = settings.fiber_seed;
    *group_order = settings.group_order;
    *group_seed = settings.group_seed;
    pthread_mutex_unlock(&settings.mu);
}

double sw_exec_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void shuffle_u32(uint32_t *a, uint64_t n, uint64_t *rng) {
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = splitmix64(rng) % i;
        uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* ---- diagnostics ---- */

void sw_job_report(sw_job *job, int fatal, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sw_dispatch_result *res = job->res;
    pthread_mutex_lock(&job->diag_mu);
    res->failed = 1;
    if (res->ndiags < SW_DIAG_KEEP) res->diags[res->ndiags++] = strdup(msg);
    res->total_diags++;
    int abandon = fatal && !atomic_load(&job->abandoned);
    if (abandon) {
        free(res->error);
        res->error = strdup(msg);
        atomic_store(&job->abandoned, 1);
    }
    pthread_mutex_unlock(&job->diag_mu);
    if (abandon) sw_atomics_wake(job); /* workers waiting for their turn stop too */
}

sw_access sw_access_of(const sw_gpu_thread *t, const sw_worker *w, const void *pc, int kind, size_t size, int line) {
    sw_access a;
    memset(&a, 0, sizeof a);
    a.pc = pc;
    if (t && t->ncalls > 0 && t->ncalls <= SW_CALL_DEPTH) a.caller = t->calls[t->ncalls - 1];
    a.kind = (uint8_t)kind;
    a.size = (uint16_t)(size > 0xffff ? 0xffff : size);
    a.line = line;
    if (t && w) {
        a.has_thread = 1;
        a.tid = t->index;
        a.tg = w->tg_linear;
    }
    return a;
}

void sw_job_thread_ids(const sw_job *job, uint64_t tg_linear, uint32_t tid, uint32_t grid_pos[3], uint32_t tg_pos[3]) {
    const sw_dispatch *d = job->d;
    uint64_t g0 = d->groups[0] ? d->groups[0] : 1, g1 = d->groups[1] ? d->groups[1] : 1;
    tg_pos[0] = (uint32_t)(tg_linear % g0);
    tg_pos[1] = (uint32_t)((tg_linear / g0) % g1);
    tg_pos[2] = (uint32_t)(tg_linear / (g0 * g1));
    uint32_t actual[3];
    for (int k = 0; k < 3; k++) {
        uint64_t size = d->tg_size[k] ? d->tg_size[k] : 1, first = (uint64_t)tg_pos[k] * size;
        if (first + size > job->threads_per_grid[k] && job->threads_per_grid[k] > first)
            size = job->threads_per_grid[k] - first;
        actual[k] = (uint32_t)size;
    }
    uint32_t local[3] = {tid % actual[0], (tid / actual[0]) % actual[1], tid / (actual[0] * actual[1])};
    for (int k = 0; k < 3; k++) grid_pos[k] = tg_pos[k] * d->tg_size[k] + local[k];
}

/* A fault found in kernel code by the executor: one site, fatal. */
/* The plain loop's one thread record becomes thread i of the threadgroup being
 * run: its ids (the threadgroup's are set already), index, lane and per-thread
 * state. */
static inline void label_loop_thread(sw_worker *w, sw_gpu_thread *t, uint32_t i) {
    uint32_t ax = w->tg_actual[0], ay = w->tg_actual[1];
    int one_d = ay == 1 && w->tg_actual[2] == 1;
    uint32_t l[3] = {one_d ? i : i % ax, one_d ? 0 : (i / ax) % ay, one_d ? 0 : i / (ax * ay)};
    for (int k = 0; k < 3; k++) {
        t->ids.thread_position_in_threadgroup[k] = l[k];
        t->ids.thread_position_in_grid[k] = t->ids.threadgroup_position_in_grid[k] * w->job->d->tg_size[k] + l[k];
    }
    t->ids.thread_index_in_threadgroup = i;
    t->ids.simdgroup_index_in_threadgroup = i / SW_SIMD_WIDTH;
    t->ids.thread_index_in_simdgroup = i % SW_SIMD_WIDTH;
    t->index = i;
    t->sg = (uint16_t)(i / SW_SIMD_WIDTH);
    t->lane = (uint8_t)(i % SW_SIMD_WIDTH);
    set_view(w, t);
    t->tg_bump = w->job->tg_static_end;
    t->tg_allocs = 0;
    t->ncalls = 0;
}

/* In a threadgroup run by the kernel's range entry the compiled loop stores only
 * the index of each thread; the thread record catches up here, before anything
 * reads it (a report naming the thread, a threadgroup allocation). */
static void range_sync_thread(sw_worker *w) {
    sw_gpu_thread *t = w->cur;
    if (!w->ranging || !t) return;
    uint32_t i = t->ids.thread_index_in_threadgroup;
    if (i != t->index) {
        label_loop_thread(w, t, i);
        set_current(w, t);
    }
}

static void fault_finding(sw_worker *w, int kind, const void *pc, int line, const char *detail) {
    range_sync_thread(w);
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    f.kind = kind;
    f.buffer = -1;
    f.detail = detail;
    f.nsides = 1;
    f.side[0] = sw_access_of(w->cur, w, pc, SW_ACC_NONE, 0, line);
    f.fatal = 1;
    sw_findings_add(w->job, w, &f);
}

/* Where a call into the runtime came from: the call instruction in kernel code. */
#define CALL_SITE() ((const void *)((const char *)__builtin_return_address(0) - 1))

/* ---- the runtime services kernels call ---- */

sw_worker *sw_exec_current_worker(void) { return tls_worker; }

const sw_ids *sw_rt_ids(void) {
    sw_worker *w = tls_worker; /* called per lane by every simd function: keep it short */
    if (__builtin_expect(w->ranging, 0)) range_sync_thread(w);
    return &w->cur->ids;
}

static uint8_t *simd_slot(sw_worker *w, uint32_t sg, uint32_t bank, uint32_t lane) {
    return w->simd_slots + (((size_t)sg * SW_SIMD_BANKS + bank) * SW_SIMD_BANK_SLOTS + lane) * SW_SIMD_SLOT_BYTES;
}

void *sw_rt_simd_slot_out(void) {
    sw_worker *w = tls_worker;
    sw_gpu_thread *t = w->cur;
    t->out_bank = w->wbank[t->sg];
    return simd_slot(w, t->sg, t->out_bank, t->lane);
}

void *sw_rt_simd_slots(void) {
    sw_worker *w = tls_worker;
    sw_gpu_thread *t = w->cur;
    return simd_slot(w, t->sg, t->read_bank, 0);
}

void *sw_rt_mma_log(uint32_t *lane) {
    sw_worker *w = tls_worker;
    if (!w->mma_logs) {
        /* fresh zero pages: only the entries a kernel uses become resident */
        void *logs = mmap(NULL, MMA_LOGS_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (logs != MAP_FAILED) w->mma_logs = logs;
        if (!w->mma_logs) {
            fault_finding(w, DEV_FIND_LIMIT, CALL_SITE(), 0, "out of memory for the simdgroup-matrix product logs");
            sw_exec_abandon_current();
        }
    }
    *lane = w->cur->lane;
    set_view(w, w->cur);
    set_current(w, w->cur);
    return w->cur->view.mma_log;
}

void sw_exec_abandon_current(void) {
    sw_worker *w = tls_worker;
    sw_gpu_thread *t = w->cur;
    w->tg_abandon = 1;
    if (w->looping) {
        /* Plain-loop threadgroup: unwind the worker's own stack (what was reported stays). */
        set_current(w, NULL);
        siglongjmp(w->fault_jmp, 2);
    }
    sw_fiber_switch_final(&t->fiber, &w->sched);
}

void sw_rt_fault(const char *msg, int line) {
    sw_worker *w = tls_worker;
    fault_finding(w, DEV_FIND_FAULT, CALL_SITE(), line, msg);
    sw_exec_abandon_current();
}

static void poison_arena(sw_worker *w) {
    memset(w->arena, 0xff, SW_TG_MEM_LIMIT);
    w->arena_poisoned = 1;
}

void *sw_rt_tg_alloc(size_t size, size_t align, const char *var, int line) {
    return sw_rt_tg_alloc_init(size, align, var, line, NULL);
}

void *sw_rt_tg_alloc_init(size_t size, size_t align, const char *var, int line, const void *init) {
    sw_worker *w = tls_worker;
    range_sync_thread(w);
    sw_gpu_thread *t = w->cur;
    if (!w->arena_poisoned) poison_arena(w);
    if (align == 0) align = 1;
    size_t off = (t->tg_bump + align - 1) / align * align;
    if (off > SW_TG_MEM_LIMIT || size > SW_TG_MEM_LIMIT - off) {
        char what[200];
        snprintf(what, sizeof what,
                 "threadgroup memory exceeds the %d-byte limit: '%s' (line %d) needs %zu bytes at offset %zu "
                 "([[threadgroup(n)]] arguments take %zu bytes)",
                 SW_TG_MEM_LIMIT, var ? var : "?", line, size, off, w->job->tg_static_end);
        fault_finding(w, DEV_FIND_LIMIT, CALL_SITE(), line, what);
        sw_exec_abandon_current();
    }
    t->tg_bump = off + size;
    if (t->tg_bump > w->tg_declared_end) w->tg_declared_end = t->tg_bump;
    /* Every thread allocates the same regions in the same order; the first to reach
     * allocation k names it for diagnostics. */
    if (t->tg_allocs == w->nallocs_named && w->nvars < SW_MAX_TG_VARS) {
        w->vars[w->nvars++] = (sw_tg_var){off, size, var, -1, line};
        w->nallocs_named++;
    }
    if (t->tg_allocs == w->nallocs_reached) {
        /* the first thread to reach this region: its initializer, once per threadgroup */
        w->nallocs_reached++;
        if (init) {
            memcpy(w->arena + off, init, size);
            if (w->shadow) sw_checks_tg_initialized(w, off, size);
        }
    }
    t->tg_allocs++;
    return w->arena + off;
}

static void order_run_list(sw_worker *w, uint32_t *list, uint32_t n);

static void run_push(sw_worker *w, uint32_t i) { w->run[w->run_tail++ & (SW_MAX_THREADS_PER_GROUP - 1)] = i; }

/* Marks the lanes of `mask` in simdgroup sg runnable with their mask, and publishes
 * the exchange bank their sync reads: a lane that wrote its slot into the other bank
 * (it arrived before an earlier sync of some lanes of its simdgroup resolved) has the
 * slot copied over.  Safe: resolution happens only when every lane that could still
 * be reading either bank has suspended again.  Does not queue the lanes. */
static void release_simd(sw_worker *w, uint32_t sg, uint32_t mask) {
    uint32_t rb = w->wbank[sg];
    sw_gpu_thread *base = &w->threads[sg * SW_SIMD_WIDTH];
    for (uint32_t m = mask; m; m &= m - 1) {
        uint32_t l = (uint32_t)__builtin_ctz(m);
        sw_gpu_thread *t = &base[l];
        if (t->out_bank != SW_BANK_NONE && t->out_bank != rb)
            memcpy(simd_slot(w, sg, rb, l), simd_slot(w, sg, t->out_bank, l), SW_SIMD_SLOT_BYTES);
        t->out_bank = SW_BANK_NONE;
        t->read_bank = (uint8_t)rb;
        t->state = SW_T_RUNNABLE;
        t->simd_result = mask;
    }
    memset(simd_slot(w, sg, rb, SW_SIMD_WIDTH), 0, sizeof(uintptr_t)); /* the memo tag */
    w->wbank[sg] = (uint8_t)(rb ^ 1);
    w->wait_simd[sg] = (uint16_t)(w->wait_simd[sg] - (uint32_t)__builtin_popcount(mask));
    w->simd_epoch[sg] = ++w->simd_clock;
}

/* The fast path: all live lanes of sg met at one sync.  Queues them in schedule order. */
static void release_simd_and_queue(sw_worker *w, uint32_t sg) {
    uint32_t mask = w->arr_mask[sg];
    w->arr_count[sg] = 0;
    w->arr_mask[sg] = 0;
    release_simd(w, sg, mask);
    uint32_t base = sg * SW_SIMD_WIDTH;
    if (w->job->fiber_order == SW_ORDER_INORDER) {
        for (uint32_t m = mask; m; m &= m - 1) run_push(w, base + (uint32_t)__builtin_ctz(m));
    } else {
        uint32_t list[SW_SIMD_WIDTH], n = 0;
        for (uint32_t m = mask; m; m &= m - 1) list[n++] = base + (uint32_t)__builtin_ctz(m);
        order_run_list(w, list, n);
        for (uint32_t k = 0; k < n; k++) run_push(w, list[k]);
    }
}

/* Leaves the running fiber t (already marked waiting or done) for the next runnable
 * fiber, or the scheduler when there is none.  Returns when t is resumed. */
static void run_next(sw_worker *w, sw_gpu_thread *t) {
    if (w->run_head != w->run_tail) {
        sw_gpu_thread *n = &w->threads[w->run[w->run_head++ & (SW_MAX_THREADS_PER_GROUP - 1)]];
        set_current(w, n);
        if (n != t) sw_fiber_switch(&t->fiber, &n->fiber);
    } else {
        set_current(w, NULL);
        sw_fiber_switch(&t->fiber, &w->sched);
    }
}

/* "thread_position_in_grid (x,y,z) (threadgroup (a,b,c), thread_index_in_threadgroup i)" */
static void describe_thread(const sw_gpu_thread *t, char *buf, size_t len) {
    const sw_ids *id = &t->ids;
    snprintf(buf, len, "thread_position_in_grid (%u,%u,%u) (threadgroup (%u,%u,%u), thread_index_in_threadgroup %u)",
             id->thread_position_in_grid[0], id->thread_position_in_grid[1], id->thread_position_in_grid[2],
             id->threadgroup_position_in_grid[0], id->threadgroup_position_in_grid[1],
             id->threadgroup_position_in_grid[2], id->thread_index_in_threadgroup);
}

/* A kernel run as a plain loop reached a synchronisation: the static test
 * (msl_sync.c) let something through.  Report it rather than switch to a fiber that
 * was never prepared. */
static void loop_reached_sync(sw_worker *w, const char *what, int line) {
    range_sync_thread(w);
    char who[200];
    describe_thread(w->cur, who, sizeof who);
    sw_job_report(w->job, 1,
                  "kernel '%s' line %d: %s in a kernel %s; this is a software-device bug: set "
                  "GDNBENCH_SW_FIBERS=1 to run it on fibers; %s",
                  w->job->d->kernel, line, what,
                  w->lanes_running ? "run as 32-lane data (msl_lanes.c)"
                                   : "judged free of synchronisation (run as a plain loop)",
                  who);
    sw_exec_abandon_current();
}

void sw_rt_threadgroup_barrier(unsigned mem_flags, int line) {
    (void)mem_flags;
    sw_worker *w = tls_worker;
    if (w->looping) loop_reached_sync(w, "threadgroup barrier", line);
    sw_gpu_thread *t = w->cur;
    t->state = SW_T_WAIT_BARRIER;
    t->wait_line = line;
    t->wait_pc = CALL_SITE();
    w->wait_barrier++;
    run_next(w, t);
}

static inline uint32_t simd_sync(sw_worker *w, sw_gpu_thread *t, int line) {
    /* lanes fibers are simdgroups: a simd sync there is a rewrite bug, not a wait */
    if (w->looping || w->lanes_running) loop_reached_sync(w, "simd-group synchronisation", line);
    uint32_t sg = t->sg;
    t->state = SW_T_WAIT_SIMD;
    t->wait_line = line;
    w->wait_simd[sg]++;
    if (!w->slow[sg]) {
        if (w->arr_count[sg] == 0) w->arr_line[sg] = line;
        if (w->arr_line[sg] == line) {
            w->arr_mask[sg] |= 1u << t->lane;
            if (++w->arr_count[sg] == w->live[sg]) release_simd_and_queue(w, sg);
        } else {
            w->slow[sg] = 1;
        }
    }
    run_next(w, t);
    return t->simd_result;
}

uint32_t sw_rt_simd_sync(int line) {
    sw_worker *w = tls_worker;
    return simd_sync(w, w->cur, line);
}

const void *sw_rt_simd_exchange(const void *value, size_t size, int line, uint32_t *mask, uint32_t *lane) {
    sw_worker *w = tls_worker;
    sw_gpu_thread *t = w->cur;
    t->out_bank = w->wbank[t->sg];
    uint8_t *slot = simd_slot(w, t->sg, t->out_bank, t->lane);
    /* Fixed sizes copy inline: this runs once per lane per collective. */
    switch (size) {
    case 4: memcpy(slot, value, 4); break;
    case 8: memcpy(slot, value, 8); break;
    case 16: memcpy(slot, value, 16); break;
    default: memcpy(slot, value, size); break;
    }
    *mask = simd_sync(w, t, line);
    *lane = t->lane;
    return simd_slot(w, t->sg, t->read_bank, 0);
}

/* ---- one threadgroup ---- */

/* Lanes of simdgroup sg in a threadgroup of n threads. */
static inline uint32_t simd_lanes(uint32_t n, uint32_t sg) {
    uint32_t lanes = n - sg * SW_SIMD_WIDTH;
    return lanes > SW_SIMD_WIDTH ? SW_SIMD_WIDTH : lanes;
}

static void thread_main(void *arg) {
    sw_gpu_thread *t = arg;
    sw_worker *w = t->w;
    sw_fiber_entered(&t->fiber, &w->sched);
    if (w->lanes_running) {
        /* a simdgroup's fiber (init_lanes_fibers) */
        w->job->d->lanes->fn(&t->args, w->lanes_base, t->sg, simd_lanes(w->nlanes_threads, t->sg));
    } else {
        w->job->d->entry(&t->args);
    }
    uint32_t sg = t->sg;
    t->state = SW_T_DONE;
    w->live[sg]--;
    w->live_total--;
    /* The lanes still live may all be waiting at one sync already. */
    if (!w->slow[sg] && w->arr_count[sg] && w->arr_count[sg] == w->live[sg]) release_simd_and_queue(w, sg);
    if (w->run_head != w->run_tail) {
        sw_gpu_thread *n = &w->threads[w->run[w->run_head++ & (SW_MAX_THREADS_PER_GROUP - 1)]];
        set_current(w, n);
        sw_fiber_switch_final(&t->fiber, &n->fiber);
    }
    set_current(w, NULL);
    sw_fiber_switch_final(&t->fiber, &w->sched);
}

static int ensure_stacks(sw_worker *w, uint32_t n) {
    while ((uint32_t)w->nstacks < n) {
        sw_stack *st = &w->stacks[w->nstacks];
        if (sw_stack_alloc(st, SW_FIBER_STACK_BYTES) != 0) return -1;
        /* Stacks are page-aligned and equally sized, so their hot tops would all fall
         * in the same cache sets; shift each top by a different number of lines. */
        st->size -= (size_t)(w->nstacks % 61) * 64;
        /* the pages a fiber's first frames use, faulted in now rather than by it */
        for (size_t off = 1; off <= 8192 && off <= st->size; off += 4096) ((volatile char *)st->base)[st->size - off] = 0;
        w->nstacks++;
    }
    return 0;
}

static void order_run_list(sw_worker *w, uint32_t *list, uint32_t n) {
    if (w->job->fiber_order == SW_ORDER_REVERSE) {
        for (uint32_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
            uint32_t t = list[i];
            list[i] = list[j];
            list[j] = t;
        }
    } else if (w->job->fiber_order == SW_ORDER_RANDOM) {
        shuffle_u32(list, n, &w->rng);
    }
}

static void init_threads(sw_worker *w, sw_job *job, const uint32_t pos[3]) {
    const sw_dispatch *d = job->d;
    uint32_t ax = w->tg_actual[0], ay = w->tg_actual[1], az = w->tg_actual[2];
    uint32_t n = ax * ay * az;
    for (uint32_t i = 0; i < n; i++) {
        sw_gpu_thread *t = &w->threads[i];
        sw_ids *id = &t->ids;
        uint32_t lx = i % ax, ly = (i / ax) % ay, lz = i / (ax * ay);
        id->thread_position_in_threadgroup[0] = lx;
        id->thread_position_in_threadgroup[1] = ly;
        id->thread_position_in_threadgroup[2] = lz;
        for (int k = 0; k < 3; k++) {
            id->threadgroup_position_in_grid[k] = pos[k];
            id->threads_per_threadgroup[k] = w->tg_actual[k];
            id->threadgroups_per_grid[k] = d->groups[k];
            id->threads_per_grid[k] = job->threads_per_grid[k];
            id->thread_position_in_grid[k] = pos[k] * d->tg_size[k] + id->thread_position_in_threadgroup[k];
        }
        (void)az;
        (void)lz;
        id->thread_index_in_threadgroup = i;
        id->simdgroup_index_in_threadgroup = i / SW_SIMD_WIDTH;
        id->thread_index_in_simdgroup = i % SW_SIMD_WIDTH;
        id->simdgroups_per_threadgroup = (n + SW_SIMD_WIDTH - 1) / SW_SIMD_WIDTH;
        id->threads_per_simdgroup = SW_SIMD_WIDTH;
        t->args.buffers = job->buffers;
        t->args.tg_params = w->tg_params;
        t->args.ids = id;
        t->w = w;
        t->index = i;
        t->sg = (uint16_t)(i / SW_SIMD_WIDTH);
        t->lane = (uint8_t)(i % SW_SIMD_WIDTH);
        set_view(w, t);
        t->out_bank = SW_BANK_NONE;
        t->read_bank = 0;
        t->state = SW_T_RUNNABLE;
        t->wait_line = 0;
        t->wait_pc = NULL;
        t->ncalls = 0;
        t->simd_result = 0;
        t->tg_bump = job->tg_static_end;
        t->tg_allocs = 0;
        sw_fiber_prepare(&t->fiber, &w->stacks[i], thread_main, t);
    }
}

static void report_divergent_barrier(sw_worker *w) {
    sw_gpu_thread *first = NULL, *other = NULL;
    uint32_t n_first = 0, n_other = 0;
    for (uint32_t i = 0; i < w->nthreads; i++) {
        sw_gpu_thread *t = &w->threads[i];
        if (t->state != SW_T_WAIT_BARRIER) continue;
        if (!first) first = t;
        if (t->wait_line == first->wait_line) {
            n_first++;
        } else {
            if (!other) other = t;
            if (t->wait_line == other->wait_line) n_other++;
        }
    }
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    f.kind = DEV_FIND_DIVERGENT_BARRIER;
    f.buffer = -1;
    f.nsides = 2;
    f.side[0] = sw_access_of(first, w, first->wait_pc, SW_ACC_BARRIER, 0, first->wait_line);
    f.side[0].nthreads = n_first;
    f.side[1] = sw_access_of(other, w, other->wait_pc, SW_ACC_BARRIER, 0, other->wait_line);
    f.side[1].nthreads = n_other;
    f.fatal = 1;
    sw_findings_add(w->job, w, &f);
}

/* Settles the waits when no fiber can run; queues the fibers to run next.  Returns
 * their number, 0 when the threadgroup is finished, -1 on a divergent barrier. */
static int resolve(sw_worker *w) {
    uint32_t nnext = 0;
    for (uint32_t sg = 0; sg < w->nsimd; sg++) {
        if (!w->wait_simd[sg]) continue;
        uint32_t base = sg * SW_SIMD_WIDTH, end = base + SW_SIMD_WIDTH;
        if (end > w->nthreads) end = w->nthreads;
        int line = 0, found = 0;
        uint32_t mask = 0;
        for (uint32_t i = base; i < end; i++) {
            sw_gpu_thread *t = &w->threads[i];
            if (t->state != SW_T_WAIT_SIMD) continue;
            if (!found) {
                found = 1;
                line = t->wait_line;
            }
            if (t->wait_line == line) mask |= 1u << (i - base);
        }
        release_simd(w, sg, mask);
        for (uint32_t m = mask; m; m &= m - 1) w->next[nnext++] = base + (uint32_t)__builtin_ctz(m);
        /* Lanes left waiting sit at other sites: the fast path's arrival count no
         * longer describes one sync, so this simdgroup stays with the scheduler until
         * none of its lanes waits. */
        w->arr_count[sg] = 0;
        w->arr_mask[sg] = 0;
        w->slow[sg] = w->wait_simd[sg] != 0;
    }
    if (!nnext) {
        if (w->live_total == 0) {
            sw_findings_close_interval(w->job, w, NULL);
            return 0;
        }
        int line = 0, found = 0;
        const void *pc = NULL;
        for (uint32_t i = 0; i < w->nthreads; i++) {
            sw_gpu_thread *t = &w->threads[i];
            if (t->state != SW_T_WAIT_BARRIER) continue;
            if (!found) {
                found = 1;
                line = t->wait_line;
                pc = t->wait_pc;
            } else if (t->wait_line != line) {
                report_divergent_barrier(w);
                return -1;
            }
            w->next[nnext++] = i;
        }
        sw_findings_close_interval(w->job, w, pc);
        w->interval_pc = pc;
        for (uint32_t k = 0; k < nnext; k++) w->threads[w->next[k]].state = SW_T_RUNNABLE;
        w->wait_barrier = 0;
        w->epoch++;
    }
    order_run_list(w, w->next, nnext);
    for (uint32_t k = 0; k < nnext; k++) run_push(w, w->next[k]);
    return (int)nnext;
}

static void reset_stacks_after_abandon(sw_worker *w) {
    if (w->looping) return; /* no fiber stacks in use */
    for (uint32_t i = 0; i < w->nthreads; i++) sw_stack_reset(&w->stacks[i]);
}

/* A thread record t set up for threadgroup `pos` of n threads: the threadgroup's ids
 * and the arguments.  The worker's one record of a plain loop or lanes run (each
 * thread or simdgroup labelled in turn by label_loop_thread), or a lanes fiber's. */
static void prepare_record(sw_worker *w, sw_job *job, const uint32_t pos[3], uint32_t n, sw_gpu_thread *t) {
    const sw_dispatch *d = job->d;
    sw_ids *id = &t->ids;
    for (int k = 0; k < 3; k++) {
        id->threadgroup_position_in_grid[k] = pos[k];
        id->threads_per_threadgroup[k] = w->tg_actual[k];
        id->threadgroups_per_grid[k] = d->groups[k];
        id->threads_per_grid[k] = job->threads_per_grid[k];
    }
    id->simdgroups_per_threadgroup = (n + SW_SIMD_WIDTH - 1) / SW_SIMD_WIDTH;
    id->threads_per_simdgroup = SW_SIMD_WIDTH;
    t->args.buffers = job->buffers;
    t->args.tg_params = w->tg_params;
    t->args.ids = id;
    t->w = w;
    t->state = SW_T_RUNNABLE;
    t->out_bank = SW_BANK_NONE;
}

static sw_gpu_thread *prepare_loop_thread(sw_worker *w, sw_job *job, const uint32_t pos[3], uint32_t n) {
    prepare_record(w, job, pos, n, &w->loop_thread);
    return &w->loop_thread;
}

/* After such a threadgroup: the worker back to fibers, the group's one barrier
 * interval closed.  Returns 0, or -1 when the dispatch is being abandoned. */
static int end_loop_group(sw_worker *w, sw_job *job) {
    set_current(w, NULL);
    w->looping = 0;
    w->ranging = 0;
    w->lanes_running = 0;
    w->live_total = 0;
    sw_findings_close_interval(job, w, NULL);
    return atomic_load_explicit(&job->abandoned, memory_order_relaxed) ? -1 : 0;
}

/* A threadgroup of a sync-free kernel (no barrier, no simd or quad function anywhere
 * it can reach): no thread ever waits for another, so each runs to completion in
 * turn on the worker's own stack, in the order of the schedule's permutation (so
 * validate's schedule comparison still reorders them).  One thread record is
 * re-labelled for each thread instead of preparing n of them.  The checks keep
 * working: w->cur names the running thread for fault reports and the full-check
 * hooks, and the barrier epoch is the threadgroup's one interval.  A fault or an
 * abandoning report leaves through siglongjmp to worker_run_job. */
static int run_group_loop(sw_worker *w, sw_job *job, const uint32_t pos[3], uint32_t n) {
    const sw_dispatch *d = job->d;
    sw_gpu_thread *t = prepare_loop_thread(w, job, pos, n);
    sw_ids *id = &t->ids;
    w->looping = 1;
    if (d->range && !d->instrumented && job->fiber_order == SW_ORDER_INORDER) {
        /* the same threads in the same order, the loop compiled with the kernel */
        uint32_t base[3] = {pos[0] * d->tg_size[0], pos[1] * d->tg_size[1], pos[2] * d->tg_size[2]};
        t->index = UINT32_MAX; /* range_sync_thread labels the record when needed */
        set_view(w, t);        /* kernel code's ids: the struct the loop rewrites per thread */
        w->ranging = 1;
        set_current(w, t);
        d->range(&t->args, id, base, n);
    } else {
        for (uint32_t k = 0; k < n; k++) {
            label_loop_thread(w, t, job->fiber_order == SW_ORDER_INORDER ? k : w->next[k]);
            set_current(w, t);
            d->entry(&t->args);
        }
    }
    return end_loop_group(w, job);
}

/* A threadgroup of a kernel with a lanes entry (msl_lanes.c): each simdgroup in
 * turn, its lanes together as 32-wide data on the worker's own stack.  The
 * library has no barrier, so simdgroups never wait for each other (one with
 * barriers runs on init_lanes_fibers' fibers).  The thread record names lane 0 of
 * the running simdgroup; a fault cannot say which lane made it, so worker_run_job
 * runs the group again with fibers, which name the thread (and the line) exactly. */
static int run_group_lanes(sw_worker *w, sw_job *job, const uint32_t pos[3], uint32_t n) {
    const sw_dispatch *d = job->d;
    sw_gpu_thread *t = prepare_loop_thread(w, job, pos, n);
    uint32_t base[3] = {pos[0] * d->tg_size[0], pos[1] * d->tg_size[1], pos[2] * d->tg_size[2]};
    w->looping = 1;
    w->lanes_running = 1;
    for (uint32_t sg = 0; sg * SW_SIMD_WIDTH < n; sg++) {
        label_loop_thread(w, t, sg * SW_SIMD_WIDTH);
        set_current(w, t);
        d->lanes->fn(&t->args, base, sg, simd_lanes(n, sg));
    }
    return end_loop_group(w, job);
}

/* A threadgroup of a lanes kernel with barriers: one fiber per simdgroup (records
 * 0..nsimd-1, each labelled as its lane 0), each running the lanes entry; a
 * barrier suspends the simdgroup's fiber, and the scheduler releases them all
 * when every live one waits there, as it does threads.  The worker's thread
 * counts then count simdgroups. */
static void init_lanes_fibers(sw_worker *w, sw_job *job, const uint32_t pos[3], uint32_t n) {
    const sw_dispatch *d = job->d;
    for (int k = 0; k < 3; k++) w->lanes_base[k] = pos[k] * d->tg_size[k];
    w->nlanes_threads = n;
    for (uint32_t sg = 0; sg < w->nsimd; sg++) {
        sw_gpu_thread *t = &w->threads[sg];
        prepare_record(w, job, pos, n, t);
        label_loop_thread(w, t, sg * SW_SIMD_WIDTH);
        t->read_bank = 0;
        t->wait_line = 0;
        t->wait_pc = NULL;
        t->simd_result = 0;
        w->live[sg] = 1;
        sw_fiber_prepare(&t->fiber, &w->stacks[sg], thread_main, t);
    }
    w->nthreads = w->nsimd;
    w->live_total = w->nsimd;
    w->lanes_running = 1;
}

static _Atomic uint64_t lanes_dispatches;

uint64_t sw_exec_lanes_dispatches(void) { return atomic_load_explicit(&lanes_dispatches, memory_order_relaxed); }

static int run_fibers(sw_worker *w, sw_job *job);

/* Runs threadgroup `linear` of the job.  Returns 0, or -1 when the dispatch is to be
 * abandoned. */
static int run_group(sw_worker *w, sw_job *job, uint64_t linear) {
    const sw_dispatch *d = job->d;
    uint32_t pos[3];
    pos[0] = (uint32_t)(linear % d->groups[0]);
    pos[1] = (uint32_t)((linear / d->groups[0]) % d->groups[1]);
    pos[2] = (uint32_t)(linear / ((uint64_t)d->groups[0] * d->groups[1]));
    uint32_t n = 1;
    for (int k = 0; k < 3; k++) {
        uint32_t size = d->tg_size[k];
        uint64_t first = (uint64_t)pos[k] * size;
        if (first + size > job->threads_per_grid[k]) size = (uint32_t)(job->threads_per_grid[k] - first);
        w->tg_pos[k] = pos[k];
        w->tg_actual[k] = size;
        n *= size;
    }
    if (n == 0) return 0;
    if (!job->loop && ensure_stacks(w, n) != 0) {
        sw_job_report(job, 1, "kernel '%s': cannot map %u fiber stacks of %d KB: %s", d->kernel, n,
                      SW_FIBER_STACK_BYTES / 1024, strerror(errno));
        return -1;
    }
    w->nthreads = n;
    w->nsimd = (n + SW_SIMD_WIDTH - 1) / SW_SIMD_WIDTH;
    w->live_total = n;
    w->wait_barrier = 0;
    for (uint32_t sg = 0; sg < w->nsimd; sg++) {
        w->live[sg] = (uint16_t)simd_lanes(n, sg);
        w->wait_simd[sg] = 0;
        w->arr_count[sg] = 0;
        w->arr_mask[sg] = 0;
        w->slow[sg] = 0;
        w->simd_epoch[sg] = ++w->simd_clock;
    }
    if (w->mma_logs)
        for (uint32_t sg = 0; sg < w->nsimd; sg++) memset(w->mma_logs + (size_t)sg * SW_MMA_LOG_BYTES, 0, SW_MMA_LOG_HEADER);
    w->tg_gen++;
    w->epoch++;
    w->tg_linear = linear;
    w->interval_pc = NULL;
    w->npending = 0;
    w->nvars = 0;
    w->nallocs_named = 0;
    w->nallocs_reached = 0;
    w->tg_declared_end = job->tg_static_end;
    w->tg_abandon = 0;
    if (d->instrumented && !w->shadow) {
        w->shadow = calloc(SW_TG_MEM_LIMIT, sizeof *w->shadow);
        if (!w->shadow) {
            sw_job_report(job, 1, "kernel '%s': out of memory for the full-check shadow", d->kernel);
            return -1;
        }
    }
    w->rng = job->fiber_seed ^ (linear * 0xd1b54a32d192ed03ull);
    /* Poison: 0xFF bytes read as NaN in f32/f16/bf16, so a read of memory nobody
     * wrote shows up in the results.  Only kernels that can reach the arena pay for it:
     * here when [[threadgroup(n)]] memory is bound, else at the first sw_rt_tg_alloc. */
    w->arena_poisoned = 0;
    if (job->tg_static_end) poison_arena(w);
    for (int i = 0; i < SW_MAX_TG_PARAMS; i++) {
        w->tg_params[i] = d->tg_len[i] ? w->arena + job->tg_off[i] : NULL;
        if (d->tg_len[i] && w->nvars < SW_MAX_TG_VARS)
            w->vars[w->nvars++] = (sw_tg_var){job->tg_off[i], d->tg_len[i], NULL, i, 0};
    }
    if (job->loop) {
        if (job->fiber_order != SW_ORDER_INORDER) {
            for (uint32_t i = 0; i < n; i++) w->next[i] = i;
            order_run_list(w, w->next, n);
        }
        return run_group_loop(w, job, pos, n);
    }
    if (job->lanes && !w->lanes_off) {
        if (!d->lanes->barriers) return run_group_lanes(w, job, pos, n);
        init_lanes_fibers(w, job, pos, n);
    } else {
        init_threads(w, job, pos);
    }
    int rc = run_fibers(w, job);
    w->lanes_running = 0;
    return rc;
}

/* The threadgroup's fibers (w->nthreads of them, prepared) until all are done. */
static int run_fibers(sw_worker *w, sw_job *job) {
    uint32_t n = w->nthreads;
    for (uint32_t i = 0; i < n; i++) w->next[i] = i;
    order_run_list(w, w->next, n);
    w->run_head = w->run_tail = 0;
    for (uint32_t i = 0; i < n; i++) run_push(w, w->next[i]);
    for (;;) {
        /* The fibers pass control among themselves; back here when none can run. */
        sw_gpu_thread *t = &w->threads[w->run[w->run_head++ & (SW_MAX_THREADS_PER_GROUP - 1)]];
        set_current(w, t);
        sw_fiber_switch(&w->sched, &t->fiber);
        set_current(w, NULL);
        if (w->tg_abandon) {
            reset_stacks_after_abandon(w);
            return -1;
        }
        if (atomic_load_explicit(&job->abandoned, memory_order_relaxed)) {
            reset_stacks_after_abandon(w);
            return -1;
        }
        int r = resolve(w);
        if (r == 0) return 0;
        if (r < 0) {
            reset_stacks_after_abandon(w);
            return -1;
        }
    }
}

/* ---- hardware faults ---- */

static const char *signal_what(int sig, int code) {
    switch (sig) {
    case SIGFPE:
        return code == FPE_INTDIV ? "integer division by zero" : "arithmetic exception";
    case SIGILL:
    case SIGTRAP:
        return "trap instruction (__builtin_trap or unreachable code reached)";
    case SIGBUS:
        return "bus error (misaligned or unmapped access)";
    default:
        return "invalid memory access";
    }
}

/* A fault at addr: an out-of-bounds access (a buffer's guard page, the arena's), a
 * stack overflow, or a wild address. */
static void report_hardware_fault(sw_worker *w) {
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    char what[300] = "";
    const uint8_t *addr = w->fault_addr;
    int acc = w->fault_write < 0 ? SW_ACC_NONE : w->fault_write ? SW_ACC_WRITE : SW_ACC_READ;
    f.kind = DEV_FIND_FAULT;
    f.buffer = -1;
    f.fatal = 1;
    if (w->fault_sig == SIGSEGV || w->fault_sig == SIGBUS) {
        const sw_dispatch *d = w->job->d;
        int found = 0;
        for (int i = 0; i < SW_MAX_BUFFERS && !found; i++) {
            const sw_exec_binding *b = &d->buf[i];
            if (!b->ptr || !b->map_lo || addr < b->map_lo || addr >= b->map_hi) continue;
            found = 1;
            f.memory = SW_MEM_DEVICE;
            f.buffer = i;
            f.has_range = 1;
            f.offset_lo = addr >= b->data ? (int64_t)(addr - b->data) : -(int64_t)(b->data - addr);
            f.offset_hi = f.offset_lo + 1;
            f.length = b->length;
            if (addr >= b->data + b->length || addr < b->data) {
                f.kind = DEV_FIND_OOB;
                if (b->is_bytes) snprintf(what, sizeof what, "setBytes data");
            } else {
                snprintf(what, sizeof what, "access fault inside the buffer");
            }
        }
        if (!found && addr >= w->arena_map && addr < w->arena_map + w->arena_map_size) {
            found = 1;
            f.kind = DEV_FIND_OOB;
            f.memory = SW_MEM_THREADGROUP;
            f.has_range = 1;
            f.offset_lo = (int64_t)(addr - w->arena);
            f.offset_hi = f.offset_lo + 1;
            f.length = SW_TG_MEM_LIMIT;
            snprintf(what, sizeof what, "past the %d-byte threadgroup memory", SW_TG_MEM_LIMIT);
        }
        for (int i = 0; i < w->nstacks && !found; i++) {
            const uint8_t *lo = w->stacks[i].map, *hi = w->stacks[i].base;
            if (addr < lo || addr >= hi) continue;
            found = 1;
            snprintf(what, sizeof what, "stack overflow in a GPU thread (each has %d KB of stack)",
                     SW_FIBER_STACK_BYTES / 1024);
        }
        if (!found)
            snprintf(what, sizeof what, "invalid memory access at address %p (not in any bound buffer)",
                     (const void *)addr);
    } else {
        snprintf(what, sizeof what, "%s", signal_what(w->fault_sig, w->fault_code));
        acc = SW_ACC_NONE;
    }
    f.detail = what;
    f.nsides = 1;
    f.side[0] = sw_access_of(w->fault_thread, w, w->fault_pc, acc, 0, 0);
    sw_findings_add(w->job, w, &f);
}

/* The faulting instruction and whether it wrote, from the signal context. */
static void fault_context(void *ucv, const void **pc, int *write) {
    *pc = NULL;
    *write = -1;
#if defined(__APPLE__) && defined(__aarch64__)
    ucontext_t *uc = ucv;
#ifdef __darwin_arm_thread_state64_get_pc
    *pc = (const void *)__darwin_arm_thread_state64_get_pc(uc->uc_mcontext->__ss);
#else
    *pc = (const void *)uc->uc_mcontext->__ss.__pc;
#endif
    *write = (uc->uc_mcontext->__es.__esr >> 6) & 1; /* ESR_ELx.WnR of a data abort */
#elif defined(__APPLE__) && defined(__x86_64__)
    ucontext_t *uc = ucv;
    *pc = (const void *)uc->uc_mcontext->__ss.__rip;
    *write = (uc->uc_mcontext->__es.__err >> 1) & 1;
#elif defined(__linux__) && defined(__x86_64__)
    ucontext_t *uc = ucv;
    *pc = (const void *)uc->uc_mcontext.gregs[REG_RIP];
    *write = (int)((uc->uc_mcontext.gregs[REG_ERR] >> 1) & 1); /* page-fault error code bit 1: write */
#elif defined(__linux__) && defined(__aarch64__)
    ucontext_t *uc = ucv;
    *pc = (const void *)uc->uc_mcontext.pc;
    /* The kernel appends an esr_context record (magic "ESR\x01") to the signal
     * frame's __reserved area for data aborts; its WnR bit says write.  Records are
     * {u32 magic, u32 size} headers ending with magic 0. */
    const uint8_t *rec = (const uint8_t *)uc->uc_mcontext.__reserved;
    const uint8_t *end = rec + sizeof uc->uc_mcontext.__reserved;
    while (rec + 8 <= end) {
        uint32_t magic, size;
        memcpy(&magic, rec, 4);
        memcpy(&size, rec + 4, 4);
        if (magic == 0 || size < 8 || rec + size > end) break;
        if (magic == 0x45535201u && size >= 16) {
            uint64_t esr;
            memcpy(&esr, rec + 8, 8);
            *write = (int)((esr >> 6) & 1);
            break;
        }
        rec += size;
    }
#else
    (void)ucv;
#endif
}

static struct sigaction old_actions[32];
static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP};

static void fault_handler(int sig, siginfo_t *si, void *uc) {
    sw_worker *w = tls_worker;
    if (w && w->cur) {
        range_sync_thread(w);
        w->fault_sig = sig;
        w->fault_code = si->si_code;
        w->fault_addr = si->si_addr;
        w->fault_thread = w->cur;
        const void *pc;
        int write;
        fault_context(uc, &pc, &write);
        w->fault_pc = pc;
        w->fault_write = sig == SIGSEGV || sig == SIGBUS ? write : -1;
        set_current(w, NULL);
        if (!w->looping) sw_fiber_note_jump(&w->sched);
        siglongjmp(w->fault_jmp, 1);
    }
    /* Not kernel code: hand over to whoever handled this before us, or die. */
    struct sigaction *old = &old_actions[sig];
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, si, uc);
        return;
    }
    if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);
    /* Returning re-executes the faulting instruction under the default action. */
}

static void install_fault_handlers(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fault_signals / sizeof fault_signals[0]; i++)
        sigaction(fault_signals[i], &sa, &old_actions[fault_signals[i]]);
}

/* ---- the pool ---- */

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
    w->job = job;
    w->log = NULL;
    int landed = sigsetjmp(w->fault_jmp, 1);
    if (landed != 0) {
        /* 1: a hardware fault in kernel code; 2: a plain-loop threadgroup abandoned
         * after its report (sw_exec_abandon_current) */
        if (!w->looping) sw_fiber_note_landed();
        if (landed == 1 && w->lanes_running) {
            /* which lane?  The same group again with fibers: they fault at the same
             * access, naming the thread (landing here again, with lanes_off). */
            w->lanes_running = 0;
            if (!w->looping) reset_stacks_after_abandon(w); /* the simdgroups' fibers */
            w->looping = 0;
            w->lanes_off = 1;
            int rc = run_group(w, job, w->group_linear);
            w->lanes_off = 0;
            if (rc == 0) report_hardware_fault(w); /* they did not: report it as it was */
        } else if (landed == 1) {
            report_hardware_fault(w);
        }
        w->lanes_off = 0;
        reset_stacks_after_abandon(w);
        w->looping = 0;
        w->ranging = 0;
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
            sw_atomics_group_begin(w, k);
            w->group_linear = linear;
            int rc = run_group(w, job, linear);
            sw_atomics_group_end(w, rc == 0);
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
    free(w->altstack);
    free(w->threads);
    free(w->run);
    free(w->next);
    free(w->simd_slots);
    if (w->mma_logs) munmap(w->mma_logs, MMA_LOGS_BYTES);
    if (w->arena_map) munmap(w->arena_map, w->arena_map_size);
    free(w);
}

static void *worker_main(void *arg) {
    sw_worker *w = arg;
    tls_worker = w;
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
        pthread_mutex_unlock(&pool.mu);
        worker_run_job(w, job);
        pthread_mutex_lock(&pool.mu);
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
    install_fault_handlers();
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

/* ---- a dispatch ---- */

static int set_error(sw_dispatch_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int set_error(sw_dispatch_result *res, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    res->failed = 1;
    res->error = strdup(msg);
    res->diags[res->ndiags++] = strdup(msg);
    res->total_diags++;
    return -1;
}

/* Limits Metal checks at dispatch time: refuse before running anything. */
static int prepare_job(const sw_dispatch *d, sw_job *job, sw_dispatch_result *res) {
    const char *k = d->kernel ? d->kernel : "?";
    if (!d->entry) return set_error(res, "kernel '%s': no entry point to run", k);
    uint64_t threads = (uint64_t)d->tg_size[0] * d->tg_size[1] * d->tg_size[2];
    if (threads == 0)
        return set_error(res, "kernel '%s': threads per threadgroup %ux%ux%u is empty; every dimension must be >= 1", k,
                         d->tg_size[0], d->tg_size[1], d->tg_size[2]);
    if (threads > SW_MAX_THREADS_PER_GROUP)
        return set_error(res,
                         "kernel '%s': %llu threads per threadgroup (%ux%ux%u) exceeds the limit of %d "
                         "(maxTotalThreadsPerThreadgroup); use a smaller threadgroup",
                         k, (unsigned long long)threads, d->tg_size[0], d->tg_size[1], d->tg_size[2],
                         SW_MAX_THREADS_PER_GROUP);
    size_t off = 0;
    char parts[512] = "";
    size_t plen = 0;
    for (int i = 0; i < SW_MAX_TG_PARAMS; i++) {
        if (!d->tg_len[i]) continue;
        job->tg_off[i] = off;
        off += (d->tg_len[i] + 15) / 16 * 16;
        if (plen < sizeof parts - 64)
            plen += (size_t)snprintf(parts + plen, sizeof parts - plen, "%s[[threadgroup(%d)]] %zu", plen ? ", " : "",
                                     i, d->tg_len[i]);
    }
    if (off > SW_TG_MEM_LIMIT)
        return set_error(res,
                         "kernel '%s': threadgroup memory of %zu bytes (%s) exceeds the %d-byte limit; "
                         "reduce setThreadgroupMemoryLength",
                         k, off, parts, SW_TG_MEM_LIMIT);
    job->tg_static_end = off;
    int by_threads = d->grid_threads[0] || d->grid_threads[1] || d->grid_threads[2];
    for (int i = 0; i < 3; i++) {
        uint64_t t = by_threads ? d->grid_threads[i] : (uint64_t)d->groups[i] * d->tg_size[i];
        if (t > UINT32_MAX) return set_error(res, "kernel '%s': grid dimension %d has more than 2^32-1 threads", k, i);
        if (by_threads && d->groups[i] != (d->grid_threads[i] + d->tg_size[i] - 1) / d->tg_size[i])
            return set_error(res, "kernel '%s': threadgroup count %u in dimension %d does not cover %u threads", k,
                             d->groups[i], i, d->grid_threads[i]);
        job->threads_per_grid[i] = (uint32_t)t;
    }
    job->ngroups = (uint64_t)d->groups[0] * d->groups[1] * d->groups[2];
    /* Small threadgroups of a sync-free kernel take little time each, and two
     * workers taking them one at a time from one counter spent a third of their
     * overhead passing its cache line back and forth: take a few at a time, still
     * leaving every worker dozens of claims to balance the load with. */
    int nw = sw_exec_workers();
    uint64_t claim = job->ngroups / ((uint64_t)(nw > 0 ? nw : 1) * 64);
    job->claim = claim < 1 ? 1 : claim > 16 ? 16 : claim;
    for (int i = 0; i < SW_MAX_BUFFERS; i++) {
        const sw_exec_binding *b = &d->buf[i];
        job->buffers[i] = b->ptr;
        if (!b->ptr || !b->map_lo) continue;
        job->ranges[job->nranges++] = (sw_range){b->map_lo, b->map_hi, b->data, b->length, i};
        if (!job->ranges_lo || b->map_lo < job->ranges_lo) job->ranges_lo = b->map_lo;
        if (!job->ranges_hi || b->map_hi > job->ranges_hi) job->ranges_hi = b->map_hi;
    }
    return 0;
}

static int make_group_order(sw_job *job, int order, uint64_t seed, sw_dispatch_result *res) {
    if (order == SW_ORDER_INORDER || job->ngroups < 2) return 0;
    if (job->ngroups > UINT32_MAX) return set_error(res, "kernel '%s': too many threadgroups to permute", job->d->kernel);
    job->order = malloc(job->ngroups * sizeof *job->order);
    if (!job->order) return set_error(res, "kernel '%s': out of memory for the threadgroup order", job->d->kernel);
    for (uint64_t i = 0; i < job->ngroups; i++)
        job->order[i] = (uint32_t)(order == SW_ORDER_REVERSE ? job->ngroups - 1 - i : i);
    if (order == SW_ORDER_RANDOM) {
        uint64_t rng = seed;
        shuffle_u32(job->order, job->ngroups, &rng);
    }
    return 0;
}

static _Atomic uint64_t dispatch_seq;

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
        if (ensure_stacks(pool.workers[i], per_group) != 0) {
            snprintf(why, n, "cannot map %u fiber stacks of %d KB: %s", per_group, SW_FIBER_STACK_BYTES / 1024,
                     strerror(errno));
            return;
        }
}

int sw_exec_dispatch(const sw_dispatch *d, sw_dispatch_result *res) {
    memset(res, 0, sizeof *res);
    res->start_s = res->end_s = sw_exec_now();
    sw_job job;
    memset(&job, 0, sizeof job);
    job.d = d;
    job.res = res;
    job.seq = atomic_fetch_add(&dispatch_seq, 1) + 1;
    int group_order;
    uint64_t group_seed;
    int fibers_only, lanes_off;
    read_settings(&job.fiber_order, &job.fiber_seed, &group_order, &group_seed, &fibers_only, &lanes_off);
    job.loop = d->sync_free && !fibers_only;
    job.lanes = d->lanes != NULL && !d->instrumented && !job.loop && !fibers_only && !lanes_off &&
                job.fiber_order == SW_ORDER_INORDER;
    if (job.lanes) atomic_fetch_add_explicit(&lanes_dispatches, 1, memory_order_relaxed);
    if (prepare_job(d, &job, res) != 0) return -1;
    if (job.ngroups == 0) return 0;
    if (make_group_order(&job, group_order, group_seed, res) != 0) return -1;
    job.findings = sw_findings_new();
    if (!job.findings || sw_atomics_job_init(&job, sw_exec_workers()) != 0) {
        free(job.order);
        sw_findings_free(job.findings);
        return set_error(res, "kernel '%s': out of memory for the %s", d->kernel,
                         job.findings ? "threadgroup order of its atomics" : "check findings");
    }
    pthread_mutex_init(&job.diag_mu, NULL);
    atomic_init(&job.next, 0);
    atomic_init(&job.abandoned, 0);

    pthread_mutex_lock(&pool.dispatch_mu);
    char why[256] = "";
    if (sw_exec_workers() == 0 || pool.init_failed)
        snprintf(why, sizeof why, "could not start the software device's worker threads");
    else if (!job.loop)
        map_stacks_off_the_clock(&job, why, sizeof why);
    if (why[0]) {
        pthread_mutex_unlock(&pool.dispatch_mu);
        free(job.order);
        sw_atomics_job_free(&job);
        sw_findings_free(job.findings);
        pthread_mutex_destroy(&job.diag_mu);
        return set_error(res, "kernel '%s': %s", d->kernel, why);
    }
    /* Buffers keep their device shadow between dispatches: one dispatch at a time
     * sets it up, uses and clears it. */
    if (d->instrumented) sw_checks_dispatch_begin(&job);
    res->start_s = sw_exec_now();
    pthread_mutex_lock(&pool.mu);
    pool.job = &job;
    pool.remaining = pool.n;
    pool.seq++;
    pthread_cond_broadcast(&pool.work_cv);
    while (pool.remaining > 0) pthread_cond_wait(&pool.done_cv, &pool.mu);
    pool.job = NULL;
    pthread_mutex_unlock(&pool.mu);
    res->end_s = sw_exec_now();
    sw_checks_dispatch_end(&job);
    pthread_mutex_unlock(&pool.dispatch_mu);

    free(job.order);
    sw_atomics_job_free(&job);
    /* Addresses become .metal lines here, after the workers are done. */
    sw_findings_finish(&job, res);
    sw_findings_free(job.findings);
    free(job.site_pcs);
    free(job.site_index);
    pthread_mutex_destroy(&job.diag_mu);
    if (res->failed && !res->error) {
        char msg[1200];
        snprintf(msg, sizeof msg, "kernel '%s': %llu check diagnostic%s; first: %s", d->kernel,
                 (unsigned long long)res->total_diags, res->total_diags == 1 ? "" : "s",
                 res->ndiags ? res->diags[0] : "?");
        res->error = strdup(msg);
    }
    return res->failed ? -1 : 0;
}

void sw_dispatch_result_free(sw_dispatch_result *res) {
    free(res->error);
    free(res->findings);
    for (int i = 0; i < res->ndiags; i++) free(res->diags[i]);
    memset(res, 0, sizeof *res);
}
