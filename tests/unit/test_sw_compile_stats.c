/* test_sw_compile_stats.c — compile.phases: clang's -ftime-trace totals read
 * exactly, and a compile's phases counted under its kind of variant. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swmetal/compile_stats.h"
#include "swmetal/sw_compile.h"
#include "swmetal/sw_files.h"
#include "test.h"

/* A trace as clang 19 writes it (one line), with the traps a sloppy reader falls
 * into: a non-total "Frontend" event, a longer name with a total's name as its
 * prefix, and "dur" after "name". */
static const char trace_text[] =
    "{\"traceEvents\":[{\"pid\":1,\"tid\":1,\"ts\":5,\"ph\":\"X\",\"dur\":999,\"name\":\"Frontend\"},"
    "{\"pid\":1,\"tid\":2,\"ph\":\"X\",\"ts\":0,\"dur\":7777777,\"name\":\"Total FrontendSomething\",\"args\":{\"count\":1}},"
    "{\"pid\":1,\"tid\":2,\"ph\":\"X\",\"ts\":0,\"dur\":28355919,\"name\":\"Total ExecuteCompiler\",\"args\":{\"count\":1,\"avg ms\":28355}},"
    "{\"pid\":1,\"tid\":2,\"ph\":\"X\",\"ts\":0,\"dur\":89885,\"name\":\"Total Frontend\",\"args\":{\"count\":2,\"avg ms\":44}},"
    "{\"pid\":1,\"tid\":2,\"ph\":\"X\",\"ts\":0,\"name\":\"Total Optimizer\",\"dur\":11422106,\"args\":{\"count\":1}},"
    "{\"pid\":1,\"tid\":2,\"ph\":\"X\",\"ts\":0,\"dur\":28263058,\"name\":\"Total Backend\",\"args\":{\"count\":1}}],"
    "\"beginningOfTime\":1}\n";

TEST(sw_clang_times_read_takes_the_totals) {
    char path[] = "/tmp/gdnbench-trace-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) SKIP("cannot create a temporary file");
    close(fd);
    CHECK(sw_write_file_atomic(path, trace_text, strlen(trace_text)) == 0);
    sw_clang_times t;
    CHECK(sw_clang_times_read(path, &t) == 0);
    CHECK_NEAR(t.execute_s, 28.355919, 1e-9);
    CHECK_NEAR(t.frontend_s, 0.089885, 1e-9);
    CHECK_NEAR(t.optimise_s, 11.422106, 1e-9);
    CHECK_NEAR(t.backend_s, 28.263058, 1e-9);
    unlink(path);
    /* no file: every phase unknown, not zero */
    CHECK(sw_clang_times_read(path, &t) == -1);
    CHECK(t.execute_s < 0 && t.frontend_s < 0 && t.optimise_s < 0 && t.backend_s < 0);
}

static const sw_compile_phases *kind_of(const sw_compile_stats *s, const char *kind) {
    for (int k = 0; k < SW_COMPILE_MAX_KINDS && s->kinds[k].kind; k++)
        if (strcmp(s->kinds[k].kind, kind) == 0) return &s->kinds[k];
    return NULL;
}

static char cache_dir[64];

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_cache(void) {
    if (cache_dir[0]) nftw(cache_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *const add_src = "#include <metal_stdlib>\nusing namespace metal;\n"
                                   "kernel void add1(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
                                   "    x[i] += 1.0f;\n}\n";

TEST(sw_compile_stats_count_phases_by_variant) {
    snprintf(cache_dir, sizeof cache_dir, "/tmp/gdnbench-stats-XXXXXX");
    if (!mkdtemp(cache_dir)) SKIP("cannot create a temporary directory");
    setenv("GDNBENCH_CACHE_DIR", cache_dir, 1);
    atexit(remove_cache);
    sw_compile_stats s0, s1, s2, d;
    sw_compile_stats_get(&s0);
    char *err = NULL;
    sw_library *lib = sw_library_create(add_src, "add1.metal", &err);
    if (!lib && err && strstr(err, "clang++ >= 17")) SKIP("%s", err);
    CHECK_MSG(lib != NULL, "%s", err ? err : "");
    free(err);
    if (!lib) return;
    sw_kernel k;
    err = NULL;
    CHECK(sw_library_get_kernel(lib, "add1", NULL, 0, SW_INSTR_NONE, &k, &err) == 0);
    free(err);
    sw_library_free(lib);
    sw_compile_stats_get(&s1);
    sw_compile_stats_diff(&s1, &s0, &d);
    const sw_compile_phases *lb = kind_of(&d, "library"), *fb = kind_of(&d, "fibers");
    CHECK(lb && lb->prepass_s > 0 && lb->wall_s >= lb->prepass_s);
    CHECK(fb && fb->compiles == 1);
    if (fb) {
        /* clang 17+ writes the trace: every phase known, and they fit in the wall time */
        CHECK(fb->frontend_s > 0 && fb->optimise_s >= 0 && fb->codegen_s > 0 && fb->link_s >= 0);
        CHECK(fb->frontend_s + fb->optimise_s + fb->codegen_s + fb->link_s <= fb->wall_s * 1.001 + 1e-3);
    }
    CHECK(kind_of(&d, "full_checks") == NULL); /* nothing happened there */

    /* again, as a second process would: found built, no clang run, no time */
    lib = sw_library_create(add_src, "add1.metal", &err);
    CHECK(lib != NULL);
    if (lib) CHECK(sw_library_get_kernel(lib, "add1", NULL, 0, SW_INSTR_NONE, &k, &err) == 0);
    free(err);
    sw_library_free(lib);
    sw_compile_stats_get(&s2);
    sw_compile_stats_diff(&s2, &s1, &d);
    fb = kind_of(&d, "fibers");
    CHECK(fb && fb->compiles == 0 && fb->cached >= 1 && fb->wall_s < 0.05);

    /* a library with a function constant is only checked when created: clang writes
     * no trace for -fsyntax-only, and the check counts as front end, not unknown */
    static const char *const fc_src = "constant bool twice [[function_constant(0)]];\n"
                                      "kernel void add2(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
                                      "    x[i] += twice ? 2.0f : 1.0f;\n}\n";
    lib = sw_library_create(fc_src, "add2.metal", &err);
    CHECK(lib != NULL);
    free(err);
    sw_library_free(lib);
    sw_compile_stats_get(&s1);
    sw_compile_stats_diff(&s1, &s2, &d);
    lb = kind_of(&d, "library");
    CHECK(lb && lb->compiles == 1 && lb->frontend_s > 0 && lb->optimise_s == 0 && lb->codegen_s == 0);
    CHECK(kind_of(&d, "fibers") == NULL);
}
