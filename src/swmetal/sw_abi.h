/* sw_abi.h — the contract between compiled MSL kernels and the software device.
 *
 * The front end (msl_front.c) turns a .metal source into C++ that includes the
 * prelude (prelude/metal_stdlib.h) and exports, per kernel, a C entry point plus a
 * binding table.  The executor (exec.c) calls the entry once per GPU thread, each on
 * its own fiber.  Everything the kernel needs from the executor (ids, threadgroup
 * arena, barriers, simd-group exchange) goes through the sw_rt_* functions below,
 * which the gdnbench binary exports (-rdynamic) and the kernel .so imports at
 * dlopen time.  This header is C and C++ (the prelude includes it).
 *
 * Bump SW_ABI_VERSION on any change: it is part of the compile-cache key. */
#ifndef GDN_SW_ABI_H
#define GDN_SW_ABI_H

#include <stddef.h>
#include <stdint.h>

#define SW_ABI_VERSION 13
#define SW_MAX_BUFFERS 31
#define SW_MAX_TG_PARAMS 31
#define SW_SIMD_WIDTH 32
#define SW_SIMD_SLOT_BYTES 64   /* per lane exchange slot (enough for a double4 or 16 floats) */
#define SW_SIMD_BANK_SLOTS (SW_SIMD_WIDTH + 2) /* a bank: the lanes' slots, then the memo */
#define SW_MMA_LOG_BYTES (256 * 1024) /* per simdgroup: the deferred simdgroup-matrix products (pages touched as used) */
#define SW_MMA_LOG_HEADER (4 * SW_SIMD_WIDTH) /* its first bytes, zeroed when a threadgroup starts */

#ifdef __cplusplus
extern "C" {
#endif

/* Ids of one GPU thread, filled by the executor before the fiber starts. */
typedef struct sw_ids {
    uint32_t thread_position_in_grid[3];
    uint32_t thread_position_in_threadgroup[3];
    uint32_t threadgroup_position_in_grid[3];
    uint32_t threads_per_threadgroup[3];
    uint32_t threadgroups_per_grid[3];
    uint32_t threads_per_grid[3];
    uint32_t thread_index_in_threadgroup;
    uint32_t simdgroup_index_in_threadgroup;
    uint32_t thread_index_in_simdgroup;
    uint32_t simdgroups_per_threadgroup;
    uint32_t threads_per_simdgroup;      /* 32 */
} sw_ids;

/* What a kernel entry receives (one per thread; pointers shared within a dispatch or
 * a threadgroup). */
typedef struct sw_thread_args {
    void *const *buffers;    /* [SW_MAX_BUFFERS]: contents + offset of [[buffer(n)]] (setBytes data too) */
    void *const *tg_params;  /* [SW_MAX_TG_PARAMS]: this threadgroup's [[threadgroup(n)]] regions */
    const sw_ids *ids;
} sw_thread_args;

typedef void (*sw_entry_fn)(const sw_thread_args *args);
/* Threads 0..n-1 of one threadgroup in order, the kernel called directly from the
 * loop (inlined where the compiler likes): for kernels that never synchronise,
 * run without checks that need a hook per access.  Before each thread it stores
 * that thread's fields of *ids (positions from base[], the threadgroup's first
 * thread_position_in_grid; indices); args->ids must point to the same struct. */
typedef void (*sw_range_fn)(const sw_thread_args *args, sw_ids *ids, const uint32_t base[3], uint32_t n);

/* One simdgroup of a threadgroup, its lanes run together as 32-wide data (the
 * lanes variant: lanes.c, prelude/sw_lanes.h).  args->ids holds the
 * threadgroup's uniform ids (threads_per_threadgroup = this group's actual size);
 * base[] is the group's first thread_position_in_grid; lanes 0..n-1 of simdgroup
 * sg take part.  Exported by a lanes library as sw_lanes_kernels[] (terminated by
 * a zeroed entry). */
typedef void (*sw_lanes_fn)(const sw_thread_args *args, const uint32_t base[3], uint32_t sg, uint32_t n);
typedef struct sw_lanes_info {
    const char *name;        /* host name */
    sw_lanes_fn fn;
    int barriers;            /* the library has threadgroup barriers: each simdgroup runs on a
                              * fiber of its own, and a barrier switches between them */
} sw_lanes_info;

/* How one kernel parameter is bound. */
typedef enum sw_bind_kind {
    SW_BIND_BUFFER = 1,        /* [[buffer(n)]] */
    SW_BIND_THREADGROUP = 2,   /* [[threadgroup(n)]] */
    SW_BIND_ATTR = 3           /* an id attribute; index = sw_attr */
} sw_bind_kind;

typedef enum sw_attr {
    SW_ATTR_THREAD_POSITION_IN_GRID = 1,
    SW_ATTR_THREAD_POSITION_IN_THREADGROUP,
    SW_ATTR_THREADGROUP_POSITION_IN_GRID,
    SW_ATTR_THREADS_PER_THREADGROUP,
    SW_ATTR_THREADGROUPS_PER_GRID,
    SW_ATTR_THREADS_PER_GRID,
    SW_ATTR_THREAD_INDEX_IN_THREADGROUP,
    SW_ATTR_SIMDGROUP_INDEX_IN_THREADGROUP,
    SW_ATTR_THREAD_INDEX_IN_SIMDGROUP,
    SW_ATTR_SIMDGROUPS_PER_THREADGROUP,
    SW_ATTR_THREADS_PER_SIMDGROUP,
    SW_ATTR_THREAD_EXECUTION_WIDTH,
    SW_ATTR_THREAD_INDEX_IN_QUADGROUP,        /* lane % 4 */
    SW_ATTR_QUADGROUP_INDEX_IN_THREADGROUP,   /* thread index / 4 */
    SW_ATTR_QUADGROUPS_PER_THREADGROUP        /* threads per threadgroup / 4, rounded up */
} sw_attr;

/* A struct parameter's layout as the compiled kernel lays it out: offsetof and sizeof
 * taken by the compiler (the front end only names the members it read in the
 * source), data types as Metal's MTLDataType values (sw::mtl_data_type). */
struct sw_struct_layout;
typedef struct sw_struct_member {
    const char *name;
    size_t offset;
    unsigned data_type;      /* MTLDataType; 2 (array): element_type x array_length, stride apart */
    unsigned element_type;   /* arrays: the element's MTLDataType */
    size_t array_length, stride;
    /* A member of a struct type (data_type 1) or an array of them (element_type 1):
     * that struct's own table (offsets from its start), or NULL when the front end
     * did not follow its definition. */
    const struct sw_struct_layout *nested;
} sw_struct_member;

typedef struct sw_struct_layout {
    const char *name;
    size_t size;             /* sizeof */
    int nmembers;
    const sw_struct_member *members;
} sw_struct_layout;

typedef struct sw_binding {
    int kind;                /* sw_bind_kind */
    int index;               /* buffer/threadgroup index, or sw_attr */
    const char *param;       /* parameter name as written in the .metal source */
    int line;                /* .metal line of the parameter */
    const char *type;        /* the parameter's C++ type as the compiler prints it, after "[T = " (e.g.
                                "const __global float *]"; __global = device, __global_device = constant,
                                __local = threadgroup), or NULL */
    const sw_struct_layout *layout; /* a buffer of a struct type defined in the source, else NULL */
} sw_binding;

/* Exported by every compiled kernel library as `sw_kernels` (terminated by a
 * zeroed entry) and `sw_abi_version`. */
typedef struct sw_kernel_info {
    const char *name;        /* host name: the function name or [[host_name("...")]] */
    sw_entry_fn entry;
    int nbindings;
    const sw_binding *bindings;
    int line;                /* .metal line of the kernel's declaration */
    const void *fn;          /* the kernel function: the key of sw_tg_static_bytes */
    sw_range_fn range;       /* NULL when the library may synchronise (msl_sync.c) */
    unsigned max_threads;    /* [[max_total_threads_per_threadgroup(N)]]'s N, 0 = none given */
} sw_kernel_info;

/* Exported by every compiled kernel library: the bytes of threadgroup memory the
 * kernel `fn` declares in its body (its threadgroup variables, laid out as the
 * executor does), -1 when unknown. */
typedef long (*sw_tg_static_bytes_fn)(const void *fn);

/* ---- Runtime services the executor provides (called from kernel code) ---- */

/* Ids of the calling GPU thread. */
const sw_ids *sw_rt_ids(void);

/* Function-scope `threadgroup T x[...]`: returns this threadgroup's storage.  Every
 * thread of the group calls it in the same order and gets the same address (a per
 * thread bump offset past the [[threadgroup(n)]] regions).  Exceeding 32 KB in total
 * faults the dispatch with a message naming `var` and `line`. */
void *sw_rt_tg_alloc(size_t size, size_t align, const char *var, int line);
/* The same for a variable with an initializer: the first thread of the group to
 * reach the declaration copies `init` (size bytes) into the storage, so the
 * variable starts with that value once per threadgroup. */
void *sw_rt_tg_alloc_init(size_t size, size_t align, const char *var, int line, const void *init);

/* A [[threadgroup(n)]] argument in the counting variant: p itself, through a call
 * the count pass knows (count_pass.c), so that the kernel's accesses through it are
 * known to be threadgroup memory where they stand. */
void *sw_rt_tg_arg(void *p);

/* threadgroup_barrier(): suspends until every live thread of the group arrives.
 * line is the .metal line (divergent-barrier diagnostics name it). */
void sw_rt_threadgroup_barrier(unsigned mem_flags, int line);

/* simdgroup_barrier() and the synchronisation under every simd_* function: suspends
 * until every live lane of the caller's simdgroup that takes part has arrived.
 * Returns the mask of lanes that arrived at this same sync (bit l = lane l). */
uint32_t sw_rt_simd_sync(int line);

/* Simd-group exchange, one sync per collective:
 *     memcpy(sw_rt_simd_slot_out(), &x, n);   -- this lane's value for its next sync
 *     mask = sw_rt_simd_sync(line);
 *     slots = sw_rt_simd_slots();            -- read slot l (SW_SIMD_SLOT_BYTES each)
 *                                               of the lanes l in mask
 * The executor keeps two banks of slots per simdgroup and publishes the bank written
 * before a sync at its resolution, so the next collective's writes go to the other
 * bank and never meet a lane still reading this one.  The slots returned stay valid
 * until the caller's next simd sync.
 *
 * After the SW_SIMD_WIDTH lane slots a bank holds a memo (2 slots): a pointer-sized
 * tag at its start, which the executor sets to 0 when it publishes the bank, and a
 * value in the second slot.  A collective whose result is the same for every lane (a
 * reduction) lets the first lane to read compute it and store it with a tag naming
 * the operation; the other lanes of that sync find the tag and copy the value. */
void *sw_rt_simd_slot_out(void);
void *sw_rt_simd_slots(void);

/* The whole exchange in one call (what the prelude uses): copies `size` bytes
 * (<= SW_SIMD_SLOT_BYTES) from `value` into the caller's outgoing slot, syncs at
 * `line`, stores the sync's mask in *mask and the caller's lane in *lane, and
 * returns the published slots. */
const void *sw_rt_simd_exchange(const void *value, size_t size, int line, uint32_t *mask, uint32_t *lane);

/* The calling lane's simdgroup's block of SW_MMA_LOG_BYTES for deferred
 * simdgroup-matrix products (layout and protocol: prelude/sw_sync.h); stores the
 * caller's lane (thread_index_in_simdgroup) in *lane.  The executor
 * zeroes its first SW_MMA_LOG_HEADER bytes when a threadgroup starts and nothing
 * else; the prelude's code in the lanes does the rest, synchronising through
 * sw_rt_simd_sync. */
void *sw_rt_mma_log(uint32_t *lane);
/* The counting variant (count.h, built with SW_COUNT): the calling lane's share of a
 * simdgroup 8x8x8 multiply-accumulate, 1024 flops / 32 lanes, of element type 0
 * float, 1 half, 2 bfloat (the product itself runs once for the simdgroup, in float,
 * and is not counted). */
void sw_rt_cnt_mma(int type);
/* The counting variant: +1 entering, -1 leaving code one lane runs for its whole
 * simdgroup (a simd function's shared result, a matrix product's evaluation), which
 * counts nothing. */
void sw_rt_cnt_pause(int delta);

/* The running GPU thread as kernel code can read it without a call.  Per lane, the
 * deferred simdgroup-matrix products ask for their log and lane at every product and
 * every simdgroup_load: a call into the executor each time was ~10% of an MMA-bound
 * kernel.  On ELF platforms a kernel library reaches the executable's thread-local
 * storage with an initial-exec reference (the executable's TLS block is static, so
 * dlopen accepts it): the executor copies the running thread's view into sw_rt_current
 * whenever it changes threads (fibers of one worker never leave its OS thread).  A
 * copy, not a pointer: a read is then one load from the thread pointer, which the
 * compiler need not repeat after every pointer store of the kernel.
 * Elsewhere (Mach-O) kernels call sw_rt_ids() and sw_rt_mma_log(), and so does the
 * counting variant everywhere (SW_COUNT): its IR must be the same on every host —
 * but for what it does not count (the prelude's product log: SW_RT_CURRENT_ELF). */
typedef struct sw_current {
    const sw_ids *ids;       /* the thread's ids (a range loop rewrites them in place) */
    void *mma_log;           /* its simdgroup's product log, NULL until sw_rt_mma_log made one */
    uint32_t lane;           /* thread_index_in_simdgroup; not kept in a range loop (which
                                runs only kernels without simd functions): read ids there */
} sw_current;
#if defined(__ELF__)
extern __thread sw_current sw_rt_current __attribute__((tls_model("initial-exec")));
#define SW_RT_CURRENT_ELF 1
#else
#define SW_RT_CURRENT_ELF 0
#endif
#if SW_RT_CURRENT_ELF && !(defined(SW_COUNT) && SW_COUNT)
#define SW_RT_CURRENT_TLS 1
#else
#define SW_RT_CURRENT_TLS 0
#endif

/* Device atomics in threadgroup order (executor: atomics.c).  Threadgroups run on
 * several workers; so that a dispatch gives the same bytes however they race, float
 * fetch-ops land in the schedule's group order, each group's in program order.
 * sw_rt_atomic_defer: a float fetch-op whose value the kernel discards; returns 1 when
 * recorded (applied when the group ends, in turn), 0 when the caller applies it now.
 * sw_rt_atomic_turn: called before an atomic whose value the kernel reads (always=1:
 * fetch-op used in an expression, exchange, compare-exchange; always=0: float load or
 * store): waits until every earlier group has ended and applies the group's recorded
 * ones; with always=0 returns at once when none are recorded (p NULL: a fence with
 * mem_device, before which the recorded ones must land).  Both return at once for
 * threadgroup memory. */
enum { SW_AOP_ADD, SW_AOP_SUB, SW_AOP_MIN, SW_AOP_MAX };
int sw_rt_atomic_defer(float *p, int op, float v);
void sw_rt_atomic_turn(const void *p, int always);

/* Reports an error detected by kernel-side code (prelude) and abandons the dispatch;
 * does not return. */
void sw_rt_fault(const char *msg, int line)
#ifdef __GNUC__
    __attribute__((noreturn))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
