/* counters.h — a run's exact counters (--counters) as the record keeps them: per
 * dispatch and for the whole op or kernel case, with buffers by name.  Filled from
 * the software device's counting session (counters.c); the report writes them as
 * the record's `counters` JSON object (results/README.md), the table prints them. */
#ifndef GDN_RUNNER_COUNTERS_H
#define GDN_RUNNER_COUNTERS_H

#include <stdint.h>

#define RC_MAX_BUFFERS 31
#define RC_ATOMIC_KINDS 13
#define RC_LINE_BYTES 128
#define REC_MAX_COUNTED_DISPATCHES 4096 /* dispatches named by stage (more are counted unnamed) */

typedef struct rc_mem {
    uint64_t load_bytes, store_bytes;                 /* requested */
    uint64_t load_distinct_bytes, store_distinct_bytes, distinct_bytes, distinct_lines;
    uint64_t accesses, lines, min_lines;              /* coalescing */
} rc_mem;

typedef struct rc_buffer {
    char name[48];               /* the op's buffer name, or "buffer(N)" */
    int index;                   /* [[buffer(index)]] (in the total: of its first dispatch) */
    int memory;                  /* the memory it is (a total has one entry per memory) */
    rc_mem m;
} rc_buffer;

typedef struct rc_dispatch {
    char stage[48];              /* "" for a one-stage op */
    char function[128];
    uint32_t grid[3], tg[3];     /* threads */
    rc_mem device;
    uint64_t tg_bytes, tg_load_bytes, tg_store_bytes;
    uint64_t flops_float, flops_half, flops_bfloat, int_ops;
    uint64_t simd_instructions, active_lanes;
    uint64_t barriers_threadgroup, barriers_simdgroup;
    uint64_t atomics_device, atomics_threadgroup, atomics_kind[RC_ATOMIC_KINDS];
    int nbuffers;
    rc_buffer buffers[RC_MAX_BUFFERS];
} rc_dispatch;

typedef struct rec_counters {
    int ndispatches;
    rc_dispatch *dispatches;
    /* sums over the dispatches, except distinct bytes and lines: the union per
     * memory over all dispatches; buffers one per memory */
    rc_dispatch total;
} rec_counters;

/* What the backend hands over: one name table per dispatch (a binding's index ->
 * the op's buffer name, NULL where unnamed) and its stage. */
typedef struct rc_names {
    const char *stage;
    const char *buffer[RC_MAX_BUFFERS];
} rc_names;

struct swmtl_counts;
/* The record's counters from a finished counting session; names[i] for dispatch i
 * (n of them; past n, no names).  NULL when out of memory. */
rec_counters *rec_counters_from_session(const struct swmtl_counts *s, const rc_names *names, int n);
void rec_counters_free(rec_counters *c);
/* "fetch_add", ... for atomics_kind[k]; NULL for 0 or past the last. */
const char *rec_counters_atomic_kind(int k);

#endif
