/* test_sw_msl.c — real MSL through the whole software device: newLibraryWithSource:
 * (front end + clang), pipelines, command buffers, and the checks' diagnoses of
 * real kernels (uninitialised threadgroup read, race, divergent barrier, OOB).
 * Skipped when no clang++ >= 17 is installed.  Compiled variants are cached in one
 * directory under /tmp shared by these tests, so only the first pays for clang. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/objc_call.h"
#include "swmetal/objc_base.h"
#include "swmetal/sw_compile.h"
#include "swmetal/swmetal.h"
#include "sw_test_env.h"
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

static const char *msl_src =
    "#include <metal_stdlib>\n"                                                              /* 1 */
    "using namespace metal;\n"                                                               /* 2 */
    "\n"                                                                                     /* 3 */
    "kernel void tg_reduce(device const float *in [[buffer(0)]],\n"                          /* 4 */
    "                      device float *out [[buffer(1)]],\n"                               /* 5 */
    "                      device atomic_uint *count [[buffer(2)]],\n"                       /* 6 */
    "                      uint tid [[thread_index_in_threadgroup]],\n"                      /* 7 */
    "                      uint gid [[thread_position_in_grid]],\n"                          /* 8 */
    "                      uint lane [[thread_index_in_simdgroup]],\n"                       /* 9 */
    "                      uint sg [[simdgroup_index_in_threadgroup]],\n"                    /* 10 */
    "                      uint tgid [[threadgroup_position_in_grid]]) {\n"                  /* 11 */
    "    threadgroup float partial[8];\n"                                                    /* 12 */
    "    float v = simd_sum(in[gid]);\n"                                                     /* 13 */
    "    if (lane == 0) partial[sg] = v;\n"                                                  /* 14 */
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"                                 /* 15 */
    "    if (tid == 0) {\n"                                                                  /* 16 */
    "        float s = 0;\n"                                                                 /* 17 */
    "        for (uint i = 0; i < 8; i++) s += partial[i];\n"                                /* 18 */
    "        out[tgid] = s;\n"                                                               /* 19 */
    "    }\n"                                                                                /* 20 */
    "    atomic_fetch_add_explicit(count, 1u, memory_order_relaxed);\n"                      /* 21 */
    "}\n"                                                                                    /* 22 */
    "\n"                                                                                     /* 23 */
    "kernel void uninit_read(device float *out [[buffer(0)]],\n"                             /* 24 */
    "                        uint tid [[thread_index_in_threadgroup]]) {\n"                  /* 25 */
    "    threadgroup float tile[64];\n"                                                      /* 26 */
    "    if (tid != 5) tile[tid] = 1.0f;\n"                                                  /* 27 */
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"                                 /* 28 */
    "    out[tid] = tile[(tid + 1) % 64];\n"                                                 /* 29 */
    "}\n"                                                                                    /* 30 */
    "\n"                                                                                     /* 31 */
    "kernel void racy(device float *out [[buffer(0)]],\n"                                    /* 32 */
    "                 uint tid [[thread_index_in_threadgroup]]) {\n"                         /* 33 */
    "    threadgroup float tile[64];\n"                                                      /* 34 */
    "    tile[tid] = float(tid);\n"                                                          /* 35 */
    "    out[tid] = tile[(tid + 63) % 64];\n"                                                /* 36 */
    "}\n"                                                                                    /* 37 */
    "\n"                                                                                     /* 38 */
    "kernel void divergent(device float *out [[buffer(0)]],\n"                               /* 39 */
    "                      uint tid [[thread_index_in_threadgroup]]) {\n"                    /* 40 */
    "    if (tid < 16) {\n"                                                                  /* 41 */
    "        threadgroup_barrier(mem_flags::mem_threadgroup);\n"                             /* 42 */
    "    } else {\n"                                                                         /* 43 */
    "        threadgroup_barrier(mem_flags::mem_threadgroup);\n"                             /* 44 */
    "    }\n"                                                                                /* 45 */
    "    out[tid] = 1.0f;\n"                                                                 /* 46 */
    "}\n"                                                                                    /* 47 */
    "\n"                                                                                     /* 48 */
    "kernel void one_past(device float *out [[buffer(0)]],\n"                                /* 49 */
    "                     uint gid [[thread_position_in_grid]]) {\n"                         /* 50 */
    "    out[gid] = float(gid);\n"                                                           /* 51 */
    "}\n";

typedef sw_test_env msl_env;

static void env_open_src(msl_env *e, const char *checks, const char *src) {
    sw_test_env_open(e, checks, src, "checks_test.metal");
}

static void env_open(msl_env *e, const char *checks) { env_open_src(e, checks, msl_src); }

static void env_close(msl_env *e) { sw_test_env_close(e); }

static id new_buffer(msl_env *e, size_t len) {
    return MSG2(id, e->dev, "newBufferWithLength:options:", NSUInteger, len, NSUInteger, 0);
}

/* groups x tg threads, one-dimensional. */
static id run(msl_env *e, const char *name, id *bufs, int n, NSUInteger groups, NSUInteger tg) {
    return sw_test_run(e, name, bufs, n, "dispatchThreadgroups:threadsPerThreadgroup:", (MTLSize){groups, 1, 1},
                       (MTLSize){tg, 1, 1});
}

static const char *cb_error(id cb) {
    id err = MSG0(id, cb, "error");
    return err ? MSG0(const char *, MSG0(id, err, "localizedDescription"), "UTF8String") : NULL;
}

static void free_buffers(id *bufs, int n) {
    for (int i = 0; i < n; i++) MSG0(void, bufs[i], "release");
}

TEST(sw_msl_correct_kernel_runs_clean_in_every_mode) {
    const char *modes[] = {"none", "fast", "full"};
    for (int m = 0; m < 3; m++) {
        msl_env e;
        env_open(&e, modes[m]);
        enum { G = 12, TG = 256 };
        id bufs[3] = {new_buffer(&e, G * TG * 4), new_buffer(&e, G * 4), new_buffer(&e, 4)};
        float *in = MSG0(void *, bufs[0], "contents");
        for (int i = 0; i < G * TG; i++) in[i] = (float)(i % 7) - 3.0f;
        id cb = run(&e, "tg_reduce", bufs, 3, G, TG);
        const char *err = cb_error(cb);
        CHECK_MSG(MSG0(NSUInteger, cb, "status") == 4, "%s: %s", modes[m], err ? err : "?");
        int kept = 0;
        CHECK_EQ_INT(swmtl_command_buffer_diagnostic_count(cb, &kept), 0);
        const float *out = MSG0(void *, bufs[1], "contents");
        for (int g = 0; g < G; g++) {
            double want = 0;
            for (int i = 0; i < TG; i++) want += in[g * TG + i];
            CHECK_NEAR(out[g], want, 1e-3);
        }
        CHECK_EQ_INT(*(uint32_t *)MSG0(void *, bufs[2], "contents"), G * TG);
        free_buffers(bufs, 3);
        env_close(&e);
    }
}

/* The finding of kind k among a command buffer's findings, or NULL. */
static const dev_finding *finding_of(id cb, int kind, int *n) {
    const dev_finding *f = swmtl_command_buffer_findings(cb, n);
    for (int i = 0; f && i < *n; i++)
        if (f[i].kind == kind) return &f[i];
    return NULL;
}

TEST(sw_msl_full_reports_uninitialised_threadgroup_read) {
    msl_env e;
    env_open(&e, "full");
    id out = new_buffer(&e, 64 * 4);
    id cb = run(&e, "uninit_read", &out, 1, 1, 64);
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
    const char *d = swmtl_command_buffer_diagnostic(cb, 0);
    CHECK_MSG(d && strstr(d, "kernel 'uninit_read'") && strstr(d, "read of uninitialised threadgroup memory") &&
                  strstr(d, "'tile' (line 26) bytes 20..23") && strstr(d, "at checks_test.metal:29") &&
                  strstr(d, "thread_position_in_grid (4,0,0)"),
              "diag: %s", d ? d : "(none)");
    int n = 0;
    const dev_finding *f = finding_of(cb, DEV_FIND_UNINIT_READ, &n);
    CHECK_EQ_INT(n, 1);
    CHECK_MSG(f && f->nsites == 1 && f->site[0].line == 29 && strcmp(f->site[0].file, "checks_test.metal") == 0 &&
                  strcmp(f->site[0].text, "out[tid] = tile[(tid + 1) % 64];") == 0 &&
                  strcmp(f->site[0].access, "read") == 0 && f->site[0].index == 4 && strcmp(f->variable, "tile") == 0,
              "site: %s:%d `%s`", f ? f->site[0].file : "-", f ? f->site[0].line : 0, f ? f->site[0].text : "-");
    free_buffers(&out, 1);
    env_close(&e);
}

TEST(sw_msl_full_reports_threadgroup_race) {
    msl_env e;
    env_open(&e, "full");
    id out = new_buffer(&e, 64 * 4);
    id cb = run(&e, "racy", &out, 1, 1, 64);
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
    /* Thread i reads t[i-1] that thread i-1 wrote with no barrier between (write
     * at line 35, read at line 36), and thread 63 writes t[63] that thread 0 read
     * first: two races on one line pair, in both orders. */
    int n = 0, write_read = 0, read_write = 0;
    const dev_finding *f = swmtl_command_buffer_findings(cb, &n);
    for (int i = 0; f && i < n; i++) {
        const dev_finding *x = &f[i];
        if (x->kind != DEV_FIND_TG_RACE || x->nsites != 2) continue;
        CHECK(x->has_interval && x->barrier[0].line == 0 && x->barrier[1].line == 0);
        if (x->site[0].line == 35 && strcmp(x->site[0].access, "write") == 0 && x->site[1].line == 36 &&
            strcmp(x->site[1].access, "read") == 0 && x->site[0].index + 1 == x->site[1].index)
            write_read = 1;
        if (x->site[0].line == 36 && strcmp(x->site[0].access, "read") == 0 && x->site[1].line == 35 &&
            strcmp(x->site[1].access, "write") == 0)
            read_write = 1;
    }
    CHECK_MSG(write_read && read_write, "races (write 35 -> read 36: %d, read 36 -> write 35: %d) among %d findings; "
              "first: %s", write_read, read_write, n, swmtl_command_buffer_diagnostic(cb, 0));
    free_buffers(&out, 1);
    env_close(&e);
}

TEST(sw_msl_divergent_barrier_names_both_lines) {
    msl_env e;
    env_open(&e, "fast");
    id out = new_buffer(&e, 64 * 4);
    id cb = run(&e, "divergent", &out, 1, 1, 64);
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
    const char *err = cb_error(cb);
    CHECK_MSG(err && strstr(err, "divergent threadgroup barrier") && strstr(err, "checks_test.metal:42") &&
                  strstr(err, "checks_test.metal:44"),
              "error: %s", err ? err : "(none)");
    int n = 0;
    const dev_finding *f = finding_of(cb, DEV_FIND_DIVERGENT_BARRIER, &n);
    CHECK_MSG(f && f->nsites == 2 && f->site[0].line == 42 && f->site[0].nthreads == 16 && f->site[1].line == 44 &&
                  f->site[1].nthreads == 48 && f->threads == 64 &&
                  strcmp(f->site[1].text, "threadgroup_barrier(mem_flags::mem_threadgroup);") == 0,
              "sites: line %d (%u), line %d (%u)", f ? f->site[0].line : 0, f ? f->site[0].nthreads : 0,
              f ? f->site[1].line : 0, f ? f->site[1].nthreads : 0);
    free_buffers(&out, 1);
    env_close(&e);
}

TEST(sw_msl_oob_write_one_past_end) {
    const char *modes[] = {"fast", "full"};
    for (int m = 0; m < 2; m++) {
        msl_env e;
        env_open(&e, modes[m]);
        id out = new_buffer(&e, 256 * 4);
        id cb = run(&e, "one_past", &out, 1, 1, 257);
        CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
        const char *err = cb_error(cb);
        CHECK_MSG(err && strstr(err, "kernel 'one_past'") && OOB_WRITE_WORD(err) && strstr(err, "on buffer(0) byte") &&
                      strstr(err, "past its end; it has 1024 bytes") && strstr(err, "at checks_test.metal:51") &&
                      strstr(err, "thread_position_in_grid (256,0,0)"),
                  "%s: error: %s", modes[m], err ? err : "(none)");
        /* Fast mode learns it from the guard page's fault, full mode from the hook. */
        int n = 0;
        const dev_finding *f = finding_of(cb, DEV_FIND_OOB, &n);
        CHECK_MSG(f && f->buffer == 0 && f->offset_lo == 1024 && f->length == 1024 && f->site[0].line == 51 &&
                      strcmp(f->site[0].text, "out[gid] = float(gid);") == 0 && f->site[0].thread[0] == 256,
                  "%s: finding %s", modes[m], f ? f->site[0].text : "(none)");
        free_buffers(&out, 1);
        env_close(&e);
    }
}

static const char *atomic_order_src =
    "#include <metal_stdlib>\n"                                                                   /* 1 */
    "using namespace metal;\n"                                                                    /* 2 */
    "kernel void float_atomics(device const float *in [[buffer(0)]],\n"                           /* 3 */
    "                          device atomic_float *acc [[buffer(1)]], device float *old [[buffer(2)]],\n" /* 4 */
    "                          uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],\n" /* 5 */
    "                          uint tgid [[threadgroup_position_in_grid]]) {\n"                   /* 6 */
    "    atomic_fetch_add_explicit(&acc[tid % 4], in[gid], memory_order_relaxed);\n"             /* 7 */
    "    if (tid == 0) old[tgid] = atomic_fetch_add_explicit(&acc[4], 1.0f, memory_order_relaxed);\n" /* 8 */
    "}\n"                                                                                         /* 9 */
    "kernel void oob_atomic(device atomic_float *acc [[buffer(0)]], uint gid [[thread_position_in_grid]]) {\n" /* 10 */
    "    atomic_fetch_add_explicit(&acc[gid + 1000], 1.0f, memory_order_relaxed);\n"              /* 11 */
    "}\n"                                                                                        /* 12 */
    "kernel void own_adds_then_plain(device float *acc [[buffer(0)]], device float *out [[buffer(1)]],\n" /* 13 */
    "                                uint tid [[thread_index_in_threadgroup]],\n"                /* 14 */
    "                                uint tgid [[threadgroup_position_in_grid]]) {\n"            /* 15 */
    "    atomic_fetch_add_explicit((device atomic_float *)&acc[2 * tgid], 1.0f, memory_order_relaxed);\n" /* 16 */
    "    atomic_fetch_add_explicit((device atomic_float *)&acc[2 * tgid + 1], 1.0f, memory_order_relaxed);\n" /* 17 */
    "    threadgroup_barrier(mem_flags::mem_device);\n"                                          /* 18 */
    "    if (tid == 0) { out[tgid] = acc[2 * tgid]; acc[2 * tgid + 1] = 100.0f; }\n"             /* 19 */
    "}\n";

/* Float atomic adds from every threadgroup land in threadgroup order (the device
 * records the discarded ones and applies them in turn; full checks apply every one in
 * turn): the same bytes each run, equal to one worker's in-order result, and a ticket
 * whose value the kernel keeps is the group's position. */
TEST(sw_msl_float_atomics_are_deterministic) {
    enum { G = 200, TG = 64 };
    float want[5] = {0};
    for (int g = 0; g < G; g++)
        for (int t = 0; t < TG; t++) {
            int m = (g * 7 + t * 13) % 11 - 5;
            want[t % 4] += ldexpf((float)m + 0.375f, (g * 3 + t) % 40 - 20);
        }
    want[4] = (float)G;
    const char *modes[] = {"fast", "full"};
    for (int m = 0; m < 2; m++) {
        msl_env e;
        env_open_src(&e, modes[m], atomic_order_src);
        if (!e.lib) return;
        for (int r = 0; r < 3; r++) {
            id bufs[3] = {new_buffer(&e, G * TG * 4), new_buffer(&e, 5 * 4), new_buffer(&e, G * 4)};
            float *in = MSG0(void *, bufs[0], "contents");
            for (int g = 0; g < G; g++)
                for (int t = 0; t < TG; t++) {
                    int k = (g * 7 + t * 13) % 11 - 5;
                    in[g * TG + t] = ldexpf((float)k + 0.375f, (g * 3 + t) % 40 - 20);
                }
            memset(MSG0(void *, bufs[1], "contents"), 0, 5 * 4);
            id cb = run(&e, "float_atomics", bufs, 3, G, TG);
            CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 4);
            const float *acc = MSG0(void *, bufs[1], "contents"), *old = MSG0(void *, bufs[2], "contents");
            CHECK_MSG(memcmp(acc, want, sizeof want) == 0, "%s run %d: %a %a %a %a %a, in order %a %a %a %a %a",
                      modes[m], r, acc[0], acc[1], acc[2], acc[3], acc[4], want[0], want[1], want[2], want[3], want[4]);
            int bad = 0;
            for (int g = 0; g < G; g++) bad += old[g] != (float)g;
            CHECK_MSG(bad == 0, "%s run %d: %d groups drew another ticket than their position", modes[m], r, bad);
            free_buffers(bufs, 3);
        }
        env_close(&e);
    }
}

/* After a mem_device barrier, plain loads and stores see the group's own recorded
 * atomics (the group takes its turn there), whatever the number of workers. */
TEST(sw_msl_device_barrier_makes_own_atomics_visible) {
    enum { G = 64, TG = 64 };
    msl_env e;
    env_open_src(&e, "fast", atomic_order_src);
    if (!e.lib) return;
    id bufs[2] = {new_buffer(&e, 2 * G * 4), new_buffer(&e, G * 4)};
    memset(MSG0(void *, bufs[0], "contents"), 0, 2 * G * 4);
    id cb = run(&e, "own_adds_then_plain", bufs, 2, G, TG);
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 4);
    const float *acc = MSG0(void *, bufs[0], "contents"), *out = MSG0(void *, bufs[1], "contents");
    int bad_read = 0, bad_store = 0;
    for (int g = 0; g < G; g++) {
        bad_read += out[g] != (float)TG;
        bad_store += acc[2 * g + 1] != 100.0f;
    }
    CHECK_MSG(bad_read == 0, "%d of %d groups read their accumulator without their own adds (first: %g, want %d)",
              bad_read, G, out[0], TG);
    CHECK_MSG(bad_store == 0, "%d of %d groups' adds landed after their plain store (first: %g, want 100)", bad_store,
              G, acc[1]);
    free_buffers(bufs, 2);
    env_close(&e);
}

/* A recorded atomic is still checked where the kernel makes it. */
TEST(sw_msl_deferred_atomic_out_of_bounds_names_its_line) {
    msl_env e;
    env_open_src(&e, "fast", atomic_order_src);
    if (!e.lib) return;
    id acc = new_buffer(&e, 64 * 4);
    id cb = run(&e, "oob_atomic", &acc, 1, 4, 64);
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
    int n = 0;
    const dev_finding *f = finding_of(cb, DEV_FIND_OOB, &n);
    CHECK_MSG(f && f->buffer == 0 && f->site[0].line == 11, "finding: %s line %d", f ? f->site[0].text : "(none)",
              f ? f->site[0].line : -1);
    free_buffers(&acc, 1);
    env_close(&e);
}

TEST(sw_msl_compile_error_comes_back_as_nserror) {
    const char *path, *version;
    char *cerr = NULL;
    if (sw_compiler_info(&path, &version, &cerr) != 0) SKIP("%s", cerr ? cerr : "no clang++ >= 17");
    id pool = MSG0(id, MSG0(id, objc_class_named("NSAutoreleasePool"), "alloc"), "init");
    id dev = swmtl_create_system_default_device();
    id error = nil;
    id lib = MSG3(id, dev, "newLibraryWithSource:options:error:", id,
                  sw_test_named_source("#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float *o "
                                       "[[buffer(0)]]) {\n    o[0] = undefined_name;\n}\n",
                                       "broken.metal"),
                  id, nil, id *, &error);
    CHECK(lib == nil && error != nil);
    const char *text = error ? MSG0(const char *, MSG0(id, error, "localizedDescription"), "UTF8String") : NULL;
    CHECK_MSG(text && strstr(text, "broken.metal:4:"), "error: %s", text ? text : "(none)");
    MSG0(void, dev, "release");
    MSG0(void, pool, "drain");
}

/* A library that never synchronises: its threadgroups run through the kernels'
 * compiled range loops (sw_range_fn) in the default in-order schedule.  The ids
 * each thread sees, the thread a fault names, and per-thread threadgroup
 * allocations must be what the fiber path gives. */
static const char *range_src =
    "#include <metal_stdlib>\n"                                                              /* 1 */
    "using namespace metal;\n"                                                               /* 2 */
    "kernel void ids3(device uint *out [[buffer(0)]], uint3 gid [[thread_position_in_grid]],\n" /* 3 */
    "                 uint3 lid [[thread_position_in_threadgroup]],\n"                        /* 4 */
    "                 uint3 tgp [[threadgroup_position_in_grid]],\n"                          /* 5 */
    "                 uint tid [[thread_index_in_threadgroup]],\n"                            /* 6 */
    "                 uint sg [[simdgroup_index_in_threadgroup]],\n"                          /* 7 */
    "                 uint lane [[thread_index_in_simdgroup]], uint3 tpg [[threads_per_grid]]) {\n" /* 8 */
    "    uint i = (gid.z * tpg.y + gid.y) * tpg.x + gid.x;\n"                                  /* 9 */
    "    out[i * 6 + 0] = gid.x | (gid.y << 10) | (gid.z << 20);\n"                            /* 10 */
    "    out[i * 6 + 1] = lid.x | (lid.y << 10) | (lid.z << 20);\n"                            /* 11 */
    "    out[i * 6 + 2] = tgp.x | (tgp.y << 10) | (tgp.z << 20);\n"                            /* 12 */
    "    out[i * 6 + 3] = tid;\n"                                                              /* 13 */
    "    out[i * 6 + 4] = sg;\n"                                                               /* 14 */
    "    out[i * 6 + 5] = lane;\n"                                                             /* 15 */
    "}\n"                                                                                      /* 16 */
    "kernel void oob_2d(device float *out [[buffer(0)]], uint2 gid [[thread_position_in_grid]]) {\n" /* 17 */
    "    out[gid.x == 5 && gid.y == 2 ? 1024u : 0u] = 1.0f;\n"                                 /* 18 */
    "}\n"                                                                                      /* 19 */
    "kernel void tg_private(device float *out [[buffer(0)]], uint tid [[thread_index_in_threadgroup]],\n" /* 20 */
    "                       uint gid [[thread_position_in_grid]]) {\n"                       /* 21 */
    "    threadgroup float scratch[4096];\n"                                                   /* 22 */
    "    scratch[tid] = float(gid);\n"                                                         /* 23 */
    "    out[gid] = scratch[tid] + 1.0f;\n"                                                    /* 24 */
    "}\n";

/* A grid of threads (edge threadgroups cut), in up to three dimensions. */
static id run3(msl_env *e, const char *name, id *bufs, int n, MTLSize grid, MTLSize tg) {
    return sw_test_run(e, name, bufs, n, "dispatchThreads:threadsPerThreadgroup:", grid, tg);
}

TEST(sw_msl_range_loop_ids_faults_and_threadgroup_memory) {
    const char *modes[] = {"none", "fast"};
    for (int m = 0; m < 2; m++) {
        msl_env e;
        env_open_src(&e, modes[m], range_src);
        /* ids: a 3-D grid whose edge threadgroups are cut in x and y */
        enum { X = 37, Y = 5, Z = 3 };
        id out = new_buffer(&e, (size_t)X * Y * Z * 6 * 4);
        id cb = run3(&e, "ids3", &out, 1, (MTLSize){X, Y, Z}, (MTLSize){16, 4, 2});
        CHECK_MSG(cb_error(cb) == NULL, "%s: %s", modes[m], cb_error(cb));
        const uint32_t *o = MSG0(void *, out, "contents");
        int bad = 0;
        for (uint32_t z = 0; z < Z; z++)
            for (uint32_t y = 0; y < Y; y++)
                for (uint32_t x = 0; x < X; x++) {
                    const uint32_t *r = o + ((z * Y + y) * X + x) * 6;
                    uint32_t lx = x % 16, ly = y % 4, lz = z % 2;
                    uint32_t ax = x / 16 == X / 16 ? X % 16 : 16, ay = y / 4 == Y / 4 ? Y % 4 : 4;
                    uint32_t tid = (lz * ay + ly) * ax + lx;
                    uint32_t want[6] = {x | y << 10 | z << 20, lx | ly << 10 | lz << 20,
                                        x / 16 | (y / 4) << 10 | (z / 2) << 20, tid, tid / 32, tid % 32};
                    if (memcmp(r, want, sizeof want) != 0 && bad++ < 3)
                        test_fail(__FILE__, __LINE__, "%s: thread (%u,%u,%u): got %x %x %x %u %u %u", modes[m], x,
                                  y, z, r[0], r[1], r[2], r[3], r[4], r[5]);
                }
        CHECK_EQ_INT(bad, 0);
        free_buffers(&out, 1);

        /* a fault names the thread that made it, in a 2-D threadgroup */
        if (strcmp(modes[m], "fast") == 0) {
            id small = new_buffer(&e, 1024);
            cb = run3(&e, "oob_2d", &small, 1, (MTLSize){8, 4, 1}, (MTLSize){8, 4, 1});
            const char *err = cb_error(cb);
            CHECK_MSG(err && strstr(err, "kernel 'oob_2d'") && strstr(err, "thread_position_in_grid (5,2,0)") &&
                          strstr(err, "checks_test.metal:18"),
                      "error: %s", err ? err : "(none)");
            free_buffers(&small, 1);
        }

        /* each thread's threadgroup allocation starts where the kernel's does: 256
         * threads x 16 KB would not fit in 32 KB if they piled up */
        id tgo = new_buffer(&e, 512 * 4);
        cb = run3(&e, "tg_private", &tgo, 1, (MTLSize){512, 1, 1}, (MTLSize){256, 1, 1});
        CHECK_MSG(cb_error(cb) == NULL, "%s: tg_private: %s", modes[m], cb_error(cb));
        const float *f = MSG0(void *, tgo, "contents");
        CHECK(f[0] == 1.0f && f[300] == 301.0f && f[511] == 512.0f);
        free_buffers(&tgo, 1);
        env_close(&e);
    }
}

/* MTLFunction.functionConstantsDictionary answers the source's declarations (what a
 * host types --constant values by), and a value of another type than declared is
 * refused with the constant's name and both types. */
TEST(sw_msl_function_constants_are_typed_by_their_declarations) {
    const char *path, *version;
    char *cerr = NULL;
    if (sw_compiler_info(&path, &version, &cerr) != 0) SKIP("%s", cerr ? cerr : "no clang++ >= 17");
    id pool = MSG0(id, MSG0(id, objc_class_named("NSAutoreleasePool"), "alloc"), "init");
    id dev = swmtl_create_system_default_device();
    id error = nil;
    id lib = MSG3(id, dev, "newLibraryWithSource:options:error:", id,
                  sw_test_named_source("#include <metal_stdlib>\nusing namespace metal;\n"
                                       "constant uint fc_u [[function_constant(10)]];\n"
                                       "constant half fc_h [[function_constant(12)]];\n"
                                       "kernel void k(device float *o [[buffer(0)]]) { o[0] = float(fc_u) + fc_h; }\n",
                                       "typed.metal"),
                  id, nil, id *, &error);
    CHECK(lib != nil);
    long live = sw_objc_live_objects();
    id inner = MSG0(id, MSG0(id, objc_class_named("NSAutoreleasePool"), "alloc"), "init");
    id fn = lib ? MSG1(id, lib, "newFunctionWithName:", id, sw_test_str("k")) : nil;
    id dict = fn ? MSG0(id, fn, "functionConstantsDictionary") : nil;
    CHECK(dict != nil && MSG0(NSUInteger, dict, "count") == 2);
    id u = dict ? MSG1(id, dict, "objectForKey:", id, sw_test_str("fc_u")) : nil;
    CHECK(u && MSG0(NSUInteger, u, "index") == 10 && MSG0(NSUInteger, u, "type") == 33 /* MTLDataTypeUInt */);
    id h = dict ? MSG1(id, MSG0(id, dict, "allValues"), "objectAtIndex:", NSUInteger, (NSUInteger)1) : nil;
    CHECK(h && MSG0(NSUInteger, h, "index") == 12 && MSG0(NSUInteger, h, "type") == 16 /* MTLDataTypeHalf */);
    CHECK(h && strcmp(MSG0(const char *, MSG0(id, h, "name"), "UTF8String"), "fc_h") == 0);
    if (fn) MSG0(void, fn, "release");
    MSG0(void, inner, "drain");
    CHECK_EQ_INT(sw_objc_live_objects(), live); /* the dictionary, its arrays and constants are gone */
    id fcv = MSG0(id, MSG0(id, (id)swmtl_class("MTLFunctionConstantValues"), "alloc"), "init");
    int32_t v = 7;
    MSG3(void, fcv, "setConstantValue:type:atIndex:", const void *, &v, NSUInteger, 29 /* Int */, NSUInteger, 10);
    error = nil;
    fn = lib ? MSG3(id, lib, "newFunctionWithName:constantValues:error:", id, sw_test_str("k"), id, fcv, id *, &error)
             : nil;
    CHECK(fn == nil && error != nil);
    const char *text = error ? MSG0(const char *, MSG0(id, error, "localizedDescription"), "UTF8String") : NULL;
    CHECK_MSG(text && strstr(text, "function constant 10 (fc_u) is declared uint but was given a value of type int"), "%s",
              text ? text : "(none)");
    MSG0(void, fcv, "release");
    if (lib) MSG0(void, lib, "release");
    MSG0(void, dev, "release");
    MSG0(void, pool, "drain");
}
