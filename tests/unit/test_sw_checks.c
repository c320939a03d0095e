/* test_sw_checks.c — out-of-bounds, uninitialised threadgroup reads and threadgroup
 * races, as the software device reports them.
 *
 * Fast mode is tested with hand-written entries.  Full mode needs kernels built the
 * way the compiler side builds the instrumented variant: C++ compiled by clang with
 * -fsanitize=thread and no TSan runtime, so every access calls our __tsan_* hooks.
 * The test compiles such a library from the source below at run time (skipped when
 * clang++ >= 17 is missing). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swmetal/checks.h"
#include "swmetal/cxx.h"
#include "swmetal/exec.h"
#include "swmetal/sw_compile.h"
#include "test.h"

/* The direction of a fast-mode fault comes from the CPU's fault record: x86-64's
 * page-fault error code, arm64's ESR (WnR).  Linux arm64 passes the ESR in the signal
 * frame, qemu-user does not, so there the report may say "access": accepted only on
 * Linux arm64, where the word is still required to be one of the two. */
#if defined(__linux__) && defined(__aarch64__)
#define OOB_WRITE_WORD(s) (strstr((s), "out-of-bounds write") || strstr((s), "out-of-bounds access"))
#else
#define OOB_WRITE_WORD(s) (strstr((s), "out-of-bounds write") != NULL)
#endif

static void bind_guarded(sw_dispatch *d, int index, sw_guarded *g) {
    d->buf[index].ptr = g->data;
    d->buf[index].data = g->data;
    d->buf[index].length = g->length;
    d->buf[index].map_lo = g->map;
    d->buf[index].map_hi = g->map + g->map_size;
}

/* The schedule dispatches made here run under (a device's swmtl_schedule; tests
 * change it between dispatches). */
static swmtl_schedule test_schedule = {.lanes = 1};

static sw_dispatch make_dispatch(const char *name, sw_entry_fn entry, uint32_t groups, uint32_t tg) {
    sw_dispatch d;
    memset(&d, 0, sizeof d);
    d.kernel = name;
    d.entry = entry;
    d.groups[0] = groups, d.groups[1] = d.groups[2] = 1;
    d.tg_size[0] = tg, d.tg_size[1] = d.tg_size[2] = 1;
    d.schedule = test_schedule;
    return d;
}

/* The one parser of a checks mode: what --sw-checks and the device options take. */
TEST(sw_checks_mode_parsing) {
    char err[200];
    swmtl_checks m = SWMTL_CHECKS_FAST;
    CHECK(swmtl_parse_checks("full", &m, "--sw-checks", err, sizeof err) == 0);
    CHECK_EQ_INT(m, SW_CHECKS_FULL);
    CHECK(swmtl_parse_checks("none", &m, "--sw-checks", err, sizeof err) == 0);
    CHECK_EQ_INT(m, SW_CHECKS_NONE);
    CHECK(swmtl_parse_checks("numerics", &m, "--sw-checks", err, sizeof err) == 0);
    CHECK_EQ_INT(m, SW_CHECKS_NUMERICS);
    CHECK(strcmp(sw_checks_mode_name(SW_CHECKS_NUMERICS), "numerics") == 0);
    CHECK(swmtl_parse_checks("none", &m, "--sw-checks", err, sizeof err) == 0);
    CHECK(swmtl_parse_checks("paranoid", &m, "--sw-checks", err, sizeof err) != 0);
    CHECK_MSG(strcmp(err, "--sw-checks 'paranoid' is unknown: use none, fast, numerics or full") == 0, "%s", err);
    CHECK_EQ_INT(m, SW_CHECKS_NONE); /* left as it was */
}

TEST(sw_checks_guarded_layouts) {
    sw_guarded g;
    long page = sysconf(_SC_PAGESIZE);
    CHECK(sw_guarded_alloc(&g, 1024, SW_CHECKS_FAST) == 0);
    CHECK(g.data + 1024 == g.map + g.map_size - page); /* ends at the guard */
    CHECK(((uintptr_t)g.data & 15) == 0);
    CHECK(g.data[0] == 0 && g.data[1023] == 0);
    sw_guarded_free(&g);
    CHECK(sw_guarded_alloc(&g, 1000, SW_CHECKS_FULL) == 0);
    CHECK(g.data + 1008 == g.map + g.map_size - page); /* 16-byte aligned start */
    CHECK(g.map + page <= g.data);
    sw_guarded_free(&g);
    CHECK(sw_guarded_alloc(&g, 0, SW_CHECKS_FAST) != 0);
}

/* out[gid] = gid for every thread of the grid: the grid has one thread too many. */
static void k_write_one_past(const sw_thread_args *a) {
    uint32_t gid = a->ids->thread_position_in_grid[0];
    ((float *)a->buffers[1])[gid] = (float)gid;
}

TEST(sw_checks_fast_oob_write_one_past_end) {
    sw_guarded in, out;
    CHECK(sw_guarded_alloc(&in, 64, SW_CHECKS_FAST) == 0);
    CHECK(sw_guarded_alloc(&out, 256 * sizeof(float), SW_CHECKS_FAST) == 0);
    sw_dispatch d = make_dispatch("write_one_past", k_write_one_past, 1, 257);
    bind_guarded(&d, 0, &in);
    bind_guarded(&d, 1, &out);
    sw_dispatch_result res;
    CHECK(sw_exec_dispatch(&d, &res) != 0);
    CHECK_MSG(res.error && strstr(res.error, "kernel 'write_one_past'") &&
                  OOB_WRITE_WORD(res.error) && strstr(res.error, "on buffer(1) byte 1024 (past its end; it has 1024 bytes)") &&
                  strstr(res.error, "thread_position_in_grid (256,0,0)"),
              "error: %s", res.error ? res.error : "(none)");
    CHECK(res.nfindings == 1 && res.findings[0].kind == DEV_FIND_OOB && res.findings[0].offset_lo == 1024);
    sw_dispatch_result_free(&res);
    /* The same kernel on an exact grid is clean. */
    d.tg_size[0] = 256;
    CHECK(sw_exec_dispatch(&d, &res) == 0);
    CHECK_EQ_INT(res.total_diags, 0);
    CHECK(((float *)out.data)[255] == 255.0f);
    sw_dispatch_result_free(&res);
    sw_guarded_free(&in);
    sw_guarded_free(&out);
}

/* ---- full mode with real instrumented code ---- */

static const char *full_kernels_src =
    "#include <stdint.h>\n"
    "#include \"swmetal/sw_abi.h\"\n"
    "#define ID (a->ids)\n"
    "extern \"C\" void k_uninit(const sw_thread_args *a) {\n"
    "    float *t = (float *)sw_rt_tg_alloc(256 * 4, 16, \"tile\", 5);\n"
    "    uint32_t i = ID->thread_index_in_threadgroup;\n"
    "    if (i != 7) t[i] = 1.0f;\n"
    "    sw_rt_threadgroup_barrier(2, 8);\n"
    "    ((float *)a->buffers[0])[ID->thread_position_in_grid[0]] = t[(i + 1) % 256];\n"
    "}\n"
    "extern \"C\" void k_race(const sw_thread_args *a) {\n"
    "    float *t = (float *)a->tg_params[0];\n"
    "    uint32_t i = ID->thread_index_in_threadgroup;\n"
    "    t[i] = (float)i;\n"
    "    ((float *)a->buffers[0])[ID->thread_position_in_grid[0]] = t[(i + 63) % 64];\n"
    "}\n"
    "extern \"C\" void k_clean(const sw_thread_args *a) {\n"
    "    float *t = (float *)sw_rt_tg_alloc(64 * 4, 16, \"tile\", 20);\n"
    "    uint32_t *count = (uint32_t *)sw_rt_tg_alloc(4, 4, \"count\", 21);\n"
    "    uint32_t i = ID->thread_index_in_threadgroup, lane = ID->thread_index_in_simdgroup;\n"
    "    if (i == 0) *count = 0;\n"
    "    t[i] = (float)i;\n"
    "    sw_rt_threadgroup_barrier(2, 24);\n"
    "    __atomic_fetch_add(count, 1u, __ATOMIC_RELAXED);\n"
    "    float x = t[63 - i];\n"
    "    sw_rt_threadgroup_barrier(2, 27);\n"
    "    t[i] = x * 2;\n"
    "    sw_rt_simd_sync(29);\n"
    "    x += t[(ID->simdgroup_index_in_threadgroup * 32) + (lane ^ 1)];\n"
    "    sw_rt_threadgroup_barrier(2, 31);\n"
    "    uint32_t *dev = (uint32_t *)a->buffers[1];\n"
    "    __atomic_fetch_add(dev, 1u, __ATOMIC_RELAXED);\n"
    "    ((float *)a->buffers[0])[ID->thread_position_in_grid[0]] = x + (float)*count;\n"
    "}\n"
    "extern \"C\" void k_simd_cross(const sw_thread_args *a) {\n"
    "    float *t = (float *)sw_rt_tg_alloc(64 * 4, 16, \"xs\", 40);\n"
    "    uint32_t i = ID->thread_index_in_threadgroup;\n"
    "    t[i] = 1.0f;\n"
    "    sw_rt_simd_sync(43);\n"
    "    ((float *)a->buffers[0])[i] = t[(i + 32) % 64];\n"
    "}\n"
    "extern \"C\" void k_read_before(const sw_thread_args *a) {\n"
    "    uint32_t g = ID->thread_position_in_grid[0];\n"
    "    const float *in = (const float *)a->buffers[1];\n"
    "    ((float *)a->buffers[0])[g] = in[(int)g - 1];\n"
    "}\n"
    "extern \"C\" void k_read_exact_end(const sw_thread_args *a) {\n"
    "    uint32_t g = ID->thread_position_in_grid[0];\n"
    "    const float *in = (const float *)a->buffers[1];\n"
    "    ((float *)a->buffers[0])[g] = in[g];\n"
    "}\n";

typedef struct full_lib {
    char dir[64];
    void *dl;
} full_lib;

/* Built by the device's own compiler (GDNBENCH_CXX first, as the device does: a
 * cross compiler when the tests run under an emulator) with the device's own flags
 * for the instrumented variant (sw_cxx_kernel_flags), line tables included so
 * findings name k.cpp's lines: on a Mac that means
 * -fno-sanitize-link-runtime and -undefined dynamic_lookup, without which the
 * library would carry the TSan runtime, or not link at all. */
static int build_full_lib(full_lib *lib) {
    const char *cxx = NULL, *version = NULL;
    char *why = NULL;
    if (sw_compiler_info(&cxx, &version, &why) != 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", why ? why : "no clang++ >= 17");
        free(why);
        SKIP("no compiler for an instrumented kernel library: %s", msg);
    }
    snprintf(lib->dir, sizeof lib->dir, "/tmp/gdn-swchecks-XXXXXX");
    if (!mkdtemp(lib->dir)) SKIP("cannot create a temporary directory");
    lib->dl = NULL;
    char src[128], so[128], cmd[4096];
    snprintf(src, sizeof src, "%s/k.cpp", lib->dir);
    snprintf(so, sizeof so, "%s/k.so", lib->dir);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL);
    if (!f) return -1;
    fputs(full_kernels_src, f);
    fclose(f);
    const char *flags[SW_CXX_MAX_FLAGS];
#if defined(__APPLE__)
    int nflags = sw_cxx_kernel_flags(1, 1, flags, SW_CXX_MAX_FLAGS);
#else
    int nflags = sw_cxx_kernel_flags(1, 0, flags, SW_CXX_MAX_FLAGS);
#endif
    const char *root = getenv("GDNBENCH_ROOT");
    int off = snprintf(cmd, sizeof cmd, "%s", cxx);
    for (int i = 0; i < nflags; i++) off += snprintf(cmd + off, sizeof cmd - (size_t)off, " %s", flags[i]);
    snprintf(cmd + off, sizeof cmd - (size_t)off, " -I%s/src %s -o %s 2>&1", root ? root : ".", src, so);
    int rc = system(cmd);
    CHECK_MSG(rc == 0, "building the instrumented kernel library failed (status %d): %s", rc, cmd);
    if (rc != 0) return -1;
    lib->dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(lib->dl != NULL, "dlopen: %s", dlerror());
    return lib->dl ? 0 : -1;
}

static void free_full_lib(full_lib *lib) {
    char path[128];
    if (lib->dl) dlclose(lib->dl);
    snprintf(path, sizeof path, "%s/k.cpp", lib->dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/k.so", lib->dir);
    unlink(path);
    rmdir(lib->dir);
}

static sw_entry_fn entry_of(full_lib *lib, const char *name) {
    void *p = dlsym(lib->dl, name);
    CHECK_MSG(p != NULL, "no symbol %s", name);
    sw_entry_fn fn;
    memcpy(&fn, &p, sizeof fn);
    return fn;
}

static int run_full(full_lib *lib, const char *name, uint32_t groups, uint32_t tg, sw_guarded *out, sw_guarded *in,
                    size_t tg0, sw_dispatch_result *res) {
    sw_dispatch d = make_dispatch(name, entry_of(lib, name), groups, tg);
    d.instrumented = 1;
    bind_guarded(&d, 0, out);
    if (in) bind_guarded(&d, 1, in);
    d.tg_len[0] = tg0;
    return sw_exec_dispatch(&d, res);
}

TEST(sw_checks_full_uninitialised_threadgroup_read) {
    full_lib lib;
    if (build_full_lib(&lib) != 0) return;
    sw_guarded out;
    CHECK(sw_guarded_alloc(&out, 2 * 256 * 4, SW_CHECKS_FULL) == 0);
    sw_dispatch_result res;
    CHECK(run_full(&lib, "k_uninit", 2, 256, &out, NULL, 0, &res) != 0);
    CHECK_EQ_INT(res.total_diags, 2); /* thread 6 of each threadgroup */
    CHECK_MSG(res.ndiags > 0 && strstr(res.diags[0], "read of uninitialised threadgroup memory on 'tile' (line 5) "
                                                     "bytes 28..31 of 1024 at ") &&
                  strstr(res.diags[0], "k.cpp:9 by thread_position_in_grid (") &&
                  (strstr(res.diags[0], "(6,0,0)") || strstr(res.diags[0], "(262,0,0)")),
              "diag: %s", res.ndiags ? res.diags[0] : "(none)");
    /* One finding: the same read in both threadgroups. */
    CHECK_EQ_INT(res.nfindings, 1);
    CHECK(res.nfindings == 1 && res.findings[0].occurrences == 2 && res.findings[0].threads == 2 &&
          res.findings[0].threadgroups == 2 && res.findings[0].site[0].line == 9 && res.findings[0].site[0].index == 6);
    CHECK(res.error && strstr(res.error, "read of uninitialised threadgroup memory") && strstr(res.error, "(2 occurrences"));
    sw_dispatch_result_free(&res);
    sw_guarded_free(&out);
    free_full_lib(&lib);
}

TEST(sw_checks_full_threadgroup_race) {
    full_lib lib;
    if (build_full_lib(&lib) != 0) return;
    sw_guarded out;
    CHECK(sw_guarded_alloc(&out, 64 * 4, SW_CHECKS_FULL) == 0);
    sw_dispatch_result res;
    CHECK(run_full(&lib, "k_race", 1, 64, &out, NULL, 64 * 4, &res) != 0);
    CHECK(res.total_diags > 0);
    /* Thread 0 reads t[63] before thread 63 wrote it (uninitialised); thread 1 reads
     * t[0] that thread 0 wrote in the same barrier interval: a race. */
    CHECK_MSG(res.ndiags > 1 && strstr(res.diags[0], "uninitialised") &&
                  strstr(res.diags[1], "threadgroup memory race on [[threadgroup(0)]] bytes 0..251 of 256: write at ") &&
                  strstr(res.diags[1], "k.cpp:14 by thread_position_in_grid (0,0,0)") &&
                  strstr(res.diags[1], "read at ") && strstr(res.diags[1], "k.cpp:15 by thread_position_in_grid (1,0,0)") &&
                  strstr(res.diags[1], "no barrier between them: none since the kernel started"),
              "diag[1]: %s", res.ndiags > 1 ? res.diags[1] : "(none)");
    /* In all: 1 uninitialised read, 63 write-read races (thread i reads t[i-1]) and
     * one read-write race (thread 63 writes t[63], which thread 0 read): three
     * distinct bugs. */
    CHECK_EQ_INT(res.total_diags, 65);
    CHECK_EQ_INT(res.nfindings, 3);
    CHECK_EQ_INT(res.ndiags, 3);
    if (res.nfindings == 3) {
        CHECK(res.findings[1].kind == DEV_FIND_TG_RACE && res.findings[1].occurrences == 63 &&
              res.findings[1].site[0].line == 14 && res.findings[1].site[1].line == 15);
        CHECK(res.findings[2].kind == DEV_FIND_TG_RACE && res.findings[2].occurrences == 1 &&
              strcmp(res.findings[2].site[0].access, "read") == 0 && res.findings[2].site[0].line == 15 &&
              res.findings[2].site[0].index == 0 && strcmp(res.findings[2].site[1].access, "write") == 0 &&
              res.findings[2].site[1].line == 14 && res.findings[2].site[1].index == 63);
    }
    sw_dispatch_result_free(&res);
    sw_guarded_free(&out);
    free_full_lib(&lib);
}

TEST(sw_checks_full_simd_sync_orders_lanes_of_one_simdgroup_only) {
    full_lib lib;
    if (build_full_lib(&lib) != 0) return;
    sw_guarded out;
    CHECK(sw_guarded_alloc(&out, 64 * 4, SW_CHECKS_FULL) == 0);
    sw_dispatch_result res;
    CHECK(run_full(&lib, "k_simd_cross", 1, 64, &out, NULL, 0, &res) != 0);
    /* Both simdgroups write their half and read the other's: the group shows its
     * lowest occurrence, thread 0's write read by thread 32. */
    CHECK_MSG(res.ndiags > 0 && strstr(res.diags[0], "race on 'xs' (line 40)") &&
                  strstr(res.diags[0], "k.cpp:38 by thread_position_in_grid (0,0,0)") &&
                  strstr(res.diags[0], "k.cpp:40 by thread_position_in_grid (32,0,0)"),
              "diag: %s", res.ndiags ? res.diags[0] : "(none)");
    sw_dispatch_result_free(&res);
    sw_guarded_free(&out);
    free_full_lib(&lib);
}

TEST(sw_checks_full_correct_kernel_is_clean) {
    full_lib lib;
    if (build_full_lib(&lib) != 0) return;
    sw_guarded out, counter;
    CHECK(sw_guarded_alloc(&out, 40 * 64 * 4, SW_CHECKS_FULL) == 0);
    CHECK(sw_guarded_alloc(&counter, 4, SW_CHECKS_FULL) == 0);
    const char *schedules[] = {"inorder", "reverse", "random:3"};
    for (int s = 0; s < 3; s++) {
        char err[200];
        CHECK(swmtl_parse_order(schedules[s], &test_schedule.fibers, "schedule", err, sizeof err) == 0);
        memset(counter.data, 0, 4);
        sw_dispatch_result res;
        int rc = run_full(&lib, "k_clean", 40, 64, &out, &counter, 0, &res);
        CHECK_MSG(rc == 0 && res.total_diags == 0, "%s: %s", schedules[s], res.error ? res.error : "?");
        CHECK_EQ_INT(*(uint32_t *)counter.data, 40 * 64);
        /* x = t[63-i] + 2*t[lane^1 of own simdgroup] + 64 */
        float *o = (float *)out.data;
        for (uint32_t i = 0; i < 64; i++) {
            uint32_t partner = (i / 32) * 32 + ((i % 32) ^ 1);
            float want = (float)(63 - i) + 2.0f * (float)(63 - partner) + 64.0f;
            CHECK_NEAR(o[39 * 64 + i], want, 0);
        }
        sw_dispatch_result_free(&res);
    }
    sw_guarded_free(&out);
    sw_guarded_free(&counter);
    free_full_lib(&lib);
}

TEST(sw_checks_full_exact_oob_reads) {
    full_lib lib;
    if (build_full_lib(&lib) != 0) return;
    sw_guarded out, in;
    CHECK(sw_guarded_alloc(&out, 300 * 4, SW_CHECKS_FULL) == 0);
    CHECK(sw_guarded_alloc(&in, 250 * 4, SW_CHECKS_FULL) == 0); /* 1000 bytes: 8 bytes of slack before the guard */
    sw_dispatch_result res;
    CHECK(run_full(&lib, "k_read_before", 1, 32, &out, &in, 0, &res) != 0);
    CHECK_MSG(res.error && strstr(res.error, "out-of-bounds read on buffer(1) bytes -4..-1 (before its start") &&
                  strstr(res.error, "k.cpp:45 by thread_position_in_grid (0,0,0)"),
              "error: %s", res.error ? res.error : "(none)");
    sw_dispatch_result_free(&res);
    /* in[250] lies in the alignment slack: no hardware fault, the hooks catch it. */
    CHECK(run_full(&lib, "k_read_exact_end", 1, 251, &out, &in, 0, &res) != 0);
    CHECK_MSG(res.error && strstr(res.error, "read on buffer(1) bytes 1000..1003 (past its end; it has 1000 bytes)") &&
                  strstr(res.error, "k.cpp:50 by thread_position_in_grid (250,0,0)"),
              "error: %s", res.error ? res.error : "(none)");
    sw_dispatch_result_free(&res);
    sw_guarded_free(&out);
    sw_guarded_free(&in);
    free_full_lib(&lib);
}
