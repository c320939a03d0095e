/* exec_internal.h — executor state shared by the executor's files (exec.c: a dispatch;
 * pool.c: the worker threads; group.c: one threadgroup's fibers; rt.c: the sw_rt_*
 * services; fault.c: hardware faults; schedule.c: the orders) and the checks
 * (checks.c, findings.c, atomics.c).  Not for the host.
 *
 * One sw_worker per pool thread; one sw_gpu_thread per GPU thread of the threadgroup
 * the worker runs; one sw_job per dispatch, shared by all workers. */
#ifndef GDN_SW_EXEC_INTERNAL_H
#define GDN_SW_EXEC_INTERNAL_H

#include <pthread.h>
#include <string.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>

#include "swmetal/exec.h"
#include "swmetal/fiber.h"
#include "swmetal/findings.h"

#define SW_MAX_SIMDGROUPS (SW_MAX_THREADS_PER_GROUP / SW_SIMD_WIDTH)
#define SW_MAX_TG_VARS 64
#define SW_SIMD_BANKS 2
#define SW_BANK_NONE 0xff
#define SW_CALL_DEPTH 8          /* shadow call stack entries kept per GPU thread (full checks) */
#define SW_PENDING_MAX 16        /* finding groups per worker waiting for the barrier closing their interval */
#define SW_SITE_CACHE 4096       /* per-worker cache of code address -> site id (a power of 2) */
#define SW_BARRIER_RING 64       /* barriers a worker remembers (full checks: which lacked which flags) */
#define SW_MEM_FLAG_DEVICE 1u    /* mem_flags::mem_device */
#define SW_MEM_FLAG_THREADGROUP 2u /* mem_flags::mem_threadgroup */
#define SW_WATCH_SAMPLES 8       /* where a stuck worker was, sampled by the watchdog (fault.c) */

/* The watchdog's stages (sw_job.watchdog): a worker's signal handler samples the
 * running thread's code address in the kernel library, and at STOP leaves it. */
enum { SW_WATCH_OFF = 0, SW_WATCH_SAMPLE, SW_WATCH_STOP };

enum sw_thread_state { SW_T_RUNNABLE = 0, SW_T_WAIT_BARRIER, SW_T_WAIT_SIMD, SW_T_DONE };
enum sw_order { SW_ORDER_INORDER = 0, SW_ORDER_REVERSE, SW_ORDER_RANDOM };

struct sw_worker;
typedef struct sw_cnt_job sw_cnt_job;       /* count.c */
typedef struct sw_cnt_worker sw_cnt_worker; /* count.c */

typedef struct sw_gpu_thread {
    sw_fiber fiber;
    sw_ids ids;
    sw_current view;             /* what sw_rt_current shows kernel code while this thread runs */
    sw_thread_args args;
    struct sw_worker *w;
    uint32_t index;              /* thread_index_in_threadgroup */
    uint16_t sg;                 /* simdgroup_index_in_threadgroup */
    uint8_t lane;                /* thread_index_in_simdgroup */
    uint8_t state;               /* sw_thread_state */
    uint8_t out_bank;            /* exchange bank written for the next simd sync, SW_BANK_NONE */
    uint8_t read_bank;           /* exchange bank of the last simd sync (sw_rt_simd_slots) */
    int wait_line;               /* .metal line of the barrier / simd sync it waits at */
    uint8_t wait_flags;          /* the mem_flags of the threadgroup barrier it waits at */
    const void *wait_pc;         /* code address of that barrier / simd sync call */
    const void *calls[SW_CALL_DEPTH]; /* full checks: call sites of the instrumented functions entered */
    uint32_t ncalls;             /* depth (may exceed SW_CALL_DEPTH; only the first ones are kept) */
    uint32_t simd_result;        /* mask handed back by sw_rt_simd_sync */
    size_t tg_bump;              /* next free arena offset for sw_rt_tg_alloc */
    int tg_allocs;               /* sw_rt_tg_alloc calls so far */
} sw_gpu_thread;

/* A named region of the threadgroup arena, for diagnostics. */
typedef struct sw_tg_var {
    size_t offset, size;
    const char *name;            /* variable name, or NULL for [[threadgroup(index)]] */
    int index;
    int line;
} sw_tg_var;

/* A bound buffer's mapping, for attributing addresses in full checks. */
typedef struct sw_range {
    const uint8_t *lo, *hi;      /* mapping, guard pages included */
    const uint8_t *data;
    size_t length;
    int index;                   /* [[buffer(index)]] */
} sw_range;

/* Device-memory shadow of one bound buffer for full checks (layout in checks.c). */
typedef struct sw_dev_shadow {
    const uint8_t *data;         /* the buffer's first byte */
    size_t length;
    uint8_t *map;                /* one mapping holding the arrays below */
    size_t map_bytes;
    uint64_t *w;                 /* [length] last writer per byte */
    uint32_t *r;                 /* [length] a reader per byte */
    uint16_t *rsite;             /* [length] where that reader read */
    uint32_t *wblk;              /* [length / 64 + 1] writers of each 64-byte block */
    struct sw_guarded *owner;    /* keeps the mapping between dispatches; NULL = unmapped at the end */
    uint8_t *touched;            /* [ngranules]: 1 = this dispatch marked cells there (cleared at the end) */
    size_t ngranules;
} sw_dev_shadow;

typedef struct sw_job {
    const sw_dispatch *d;
    uint64_t seq;                /* dispatch number, process-wide (tags per-worker caches) */
    uint64_t ngroups;
    _Atomic uint64_t next;       /* next threadgroup (position in `order`) to start */
    uint64_t claim;              /* threadgroups a worker takes from `next` at a time */
    _Atomic int abandoned;       /* set on the first fatal error: workers stop */
    _Atomic int watchdog;        /* SW_WATCH_*: the dispatch ran past its timeout (pool.c, fault.c) */
    uintptr_t kcode_lo, kcode_hi; /* the kernel library's code, where a stuck thread may be stopped
                                     (set when the watchdog fires; 0 = unknown) */
    uint32_t *order;             /* threadgroup permutation, NULL = in order */
    int fiber_order;             /* sw_order of fibers between synchronisation points */
    int loop;                    /* run each threadgroup's threads as a plain loop (sync-free kernel) */
    int lanes;                   /* run each simdgroup's lanes together (d->lanes, lanes.c) */
    uint64_t fiber_seed;
    size_t tg_off[SW_MAX_TG_PARAMS];
    size_t tg_static_end;        /* first arena byte past the [[threadgroup(n)]] regions */
    uint32_t threads_per_grid[3];
    void *buffers[SW_MAX_BUFFERS];   /* what kernels receive as args->buffers */
    sw_range ranges[SW_MAX_BUFFERS]; /* guarded bound buffers */
    int nranges;
    const uint8_t *ranges_lo, *ranges_hi; /* hull of every range: most other addresses are the stack */
    uintptr_t code_base;         /* load address of the kernel's library (full checks: code offsets) */
    pthread_mutex_t diag_mu;
    sw_dispatch_result *res;
    sw_findings *findings;       /* what the checks found, grouped */
    sw_cnt_job *cnt;             /* the counters (count.c), NULL when not counting */
    /* Full checks, device memory: one shadow per distinct guarded buffer (setBytes
     * data excluded), indexed like `ranges` through dev_of_range. */
    int device_check;            /* 1: conflicts between threads in device memory are checked */
    sw_dev_shadow dev[SW_MAX_BUFFERS];
    int ndev;
    int dev_of_range[SW_MAX_BUFFERS]; /* -1: no shadow */
    /* Code address -> site id table (findings.c), guarded by diag_mu. */
    const void **site_pcs;       /* [SW_SITE_MAX + 1], [0] unused */
    uint32_t nsites;
    uint16_t *site_index;        /* open-addressed hash of site_pcs: [SW_SITE_INDEX] ids */
    /* Device float atomics in threadgroup order (atomics.c), under order_mu.  NULL
     * done: one worker or one threadgroup, nothing to order. */
    uint8_t *done;               /* [SW_ATOMIC_WINDOW] ring: group k ended (slot k % window) */
    struct sw_atomic_log **parked; /* [SW_ATOMIC_WINDOW] an ended group's log, waiting for its turn */
    uint64_t done_upto;          /* groups 0..done_upto-1 (execution order) have ended and applied */
    int applying;                /* a worker is applying parked logs (outside the lock) */
    int nparked;
    struct sw_atomic_log *free_logs, *all_logs;
    int order_waiters;
    pthread_mutex_t order_mu;
    pthread_cond_t order_cv;
} sw_job;

/* Per-byte shadow of the threadgroup arena for full checks (checks.c).  Code
 * addresses are kept as offsets from the kernel library's base (job->code_base). */
typedef struct sw_tg_shadow {
    uint32_t written_gen;        /* == worker's tg_gen: written in this threadgroup */
    uint32_t reported_gen;       /* == tg_gen: an uninitialised read was reported */
    uint32_t w_epoch, w_simd;    /* barrier epoch / simd epoch of the last write */
    uint32_t r_epoch, r_simd;    /* ... of the last read */
    uint32_t w_at, r_at, r_other_at; /* code offsets of the last write, r_tid's read, r_other's read */
    uint16_t w_tid;              /* the last writer */
    uint16_t r_tid;              /* the first reader of epoch r_epoch */
    uint16_t r_other;            /* SW_SHADOW_READERS set: a second reader */
    uint16_t r_sg;               /* simdgroup of all readers (SW_SHADOW_MANY if mixed) | SW_SHADOW_READERS */
} sw_tg_shadow;
#define SW_SHADOW_READERS 0x8000 /* in r_sg: several threads read in epoch r_epoch */
#define SW_SHADOW_MANY 0x7fff   /* in r_sg: readers of several simdgroups */

/* What a worker knows about the threadgroup it runs: set up by run_group with one
 * assignment (w->group = (sw_group_state){...}), so nothing of the previous
 * threadgroup survives by accident.  Clocks, caches and storage that outlive a
 * threadgroup stay in sw_worker. */
typedef struct sw_group_state {
    uint64_t linear;             /* the threadgroup's linear index in the grid */
    uint32_t pos[3];             /* threadgroup_position_in_grid */
    uint32_t actual[3];          /* threads per threadgroup, cut at the grid's edge */
    uint32_t nthreads, nsimd;    /* thread records (simdgroups for lanes fibers) and simdgroups */
    uint32_t live_total, wait_barrier;
    uint16_t live[SW_MAX_SIMDGROUPS], wait_simd[SW_MAX_SIMDGROUPS];
    /* Arrivals at the simd sync in progress, per simdgroup: while every arrival is at
     * the same line (`slow` clear), the sync resolves as soon as arr_count reaches the
     * live lanes; otherwise the scheduler resolves it when nothing can run. */
    int arr_line[SW_MAX_SIMDGROUPS];
    uint32_t arr_mask[SW_MAX_SIMDGROUPS];
    uint16_t arr_count[SW_MAX_SIMDGROUPS];
    uint8_t slow[SW_MAX_SIMDGROUPS];
    uint32_t run_head, run_tail; /* the ring of runnable fibers (sw_worker.run) */
    uint64_t rng;                /* the fiber order's random stream */
    int nvars;                   /* named arena regions (sw_worker.vars) */
    int nallocs_named;           /* sw_rt_tg_alloc regions named so far */
    int nallocs_reached;         /* sw_rt_tg_alloc regions some thread has reached */
    size_t declared_end;         /* arena bytes past this belong to no declared region (full checks) */
    int arena_poisoned;          /* the arena was poisoned for this threadgroup (done lazily) */
    int abandon;                 /* set by sw_rt_fault before leaving its fiber */
    int looping;                 /* running as a plain loop: kernel code is on the worker's own
                                    stack and leaves by siglongjmp to fault_jmp */
    int ranging;                 /* the plain loop runs inside the kernel's sw_range_fn: only
                                    loop_thread.ids follows the threads (sw_range_sync_thread) */
    int lanes_running;           /* inside d->lanes: a fault there is found again with fibers */
    uint32_t lanes_base[3];      /* lanes fibers: the group's first thread_position_in_grid */
    uint32_t nlanes_threads;     /* lanes fibers: the group's threads (records are simdgroups) */
    /* Findings (findings.c). */
    const void *interval_pc;     /* the barrier that opened the current barrier interval, NULL = group start */
    int pending[SW_PENDING_MAX]; /* finding groups of this interval waiting for its closing barrier */
    int npending;
} sw_group_state;

typedef struct sw_worker {
    int id;
    pthread_t th;
    sw_fiber sched;              /* the worker thread's own stack: the scheduler */
    sw_stack stacks[SW_MAX_THREADS_PER_GROUP];
    int nstacks;
    sw_gpu_thread *threads;      /* [SW_MAX_THREADS_PER_GROUP] */
    uint8_t *arena_map;          /* arena + PROT_NONE guard page after it */
    size_t arena_map_size;
    uint8_t *arena;              /* SW_TG_MEM_LIMIT bytes ending at the guard page */
    uint8_t *simd_slots;         /* [SW_MAX_SIMDGROUPS][SW_SIMD_BANKS][SW_SIMD_BANK_SLOTS] slots */
    uint8_t *mma_logs;           /* [SW_MAX_SIMDGROUPS][SW_MMA_LOG_BYTES], allocated at first use */
    void *tg_params[SW_MAX_TG_PARAMS];
    void *altstack;
    size_t altstack_size;

    sw_job *job;
    sw_gpu_thread *volatile cur; /* the fiber running now, NULL in the scheduler */
    sigjmp_buf fault_jmp;        /* the scheduler context a hardware fault returns to */
    volatile int fault_sig, fault_code;
    void *volatile fault_addr;
    const void *volatile fault_pc;   /* the faulting instruction, NULL when the platform does not say */
    volatile int fault_write;        /* 1 write, 0 read, -1 unknown */
    sw_gpu_thread *volatile fault_thread;
    volatile int busy;           /* running a job (pool.c, under its lock): the watchdog signals it */
    volatile int nsamples;       /* where the watchdog found this worker's running thread */
    sw_access samples[SW_WATCH_SAMPLES];
    /* Device atomics in threadgroup order (atomics.c). */
    uint64_t group_k;            /* the group being run: its position in execution order, or UINT64_MAX */
    int in_turn;                 /* every earlier group has ended: atomics apply at once */
    struct sw_atomic_log *log;   /* this group's recorded float atomics (the job owns it), or NULL */
    sw_gpu_thread loop_thread;   /* the plain loop's one thread record, re-labelled per thread */
    int lanes_off;               /* run the group with fibers (the re-run of a lanes fault) */

    sw_group_state group;        /* the threadgroup being run (group.c) */
    sw_cnt_worker *cnt;          /* the counters' per-thread storage (count.c), or NULL */
    uint8_t wbank[SW_MAX_SIMDGROUPS]; /* exchange bank the next simd sync publishes (kept across
                                         threadgroups, as the slots are) */
    /* Runnable fibers: a ring of thread indices (capacity SW_MAX_THREADS_PER_GROUP;
     * a fiber is in it at most once).  A fiber that suspends switches straight to
     * the head; the scheduler runs only when the ring is empty. */
    uint32_t *run;
    uint32_t *next;              /* scratch list for the scheduler's releases */
    /* The named regions of the threadgroup arena (group.nvars of them): here rather
     * than in `group`, which is cleared for every threadgroup. */
    sw_tg_var vars[SW_MAX_TG_VARS];

    /* Clocks for the full checks: every threadgroup, barrier release and simd sync
     * takes a fresh value, so shadow entries never need clearing. */
    uint32_t tg_gen, epoch, simd_clock;
    /* Barrier semantics: epoch advances at every threadgroup barrier; these are its
     * value at the last one that ordered threadgroup memory (mem_threadgroup) and
     * device memory (mem_device), or at the threadgroup's start.  An access of an
     * epoch before tg_order is ordered before every later one of the threadgroup. */
    uint32_t tg_order, dev_order;
    /* The last SW_BARRIER_RING barriers: code address, .metal line and mem_flags of
     * the one that opened epoch e at [e % SW_BARRIER_RING] (findings name the one
     * whose flags are missing). */
    const void *bar_pc[SW_BARRIER_RING];
    int bar_line[SW_BARRIER_RING];
    uint8_t bar_flags[SW_BARRIER_RING];
    uint32_t simd_epoch[SW_MAX_SIMDGROUPS];
    int simd_line[SW_MAX_SIMDGROUPS]; /* .metal line of each simdgroup's last simd sync (race details) */
    sw_tg_shadow *shadow;        /* [SW_TG_MEM_LIMIT], allocated on the first full-check use */

    /* Findings (findings.c): code address -> site id. */
    struct {
        const void *pc;
        uint32_t id;
        uint32_t seq;            /* low bits of the job->seq it belongs to */
    } site_cache[SW_SITE_CACHE];
} sw_worker;

/* sw_site_id through the worker's cache, inline: the checks ask once per access. */
static inline uint32_t sw_site_slot(const void *pc) {
    uintptr_t h = (uintptr_t)pc;
    return (uint32_t)(h ^ (h >> 12) ^ (h >> 24)) & (SW_SITE_CACHE - 1);
}

static inline uint32_t sw_site_of(sw_job *job, sw_worker *w, const void *pc) {
    uint32_t slot = sw_site_slot(pc);
    if (w->site_cache[slot].pc == pc && w->site_cache[slot].seq == (uint32_t)job->seq) return w->site_cache[slot].id;
    return sw_site_id(job, w, pc);
}

/* The worker running on this OS thread (NULL outside the pool). */
sw_worker *sw_exec_current_worker(void);

/* Records a diagnostic of the executor itself (not a finding about the kernel's
 * code: out of memory, cannot start).  fatal: also the dispatch's error, and the
 * dispatch is abandoned (workers stop starting threadgroups). */
void sw_job_report(sw_job *job, int fatal, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* atomics.c: device atomics in threadgroup order. */
#define SW_ATOMIC_WINDOW 4096    /* groups that may have ended ahead of the earliest running one */
int sw_atomics_job_init(sw_job *job, int nworkers); /* -1: out of memory */
void sw_atomics_job_free(sw_job *job);
void sw_atomics_wake(sw_job *job); /* after setting job->abandoned: waiters stop */
void sw_atomics_group_begin(sw_worker *w, uint64_t k);
/* The group ended; ran_ok 0 when it was abandoned (its deferred atomics are dropped). */
void sw_atomics_group_end(sw_worker *w, int ran_ok);

/* The access as a check reports it: t's thread, its shadow call stack's innermost
 * entry as the caller of pc; line: the .metal line when the caller knows it (a
 * fallback for when the symbolizer does not), else 0. */
sw_access sw_access_of(const sw_gpu_thread *t, const sw_worker *w, const void *pc, int kind, size_t size, int line);
/* A finding of one site, the running thread at pc (line: its source line when
 * known, else 0), reported to the job: the executor's faults (fatal) and the numeric
 * checks (not fatal) share it.  rt.c. */
void sw_finding_at(sw_worker *w, int kind, const void *pc, int line, const char *detail, int fatal);

/* Fills ids of thread tid of threadgroup tg_linear of the job's grid. */
void sw_job_thread_ids(const sw_job *job, uint64_t tg_linear, uint32_t tid, uint32_t grid_pos[3],
                       uint32_t tg_pos[3]);

/* Abandons the running fiber's threadgroup after a fatal report: never returns. */
void sw_exec_abandon_current(void) __attribute__((noreturn));

/* ---- shared by the executor's files ---- */

#define SW_FIBER_STACK_BYTES (256 * 1024)
#define SW_ALTSTACK_BYTES (64 * 1024)
/* A worker's simdgroup-matrix product logs, one block per simdgroup (sw_rt_mma_log). */
#define SW_MMA_LOGS_BYTES ((size_t)SW_MAX_SIMDGROUPS * SW_MMA_LOG_BYTES)

/* Where a call into the runtime came from: the call instruction in kernel code. */
#define SW_CALL_SITE() ((const void *)((const char *)__builtin_return_address(0) - 1))

/* The worker of this OS thread (pool.c sets it; NULL outside the pool).  A variable
 * rather than sw_exec_current_worker(): every sw_rt_* service starts by reading it. */
extern _Thread_local sw_worker *sw_tls_worker;

/* The counters' row follows the running thread (count.c): at every change of it. */
void sw_cnt_follow(sw_worker *w);

/* The running thread changes: w->cur and what kernel code sees change together. */
static inline void sw_set_current(sw_worker *w, sw_gpu_thread *t) {
    w->cur = t;
    if (w->cnt) sw_cnt_follow(w);
#if SW_RT_CURRENT_TLS
    if (t) sw_rt_current = t->view;
    else memset(&sw_rt_current, 0, sizeof sw_rt_current);
#endif
}

/* A thread record got its index: its view follows (the product log is per simdgroup).
 * For the running record, sw_set_current then shows kernel code the new view. */
static inline void sw_set_view(sw_worker *w, sw_gpu_thread *t) {
    t->view.ids = &t->ids;
    t->view.lane = t->lane;
    t->view.mma_log = w->mma_logs ? w->mma_logs + (size_t)t->sg * SW_MMA_LOG_BYTES : NULL;
}

/* The plain loop's one thread record becomes thread i of the threadgroup being
 * run: its ids (the threadgroup's are set already), index, lane and per-thread
 * state.  Inline: a plain loop calls it once per thread. */
static inline void sw_label_loop_thread(sw_worker *w, sw_gpu_thread *t, uint32_t i) {
    uint32_t ax = w->group.actual[0], ay = w->group.actual[1];
    int one_d = ay == 1 && w->group.actual[2] == 1;
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
    sw_set_view(w, t);
    t->tg_bump = w->job->tg_static_end;
    t->tg_allocs = 0;
    t->ncalls = 0;
}

/* In a threadgroup run by the kernel's range entry the compiled loop stores only
 * the index of each thread; the thread record catches up here, before anything
 * reads it (a report naming the thread, a threadgroup allocation). */
static inline void sw_range_sync_thread(sw_worker *w) {
    sw_gpu_thread *t = w->cur;
    if (!w->group.ranging || !t) return;
    uint32_t i = t->ids.thread_index_in_threadgroup;
    if (i != t->index) {
        sw_label_loop_thread(w, t, i);
        sw_set_current(w, t);
    }
}

/* Poison: 0xFF bytes read as NaN in f32/f16/bf16, so a read of memory nobody wrote
 * shows up in the results. */
static inline void sw_poison_arena(sw_worker *w) {
    memset(w->arena, 0xff, SW_TG_MEM_LIMIT);
    w->group.arena_poisoned = 1;
}

/* group.c: one threadgroup. */
/* Runs threadgroup `linear` of the job.  Returns 0, or -1 when the dispatch is to be
 * abandoned. */
int sw_group_run(sw_worker *w, sw_job *job, uint64_t linear);
/* Maps fiber stacks until the worker has n.  Returns 0, or -1 (errno says why). */
int sw_group_ensure_stacks(sw_worker *w, uint32_t n);
/* After a threadgroup was abandoned mid-way: its fibers' stacks made fresh. */
void sw_group_reset_stacks(sw_worker *w);

/* fault.c: hardware faults in kernel code (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP). */
void sw_fault_install_handlers(void);
/* Reports the fault the handler recorded in w (w->fault_*) as a finding. */
void sw_fault_report(sw_worker *w);
/* The signal the watchdog sends a worker (fault.c's handler samples or stops it). */
#define SW_WATCHDOG_SIGNAL SIGURG
/* The executable code of the loaded object containing fn: [*lo, *hi).  Returns 0, or
 * -1 when it cannot be found. */
int sw_fault_code_range(const void *fn, uintptr_t *lo, uintptr_t *hi);
/* The nearest address in the job's kernel code (job->kcode_lo/hi) for a thread
 * stopped by a signal at pc with stack pointer sp: pc itself, or, when it is in
 * other code (the full checks' hooks, a math function the kernel called), the
 * first return address into the kernel found on the stack above sp (within the
 * fiber's stack), minus 1.  NULL when there is none. */
const void *sw_fault_kernel_pc(const sw_worker *w, const void *pc, uintptr_t sp);
/* The stack pointer of a signal context (0 where it is not known). */
uintptr_t sw_fault_context_sp(void *ucontext);
/* After the watchdog stopped the job: its workers' samples as findings. */
void sw_fault_report_timeout(sw_job *job, sw_worker *const *workers, int n);

/* pool.c: runs the job on every worker until its threadgroups are done or it is
 * abandoned; one job at a time.  Returns 0, or -1 with why (nothing ran). */
int sw_pool_run(sw_job *job, char *why, size_t whylen);

/* schedule.c: the orders of threadgroups and fibers. */
/* GDNBENCH_SW_SCHEDULE (read once), else inorder: a device's default fiber order. */
swmtl_order sw_schedule_default_fibers(void);
/* GDNBENCH_SW_FIBERS=1 (read once): sync-free and lanes kernels run as fibers too. */
int sw_exec_fibers_only(void);
/* a[0..n-1] shuffled by the splitmix64 stream *rng. */
void sw_shuffle_u32(uint32_t *a, uint64_t n, uint64_t *rng);

#endif
