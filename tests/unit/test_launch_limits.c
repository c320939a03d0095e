/* test_launch_limits.c — the Apple GPU launch limits (core/gpu_limits.h) and their
 * warnings in a run record (runner/launch_limits.h): each limit at its edge, one past
 * it (the bug it exists for) and just inside it (the negative control), and a record's
 * warnings: one per limit, naming every stage, replaced rather than repeated when the
 * stages are described again (a kernel case's record). */
#include <string.h>

#include "core/gpu_limits.h"
#include "runner/launch_limits.h"
#include "test.h"

static unsigned check3(uint32_t x, uint32_t y, uint32_t z, uint32_t tgmem) {
    uint32_t tg[3] = {x, y, z};
    return gpu_limits_check(tg, tgmem);
}

#define HAS(mask, k) (((mask) >> (k)) & 1u)

TEST(launch_limits_threads) {
    /* 1024 is allowed everywhere but over 896; 1025 is over both and counted once */
    CHECK(!HAS(check3(896, 1, 1, 0), GPU_LIMIT_THREADS_LOW));
    CHECK(HAS(check3(928, 1, 1, 0), GPU_LIMIT_THREADS_LOW));
    CHECK(HAS(check3(32, 32, 1, 0), GPU_LIMIT_THREADS_LOW));
    CHECK(!HAS(check3(32, 32, 1, 0), GPU_LIMIT_THREADS));
    unsigned over = check3(1025, 1, 1, 0);
    CHECK(HAS(over, GPU_LIMIT_THREADS) && !HAS(over, GPU_LIMIT_THREADS_LOW));
    CHECK(HAS(check3(64, 32, 1, 0), GPU_LIMIT_THREADS));
    /* the product of all three extents counts, not x alone */
    CHECK(HAS(check3(16, 16, 8, 0), GPU_LIMIT_THREADS));
    CHECK_EQ_INT((int)check3(256, 1, 1, 0), 0);
    /* the CPU backend's launch of no threads breaks nothing */
    CHECK_EQ_INT((int)check3(0, 0, 0, 40000), 0);
}

TEST(launch_limits_simdgroup) {
    CHECK(HAS(check3(48, 1, 1, 0), GPU_LIMIT_SIMD_PARTIAL));
    CHECK(HAS(check3(1, 1, 1, 0), GPU_LIMIT_SIMD_PARTIAL));
    CHECK(HAS(check3(7, 3, 1, 0), GPU_LIMIT_SIMD_PARTIAL));
    /* whole simdgroups: x need not be a multiple of 32 when the product is */
    CHECK(!HAS(check3(16, 2, 1, 0), GPU_LIMIT_SIMD_PARTIAL));
    CHECK(!HAS(check3(8, 8, 1, 0), GPU_LIMIT_SIMD_PARTIAL));
    CHECK(!HAS(check3(32, 1, 1, 0), GPU_LIMIT_SIMD_PARTIAL));
}

TEST(launch_limits_tgmem) {
    CHECK(!HAS(check3(256, 1, 1, 32768), GPU_LIMIT_TGMEM));
    CHECK(HAS(check3(256, 1, 1, 32769), GPU_LIMIT_TGMEM));
    /* over the limit is that warning alone, not an occupancy one too */
    CHECK(!HAS(check3(32, 1, 1, 40000), GPU_LIMIT_TGMEM_OCCUPANCY));
    /* occupancy: 64 KiB / bytes threadgroups, times the threads, against 768 */
    CHECK_EQ_INT((int)gpu_limits_tgs_per_core(24576), 2);
    CHECK_EQ_INT((int)gpu_limits_tgs_per_core(16384), 4);
    CHECK(gpu_limits_tgs_per_core(0) == UINT32_MAX);
    CHECK(HAS(check3(256, 1, 1, 24576), GPU_LIMIT_TGMEM_OCCUPANCY));  /* 2 x 256 = 512 */
    CHECK(!HAS(check3(256, 1, 1, 16384), GPU_LIMIT_TGMEM_OCCUPANCY)); /* 4 x 256 = 1024 */
    CHECK(!HAS(check3(384, 1, 1, 32768), GPU_LIMIT_TGMEM_OCCUPANCY)); /* 2 x 384 = 768: at the figure */
    CHECK(HAS(check3(352, 1, 1, 32768), GPU_LIMIT_TGMEM_OCCUPANCY));  /* 2 x 352 = 704 */
    CHECK(!HAS(check3(32, 1, 1, 128), GPU_LIMIT_TGMEM_OCCUPANCY));    /* 512 x 32 */
    CHECK(!HAS(check3(32, 1, 1, 0), GPU_LIMIT_TGMEM_OCCUPANCY));      /* none used */
}

static void stage(run_record *r, const char *name, const char *fn, uint32_t x, uint32_t y, uint32_t tgmem) {
    rec_stage *st = &r->stages[r->nstages++];
    snprintf(st->name, sizeof st->name, "%s", name);
    snprintf(st->function, sizeof st->function, "%s", fn);
    st->tg[0] = x, st->tg[1] = y, st->tg[2] = 1;
    st->tgmem_bytes = tgmem;
}

static int count_with(const run_record *r, const char *needle) {
    int n = 0;
    for (int i = 0; i < r->nwarnings; i++) n += strstr(r->warnings[i], needle) != NULL;
    return n;
}

TEST(launch_limits_record_warnings) {
    static run_record r;
    memset(&r, 0, sizeof r);
    run_record_warn(&r, "an earlier warning");
    stage(&r, "kkt", "gdn_kkt", 256, 1, 24576);
    stage(&r, "solve_tril", "gdn_solve", 64, 1, 32768);
    stage(&r, "cumsum", "gdn_cumsum", 48, 1, 0);
    stage(&r, "ok", "fine", 256, 1, 8192);
    launch_limits_warn(&r);
    /* the earlier one, the occupancy one naming both stages, the simdgroup one */
    CHECK_EQ_INT(r.nwarnings, 3);
    CHECK(strcmp(r.warnings[0], "an earlier warning") == 0);
    CHECK_EQ_INT(count_with(&r, "kkt 24576 bytes x 256 threads: 2 threadgroups, 512 threads a core"), 1);
    CHECK_EQ_INT(count_with(&r, "solve_tril 32768 bytes x 64 threads: 2 threadgroups, 128 threads a core"), 1);
    CHECK_EQ_INT(count_with(&r, "cumsum 48 (48x1x1: 16 of 32 lanes in the last)"), 1);
    CHECK_EQ_INT(count_with(&r, "fine"), 0);
    CHECK_EQ_INT(count_with(&r, " ok "), 0);
    /* described again (a kernel case): replaced, not repeated; the other kept */
    r.stages[2].tg[0] = 64;
    launch_limits_warn(&r);
    CHECK_EQ_INT(r.nwarnings, 2);
    CHECK_EQ_INT(count_with(&r, "an earlier warning"), 1);
    CHECK_EQ_INT(count_with(&r, "simdgroup"), 0);
    CHECK_EQ_INT(count_with(&r, "kkt 24576"), 1);
}

TEST(launch_limits_record_labels_and_overflow) {
    static run_record r;
    memset(&r, 0, sizeof r);
    /* a kernel case's numbered launches are named by their function */
    stage(&r, "0", "add_one", 48, 1, 0);
    stage(&r, "1", "add_two", 33, 1, 0);
    launch_limits_warn(&r);
    CHECK_EQ_INT(r.nwarnings, 1);
    CHECK_EQ_INT(count_with(&r, "launch 0 (add_one) 48"), 1);
    CHECK_EQ_INT(count_with(&r, "launch 1 (add_two) 33"), 1);
    /* many stages breaking one limit: one warning, cut with a count, never overflowing */
    memset(&r, 0, sizeof r);
    for (int s = 0; s < 40; s++) stage(&r, "a_stage_with_a_long_name", "f", 1025, 1, 0);
    launch_limits_warn(&r);
    CHECK_EQ_INT(r.nwarnings, 2); /* over 1024, and 1025 is no multiple of 32 */
    CHECK(strstr(r.warnings[0], "more") != NULL);
    CHECK(strlen(r.warnings[0]) < sizeof r.warnings[0]);
    /* one stage of an op named "" (single-stage ops): its function */
    memset(&r, 0, sizeof r);
    stage(&r, "", "micro_copy", 20, 1, 0);
    launch_limits_warn(&r);
    CHECK_EQ_INT(count_with(&r, "; micro_copy 20"), 1);
}
