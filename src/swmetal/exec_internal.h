/* exec_internal.h — executor state shared by exec.c and checks.c (not for the host).
 *
 * One sw_worker per pool thread; one sw_gpu_thread per GPU thread of the threadgroup
 * the worker runs; one sw_job per dispatch, shared by all workers. */
#ifndef GDN_SW_EXEC_INTERNAL_H
#define GDN_SW_EXEC_INTERNAL_H

#include <pthread.h>
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

enum sw_thread_state { SW_T_RUNNABLE = 0, SW_T_WAIT_BARRIER, SW_T_WAIT_SIMD, SW_T_DONE };
enum sw_order { SW_ORDER_INORDER = 0, SW_ORDER_REVERSE, SW_ORDER_RANDOM };

struct sw_worker;

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
    uint32_t *order;             /* threadgroup permutation, NULL = in order */
    int fiber_order;             /* sw_order of fibers between synchronisation points */
    int loop;                    /* run each threadgroup's threads as a plain loop (sync-free kernel) */
    int lanes;                   /* run each simdgroup's lanes together (d->lanes, msl_lanes.c) */
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
    int tg_abandon;              /* set by sw_rt_fault before leaving its fiber */
    /* Device atomics in threadgroup order (atomics.c). */
    uint64_t group_k;            /* the group being run: its position in execution order, or UINT64_MAX */
    int in_turn;                 /* every earlier group has ended: atomics apply at once */
    struct sw_atomic_log *log;   /* this group's recorded float atomics (the job owns it), or NULL */
    int looping;                 /* running a threadgroup as a plain loop: kernel code is on this
                                    worker's own stack and leaves by siglongjmp to fault_jmp */
    sw_gpu_thread loop_thread;   /* the plain loop's one thread record, re-labelled per thread */
    int ranging;                 /* the plain loop runs inside the kernel's sw_range_fn: only
                                    loop_thread.ids follows the threads (range_sync_thread) */
    int arena_poisoned;          /* the arena was poisoned for this threadgroup (done lazily) */
    int lanes_running;           /* inside d->lanes: a fault there is found again with fibers */
    int lanes_off;               /* run the group with fibers (the re-run of a lanes fault) */
    uint32_t lanes_base[3];      /* lanes fibers: the group's first thread_position_in_grid */
    uint32_t nlanes_threads;     /* lanes fibers: the group's threads (records are simdgroups) */
    uint64_t group_linear;       /* the group being run (for that re-run) */

    /* The threadgroup being run. */
    uint32_t tg_pos[3], tg_actual[3];
    uint32_t nthreads, nsimd;
    uint32_t live_total, wait_barrier;
    uint16_t live[SW_MAX_SIMDGROUPS], wait_simd[SW_MAX_SIMDGROUPS];
    /* Arrivals at the simd sync in progress, per simdgroup: while every arrival is at
     * the same line (`slow` clear), the sync resolves as soon as arr_count reaches the
     * live lanes; otherwise the scheduler resolves it when nothing can run. */
    int arr_line[SW_MAX_SIMDGROUPS];
    uint32_t arr_mask[SW_MAX_SIMDGROUPS];
    uint16_t arr_count[SW_MAX_SIMDGROUPS];
    uint8_t slow[SW_MAX_SIMDGROUPS];
    uint8_t wbank[SW_MAX_SIMDGROUPS]; /* exchange bank the next simd sync publishes */
    /* Runnable fibers: a ring of thread indices (capacity SW_MAX_THREADS_PER_GROUP;
     * a fiber is in it at most once).  A fiber that suspends switches straight to
     * the head; the scheduler runs only when the ring is empty. */
    uint32_t *run;
    uint32_t run_head, run_tail;
    uint32_t *next;              /* scratch list for the scheduler's releases */
    uint64_t rng;
    sw_tg_var vars[SW_MAX_TG_VARS];
    int nvars;
    int nallocs_named;           /* sw_rt_tg_alloc regions named so far */
    int nallocs_reached;         /* sw_rt_tg_alloc regions some thread has reached */
    size_t tg_declared_end;      /* arena bytes past this belong to no declared region (full checks) */

    /* Clocks for the full checks: every threadgroup, barrier release and simd sync
     * takes a fresh value, so shadow entries never need clearing. */
    uint32_t tg_gen, epoch, simd_clock;
    uint32_t simd_epoch[SW_MAX_SIMDGROUPS];
    sw_tg_shadow *shadow;        /* [SW_TG_MEM_LIMIT], allocated on the first full-check use */

    /* Findings (findings.c). */
    uint64_t tg_linear;          /* linear index of the threadgroup being run */
    const void *interval_pc;     /* the barrier that opened the current barrier interval, NULL = group start */
    int pending[SW_PENDING_MAX]; /* finding groups of this interval waiting for its closing barrier */
    int npending;
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

/* Fills ids of thread tid of threadgroup tg_linear of the job's grid. */
void sw_job_thread_ids(const sw_job *job, uint64_t tg_linear, uint32_t tid, uint32_t grid_pos[3],
                       uint32_t tg_pos[3]);

/* Abandons the running fiber's threadgroup after a fatal report: never returns. */
void sw_exec_abandon_current(void) __attribute__((noreturn));

#endif
