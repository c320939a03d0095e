/* exec.h — runs one compute dispatch of the software Metal device.
 *
 * A dispatch is a grid of threadgroups; threadgroups are spread over a process-wide
 * pool of worker threads (one per core, created on first use and reused), and the
 * threads of one threadgroup run as fibers on one worker (see fiber.h).  Kernel code
 * talks to the executor through the sw_rt_* functions of sw_abi.h.
 *
 * Errors never take the process down: a fault in kernel code (sw_rt_fault, a bad
 * memory access, a division trap, a stack overflow), a divergent barrier or a check
 * failure abandons the dispatch and is reported in the result. */
#ifndef GDN_SW_EXEC_H
#define GDN_SW_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "core/finding.h"
#include "swmetal/sw_abi.h"
#include "swmetal/swmetal.h"

struct sw_guarded;

#define SW_MAX_THREADS_PER_GROUP 1024
#define SW_TG_MEM_LIMIT 32768
#define SW_DIAG_KEEP 16          /* diagnostics kept per dispatch; the rest are only counted */

/* One [[buffer(n)]] binding. */
typedef struct sw_exec_binding {
    void *ptr;                   /* what the kernel receives: contents + offset (NULL = unbound) */
    const uint8_t *data;         /* the buffer's first byte (contents) */
    size_t length;               /* the buffer's length in bytes */
    const uint8_t *map_lo;       /* the buffer's whole mapping, guard pages included, for */
    const uint8_t *map_hi;       /* attributing a fault address (NULL when not guarded) */
    int is_bytes;                /* 1 = setBytes data rather than a buffer */
    struct sw_guarded *mem;      /* the buffer's memory, where full checks keep its shadow between
                                    dispatches; NULL = a shadow per dispatch */
} sw_exec_binding;

typedef struct sw_dispatch {
    const char *kernel;          /* name used in every message */
    sw_entry_fn entry;
    sw_range_fn range;           /* the same kernel's loop over a threadgroup's threads, or NULL
                                    (used for sync-free, uninstrumented, in-order threadgroups) */
    const sw_lanes_info *lanes;  /* the same kernel with a simdgroup's lanes as 32-wide data, or
                                    NULL (used for uninstrumented, in-order threadgroups) */
    int instrumented;            /* entry is the full-check (-fsanitize=thread hooked) variant */
    int numerics;                /* entry is the numerics variant (numerics.c, ir_numerics.c) */
    int sync_free;               /* the kernel and all it can call use no barrier and no simd or
                                    quad function (msl_sync.c): its threads may run as a plain
                                    loop instead of fibers */
    int atomic_free;             /* its library uses no atomics: nothing to put in threadgroup
                                    order (atomics.c) */
    uint32_t groups[3];          /* threadgroups per grid */
    uint32_t tg_size[3];         /* threads per threadgroup */
    uint32_t grid_threads[3];    /* dispatchThreads: threads per grid (edge groups are cut);
                                    all zero for dispatchThreadgroups */
    sw_exec_binding buf[SW_MAX_BUFFERS];
    size_t tg_len[SW_MAX_TG_PARAMS]; /* setThreadgroupMemoryLength:atIndex: (0 = not set) */
    swmtl_schedule schedule;     /* the device's, when the command buffer ran */
    double timeout_s;            /* the watchdog: stop the dispatch after this long (0 = never) */
    swmtl_counts *counts;        /* --counters: the session this dispatch counts into, or NULL; entry
                                    is then the counting variant (count.h), whose table this is */
    const struct sw_cnt_table *count_table;
    uint32_t max_threads;        /* the pipeline's maxTotalThreadsPerThreadgroup (0: the device's
                                    SW_MAX_THREADS_PER_GROUP) */
} sw_dispatch;

typedef struct sw_dispatch_result {
    int failed;                  /* 1 = the dispatch faulted or a check reported something */
    char *error;                 /* malloc'd: the fault, or a summary of the findings */
    char *diags[SW_DIAG_KEEP];   /* malloc'd: one line per finding (the first SW_DIAG_KEEP) */
    int ndiags;
    uint64_t total_diags;        /* occurrences of all findings, plus executor errors */
    dev_finding *findings;       /* malloc'd: every distinct finding, the fatal one first */
    int nfindings;
    double start_s, end_s;       /* monotonic clock, seconds */
} sw_dispatch_result;

/* Runs the dispatch to completion (or abandonment) and fills *res (always; free it
 * with sw_dispatch_result_free).  Returns 0 on success, -1 when res->failed. */
int sw_exec_dispatch(const sw_dispatch *d, sw_dispatch_result *res);
void sw_dispatch_result_free(sw_dispatch_result *res);

/* Number of worker threads (parallel_threads()); starts the pool. */
int sw_exec_workers(void);
/* Dispatches that ran their simdgroups through the kernel's lanes entry (tests). */
uint64_t sw_exec_lanes_dispatches(void);

/* Monotonic clock in seconds (the GPUStartTime/GPUEndTime clock). */
double sw_exec_now(void);

#endif
