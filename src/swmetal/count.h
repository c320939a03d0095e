/* count.h — the software device's exact counters (--counters): what the counting
 * variant's IR pass (count_pass.c) puts into a kernel and what the executor's side
 * (count.c) does with it.  Not for the host: swmetal.h has the host's view
 * (swmtl_counts).
 *
 * The model, in one place (results/README.md documents it for users):
 *   - per basic block of the optimised IR, static numbers (flops by type, integer
 *     operations, instructions, barriers: SW_CNT_* columns) times how often each
 *     thread executed the block;
 *   - SIMT: a simdgroup executes a block as many times as its busiest lane did (the
 *     lanes that did not take it are masked off); its instructions count once a
 *     simdgroup execution (simd.instructions), its active lanes add up over the
 *     lanes (simd.active_lanes); flops and integer operations are those of the
 *     active lanes (what the lanes computed); barriers count once a simdgroup
 *     execution;
 *   - memory, per access of a thread: a load or store that lands in a bound buffer
 *     (setBytes data excluded: it travels with the command) is device memory,
 *     attributed to its [[buffer(n)]]; one in the threadgroup arena is threadgroup
 *     memory (a plain access of a declared threadgroup variable is known to be so
 *     where it stands: its bytes are its block's, SW_CNT_TG_*); anything else (the
 *     thread's stack, the runtime's tables) is not counted.  Distinct bytes are bitmaps over each buffer; lines are 128-byte
 *     lines from each buffer's first byte (Metal buffers are page aligned);
 *   - coalescing: the k-th execution of a static access site by each lane of a
 *     simdgroup is one simdgroup-wide access; its lines are the distinct lines the
 *     lanes touch, its fewest possible ceil(active lanes x width / 128).
 * Every count is a sum over threads or simdgroups of numbers that depend only on
 * what each thread executed, so it is the same for every schedule and worker count. */
#ifndef GDN_SW_COUNT_H
#define GDN_SW_COUNT_H

#include <stdint.h>

#include "swmetal/ir_pass.h"

/* The columns of a block's row in sw_cnt_blocks. */
enum {
    SW_CNT_FLOAT = 0, SW_CNT_HALF, SW_CNT_BFLOAT, /* flops of the lanes that execute it */
    SW_CNT_INT,                                   /* integer operations */
    SW_CNT_INSTS,                                 /* instructions */
    SW_CNT_BAR_TG, SW_CNT_BAR_SIMD,               /* barrier calls */
    SW_CNT_TG_LOAD, SW_CNT_TG_STORE,              /* bytes of its plain accesses of threadgroup variables */
    SW_CNT_COLS
};

/* Flops of one simdgroup 8x8x8 multiply-accumulate (a lane's share: / 32). */
#define SW_CNT_MMA_FLOPS 1024

/* A memory hook's word: site << SW_CNT_SITE_SHIFT | atomic kind << 2 | SW_CNT_LOAD/STORE bits. */
enum { SW_CNT_LOAD = 1, SW_CNT_STORE = 2 };
#define SW_CNT_SITE_SHIFT 6
enum {
    SW_CNT_AT_NONE = 0, SW_CNT_AT_LOAD, SW_CNT_AT_STORE, SW_CNT_AT_EXCHANGE, SW_CNT_AT_CMPXCHG, SW_CNT_AT_ADD,
    SW_CNT_AT_SUB, SW_CNT_AT_AND, SW_CNT_AT_OR, SW_CNT_AT_XOR, SW_CNT_AT_MIN, SW_CNT_AT_MAX, SW_CNT_AT_OTHER,
    SW_CNT_AT_KINDS
};

/* The pass (ir_pass.c's table). */
extern const sw_ir_pass sw_count_pass;

/* What a counting variant's library holds (dlsym'd when it is loaded). */
typedef struct sw_cnt_table {
    const uint64_t *blocks;      /* [nblocks][SW_CNT_COLS] */
    uint32_t nblocks, nsites;
} sw_cnt_table;

/* One device access in a thread's log, in program order (count.c reduces the lanes'
 * logs at the end of a threadgroup).  The kernel's inline code (count_pass.c) appends
 * raw ones while the log has room: buf SW_CNT_RAW, off the address, k not set; the
 * runtime (an atomic, a full log) appends them attributed. */
typedef struct sw_cnt_access {
    uint32_t site, k;            /* the access site; its execution by this thread (the reduction's) */
    uint16_t buf;                /* the job's buffer, or SW_CNT_RAW */
    uint16_t rw;                 /* SW_CNT_LOAD | SW_CNT_STORE */
    uint32_t size;               /* bytes */
    uint64_t off;                /* from the buffer's first byte; the address while raw */
} sw_cnt_access;
#define SW_CNT_RAW 0xffff

typedef struct sw_cnt_log {
    sw_cnt_access *a;
    uint32_t n, cap;
} sw_cnt_log;

/* What a counting function's inline code reads and writes: the worker's, which
 * sw_rt_cnt_slot returns once a call of the function (count_pass.c emits these
 * fields' offsets; every field is 8 bytes). */
typedef struct sw_cnt_ctx {
    uint32_t *row;               /* the running thread's row: count_pass.c's block counts */
    uint64_t arena;              /* the threadgroup arena's first byte (SW_TG_MEM_LIMIT of them) */
    /* Where the dispatch's buffers are: granule g = (address - base) >> shift is bit g
     * of granules (ngranules of them) when a buffer has bytes in it.  An access in
     * such a granule calls sw_rt_cnt_mem; any other is the thread's own or the
     * runtime's memory (the heap between the buffers' mappings holds the kernel's
     * arguments: a hull of the buffers sent chunk_o's billion reads of them there). */
    uint64_t base, ngranules, shift;
    const uint8_t *granules;
    uint64_t tg_load, tg_store;  /* threadgroup bytes loaded and stored by plain accesses */
    sw_cnt_log *log;             /* the running thread's access log (an empty one, never
                                  * appended to inline, when no thread's is current) */
} sw_cnt_ctx;

/* The hooks the pass calls (exported by the executable, as sw_rt_* are). */
void *sw_rt_cnt_slot(void *fallback);
void sw_rt_cnt_mem(void *p, int32_t size, int32_t word);
void sw_rt_cnt_range(void *p, int64_t size, int32_t word);


#endif
