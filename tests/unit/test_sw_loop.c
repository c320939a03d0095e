/* test_sw_loop.c — sync-free kernels run as plain loops over their threads (exec.c
 * run_group_loop) instead of fibers: the same ids, the schedule's orders, faults
 * that name the right thread, a pool that survives them; and the static test
 * (msl_sync.c) that decides which kernels qualify. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/exec.h"
#include "swmetal/msl_front.h"
#include "test.h"

/* The schedule dispatches made here run under (a device's swmtl_schedule; tests
 * change it between dispatches). */
static swmtl_schedule test_schedule = {.lanes = 1};

static sw_dispatch loop_dispatch(const char *name, sw_entry_fn entry, uint32_t groups, uint32_t tg, int sync_free) {
    sw_dispatch d;
    memset(&d, 0, sizeof d);
    d.kernel = name;
    d.entry = entry;
    d.sync_free = sync_free;
    d.groups[0] = groups;
    d.groups[1] = d.groups[2] = 1;
    d.tg_size[0] = tg;
    d.tg_size[1] = d.tg_size[2] = 1;
    d.schedule = test_schedule;
    return d;
}

static void bind(sw_dispatch *d, int index, void *ptr, size_t len) {
    d->buf[index].ptr = ptr;
    d->buf[index].data = ptr;
    d->buf[index].length = len;
}

static void k_ids(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    CHECK(id == sw_rt_ids());
    uint32_t w = id->threads_per_grid[0], h = id->threads_per_grid[1];
    uint32_t *o = (uint32_t *)a->buffers[0] +
                  16 * (id->thread_position_in_grid[0] + w * (id->thread_position_in_grid[1] + h * id->thread_position_in_grid[2]));
    o[0] += 1;
    for (int k = 0; k < 3; k++) {
        o[1 + k] = id->thread_position_in_threadgroup[k];
        o[4 + k] = id->threadgroup_position_in_grid[k];
        o[7 + k] = id->threads_per_threadgroup[k];
    }
    o[10] = id->thread_index_in_threadgroup;
    o[11] = id->simdgroup_index_in_threadgroup;
    o[12] = id->thread_index_in_simdgroup;
    o[13] = id->simdgroups_per_threadgroup;
    o[14] = id->threadgroups_per_grid[0] * 100 + id->threadgroups_per_grid[1] * 10 + id->threadgroups_per_grid[2];
    o[15] = id->threads_per_simdgroup;
}

/* Every id the same whether the threads run as fibers or as a loop, 3-D groups cut
 * at the grid's edges included. */
TEST(sw_loop_ids_match_fibers) {
    enum { W = 70, H = 5, D = 3, N = 16 * W * H * D };
    uint32_t *fib = calloc(N, sizeof *fib), *loop = calloc(N, sizeof *loop);
    for (int sf = 0; sf < 2; sf++) {
        sw_dispatch d = loop_dispatch("ids", k_ids, 0, 0, sf);
        d.tg_size[0] = 32, d.tg_size[1] = 2, d.tg_size[2] = 2;
        d.grid_threads[0] = W, d.grid_threads[1] = H, d.grid_threads[2] = D;
        d.groups[0] = 3, d.groups[1] = 3, d.groups[2] = 2;
        bind(&d, 0, sf ? loop : fib, N * sizeof *fib);
        sw_dispatch_result res;
        CHECK_MSG(sw_exec_dispatch(&d, &res) == 0, "%s", res.error ? res.error : "?");
        sw_dispatch_result_free(&res);
    }
    for (int i = 0; i < N; i += 16) CHECK_EQ_INT(loop[i], 1);
    CHECK(memcmp(fib, loop, N * sizeof *fib) == 0);
    free(fib);
    free(loop);
}

static void k_order(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    uint32_t *counter = a->buffers[0], *order = a->buffers[1];
    uint32_t n = id->threads_per_threadgroup[0], g = id->threadgroup_position_in_grid[0];
    order[g * n + counter[g]++] = id->thread_index_in_threadgroup;
}

static void run_order(const char *schedule, uint32_t *order, uint32_t groups, uint32_t n) {
    char err[200];
    CHECK_MSG(swmtl_parse_order(schedule, &test_schedule.fibers, "schedule", err, sizeof err) == 0, "%s", err);
    uint32_t *counter = calloc(groups, sizeof *counter);
    sw_dispatch d = loop_dispatch("order", k_order, groups, n, 1);
    bind(&d, 0, counter, groups * sizeof *counter);
    bind(&d, 1, order, groups * n * sizeof *order);
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) == 0);
    sw_dispatch_result_free(&res);
    free(counter);
}

/* The loop follows the schedule, so validate's schedule comparison still reorders
 * the threads of a sync-free kernel. */
TEST(sw_loop_follows_the_schedule) {
    enum { G = 3, N = 64 };
    static uint32_t inorder[G * N], reverse[G * N], rnd1[G * N], rnd1b[G * N], rnd2[G * N];
    run_order("inorder", inorder, G, N);
    run_order("reverse", reverse, G, N);
    run_order("random:1", rnd1, G, N);
    run_order("random:1", rnd1b, G, N);
    run_order("random:2", rnd2, G, N);
    swmtl_parse_order("inorder", &test_schedule.fibers, "schedule", NULL, 0);
    for (int i = 0; i < G * N; i++) {
        CHECK_EQ_INT(inorder[i], i % N);
        CHECK_EQ_INT(reverse[i], N - 1 - i % N);
    }
    CHECK(memcmp(rnd1, rnd1b, sizeof rnd1) == 0);
    CHECK(memcmp(rnd1, rnd2, sizeof rnd1) != 0);
    CHECK(memcmp(rnd1, inorder, sizeof rnd1) != 0);
    for (int g = 0; g < G; g++) {
        uint32_t seen[N] = {0};
        for (int i = 0; i < N; i++) seen[rnd1[g * N + i]]++;
        for (int i = 0; i < N; i++) CHECK_EQ_INT(seen[i], 1);
    }
}

static volatile uintptr_t bad_address = 16;
static volatile int zero_divisor = 0;

static void k_segv(const sw_thread_args *a) {
    if (a->ids->thread_position_in_grid[0] == 45) {
        volatile uint32_t *p = (uint32_t *)bad_address;
        *p = 1;
    }
}

__attribute__((no_sanitize("undefined"))) static void k_fpe(const sw_thread_args *a) {
    if (a->ids->thread_position_in_grid[0] == 3) {
        volatile int x = 10 / zero_divisor;
        (void)x;
    }
}

static void k_rt_fault(const sw_thread_args *a) {
    if (a->ids->thread_position_in_grid[0] == 77) sw_rt_fault("index out of range", 42);
}

/* The static test let a barrier through: a report, not a crash. */
static void k_barrier(const sw_thread_args *a) {
    (void)a;
    sw_rt_threadgroup_barrier(1, 12);
}

static void k_count(const sw_thread_args *a) { ((uint32_t *)a->buffers[0])[a->ids->thread_position_in_grid[0]] += 1; }

static void check_loop_fault(const char *name, sw_entry_fn fn, const char *want1, const char *want2) {
    sw_dispatch d = loop_dispatch(name, fn, 8, 32, 1);
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) != 0);
    CHECK_MSG(res.error && strstr(res.error, want1) && strstr(res.error, want2), "%s: error: %s", name,
              res.error ? res.error : "(none)");
    sw_dispatch_result_free(&res);
    /* the pool still runs loops and fibers */
    uint32_t hits[256] = {0};
    for (int sf = 0; sf < 2; sf++) {
        sw_dispatch ok = loop_dispatch("count", k_count, 4, 64, sf);
        bind(&ok, 0, hits, sizeof hits);
        CHECK(sw_exec_dispatch(&ok, &res) == 0);
        sw_dispatch_result_free(&res);
    }
    for (int i = 0; i < 256; i++) CHECK_EQ_INT(hits[i], 2);
}

TEST(sw_loop_faults_name_the_thread) {
    check_loop_fault("segv", k_segv, "invalid memory access at address 0x10", "thread_position_in_grid (45,0,0)");
    check_loop_fault("fpe", k_fpe, "integer division by zero", "thread_position_in_grid (3,0,0)");
    check_loop_fault("rt_fault", k_rt_fault, "index out of range at line 42", "thread_position_in_grid (77,0,0)");
    /* every thread reaches the barrier: which threadgroup's first thread is reported
     * depends on which worker gets there first, so only the thread's index is fixed */
    check_loop_fault("barrier", k_barrier, "judged free of synchronisation", "thread_index_in_threadgroup 0)");
    check_loop_fault("segv", k_segv, "invalid memory access", "(45,0,0)");
}

TEST(sw_loop_static_test_is_conservative) {
    CHECK(msl_text_sync_free("kernel void k(device float *a [[buffer(0)]], uint i [[thread_position_in_grid]]) "
                             "{ a[i] = a[i] * 2; }",
                             "t.metal") == 1);
    CHECK(msl_text_sync_free("kernel void k(device float *a [[buffer(0)]], uint l [[thread_index_in_simdgroup]], "
                             "uint s [[simdgroup_index_in_threadgroup]]) { a[l] = s; }",
                             "t.metal") == 1);
    const char *syncs[] = {
        "kernel void k(device float *a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = simd_sum(a[i]); }",
        "kernel void k(device float *a) { threadgroup_barrier(mem_flags::mem_threadgroup); }",
        "float h(float x) { return metal::simd_shuffle_xor(x, 1); }\nkernel void k(device float *a) { a[0] = h(a[0]); }",
        "kernel void k(device float *a) { simdgroup_float8x8 m; simdgroup_load(m, a); }",
        "kernel void k(device float *a) { a[0] = quad_sum(a[0]); }",
        "kernel void k(device float *a) { simdgroup_barrier(mem_flags::mem_none); }",
        "kernel void k(device float *a) { a[0] = \"unterminated; }",
    };
    for (size_t i = 0; i < sizeof syncs / sizeof syncs[0]; i++)
        CHECK_MSG(msl_text_sync_free(syncs[i], "t.metal") == 0, "judged sync-free: %s", syncs[i]);
}

/* Libraries without atomics skip the threadgroup-order bookkeeping (atomics.c). */
TEST(sw_loop_atomic_free_test_is_conservative) {
    CHECK(msl_text_atomic_free("kernel void k(device float *a [[buffer(0)]], uint i [[thread_position_in_grid]]) "
                               "{ a[i] = simd_sum(a[i]); }",
                               "t.metal") == 1);
    const char *atomics[] = {
        "kernel void k(device atomic_float *a) { atomic_fetch_add_explicit(a, 1.0f, memory_order_relaxed); }",
        "kernel void k(device atomic_uint *a) { a[0] = 0; }",
        "template <class T> void f(device metal::atomic<T> *p);\nkernel void k(device float *a) {}",
        "#pragma atomic\nkernel void k(device float *a) {}",
    };
    for (size_t i = 0; i < sizeof atomics / sizeof atomics[0]; i++)
        CHECK_MSG(msl_text_atomic_free(atomics[i], "t.metal") == 0, "judged atomic-free: %s", atomics[i]);
}
