/* test_sw_findings.c — one kernel of our own per kind of finding
 * (tests/cli/kernels/findings.metal), run on the software Metal device: each test
 * asserts the finding's kind, the source line (and text) of every access named,
 * the barriers around a race, and how many distinct findings the run produced.
 *
 * Lines are found by the "// @name" markers in the kernel file, so editing the
 * file does not break the tests.  Shape: B=1, T=65, H=2 (two chunks, the second
 * one token long), 64 threads per threadgroup, 4 threadgroups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/objc_call.h"
#include "report_testdata.h"
#include "swmetal/sw_compile.h"
#include "swmetal/swmetal.h"
#include "sw_test_env.h"
#include "test.h"

#define KFILE "tests/cli/kernels/findings.metal"
enum { B = 1, T = 65, H = 2, BT = 64, NT = 2 };

typedef struct fenv {
    sw_test_env env;
    char *src;
} fenv;

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* The line carrying "// @marker" (the marker followed by end of line). */
static int line_of(const char *src, const char *marker) {
    char want[64];
    snprintf(want, sizeof want, "// @%s\n", marker);
    const char *at = strstr(src, want);
    if (!at) return -1;
    int line = 1;
    for (const char *p = src; p < at; p++) line += *p == '\n';
    return line;
}

static int env_open(fenv *e, const char *checks) {
    memset(e, 0, sizeof *e);
    char file[4096];
    report_test_repo_path(file, sizeof file, KFILE);
    e->src = slurp(file);
    CHECK_MSG(e->src != NULL, "cannot read %s", file);
    if (!e->src) return -1;
    sw_test_env_open(&e->env, checks, e->src, KFILE);
    if (!e->env.lib) return -1;
    swmtl_schedule inorder = {.lanes = 1}; /* whatever GDNBENCH_SW_SCHEDULE says */
    CHECK(swmtl_device_set_schedule(e->env.dev, &inorder) == 0);
    return 0;
}

static void env_close(fenv *e) {
    sw_test_env_close(&e->env);
    free(e->src);
}

/* Runs `name` over the cumsum grid; returns the completed command buffer (autoreleased). */
static id run(fenv *e, const char *name) {
    id bufs[3];
    bufs[0] = MSG2(id, e->env.dev, "newBufferWithLength:options:", NSUInteger, sizeof(float) * B * T * H, NSUInteger, 0);
    bufs[1] = MSG2(id, e->env.dev, "newBufferWithLength:options:", NSUInteger, sizeof(float) * B * T * H, NSUInteger, 0);
    bufs[2] = MSG2(id, e->env.dev, "newBufferWithLength:options:", NSUInteger, sizeof(uint32_t) * 5, NSUInteger, 0);
    float *g = MSG0(void *, bufs[0], "contents");
    for (int i = 0; i < B * T * H; i++) g[i] = -0.01f * (float)(i % 7);
    uint32_t *p = MSG0(void *, bufs[2], "contents");
    p[0] = B, p[1] = T, p[2] = H, p[3] = BT, p[4] = NT;
    id cb = sw_test_run(&e->env, name, bufs, 3, "dispatchThreadgroups:threadsPerThreadgroup:", (MTLSize){1, H, B * NT},
                        (MTLSize){64, 1, 1});
    for (int i = 0; i < 3; i++) MSG0(void, bufs[i], "release");
    return cb;
}

/* Checks one site: its line is the marker's, in our file, with that line's text. */
static void check_site(const fenv *e, const dev_site *s, const char *marker, const char *access, const char *what) {
    int want = line_of(e->src, marker);
    CHECK_MSG(s->line == want && strcmp(s->file, KFILE) == 0 && strstr(s->text, marker) != NULL,
              "%s: %s:%d `%s`, want %s:%d (@%s)", what, s->file, s->line, s->text, KFILE, want, marker);
    if (access) CHECK_MSG(strcmp(s->access, access) == 0, "%s: access %s, want %s", what, s->access, access);
}

static const dev_finding *findings(id cb, int *n) {
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
    return swmtl_command_buffer_findings(cb, n);
}

TEST(sw_findings_inplace_update_without_barrier) {
    fenv e;
    if (env_open(&e, "full") != 0) goto out;
    int n = 0;
    const dev_finding *f = findings(run(&e, "inplace_scale_no_barrier"), &n);
    /* Simdgroup 0 reads st[32..63] before simdgroup 1 wrote them (uninitialised),
     * then simdgroup 1's load writes over simdgroup 0's scaled values: two bugs. */
    CHECK_EQ_INT(n, 2);
    if (n != 2) goto out;
    CHECK_EQ_INT(f[0].kind, DEV_FIND_UNINIT_READ);
    check_site(&e, &f[0].site[0], "scale", "read", "uninitialised read");
    CHECK(strcmp(f[0].variable, "st") == 0 && f[0].offset_lo == 128 && f[0].offset_hi == 256);
    CHECK(f[0].occurrences == 4 * 32 && f[0].threads == 4 * 32 && f[0].threadgroups == 4);
    CHECK_EQ_INT(f[1].kind, DEV_FIND_TG_RACE);
    check_site(&e, &f[1].site[0], "scale", "write", "race, earlier");
    check_site(&e, &f[1].site[1], "load", "write", "race, later");
    CHECK(f[1].site[0].index + 32 == f[1].site[1].index);
    CHECK_MSG(f[1].has_interval && f[1].barrier[0].line == 0 &&
                  f[1].barrier[1].line == line_of(e.src, "scale-barrier"),
              "interval: %d..%d", f[1].barrier[0].line, f[1].barrier[1].line);
    CHECK(f[1].occurrences == 4 * 32 && f[1].threads == 4 * 64 && f[1].threadgroups == 4);
    /* Threadgroups started last to first: each group still shows its lowest
     * occurrence (threadgroup (0,0,0), the lowest thread), not the first reached. */
    swmtl_schedule reverse = {.groups = {SWMTL_ORDER_REVERSE, 0}, .lanes = 1};
    CHECK(swmtl_device_set_schedule(e.env.dev, &reverse) == 0);
    f = findings(run(&e, "inplace_scale_no_barrier"), &n);
    CHECK_EQ_INT(n, 2);
    for (int i = 0; i < n && i < 2; i++) {
        const dev_site *s = &f[i].site[0];
        CHECK_MSG(s->has_thread && s->threadgroup[0] == 0 && s->threadgroup[1] == 0 && s->threadgroup[2] == 0 &&
                      s->index == (i == 0 ? 0u : (uint32_t)f[i].site[1].index - 32),
                  "group %d shows threadgroup (%u,%u,%u) thread %u", i, s->threadgroup[0], s->threadgroup[1],
                  s->threadgroup[2], s->index);
    }
    CHECK(f[1].site[1].index == 32);
out:
    env_close(&e);
}

TEST(sw_findings_missing_barrier_before_threadgroup_read) {
    fenv e;
    if (env_open(&e, "full") != 0) goto out;
    int n = 0;
    const dev_finding *f = findings(run(&e, "read_before_barrier"), &n);
    CHECK_EQ_INT(n, 1);
    if (n != 1) goto out;
    CHECK_EQ_INT(f[0].kind, DEV_FIND_TG_RACE);
    check_site(&e, &f[0].site[0], "early-read", "read", "earlier");
    check_site(&e, &f[0].site[1], "stage", "write", "later");
    CHECK(f[0].site[0].index == 0 && f[0].site[1].index == 1);
    CHECK(f[0].barrier[0].line == line_of(e.src, "open") && f[0].barrier[1].line == line_of(e.src, "close"));
    CHECK_MSG(strstr(f[0].barrier[0].text, "threadgroup_barrier") != NULL, "opening barrier `%s`", f[0].barrier[0].text);
out:
    env_close(&e);
}

TEST(sw_findings_wrong_head_index_is_a_write_write_conflict) {
    fenv e;
    if (env_open(&e, "full") != 0) goto out;
    int n = 0;
    const dev_finding *f = findings(run(&e, "head_collapse"), &n);
    CHECK_EQ_INT(n, 1);
    if (n != 1) goto out;
    CHECK_EQ_INT(f[0].kind, DEV_FIND_DEVICE_WRITE_WRITE);
    CHECK(strcmp(f[0].memory, "device") == 0 && f[0].buffer == 1);
    check_site(&e, &f[0].site[0], "collapse-store", "write", "one write");
    check_site(&e, &f[0].site[1], "collapse-store", "write", "the other");
    CHECK(f[0].site[0].threadgroup[1] != f[0].site[1].threadgroup[1]);
    /* Head 0 of both chunks: every token of it is written twice. */
    CHECK(f[0].occurrences == T && f[0].threadgroups == 4 && f[0].offset_lo == 0 &&
          f[0].offset_hi == (int64_t)sizeof(float) * (T - 1) * H + 4);
out:
    env_close(&e);
}

TEST(sw_findings_read_of_another_threadgroups_output) {
    fenv e;
    if (env_open(&e, "full") != 0) goto out;
    int n = 0;
    const dev_finding *f = findings(run(&e, "carry_from_previous_chunk"), &n);
    CHECK_EQ_INT(n, 1);
    if (n != 1) goto out;
    CHECK_EQ_INT(f[0].kind, DEV_FIND_DEVICE_READ_WRITE);
    check_site(&e, &f[0].site[0], "carry-store", "write", "the write");
    check_site(&e, &f[0].site[1], "carry", "read", "the read");
    CHECK(f[0].site[0].threadgroup[2] == 0 && f[0].site[1].threadgroup[2] == 1);
    CHECK(f[0].occurrences == H && f[0].threadgroups == 4);
out:
    env_close(&e);
}

TEST(sw_findings_out_of_bounds_tail_in_fast_and_full) {
    const char *modes[] = {"fast", "full"};
    for (int m = 0; m < 2; m++) {
        fenv e;
        if (env_open(&e, modes[m]) != 0) {
            env_close(&e);
            return;
        }
        int n = 0;
        const dev_finding *f = findings(run(&e, "tail_overrun"), &n);
        CHECK_MSG(n >= 1 && f[0].kind == DEV_FIND_OOB, "%s: %d findings, first %s", modes[m], n,
                  n ? dev_finding_kind_name(f[0].kind) : "-");
        if (n >= 1) {
            /* Fast mode sees the guard page after the 16-byte padding, full mode the first byte past the end. */
            check_site(&e, &f[0].site[0], "tail-read", m ? "read" : NULL, modes[m]);
            CHECK(strcmp(f[0].memory, "device") == 0 && f[0].buffer == 0 && f[0].length == sizeof(float) * B * T * H);
            CHECK(f[0].offset_lo >= (int64_t)f[0].length);
            CHECK(f[0].site[0].threadgroup[2] == 1 && f[0].site[0].index == 0);
        }
        env_close(&e);
    }
}

TEST(sw_findings_threadgroup_array_overrun) {
    fenv e;
    if (env_open(&e, "full") != 0) goto out;
    int n = 0;
    const dev_finding *f = findings(run(&e, "stage_overrun"), &n);
    CHECK_EQ_INT(n, 1);
    if (n != 1) goto out;
    CHECK_EQ_INT(f[0].kind, DEV_FIND_OOB);
    CHECK(strcmp(f[0].memory, "threadgroup") == 0 && strcmp(f[0].variable, "st") == 0 &&
          f[0].variable_line == line_of(e.src, "stage-array"));
    CHECK(f[0].offset_lo == 256 && f[0].offset_hi == 260 && f[0].length == 256);
    check_site(&e, &f[0].site[0], "overrun", "write", "overrun");
    CHECK(f[0].site[0].index == 63 && f[0].threadgroups == 4);
out:
    env_close(&e);
}

TEST(sw_findings_divergent_barrier) {
    fenv e;
    if (env_open(&e, "fast") != 0) goto out;
    int n = 0;
    const dev_finding *f = findings(run(&e, "divergent_barrier"), &n);
    CHECK_EQ_INT(n, 1);
    if (n != 1) goto out;
    CHECK_EQ_INT(f[0].kind, DEV_FIND_DIVERGENT_BARRIER);
    check_site(&e, &f[0].site[0], "barrier-low", "barrier", "first barrier");
    check_site(&e, &f[0].site[1], "barrier-high", "barrier", "second barrier");
    CHECK(f[0].site[0].nthreads == 32 && f[0].site[1].nthreads == 32 && f[0].threads == 64);
out:
    env_close(&e);
}

/* Deferred simdgroup-matrix products (prelude/sw_sync.h): an out-of-bounds store of
 * a product chain's result is found in both modes, at the store, after the flush. */
TEST(sw_findings_out_of_bounds_store_of_deferred_products) {
    const char *modes[] = {"fast", "full"};
    for (int m = 0; m < 2; m++) {
        fenv e;
        if (env_open(&e, modes[m]) != 0) {
            env_close(&e);
            return;
        }
        int n = 0;
        const dev_finding *f = findings(run(&e, "mma_store_overrun"), &n);
        CHECK_MSG(n >= 1 && f[0].kind == DEV_FIND_OOB, "%s: %d findings, first %s", modes[m], n,
                  n ? dev_finding_kind_name(f[0].kind) : "-");
        if (n >= 1) {
            check_site(&e, &f[0].site[0], "mma-overrun", m ? "write" : NULL, modes[m]);
            CHECK(strcmp(f[0].memory, "device") == 0 && f[0].buffer == 1 && f[0].offset_lo >= (int64_t)f[0].length);
        }
        env_close(&e);
    }
}

/* Lanes that read a product after different numbers of products diverged around
 * simdgroup matrix operations: a fault at the read, not numbers. */
TEST(sw_findings_divergent_simdgroup_products) {
    fenv e;
    if (env_open(&e, "fast") != 0) goto out;
    int n = 0;
    const dev_finding *f = findings(run(&e, "mma_divergent"), &n);
    CHECK_EQ_INT(n, 1);
    if (n != 1) goto out;
    CHECK_EQ_INT(f[0].kind, DEV_FIND_FAULT);
    CHECK_MSG(strstr(f[0].detail, "divergent control flow") != NULL, "detail: %s", f[0].detail);
    /* The line is the read's; the file names where the prelude found it. */
    CHECK_MSG(f[0].site[0].line == line_of(e.src, "mma-read"), "line %d, want %d", f[0].site[0].line,
              line_of(e.src, "mma-read"));
out:
    env_close(&e);
}

/* A bug inside an included header is reported at the header's lines (its path as
 * the include names it).  The header is included by absolute path, so the test
 * does not depend on where includes are searched. */
TEST(sw_findings_name_lines_in_included_headers) {
    const char *path, *version;
    char *cerr = NULL;
    if (sw_compiler_info(&path, &version, &cerr) != 0) SKIP("%s", cerr ? cerr : "no clang++ >= 17");
    char dir[] = "/tmp/gdn-findings-XXXXXX", hdr[128], src[1024];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    snprintf(hdr, sizeof hdr, "%s/stage.h", dir);
    FILE *f = fopen(hdr, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("// stage.h\n"
          "inline float stage_and_peek(threadgroup float *st, uint tid) {\n"
          "    st[tid] = float(tid);\n"
          "    return st[(tid + 1) % 64];\n"
          "}\n",
          f);
    fclose(f);
    snprintf(src, sizeof src,
             "#include <metal_stdlib>\nusing namespace metal;\n#include \"%s\"\n"
             "kernel void peek(device float *out [[buffer(0)]], uint tid [[thread_index_in_threadgroup]]) {\n"
             "    threadgroup float st[64];\n"
             "    out[tid] = stage_and_peek(st, tid);\n"
             "}\n",
             hdr);
    sw_test_env env;
    sw_test_env_open(&env, "full", src, "peek.metal");
    swmtl_schedule inorder = {.lanes = 1};
    if (env.lib) CHECK(swmtl_device_set_schedule(env.dev, &inorder) == 0);
    if (env.lib) {
        id out = MSG2(id, env.dev, "newBufferWithLength:options:", NSUInteger, 256, NSUInteger, 0);
        id cb = sw_test_run(&env, "peek", &out, 1, "dispatchThreadgroups:threadsPerThreadgroup:", (MTLSize){1, 1, 1},
                            (MTLSize){64, 1, 1});
        int n = 0;
        const dev_finding *x = findings(cb, &n);
        /* Thread i reads st[i+1] before thread i+1 writes it (uninitialised, then a
         * race with that write), and thread 63 reads st[0] that thread 0 wrote (a
         * race): three findings, every access in the header. */
        CHECK_MSG(n == 3, "%d findings", n);
        for (int i = 0; i < n; i++)
            for (int s = 0; s < x[i].nsites; s++) {
                const dev_site *site = &x[i].site[s];
                int want = strcmp(site->access, "write") == 0 ? 3 : 4;
                CHECK_MSG(strcmp(site->file, hdr) == 0 && site->line == want &&
                              strstr(site->text, want == 3 ? "st[tid] = float(tid);" : "return st[(tid + 1) % 64];"),
                          "finding %d site %d: %s:%d `%s`", i, s, site->file, site->line, site->text);
            }
        MSG0(void, out, "release");
    }
    sw_test_env_close(&env);
    unlink(hdr);
    rmdir(dir);
}
