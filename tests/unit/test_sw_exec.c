/* test_sw_exec.c — the software device's executor, driven by hand-written kernel
 * entries that call the sw_rt_* API exactly as compiled MSL kernels do. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/exec.h"
#include "test.h"

/* The schedule dispatches made here run under (a device's swmtl_schedule; tests
 * change it between dispatches). */
static swmtl_schedule test_schedule = {.lanes = 1};

static sw_dispatch make_dispatch(const char *name, sw_entry_fn entry, uint32_t groups, uint32_t tg) {
    sw_dispatch d;
    memset(&d, 0, sizeof d);
    d.kernel = name;
    d.entry = entry;
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

/* ---- barriers ---- */

/* Each thread writes its slot, then after a barrier sums every slot: all threads
 * must see all writes.  Uses both a function-scope array and a [[threadgroup(0)]]. */
static void k_barrier_sum(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    uint32_t n = id->threads_per_threadgroup[0], i = id->thread_index_in_threadgroup;
    uint32_t *local = sw_rt_tg_alloc(n * sizeof(uint32_t), 4, "local", 10);
    uint32_t *param = a->tg_params[0];
    local[i] = i + 1;
    param[i] = 2 * (i + 1);
    sw_rt_threadgroup_barrier(1, 14);
    uint64_t s = 0;
    for (uint32_t j = 0; j < n; j++) s += local[j] + param[j];
    sw_rt_threadgroup_barrier(1, 17);
    /* Rewrite after the second barrier and read again: a second round must also work. */
    local[(i + 1) % n] = 0;
    sw_rt_threadgroup_barrier(1, 20);
    for (uint32_t j = 0; j < n; j++) s += local[j];
    ((uint64_t *)a->buffers[0])[id->thread_position_in_grid[0]] = s;
}

TEST(sw_exec_barrier_every_thread_sees_every_write) {
    const uint32_t groups = 37, tg = 256;
    uint64_t *out = calloc(groups * tg, sizeof *out);
    sw_dispatch d = make_dispatch("barrier_sum", k_barrier_sum, groups, tg);
    bind(&d, 0, out, groups * tg * sizeof *out);
    d.tg_len[0] = tg * sizeof(uint32_t);
    sw_dispatch_result res;
    int rc = sw_exec_dispatch(&d, &res);
    CHECK_MSG(rc == 0, "dispatch failed: %s", res.error ? res.error : "?");
    uint64_t want = 3ull * tg * (tg + 1) / 2;
    int bad = 0;
    for (uint32_t i = 0; i < groups * tg; i++) bad += out[i] != want;
    CHECK_EQ_INT(bad, 0);
    CHECK(res.end_s >= res.start_s);
    sw_dispatch_result_free(&res);
    free(out);
}

/* Threads that returned are no longer waited for at later barriers. */
static void k_early_return(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    uint32_t i = id->thread_index_in_threadgroup;
    uint32_t *local = sw_rt_tg_alloc(64 * sizeof(uint32_t), 4, "local", 30);
    if (i >= 64) return;
    local[i] = i;
    sw_rt_threadgroup_barrier(1, 34);
    ((uint32_t *)a->buffers[0])[id->thread_position_in_grid[0]] = local[63 - i];
    sw_rt_threadgroup_barrier(1, 36);
}

TEST(sw_exec_returned_threads_are_not_waited_for) {
    uint32_t out[2 * 100];
    memset(out, 0xAB, sizeof out);
    sw_dispatch d = make_dispatch("early_return", k_early_return, 2, 100);
    bind(&d, 0, out, sizeof out);
    sw_dispatch_result res;
    int rc = sw_exec_dispatch(&d, &res);
    CHECK_MSG(rc == 0, "dispatch failed: %s", res.error ? res.error : "?");
    for (uint32_t g = 0; g < 2; g++)
        for (uint32_t i = 0; i < 64; i++) CHECK_EQ_INT(out[g * 100 + i], 63 - i);
    CHECK_EQ_INT(out[99], 0xABABABAB);
    sw_dispatch_result_free(&res);
}

/* ---- simd syncs ---- */

/* simd_sum in the prelude's pattern: write the outgoing slot, sync, read the lanes
 * in the mask from the published slots.  Odd and even lanes take different branches
 * (divergence). */
static void k_simd(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    uint32_t lane = id->thread_index_in_simdgroup;
    uint32_t *out = a->buffers[0];
    uint32_t gid = id->thread_position_in_grid[0];
    *(float *)sw_rt_simd_slot_out() = (float)(lane + 1);
    uint32_t mask = sw_rt_simd_sync(50);
    const float *slots = sw_rt_simd_slots();
    float sum = 0;
    for (uint32_t l = 0; l < 32; l++)
        if (mask & (1u << l)) sum += slots[l * (SW_SIMD_SLOT_BYTES / 4)];
    uint32_t mask2;
    if (lane & 1)
        mask2 = sw_rt_simd_sync(60);
    else
        mask2 = sw_rt_simd_sync(70);
    out[gid * 3 + 0] = mask;
    out[gid * 3 + 1] = (uint32_t)sum;
    out[gid * 3 + 2] = mask2;
}

TEST(sw_exec_simd_sync_masks_and_divergence) {
    const uint32_t tg = 72; /* 2 full simdgroups and one of 8 lanes */
    uint32_t out[72 * 3];
    sw_dispatch d = make_dispatch("simd", k_simd, 1, tg);
    bind(&d, 0, out, sizeof out);
    sw_dispatch_result res;
    int rc = sw_exec_dispatch(&d, &res);
    CHECK_MSG(rc == 0, "dispatch failed: %s", res.error ? res.error : "?");
    for (uint32_t i = 0; i < tg; i++) {
        uint32_t sg = i / 32, lanes = sg < 2 ? 32 : 8;
        uint32_t full = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
        CHECK_EQ_INT(out[i * 3 + 0], full);
        CHECK_EQ_INT(out[i * 3 + 1], lanes * (lanes + 1) / 2);
        CHECK_EQ_INT(out[i * 3 + 2], (i & 1) ? (full & 0xaaaaaaaau) : (full & 0x55555555u));
    }
    sw_dispatch_result_free(&res);
}

/* Lanes that returned are not part of later masks. */
static void k_simd_after_return(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    uint32_t lane = id->thread_index_in_simdgroup;
    if (lane >= 20) return;
    ((uint32_t *)a->buffers[0])[lane] = sw_rt_simd_sync(80);
}

TEST(sw_exec_simd_mask_excludes_returned_lanes) {
    uint32_t out[32] = {0};
    sw_dispatch d = make_dispatch("simd_after_return", k_simd_after_return, 1, 32);
    bind(&d, 0, out, sizeof out);
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) == 0);
    for (int i = 0; i < 20; i++) CHECK_EQ_INT(out[i], 0xfffff);
    sw_dispatch_result_free(&res);
}

/* One sync per collective with divergent lanes: lanes 0-15 run `extra` exchanges
 * at one site while lanes 16-31 wait at another, so when the upper half's sync
 * resolves, the bank it wrote may no longer be the one published (the executor
 * must copy their slots over).  Every exchange sums (lane + 1 + 100 * round) over
 * the lanes in the mask. */
static uint32_t exchange_sum(uint32_t lane, uint32_t round, int line, uint32_t *mask_out) {
    *(uint32_t *)sw_rt_simd_slot_out() = lane + 1 + 100 * round;
    uint32_t mask = sw_rt_simd_sync(line);
    const uint8_t *slots = sw_rt_simd_slots();
    uint32_t sum = 0;
    for (uint32_t l = 0; l < 32; l++)
        if (mask & (1u << l)) sum += *(const uint32_t *)(slots + l * SW_SIMD_SLOT_BYTES);
    *mask_out = mask;
    return sum;
}

static void k_simd_banks(const sw_thread_args *a) {
    uint32_t lane = a->ids->thread_index_in_simdgroup;
    uint32_t extra = *(const uint32_t *)a->buffers[1];
    uint32_t *out = (uint32_t *)a->buffers[0] + lane * 4;
    uint32_t mask;
    if (lane < 16) {
        for (uint32_t r = 0; r < extra; r++) out[0] += exchange_sum(lane, r, 100, &mask);
    } else {
        out[0] = exchange_sum(lane, 7, 101, &mask);
    }
    out[1] = mask;
    out[2] = exchange_sum(lane, 9, 102, &mask);
    out[3] = mask;
}

TEST(sw_exec_simd_exchange_banks_survive_divergence) {
    for (uint32_t extra = 1; extra <= 4; extra++) {
        uint32_t out[32 * 4] = {0};
        sw_dispatch d = make_dispatch("simd_banks", k_simd_banks, 1, 32);
        bind(&d, 0, out, sizeof out);
        bind(&d, 1, &extra, sizeof extra);
        sw_dispatch_result res;
        CHECK(sw_exec_dispatch(&d, &res) == 0);
        uint32_t lo = 0, hi = 0, lo_sum = 0;
        for (uint32_t l = 0; l < 16; l++) lo += l + 1;
        for (uint32_t l = 16; l < 32; l++) hi += l + 1;
        for (uint32_t r = 0; r < extra; r++) lo_sum += lo + 16 * 100 * r;
        for (uint32_t l = 0; l < 32; l++) {
            /* The lower half runs ahead to the last exchange without the upper half
             * (the lowest waiting lane's site resolves first). */
            uint32_t half = l < 16 ? 0x0000ffffu : 0xffff0000u;
            CHECK_EQ_INT(out[l * 4 + 0], l < 16 ? lo_sum : hi + 16 * 700);
            CHECK_EQ_INT(out[l * 4 + 1], half);
            CHECK_EQ_INT(out[l * 4 + 2], (l < 16 ? lo : hi) + 16 * 900);
            CHECK_EQ_INT(out[l * 4 + 3], half);
        }
        sw_dispatch_result_free(&res);
    }
}

/* ---- schedules ---- */

/* Records the order threads first run in and the order they pass a barrier. */
static void k_order(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    uint32_t *counter = a->buffers[0], *order = a->buffers[1];
    uint32_t n = id->threads_per_threadgroup[0], g = id->threadgroup_position_in_grid[0];
    order[g * 2 * n + counter[g]++] = id->thread_index_in_threadgroup;
    sw_rt_threadgroup_barrier(1, 90);
    order[g * 2 * n + counter[g]++] = id->thread_index_in_threadgroup;
}

/* The same across a simd sync (which resolves without the scheduler). */
static void k_order_simd(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    uint32_t *counter = a->buffers[0], *order = a->buffers[1];
    uint32_t n = id->threads_per_threadgroup[0], g = id->threadgroup_position_in_grid[0];
    order[g * 2 * n + counter[g]++] = id->thread_index_in_threadgroup;
    sw_rt_simd_sync(91);
    order[g * 2 * n + counter[g]++] = id->thread_index_in_threadgroup;
}

static sw_entry_fn order_kernel = k_order;

static void run_order(const char *schedule, uint32_t *order, uint32_t groups, uint32_t n) {
    char err[200];
    CHECK_MSG(swmtl_parse_order(schedule, &test_schedule.fibers, "schedule", err, sizeof err) == 0, "%s", err);
    uint32_t *counter = calloc(groups, sizeof *counter);
    sw_dispatch d = make_dispatch("order", order_kernel, groups, n);
    bind(&d, 0, counter, groups * sizeof *counter);
    bind(&d, 1, order, groups * 2 * n * sizeof *order);
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) == 0);
    sw_dispatch_result_free(&res);
    free(counter);
}

TEST(sw_exec_schedules_change_fiber_order) {
    enum { G = 3, N = 64 };
    for (int simd = 0; simd < 2; simd++) {
        /* Barrier releases go through the scheduler, simd syncs past it. */
        order_kernel = simd ? k_order_simd : k_order;
        static uint32_t inorder[G * 2 * N], reverse[G * 2 * N], rnd1[G * 2 * N], rnd1b[G * 2 * N], rnd2[G * 2 * N];
        run_order("inorder", inorder, G, N);
        run_order("reverse", reverse, G, N);
        run_order("random:1", rnd1, G, N);
        run_order("random:1", rnd1b, G, N);
        run_order("random:2", rnd2, G, N);
        for (int i = 0; i < G * 2 * N; i++) {
            CHECK_EQ_INT(inorder[i], i % N);
            CHECK_EQ_INT(reverse[i], N - 1 - i % N);
        }
        CHECK(memcmp(rnd1, rnd1b, sizeof rnd1) == 0);
        CHECK(memcmp(rnd1, rnd2, sizeof rnd1) != 0);
        CHECK(memcmp(rnd1, inorder, sizeof rnd1) != 0);
        /* Each pass of a random schedule is still a permutation of the threads. */
        for (int p = 0; p < G * 2; p++) {
            uint32_t seen[N] = {0};
            for (int i = 0; i < N; i++) seen[rnd1[p * N + i]]++;
            for (int i = 0; i < N; i++) CHECK_EQ_INT(seen[i], 1);
        }
    }
    swmtl_parse_order("inorder", &test_schedule.fibers, "schedule", NULL, 0);
    char err[200];
    CHECK(swmtl_parse_order("sideways", &test_schedule.fibers, "schedule", err, sizeof err) != 0);
    CHECK(strstr(err, "inorder, reverse or random:SEED") != NULL);
    CHECK(swmtl_parse_order("random:", &test_schedule.fibers, "schedule", err, sizeof err) != 0);
}

/* Threadgroup order: every group runs exactly once whatever the order. */
static void k_group_ids(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    if (id->thread_index_in_threadgroup == 0) ((uint32_t *)a->buffers[0])[id->threadgroup_position_in_grid[0]] += 1;
}

TEST(sw_exec_threadgroup_orders_run_every_group_once) {
    const char *orders[] = {"inorder", "reverse", "random:42"};
    for (int o = 0; o < 3; o++) {
        char err[200];
        CHECK(swmtl_parse_order(orders[o], &test_schedule.groups, "threadgroup order", err, sizeof err) == 0);
        uint32_t hits[500] = {0};
        sw_dispatch d = make_dispatch("group_ids", k_group_ids, 500, 8);
        bind(&d, 0, hits, sizeof hits);
        sw_dispatch_result res;
        CHECK(sw_exec_dispatch(&d, &res) == 0);
        for (int i = 0; i < 500; i++) CHECK_EQ_INT(hits[i], 1);
        sw_dispatch_result_free(&res);
    }
}

/* ---- ids ---- */

static void k_ids(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    CHECK(id == sw_rt_ids());
    uint32_t *out = a->buffers[0];
    uint32_t gx = id->thread_position_in_grid[0], gy = id->thread_position_in_grid[1],
             gz = id->thread_position_in_grid[2];
    uint32_t w = id->threads_per_grid[0], h = id->threads_per_grid[1];
    uint32_t *o = out + 8 * (gx + w * (gy + h * gz));
    o[0] = 1;
    o[1] = id->threads_per_threadgroup[0];
    o[2] = id->thread_index_in_threadgroup;
    o[3] = id->threadgroup_position_in_grid[0] * 100 + id->threadgroup_position_in_grid[1] * 10 +
           id->threadgroup_position_in_grid[2];
    o[4] = id->simdgroup_index_in_threadgroup;
    o[5] = id->thread_index_in_simdgroup;
    o[6] = id->simdgroups_per_threadgroup;
    o[7] = id->threadgroups_per_grid[0];
}

TEST(sw_exec_ids_3d_and_nonuniform_edges) {
    /* dispatchThreads-style: 10 x 3 x 2 threads in groups of 4 x 2 x 2 -> the edge
     * groups are cut to 2 x 1 x 2. */
    enum { W = 10, H = 3, D = 2 };
    uint32_t *out = calloc(8 * W * H * D, sizeof *out);
    sw_dispatch d;
    memset(&d, 0, sizeof d);
    d.kernel = "ids";
    d.entry = k_ids;
    d.tg_size[0] = 4, d.tg_size[1] = 2, d.tg_size[2] = 2;
    d.grid_threads[0] = W, d.grid_threads[1] = H, d.grid_threads[2] = D;
    d.groups[0] = 3, d.groups[1] = 2, d.groups[2] = 1;
    bind(&d, 0, out, 8 * W * H * D * sizeof *out);
    sw_dispatch_result res;
    CHECK_MSG(sw_exec_dispatch(&d, &res) == 0, "%s", res.error ? res.error : "?");
    for (uint32_t z = 0; z < D; z++)
        for (uint32_t y = 0; y < H; y++)
            for (uint32_t x = 0; x < W; x++) {
                uint32_t *o = out + 8 * (x + W * (y + H * z));
                uint32_t ax = x >= 8 ? 2 : 4, ay = y >= 2 ? 1 : 2;
                uint32_t lx = x % 4, ly = y % 2, lz = z;
                uint32_t idx = lx + ax * (ly + ay * lz);
                CHECK_EQ_INT(o[0], 1);
                CHECK_EQ_INT(o[1], ax);
                CHECK_EQ_INT(o[2], idx);
                CHECK_EQ_INT(o[3], (x / 4) * 100 + (y / 2) * 10);
                CHECK_EQ_INT(o[4], idx / 32);
                CHECK_EQ_INT(o[5], idx % 32);
                CHECK_EQ_INT(o[6], 1);
                CHECK_EQ_INT(o[7], 3);
            }
    sw_dispatch_result_free(&res);
    free(out);
}

/* ---- limits and errors ---- */

static void k_nothing(const sw_thread_args *a) { (void)a; }

TEST(sw_exec_refuses_more_than_1024_threads) {
    sw_dispatch d = make_dispatch("too_many", k_nothing, 1, 64);
    d.tg_size[1] = 32;
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) != 0);
    CHECK(res.failed);
    CHECK_MSG(res.error && strstr(res.error, "2048 threads per threadgroup (64x32x1) exceeds the limit of 1024"),
              "error: %s", res.error ? res.error : "(none)");
    sw_dispatch_result_free(&res);
}

TEST(sw_exec_refuses_more_than_32k_threadgroup_memory) {
    sw_dispatch d = make_dispatch("too_much_tg", k_nothing, 1, 32);
    d.tg_len[0] = 20000;
    d.tg_len[2] = 16384;
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) != 0);
    CHECK_MSG(res.error && strstr(res.error, "exceeds the 32768-byte limit") &&
                  strstr(res.error, "[[threadgroup(2)]] 16384"),
              "error: %s", res.error ? res.error : "(none)");
    sw_dispatch_result_free(&res);
}

static void k_big_alloc(const sw_thread_args *a) {
    float *x = sw_rt_tg_alloc(16384 * sizeof(float), 16, "scratch", 123);
    x[0] = 1;
    (void)a;
}

TEST(sw_exec_function_scope_threadgroup_overflow_names_variable) {
    sw_dispatch d = make_dispatch("big_alloc", k_big_alloc, 4, 32);
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) != 0);
    CHECK_MSG(res.error && strstr(res.error, "'scratch' (line 123) needs 65536 bytes"), "error: %s",
              res.error ? res.error : "(none)");
    sw_dispatch_result_free(&res);
}

static void k_divergent(const sw_thread_args *a) {
    uint32_t i = a->ids->thread_index_in_threadgroup;
    if (i < 16)
        sw_rt_threadgroup_barrier(1, 100);
    else
        sw_rt_threadgroup_barrier(1, 200);
}

TEST(sw_exec_divergent_barrier_names_both_lines) {
    sw_dispatch d = make_dispatch("divergent", k_divergent, 2, 64);
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) != 0);
    CHECK_MSG(res.error && strstr(res.error, "divergent threadgroup barrier") && strstr(res.error, "line 100") &&
                  strstr(res.error, "line 200") && strstr(res.error, "kernel 'divergent'") &&
                  strstr(res.error, "16 threads wait at line 100") && strstr(res.error, "48 at line 200"),
              "error: %s", res.error ? res.error : "(none)");
    CHECK(res.nfindings == 1 && res.findings[0].kind == DEV_FIND_DIVERGENT_BARRIER &&
          res.findings[0].site[0].nthreads == 16 && res.findings[0].site[1].index == 16);
    sw_dispatch_result_free(&res);
}

/* ---- faults abandon the dispatch, the process keeps going ---- */

static void k_rt_fault(const sw_thread_args *a) {
    if (a->ids->thread_position_in_grid[0] == 77) sw_rt_fault("index out of range in simdgroup_load", 42);
    sw_rt_threadgroup_barrier(1, 7);
}

static volatile int zero_divisor = 0;

static volatile uintptr_t bad_address = 16;

static void k_segv(const sw_thread_args *a) {
    if (a->ids->thread_position_in_grid[0] == 5) {
        volatile uint32_t *p = (uint32_t *)bad_address;
        *p = 1;
    }
}

/* Real kernels are not built with UBSan; this one must really trap under `make check` too. */
__attribute__((no_sanitize("undefined"))) static void k_fpe(const sw_thread_args *a) {
    if (a->ids->thread_position_in_grid[0] == 3) {
        volatile int x = 10 / zero_divisor;
        (void)x;
    }
}

/* arm64 has no trap for integer division: SDIV/UDIV by zero give 0 (Arm ARM, "Divide
 * by zero"), so there a kernel's division by zero cannot fault; this kernel shows
 * what it does instead.  Thread 3 divides by zero, the others by one. */
__attribute__((no_sanitize("undefined"))) static void k_div_zero_store(const sw_thread_args *a) {
    uint32_t gid = a->ids->thread_position_in_grid[0];
    int *out = a->buffers[0];
    volatile int divisor = gid == 3 ? zero_divisor : 1;
    out[gid] = 10 / divisor;
}

static volatile int recursion_limit = 1 << 30;

static int recurse(volatile char *prev, int depth) {
    volatile char buf[4096];
    buf[0] = (char)depth;
    buf[4095] = prev ? prev[0] : 0;
    if (depth > recursion_limit) return 0;
    return recurse(buf, depth + 1) + buf[4095];
}

static void k_overflow(const sw_thread_args *a) {
    if (a->ids->thread_position_in_grid[0] == 9) recurse(NULL, 0);
}

static void check_fault(const char *name, sw_entry_fn fn, const char *want1, const char *want2) {
    sw_dispatch d = make_dispatch(name, fn, 8, 32);
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) != 0);
    CHECK_MSG(res.error && strstr(res.error, want1) && strstr(res.error, want2), "%s: error: %s", name,
              res.error ? res.error : "(none)");
    sw_dispatch_result_free(&res);
    /* The pool is still healthy. */
    uint32_t out[8 * 32 * 3];
    uint64_t sums[256];
    sw_dispatch ok = make_dispatch("barrier_sum", k_barrier_sum, 1, 256);
    bind(&ok, 0, sums, sizeof sums);
    ok.tg_len[0] = 1024;
    CHECK(sw_exec_dispatch(&ok, &res) == 0);
    CHECK_EQ_INT(sums[255], 3ull * 256 * 257 / 2);
    sw_dispatch_result_free(&res);
    (void)out;
}

TEST(sw_exec_faults_abandon_dispatch_and_process_continues) {
    check_fault("rt_fault", k_rt_fault, "fault: index out of range in simdgroup_load at line 42",
                "thread_position_in_grid (77,0,0)");
    check_fault("segv", k_segv, "invalid memory access at address 0x10", "thread_position_in_grid (5,0,0)");
#if defined(__aarch64__) || defined(__arm64__)
    {
        (void)k_fpe;
        int q[8 * 32];
        memset(q, 0x55, sizeof q);
        sw_dispatch d = make_dispatch("div_zero", k_div_zero_store, 8, 32);
        bind(&d, 0, q, sizeof q);
        sw_dispatch_result res;
        CHECK_MSG(sw_exec_dispatch(&d, &res) == 0, "division by zero on arm64: %s", res.error ? res.error : "");
        sw_dispatch_result_free(&res);
        CHECK_EQ_INT(q[3], 0);
        CHECK_EQ_INT(q[2], 10);
        CHECK_EQ_INT(q[8 * 32 - 1], 10);
    }
#else
    (void)k_div_zero_store;
    check_fault("fpe", k_fpe, "integer division by zero", "thread_position_in_grid (3,0,0)");
#endif
    check_fault("overflow", k_overflow, "stack overflow in a GPU thread", "thread_position_in_grid (9,0,0)");
    /* And again: faults are not a one-off. */
    check_fault("segv", k_segv, "invalid memory access", "(5,0,0)");
}

/* ---- device atomics in threadgroup order ---- */

/* A value with a wide exponent range, so that float sums depend on their order. */
static float spread_value(uint32_t g, uint32_t t) {
    int m = (int)((g * 7u + t * 13u) % 11u) - 5;
    return ldexpf((float)m + 0.375f, (int)((g * 3u + t) % 40u) - 20);
}

static void float_add(float *p, float v) {
    float old, next;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do next = old + v;
    while (!__atomic_compare_exchange(p, &old, &next, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}

/* Every thread adds into acc[t % 4], as a discarded atomic_fetch_add_explicit on a
 * float compiles: recorded, or applied at once when the executor says so. */
static void k_float_adds(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    uint32_t g = id->threadgroup_position_in_grid[0], t = id->thread_index_in_threadgroup;
    float *p = (float *)a->buffers[0] + t % 4;
    float v = spread_value(g, t);
    if (!sw_rt_atomic_defer(p, SW_AOP_ADD, v)) float_add(p, v);
}

/* Thread 0 of every group: a recorded add of 1 to x[0], then a load of it (which
 * takes the group's turn: its own add and every earlier group's are in), and a ticket
 * from a counter whose value is used. */
static void k_turns(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    uint32_t g = id->threadgroup_position_in_grid[0];
    float *x = a->buffers[0];
    uint32_t *counter = a->buffers[1], *out = a->buffers[2];
    float *seen = a->buffers[3];
    if (!sw_rt_atomic_defer(x, SW_AOP_ADD, 1.0f)) float_add(x, 1.0f);
    if (id->thread_index_in_threadgroup != 0) return;
    sw_rt_atomic_turn(x, 0);
    __atomic_load(x, &seen[g], __ATOMIC_SEQ_CST);
    sw_rt_atomic_turn(counter, 1);
    out[g] = __atomic_fetch_add(counter, 1u, __ATOMIC_SEQ_CST);
}

static int run_float_adds(uint32_t groups, uint32_t tg, int fibers, float acc[4]) {
    memset(acc, 0, 4 * sizeof *acc);
    sw_dispatch d = make_dispatch("float_adds", k_float_adds, groups, tg);
    d.sync_free = !fibers;
    bind(&d, 0, acc, 4 * sizeof *acc);
    sw_dispatch_result res;
    int rc = sw_exec_dispatch(&d, &res);
    CHECK_MSG(rc == 0, "dispatch failed: %s", res.error ? res.error : "?");
    sw_dispatch_result_free(&res);
    return rc;
}

TEST(sw_exec_float_atomics_land_in_threadgroup_order) {
    if (sw_exec_workers() < 2) {
        SKIP("one worker (GDNBENCH_THREADS=1 or one CPU): nothing races to order");
        return;
    }
    const uint32_t groups = 300, tg = 64;
    const char *orders[] = {"inorder", "reverse", "random:7"};
    for (int o = 0; o < 3; o++) {
        char err[200];
        CHECK(swmtl_parse_order(orders[o], &test_schedule.groups, "threadgroup order", err, sizeof err) == 0);
        /* what one worker gives: groups in the schedule's order, threads in order */
        uint32_t order[300];
        for (uint32_t i = 0; i < groups; i++) order[i] = i;
        if (o == 1)
            for (uint32_t i = 0; i < groups; i++) order[i] = groups - 1 - i;
        float want[4] = {0};
        int have_want = o < 2;
        if (have_want)
            for (uint32_t i = 0; i < groups; i++)
                for (uint32_t t = 0; t < tg; t++) want[t % 4] += spread_value(order[i], t);
        float first[4];
        for (int run = 0; run < 6; run++) {
            float acc[4];
            if (run_float_adds(groups, tg, run % 2, acc) != 0) break;
            if (run == 0) memcpy(first, acc, sizeof acc);
            CHECK_MSG(memcmp(acc, first, sizeof acc) == 0, "order %s run %d: %a %a %a %a, first run %a %a %a %a",
                      orders[o], run, acc[0], acc[1], acc[2], acc[3], first[0], first[1], first[2], first[3]);
            if (have_want)
                CHECK_MSG(memcmp(acc, want, sizeof acc) == 0, "order %s run %d: %a %a %a %a, in order %a %a %a %a",
                          orders[o], run, acc[0], acc[1], acc[2], acc[3], want[0], want[1], want[2], want[3]);
        }
    }
    char err[200];
    swmtl_parse_order("inorder", &test_schedule.groups, "threadgroup order", err, sizeof err);
}

TEST(sw_exec_atomic_turn_sees_own_and_earlier_groups) {
    const uint32_t groups = 200, tg = 32;
    float x = 0, *seen = calloc(groups, sizeof *seen);
    uint32_t counter = 0, *out = calloc(groups, sizeof *out);
    sw_dispatch d = make_dispatch("turns", k_turns, groups, tg);
    bind(&d, 0, &x, sizeof x);
    bind(&d, 1, &counter, sizeof counter);
    bind(&d, 2, out, groups * sizeof *out);
    bind(&d, 3, seen, groups * sizeof *seen);
    sw_dispatch_result res;
    int rc = sw_exec_dispatch(&d, &res);
    CHECK_MSG(rc == 0, "dispatch failed: %s", res.error ? res.error : "?");
    sw_dispatch_result_free(&res);
    CHECK(x == (float)(groups * tg));
    int bad = 0;
    for (uint32_t g = 0; g < groups && bad < 3; g++) {
        /* thread 0's load comes after its group's first add and every earlier group's adds */
        if (seen[g] != (float)(g * tg + 1) || out[g] != g) {
            CHECK_MSG(0, "group %u saw %g (want %u) and drew ticket %u", g, seen[g], g * tg + 1, out[g]);
            bad++;
        }
    }
    free(seen);
    free(out);
}

/* ---- the watchdog (timeout_s) ---- */

/* Thread 0 of each threadgroup spins until buffer 0's flag is set; with barriers, the
 * other threads wait for it at the second one. */
static void k_spin_until_flag(const sw_thread_args *a) {
    volatile uint32_t *flag = a->buffers[0];
    sw_rt_threadgroup_barrier(1, 40);
    if (a->ids->thread_index_in_threadgroup == 0)
        while (flag[0] == 0) {
        }
    sw_rt_threadgroup_barrier(1, 43);
}

static void k_spin_until_flag_no_sync(const sw_thread_args *a) {
    volatile uint32_t *flag = a->buffers[0];
    if (a->ids->thread_index_in_threadgroup == 0)
        while (flag[0] == 0) {
        }
}

static void check_watchdog(sw_entry_fn entry, int sync_free) {
    uint32_t flag = 0;
    sw_dispatch d = make_dispatch("spin", entry, 4, 64);
    d.sync_free = sync_free;
    d.timeout_s = 0.2;
    bind(&d, 0, &flag, sizeof flag);
    sw_dispatch_result res;
    int rc = sw_exec_dispatch(&d, &res);
    CHECK(rc != 0);
    CHECK_MSG(res.error && strstr(res.error, "watchdog") && strstr(res.error, "still running after 0.2 s"),
              "error: %s", res.error ? res.error : "(none)");
    CHECK(res.nfindings >= 1);
    if (res.nfindings >= 1) {
        CHECK_EQ_INT(res.findings[0].kind, DEV_FIND_TIMEOUT);
        /* where thread 0 spins, when a sample caught it in the kernel's code */
        if (res.findings[0].nsites == 1) {
            CHECK(res.findings[0].site[0].has_thread);
            CHECK_EQ_INT((int)res.findings[0].site[0].index, 0);
        }
    }
    sw_dispatch_result_free(&res);
    /* The control: the flag set, the same kernel ends under the same watchdog, on
     * workers the stop left in working order. */
    flag = 1;
    rc = sw_exec_dispatch(&d, &res);
    CHECK_MSG(rc == 0, "dispatch failed: %s", res.error ? res.error : "?");
    sw_dispatch_result_free(&res);
}

TEST(sw_exec_watchdog_stops_a_stuck_thread_among_fibers) { check_watchdog(k_spin_until_flag, 0); }

TEST(sw_exec_watchdog_stops_a_stuck_plain_loop) { check_watchdog(k_spin_until_flag_no_sync, 1); }
