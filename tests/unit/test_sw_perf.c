/* test_sw_perf.c — speed of the software device's executor: fiber switch, barrier of
 * 256 threads, simd collectives, and a kkt-shaped dispatch (2048 threadgroups x 256
 * threads).
 *
 * The tests check that the work was done (switch counts, outputs, workers used); the
 * times are printed as information only, never asserted: a test suite runs on shared,
 * sanitised or busy machines, and timing is a benchmark's job.  scripts/bench/sw_perf.sh
 * runs these tests and holds the numbers against swmetal.md's targets. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/exec.h"
#include "swmetal/exec_internal.h"
#include "swmetal/fiber.h"
#include "test.h"

static sw_fiber main_fiber, ping_fiber;
static volatile long ping_count;

static void ping_entry(void *arg) {
    sw_fiber_entered(&ping_fiber, &main_fiber);
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++) {
        ping_count++;
        sw_fiber_switch(&ping_fiber, &main_fiber);
    }
    sw_fiber_switch_final(&ping_fiber, &main_fiber);
}

TEST(sw_perf_fiber_switch) {
    const long n = 2000000;
    sw_stack st;
    CHECK(sw_stack_alloc(&st, 64 * 1024) == 0);
    sw_fiber_init_native(&main_fiber);
    sw_fiber_prepare(&ping_fiber, &st, ping_entry, (void *)(intptr_t)n);
    double t0 = sw_exec_now();
    for (long i = 0; i <= n; i++) sw_fiber_switch(&main_fiber, &ping_fiber);
    double dt = sw_exec_now() - t0;
    CHECK_EQ_INT(ping_count, n);
    double ns = dt / (2.0 * (double)n) * 1e9;
    printf("  fiber switch: %.1f ns (information; swmetal.md target < 50 ns)\n", ns);
    sw_stack_free(&st);
}

static void k_barriers(const sw_thread_args *a) {
    uint32_t *loops = a->buffers[0];
    for (uint32_t i = 0; i < loops[0]; i++) sw_rt_threadgroup_barrier(1, 1);
}

TEST(sw_perf_barrier_256_threads) {
    uint32_t loops = 2000;
    sw_dispatch d;
    memset(&d, 0, sizeof d);
    d.kernel = "barriers";
    d.entry = k_barriers;
    d.groups[0] = d.groups[1] = d.groups[2] = 1;
    d.tg_size[0] = 256, d.tg_size[1] = d.tg_size[2] = 1;
    d.buf[0].ptr = &loops;
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) == 0);
    double us = (res.end_s - res.start_s) / loops * 1e6;
    printf("  barrier of 256 threads: %.2f us (information; swmetal.md target < 20 us)\n", us);
    sw_dispatch_result_free(&res);
}

/* kkt's shape of work: 256 threads stage a [64 x 64] tile into threadgroup memory,
 * barrier, each computes 16 dot products of length 64 from it, barrier, repeat twice
 * (K = 128 in two halves), then writes its outputs. */
static _Atomic uint64_t workers_seen;

static void k_kkt_shape(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    const float *k = a->buffers[0];
    float *A = a->buffers[1];
    uint32_t i = id->thread_index_in_threadgroup, g = id->threadgroup_position_in_grid[0];
    float *tile = sw_rt_tg_alloc(64 * 64 * sizeof(float), 16, "tile", 1);
    float acc[16] = {0};
    for (int half = 0; half < 2; half++) {
        for (uint32_t e = i; e < 64 * 64; e += 256) tile[e] = k[((size_t)g * 64 + e / 64) * 128 + half * 64 + e % 64];
        sw_rt_threadgroup_barrier(1, 2);
        uint32_t row = i / 4, col0 = (i % 4) * 16;
        for (int c = 0; c < 16; c++) {
            float s = 0;
            for (int x = 0; x < 64; x++) s += tile[row * 64 + x] * tile[(col0 + c) * 64 + x];
            acc[c] += s;
        }
        sw_rt_threadgroup_barrier(1, 3);
    }
    uint32_t row = i / 4, col0 = (i % 4) * 16;
    for (int c = 0; c < 16; c++) A[((size_t)g * 64 + row) * 64 + col0 + c] = acc[c];
    if (i == 0) atomic_fetch_or(&workers_seen, 1ull << (sw_exec_current_worker()->id % 64));
}

TEST(sw_perf_kkt_shape_uses_all_workers) {
#ifdef __SANITIZE_ADDRESS__
    const uint32_t groups = 256; /* keep `make check` quick; the shape per group is the same */
#else
    const uint32_t groups = 2048;
#endif
    float *k = malloc((size_t)groups * 64 * 128 * sizeof *k);
    float *A = malloc((size_t)groups * 64 * 64 * sizeof *A);
    for (size_t i = 0; i < (size_t)groups * 64 * 128; i++) k[i] = (float)((i * 7919) % 13) * 0.125f - 0.75f;
    sw_dispatch d;
    memset(&d, 0, sizeof d);
    d.kernel = "kkt_shape";
    d.entry = k_kkt_shape;
    d.groups[0] = groups, d.groups[1] = d.groups[2] = 1;
    d.tg_size[0] = 256, d.tg_size[1] = d.tg_size[2] = 1;
    d.buf[0].ptr = k;
    d.buf[1].ptr = A;
    int nw = sw_exec_workers();
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) == 0);
    double dt = res.end_s - res.start_s;
    /* Spot-check one output against a direct computation. */
    uint32_t g = groups / 2 + 7, r = 17, c = 40;
    double want = 0;
    for (int x = 0; x < 128; x++) want += (double)k[((size_t)g * 64 + r) * 128 + x] * k[((size_t)g * 64 + c) * 128 + x];
    CHECK_NEAR(A[((size_t)g * 64 + r) * 64 + c], want, 1e-3);
    int used = __builtin_popcountll(atomic_load(&workers_seen));
    printf("  kkt-shaped dispatch %u x 256: %.1f ms on %d workers (%d used), %.2f us per threadgroup-worker\n",
           groups, dt * 1e3, nw, used, dt * 1e6 * nw / groups);
    CHECK_EQ_INT(used, nw < 64 ? nw : 64);
    sw_dispatch_result_free(&res);
    free(k);
    free(A);
}

/* The same grid with almost no math: what the executor itself costs per
 * threadgroup (fiber start, 2 barriers, arena poison). */
static void k_kkt_overhead(const sw_thread_args *a) {
    const sw_ids *id = a->ids;
    uint32_t i = id->thread_index_in_threadgroup;
    float *tile = sw_rt_tg_alloc(64 * 64 * sizeof(float), 16, "tile", 1);
    tile[i] = (float)i;
    sw_rt_threadgroup_barrier(1, 2);
    float x = tile[255 - i];
    sw_rt_threadgroup_barrier(1, 3);
    ((float *)a->buffers[0])[id->thread_position_in_grid[0]] = x;
}

TEST(sw_perf_kkt_shape_executor_overhead) {
#ifdef __SANITIZE_ADDRESS__
    const uint32_t groups = 256;
#else
    const uint32_t groups = 2048;
#endif
    float *out = malloc((size_t)groups * 256 * sizeof *out);
    sw_dispatch d;
    memset(&d, 0, sizeof d);
    d.kernel = "kkt_overhead";
    d.entry = k_kkt_overhead;
    d.groups[0] = groups, d.groups[1] = d.groups[2] = 1;
    d.tg_size[0] = 256, d.tg_size[1] = d.tg_size[2] = 1;
    d.buf[0].ptr = out;
    int nw = sw_exec_workers();
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) == 0);
    double dt = res.end_s - res.start_s;
    CHECK_NEAR(out[256 * 100 + 5], 250.0f, 0);
    printf("  executor overhead, %u x 256 threads, 2 barriers: %.1f ms on %d workers, %.1f us per threadgroup\n",
           groups, dt * 1e3, nw, dt * 1e6 * nw / groups);
    sw_dispatch_result_free(&res);
    free(out);
}

/* Simd collectives, the recurrent kernel's pattern: 4 simdgroups each run a chain of
 * reductions (one exchange + sync per simd_sum).  Prints what one lane-exchange costs
 * (a simdgroup's simd_sum costs 32 of them). */
static void k_simd_sums(const sw_thread_args *a) {
    uint32_t loops = *(const uint32_t *)a->buffers[0];
    float x = (float)a->ids->thread_index_in_simdgroup, acc = 0;
    for (uint32_t i = 0; i < loops; i++) {
        uint32_t mask, lane;
        const uint8_t *slots = sw_rt_simd_exchange(&x, sizeof x, 1, &mask, &lane);
        float s = 0;
        for (uint32_t l = 0; l < 32; l++)
            if (mask >> l & 1u) s += *(const float *)(slots + l * SW_SIMD_SLOT_BYTES);
        acc += s;
        x = s * 0.0f + (float)lane;
    }
    ((float *)a->buffers[1])[a->ids->thread_index_in_threadgroup] = acc;
}

TEST(sw_perf_simd_collective) {
    uint32_t loops = 4000;
    float out[128];
    sw_dispatch d;
    memset(&d, 0, sizeof d);
    d.kernel = "simd_sums";
    d.entry = k_simd_sums;
    d.groups[0] = d.groups[1] = d.groups[2] = 1;
    d.tg_size[0] = 128, d.tg_size[1] = d.tg_size[2] = 1;
    d.buf[0].ptr = &loops;
    d.buf[1].ptr = out;
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) == 0);
    CHECK_NEAR(out[77], 496.0 * loops, 0);
    double ns = (res.end_s - res.start_s) / ((double)loops * 128) * 1e9;
    printf("  simd collective: %.1f ns per lane (%.2f us per simd_sum of 32 lanes; information)\n", ns,
           ns * 32 / 1000);
    sw_dispatch_result_free(&res);
}
