/* test_sw_lanes.c — the lanes variant (lanes*.c + prelude/sw_lanes.h): a
 * simdgroup's 32 lanes run together as data instead of 32 fibers.
 *
 * The rule it must keep: every kernel gives the same bytes either way.  Each test
 * kernel here runs twice, with the lanes variant and with GDNBENCH_SW_LANES=0
 * (fibers), and the outputs are compared bit for bit; a counter proves that the
 * first run did use the lanes entry (a silent fallback would compare fibers with
 * fibers).  The kernels cover what the rewrite changes: varying if/else, loops
 * with varying break and continue, returns under varying control in a helper,
 * ?: and && guarding loads that would fault, out-parameters, gathers and
 * scatters, simd reductions/prefixes/shuffles, and partial simdgroups.  A fault in
 * the lanes run must still name the exact thread (the group is run again with
 * fibers).  Skipped when no clang++ >= 17 is installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/objc_call.h"
#include "swmetal/exec.h"
#include "swmetal/msl_front.h"
#include "swmetal/sw_compile.h"
#include "swmetal/swmetal.h"
#include "sw_test_env.h"
#include "test.h"

static const char *lanes_src =
    "#include <metal_stdlib>\n"                                                              /* 1 */
    "using namespace metal;\n"                                                               /* 2 */
    "\n"                                                                                     /* 3 */
    "static float shape(float x, uint lane) {\n"                                             /* 4 */
    "    if (lane % 3 == 0) return x * 2.0f;\n"                                              /* 5 */
    "    if (x < 0.0f) return -x;\n"                                                         /* 6 */
    "    return x + 1.0f;\n"                                                                 /* 7 */
    "}\n"                                                                                    /* 8 */
    "\n"                                                                                     /* 9 */
    "static void fill(thread float *dst, device const float *src, uint lane) {\n"            /* 10 */
    "    for (uint i = 0; i < 4; i++) dst[i] = src[lane * 4 + i] * 0.5f;\n"                  /* 11 */
    "}\n"                                                                                    /* 12 */
    "\n"                                                                                     /* 13 */
    "kernel void lanes_mix(device const float *in [[buffer(0)]],\n"                          /* 14 */
    "                      device float *out [[buffer(1)]],\n"                               /* 15 */
    "                      constant uint &n [[buffer(2)]],\n"                                /* 16 */
    "                      uint gid [[thread_position_in_grid]],\n"                          /* 17 */
    "                      uint lane [[thread_index_in_simdgroup]]) {\n"                     /* 18 */
    "    float x = gid < n ? in[gid] : -1.0f;\n"                                             /* 19 */
    "    bool big = gid < n && in[gid] > 0.25f;\n"                                           /* 20 */
    "    float s = simd_sum(x);\n"                                                           /* 21 */
    "    float p = simd_prefix_exclusive_sum(x);\n"                                          /* 22 */
    "    float b = simd_shuffle_xor(x, 5u);\n"                                               /* 23 */
    "    float t = 0.0f;\n"                                                                  /* 24 */
    "    for (uint i = 0; i < 40; i++) {\n"                                                  /* 25 */
    "        if (i > lane) break;\n"                                                         /* 26 */
    "        if ((i & 1u) != 0) continue;\n"                                                 /* 27 */
    "        t += in[(gid + i) % n];\n"                                                      /* 28 */
    "    }\n"                                                                                /* 29 */
    "    uint k = lane;\n"                                                                   /* 30 */
    "    while (k > 3) k -= 4;\n"                                                            /* 31 */
    "    float r = shape(x, lane);\n"                                                        /* 32 */
    "    float m = simd_max(x);\n"                                                           /* 33 */
    "    if (big) {\n"                                                                       /* 34 */
    "        m = m + simd_sum(1.0f);\n"                                                      /* 35 */
    "    } else {\n"                                                                         /* 36 */
    "        m = -m;\n"                                                                      /* 37 */
    "    }\n"                                                                                /* 38 */
    "    if (gid >= n) return;\n"                                                            /* 39 */
    "    out[gid] = s + p * 0.5f + b + t + float(k) + r + m;\n"                              /* 40 */
    "    if (lane == 0) out[n + gid / 8] = simd_min(x);\n"                                   /* 41 */
    "}\n"                                                                                    /* 42 */
    "\n"                                                                                     /* 43 */
    "kernel void lanes_outparam(device const float *in [[buffer(0)]],\n"                     /* 44 */
    "                           device float *out [[buffer(1)]],\n"                          /* 45 */
    "                           uint lane [[thread_index_in_simdgroup]],\n"                  /* 46 */
    "                           uint sg [[simdgroup_index_in_threadgroup]],\n"               /* 47 */
    "                           uint3 tgp [[threadgroup_position_in_grid]]) {\n"             /* 48 */
    "    uint row = tgp.x * 2 + sg;\n"                                                       /* 49 */
    "    float v[4];\n"                                                                      /* 50 */
    "    fill(v, in + row * 128, lane);\n"                                                   /* 51 */
    "    float acc = 0.0f;\n"                                                                /* 52 */
    "    for (uint i = 0; i < 4; i++) acc += v[i] * v[i];\n"                                 /* 53 */
    "    acc = simd_sum(acc);\n"                                                             /* 54 */
    "    out[row * 32 + lane] = acc + v[lane % 4] + simd_broadcast(v[1], 9u);\n"             /* 55 */
    "}\n"                                                                                    /* 56 */
    "\n"                                                                                     /* 57 */
    "kernel void lanes_oob(device float *out [[buffer(0)]],\n"                               /* 58 */
    "                      uint gid [[thread_position_in_grid]],\n"                          /* 59 */
    "                      uint lane [[thread_index_in_simdgroup]]) {\n"                     /* 60 */
    "    float s = simd_sum(float(gid));\n"                                                  /* 61 */
    "    uint at = lane == 17 ? 64 : gid;\n"                                                 /* 62 */
    "    out[at] = s;\n"                                                                     /* 63 */
    "}\n";

static id new_buffer(sw_test_env *e, size_t len) {
    return MSG2(id, e->dev, "newBufferWithLength:options:", NSUInteger, len, NSUInteger, 0);
}

static const char *cb_error(id cb) {
    id err = MSG0(id, cb, "error");
    return err ? MSG0(const char *, MSG0(id, err, "localizedDescription"), "UTF8String") : NULL;
}

/* Runs `name` over `groups` threadgroups of `tg` threads with buffers of the given
 * sizes (buffer 0 filled with a fixed pattern, `n` in a 4-byte buffer 2 when
 * nbufs == 3) and copies buffer 1 into out.  lanes: 1 with the lanes variant, 0
 * with GDNBENCH_SW_LANES=0.  Returns 1 when the lanes entry ran (counter). */
static int run_once(const char *src, int lanes, const char *name, size_t in_bytes, size_t out_bytes, uint32_t n, int nbufs,
                    NSUInteger groups, NSUInteger tg, float *out) {
    if (!lanes) setenv("GDNBENCH_SW_LANES", "0", 1);
    sw_test_env e;
    sw_test_env_open(&e, "fast", src, "lanes_test.metal");
    unsetenv("GDNBENCH_SW_LANES");
    if (!e.lib) return -1;
    id bufs[3] = {new_buffer(&e, in_bytes), new_buffer(&e, out_bytes), nbufs == 3 ? new_buffer(&e, 4) : nil};
    float *in = MSG0(void *, bufs[0], "contents");
    for (size_t i = 0; i < in_bytes / 4; i++) in[i] = (float)((i * 37) % 101) / 64.0f - 0.5f;
    memset(MSG0(void *, bufs[1], "contents"), 0, out_bytes);
    if (nbufs == 3) memcpy(MSG0(void *, bufs[2], "contents"), &n, 4);
    uint64_t before = sw_exec_lanes_dispatches();
    id cb = sw_test_run(&e, name, bufs, nbufs, "dispatchThreadgroups:threadsPerThreadgroup:", (MTLSize){groups, 1, 1},
                        (MTLSize){tg, 1, 1});
    int used = sw_exec_lanes_dispatches() > before;
    const char *err = cb_error(cb);
    CHECK_MSG(MSG0(NSUInteger, cb, "status") == 4, "%s (lanes=%d): %s", name, lanes, err ? err : "?");
    memcpy(out, MSG0(void *, bufs[1], "contents"), out_bytes);
    for (int i = 0; i < nbufs; i++) MSG0(void, bufs[i], "release");
    sw_test_env_close(&e);
    return used;
}

static void same_bytes_both_ways_src(const char *src, const char *name, size_t in_bytes, size_t out_bytes, uint32_t n, int nbufs,
                                 NSUInteger groups, NSUInteger tg) {
    float *a = calloc(1, out_bytes), *b = calloc(1, out_bytes);
    int used = run_once(src, 1, name, in_bytes, out_bytes, n, nbufs, groups, tg, a);
    if (used < 0) goto done; /* skipped: no compiler */
    CHECK_MSG(used == 1, "%s: the lanes entry did not run (GDNBENCH_SW_DEBUG=1 says why)", name);
    CHECK_EQ_INT(run_once(src, 0, name, in_bytes, out_bytes, n, nbufs, groups, tg, b), 0);
    size_t diff = out_bytes;
    for (size_t i = 0; i < out_bytes / 4 && diff == out_bytes; i++)
        if (memcmp(&a[i], &b[i], 4) != 0) diff = i;
    CHECK_MSG(diff == out_bytes, "%s: lanes and fibers differ at float %zu: %a vs %a", name, diff,
              diff < out_bytes ? (double)a[diff] : 0.0, diff < out_bytes ? (double)b[diff] : 0.0);
    int nonzero = 0;
    for (size_t i = 0; i < out_bytes / 4; i++) nonzero += a[i] != 0.0f;
    CHECK_MSG(nonzero > (int)(out_bytes / 8), "%s: only %d outputs written", name, nonzero);
done:
    free(a);
    free(b);
}

static void same_bytes_both_ways(const char *name, size_t in_bytes, size_t out_bytes, uint32_t n, int nbufs,
                                 NSUInteger groups, NSUInteger tg) {
    same_bytes_both_ways_src(lanes_src, name, in_bytes, out_bytes, n, nbufs, groups, tg);
}

/* 3 groups of 40 threads (a partial second simdgroup), n = 100 of 120 threads:
 * lanes past n take the ?: and && branches that must not load. */
TEST(sw_lanes_control_flow_and_simd_match_fibers) {
    same_bytes_both_ways("lanes_mix", 100 * 4, (100 + 16) * 4, 100, 3, 3, 40);
}

TEST(sw_lanes_out_parameters_and_gathers_match_fibers) {
    same_bytes_both_ways("lanes_outparam", 6 * 128 * 4, 6 * 32 * 4, 0, 2, 3, 64);
}

TEST(sw_lanes_fault_names_the_exact_thread) {
    sw_test_env e;
    sw_test_env_open(&e, "fast", lanes_src, "lanes_test.metal");
    if (!e.lib) return;
    id out = new_buffer(&e, 64 * 4);
    uint64_t before = sw_exec_lanes_dispatches();
    id cb = sw_test_run(&e, "lanes_oob", &out, 1, "dispatchThreadgroups:threadsPerThreadgroup:", (MTLSize){1, 1, 1},
                        (MTLSize){64, 1, 1});
    CHECK(sw_exec_lanes_dispatches() > before);
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
    const char *err = cb_error(cb);
    /* lane 17 of either simdgroup writes out[64]; the first simdgroup faults first */
    CHECK_MSG(err && strstr(err, "kernel 'lanes_oob'") && strstr(err, "past its end; it has 256 bytes") &&
                  strstr(err, "at lanes_test.metal:63") && strstr(err, "thread_position_in_grid (17,0,0)"),
              "error: %s", err ? err : "(none)");
    MSG0(void, out, "release");
    sw_test_env_close(&e);
}

/* The rewrite itself: which libraries it takes, and what it makes of them. */
static char *rewrite(const char *src, char **why) {
    msl_unit u;
    char *err = NULL;
    *why = NULL;
    if (msl_front_parse(src, "t.metal", &u, &err) != 0) {
        *why = err;
        return NULL;
    }
    char *out = msl_lanes_rewrite(&u, why);
    msl_unit_free(&u);
    return out;
}

/* The rewrite refuses src, saying `reason`. */
static void check_refused(const char *src, const char *reason) {
    char *why;
    char *out = rewrite(src, &why);
    CHECK(out == NULL);
    CHECK_MSG(why && strstr(why, reason), "why: %s", why ? why : "(none)");
    free(out);
    free(why);
}

TEST(sw_lanes_rewrite_takes_simd_kernels_and_refuses_divergent_barriers) {
    char *why;
    char *out = rewrite(lanes_src, &why);
    CHECK_MSG(out != NULL, "refused: %s", why ? why : "?");
    if (out) {
        /* lane-derived values are varying, uniform ones stay plain */
        CHECK(strstr(out, "::sw::lv::vary<uint> lane") != NULL);
        CHECK(strstr(out, "::sw::lv::vary<float> x =") != NULL);
        CHECK(strstr(out, "uint row = tgp.x * 2 + sg;") != NULL);
        /* a varying if runs under a mask; a uniform one must stay uniform */
        CHECK(strstr(out, "::sw::lv::branch") != NULL);
        CHECK(strstr(out, "::sw::lv::u(") != NULL);
        /* the loop with a varying break is masked; the helper returns through fn<> */
        CHECK(strstr(out, "::sw::lv::loop") != NULL && strstr(out, "::sw::lv::brk()") != NULL);
        CHECK(strstr(out, "::sw::lv::fn<::sw::lv::vary<") != NULL && strstr(out, "_sw_F.ret( x * 2.0f)") != NULL);
        /* guarded loads: ?: and && take lambdas */
        CHECK(strstr(out, "::sw::lv::sel(") != NULL && strstr(out, "::sw::lv::land(") != NULL);
        /* every line stays where it was */
        int lines_in = 0, lines_out = 0;
        for (const char *p = lanes_src; *p; p++) lines_in += *p == '\n';
        for (const char *p = out; *p; p++) lines_out += *p == '\n';
        CHECK(lines_out >= lines_in);
    }
    free(out);
    free(why);
    /* a barrier is the simdgroup's: under varying control it would wait for some
     * lanes only */
    const char *barrier = "#include <metal_stdlib>\nusing namespace metal;\n"
                          "kernel void k(device float *o [[buffer(0)]], uint l [[thread_index_in_simdgroup]]) {\n"
                          "    o[l] = simd_sum(1.0f);\n    if (l < 3) threadgroup_barrier(mem_flags::mem_device);\n}\n";
    check_refused(barrier, "threadgroup_barrier under varying control");
    /* barriers but no collective: the fibers are as fast */
    const char *staging = "#include <metal_stdlib>\nusing namespace metal;\n"
                          "kernel void k(device float *o [[buffer(0)]], uint l [[thread_index_in_threadgroup]]) {\n"
                          "    threadgroup float t[64];\n    t[l] = o[l];\n"
                          "    threadgroup_barrier(mem_flags::mem_threadgroup);\n    o[l] = t[63 - l];\n}\n";
    check_refused(staging, "no simd function or simdgroup matrix");
    /* a helper with a barrier, called by some lanes only */
    const char *helper = "#include <metal_stdlib>\nusing namespace metal;\n"
                         "static void sync() { threadgroup_barrier(mem_flags::mem_threadgroup); }\n"
                         "kernel void k(device float *o [[buffer(0)]], uint l [[thread_index_in_simdgroup]]) {\n"
                         "    o[l] = simd_sum(1.0f);\n    if (l < 3) sync();\n}\n";
    check_refused(helper, "threadgroup_barrier in a function called under varying control");
    const char *vswitch = "#include <metal_stdlib>\nusing namespace metal;\n"
                          "kernel void k(device float *o [[buffer(0)]], uint l [[thread_index_in_simdgroup]]) {\n"
                          "    switch (l) { case 0: o[0] = simd_sum(1.0f); break; default: break; }\n}\n";
    check_refused(vswitch, "switch on a varying value");
}

/* Uniformity holes found by differential testing: each kernel compiled in lanes
 * mode and gave other bytes than fibers, because a value judged uniform was
 * changed by some lanes only.  Lanes 0..2 (or 0..4) take a branch the others do
 * not; every output then depends on whether the lane took it. */
static const char *holes_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "struct P { float a; float b; };\n"
    "static void set_at(thread float *r) { *r = 1.0f; }\n"
    "static void set_first(thread float *const p, uint l) { p[0] = float(l); }\n"
    /* auto deduced a uniform type; the masked assignment then reached every lane */
    "kernel void hole_auto(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "                      uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {\n"
    "    auto x = 0u;\n"
    "    auto s = simd_sum(in[gid]);\n"
    "    if (lane < 3) { x = 5u; s = 1.0f; }\n"
    "    out[gid] = float(x) + s;\n"
    "}\n"
    /* an out-argument that is not a plain name (&a[1], a + 2): a stayed uniform */
    "kernel void hole_outarg(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "                        uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {\n"
    "    float a[4] = {2.0f, 3.0f, 4.0f, 5.0f};\n"
    "    if (lane < 3) set_at(&a[1]);\n"
    "    if (lane > 20) set_at(a + 2);\n"
    "    out[gid] = a[1] + a[2] * 10.0f + simd_sum(in[gid]);\n"
    "}\n"
    /* `float *const p` was taken for a pointer to const: the store did not count */
    "kernel void hole_constptr(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "                          uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {\n"
    "    float a[2] = {0.0f, 0.0f};\n"
    "    set_first(a, lane);\n"
    "    out[gid] = a[0] + 1.0f + simd_sum(in[gid]);\n"
    "}\n"
    /* assignments inside conditions (k++ in a loop condition, k = 9 in an if) */
    "kernel void hole_cond(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "                      uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {\n"
    "    uint k = 0;\n"
    "    uint m = 0;\n"
    "    uint j = 7;\n"
    "    if (lane < 5) { while (k++ < 3) {} }\n"
    "    if (lane > 25) { if ((m = 9) > 3) j = 2; }\n"
    "    out[gid] = float(k) + float(m) * 10.0f + float(j) * 100.0f + simd_sum(in[gid]);\n"
    "}\n";

TEST(sw_lanes_auto_assigned_under_a_branch_matches_fibers) {
    same_bytes_both_ways_src(holes_src, "hole_auto", 64 * 4, 64 * 4, 0, 2, 1, 64);
}

TEST(sw_lanes_out_argument_into_an_array_matches_fibers) {
    same_bytes_both_ways_src(holes_src, "hole_outarg", 64 * 4, 64 * 4, 0, 2, 1, 64);
}

TEST(sw_lanes_store_through_a_const_pointer_matches_fibers) {
    same_bytes_both_ways_src(holes_src, "hole_constptr", 64 * 4, 64 * 4, 0, 2, 1, 64);
}

TEST(sw_lanes_assignment_in_a_condition_matches_fibers) {
    same_bytes_both_ways_src(holes_src, "hole_cond", 64 * 4, 64 * 4, 0, 2, 1, 64);
}

/* A struct whose field is an out-argument under a varying branch must not stay
 * uniform: the rewrite makes it varying, whose C++ does not compile (vary<P> has
 * no field a), so the library runs on fibers. */
TEST(sw_lanes_struct_field_out_argument_is_not_uniform) {
    const char *src = "#include <metal_stdlib>\nusing namespace metal;\n"
                      "struct P { float a; float b; };\n"
                      "static void set1(thread float &r) { r = 1.0f; }\n"
                      "kernel void k(device float *o [[buffer(0)]], uint l [[thread_index_in_simdgroup]]) {\n"
                      "    P p;\n    p.a = 2.0f;\n    if (l < 3) set1(p.a);\n"
                      "    o[l] = p.a + simd_sum(1.0f);\n}\n";
    char *why;
    char *out = rewrite(src, &why);
    CHECK_MSG(out != NULL, "refused: %s", why ? why : "?");
    if (out) CHECK_MSG(strstr(out, "::sw::lv::vary<P> p") != NULL, "p stayed uniform:\n%s", out);
    free(out);
    free(why);
}

/* A break out of a switch under a varying if, where the switch itself sits in a
 * masked loop (varying control already): it was emitted as a plain break, which
 * the branch's do { } while (0) took, so those lanes fell through into the next
 * statement of the case (other bytes than fibers).  Refused now. */
TEST(sw_lanes_rewrite_refuses_a_varying_break_out_of_a_switch_in_a_masked_loop) {
    const char *src = "#include <metal_stdlib>\nusing namespace metal;\n"
                      "kernel void k(device float *o [[buffer(0)]], constant uint &n [[buffer(1)]],\n"
                      "              uint l [[thread_index_in_simdgroup]]) {\n"
                      "    float acc = 0.0f;\n"
                      "    for (uint t = 0; t < 3; t++) {\n"
                      "        if (l == t + 7) continue;\n"
                      "        switch (n % 2) {\n"
                      "        default:\n"
                      "            if (l == t + 1) break;\n"
                      "            acc *= 2.0f;\n"
                      "        }\n"
                      "        acc += 0.5f;\n"
                      "    }\n"
                      "    o[l] = acc + simd_sum(acc);\n}\n";
    check_refused(src, "break out of a switch under varying control");
}

/* Simd functions in divergent code that meet again afterwards.  Lanes reconverge
 * at the end of the if, as a GPU does: the second simd_sum adds all 32 lanes.  The
 * fiber executor resolves the lanes waiting at the lowest lane's call site first and
 * adds only lanes 0..15 there; the difference is documented (lanes.c), and
 * validate runs every schedule on fibers so that it is not taken for a race. */
static const char *reconverge_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void reconverge(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "                       uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {\n"
    "    float y = 1.0f;\n"
    "    if (lane >= 16) y = simd_sum(in[gid]);\n"
    "    out[gid] = simd_sum(y);\n"
    "}\n";

static float reconverge_run(int lanes, int *used) {
    sw_test_env e;
    sw_test_env_open(&e, "fast", reconverge_src, "reconverge.metal");
    if (!e.lib) return -1.0f;
    swmtl_options o;
    swmtl_options_init(&o);
    o.schedule.lanes = lanes;
    CHECK(swmtl_device_set_schedule(e.dev, &o.schedule) == 0);
    id bufs[2] = {new_buffer(&e, 32 * 4), new_buffer(&e, 32 * 4)};
    float *in = MSG0(void *, bufs[0], "contents");
    for (int i = 0; i < 32; i++) in[i] = (float)i;
    uint64_t before = sw_exec_lanes_dispatches();
    id cb = sw_test_run(&e, "reconverge", bufs, 2, "dispatchThreadgroups:threadsPerThreadgroup:", (MTLSize){1, 1, 1},
                        (MTLSize){32, 1, 1});
    *used = sw_exec_lanes_dispatches() > before;
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 4);
    float r = ((float *)MSG0(void *, bufs[1], "contents"))[0];
    for (int i = 0; i < 2; i++) MSG0(void, bufs[i], "release");
    sw_test_env_close(&e);
    return r;
}

TEST(sw_lanes_divergent_simd_calls_reconverge_as_on_a_gpu) {
    int used = 0;
    float lanes = reconverge_run(1, &used);
    if (lanes == -1.0f) return;
    CHECK(used);
    /* lanes 16..31 hold 16+...+31 = 376, lanes 0..15 hold 1: 16 + 16 * 376 */
    CHECK_MSG(lanes == 16.0f + 16.0f * 376.0f, "lanes: %g", (double)lanes);
    float fibers = reconverge_run(0, &used);
    CHECK(!used); /* a schedule without lanes keeps the kernel on fibers */
    CHECK_MSG(fibers == 16.0f, "fibers: %g (the documented difference changed: update lanes.c)", (double)fibers);
}

/* Calls that change a uniform local without an assignment in sight, under a
 * varying branch: a member function of a struct local (a.add(2) added 2 for every
 * lane), and the metal functions with a reference out-argument (sincos, modf,
 * frexp stored for every lane).  The local is varying now: vary<Acc> has no member
 * add, and sincos(float, vary<float> &) matches nothing, so the C++ does not
 * compile and the library runs on fibers, as it must. */
TEST(sw_lanes_member_calls_and_out_argument_builtins_make_their_object_varying) {
    const char *src = "#include <metal_stdlib>\nusing namespace metal;\n"
                      "struct Acc { float s; void add(float x) { s += x; } };\n"
                      "kernel void k(device float *o [[buffer(0)]], uint l [[thread_index_in_simdgroup]]) {\n"
                      "    Acc a;\n    a.s = 1.0f;\n    if (l < 3) a.add(2.0f);\n"
                      "    float c = 0.0f, s = 0.0f, ip = 0.0f, fr = 0.0f, m = 0.0f;\n    int e = 0;\n"
                      "    if (l < 3) s = sincos(0.5f, c);\n"
                      "    if (l < 4) fr = modf(2.5f, ip);\n"
                      "    if (l > 20) m = frexp(8.0f, e);\n"
                      "    o[l] = a.s + c + s + ip + fr + m + float(e) + simd_sum(1.0f);\n}\n";
    char *why;
    char *out = rewrite(src, &why);
    CHECK_MSG(out != NULL, "refused: %s", why ? why : "?");
    if (out) {
        CHECK_MSG(strstr(out, "::sw::lv::vary<Acc> a") != NULL, "a stayed uniform:\n%s", out);
        CHECK_MSG(strstr(out, "::sw::lv::vary<int> e") != NULL, "e stayed uniform:\n%s", out);
        CHECK_MSG(strstr(out, "::sw::lv::vary<float> c = 0.0f") != NULL, "c stayed uniform:\n%s", out);
    }
    free(out);
    free(why);
}

/* Member functions (and operators) are left as they are, so a simd function in one
 * reached the fiber version: simd_is_first/simd_ballot/simd_all synchronised
 * through the executor, and the run failed with "simd-group synchronisation in a
 * kernel run as 32-lane data".  Refused now. */
TEST(sw_lanes_rewrite_refuses_simd_calls_in_member_functions) {
    const char *src = "#include <metal_stdlib>\nusing namespace metal;\n"
                      "struct V { bool first() const { return simd_is_first(); } };\n"
                      "kernel void k(device float *o [[buffer(0)]], uint l [[thread_index_in_simdgroup]]) {\n"
                      "    V v;\n    float r = simd_sum(1.0f);\n"
                      "    if (l > 4) r += float(v.first());\n    o[l] = r;\n}\n";
    check_refused(src, "simd_is_first in a struct");
}

/* static_cast<T> of a varying value (MLX's kernels write out[i] = static_cast<T>(x)):
 * the front end makes it ::metal::sw_static_cast<T>, which took no vary, so such a
 * library never got its lanes variant.  It is the lanes' cast now, bit for bit the
 * fibers' conversion (bfloat and half included). */
TEST(sw_lanes_static_cast_of_varying_values_runs_as_lanes) {
    const char *src =
        "#include <metal_stdlib>\nusing namespace metal;\n"
        "template <typename T>\n"
        "kernel void sc(device const float *in [[buffer(0)]], device T *out [[buffer(1)]],\n"
        "               uint gid [[thread_position_in_grid]]) {\n"
        "    float x = in[gid] * 1000.0f;\n"
        "    bfloat b = static_cast<bfloat>(x);\n"
        "    half h = static_cast<half>(b);\n"
        "    int i = static_cast<int>(x);\n"
        "    half4 h4 = static_cast<half4>(float4(x, 1.0f, -x, 3.5f));\n"
        "    float y = static_cast<float>(b) + static_cast<float>(h) + float(h4.z) + float(i);\n"
        "    out[gid] = static_cast<T>(y + simd_sum(y));\n"
        "}\n"
        "template [[host_name(\"sc_f\")]] [[kernel]] decltype(sc<float>) sc<float>;\n";
    same_bytes_both_ways_src(src, "sc_f", 64 * 4, 64 * 4, 0, 2, 1, 64);
}

/* Barriers (one of them in a helper), threadgroup memory and simdgroup matrices
 * (each simdgroup a fiber of its own, a matrix one uniform 8x8 value): 4 simdgroups stage rows through
 * threadgroup memory with float4 loads and stores through varying pointers, each
 * multiplies its rows by another simdgroup's (so the barrier must have let every
 * simdgroup write first), scales the lanes' elements of a product through
 * thread_elements(), and passes a simd_sum to another simdgroup.  `e` is a varying
 * loop variable in two loops and a uniform one in a third, and `i` indexes the
 * matrix array: names are scoped, or the array would be judged varying and the
 * library would stay on fibers. */
static const char *tg_src =
    "#include <metal_stdlib>\n"                                                                   /* 1 */
    "using namespace metal;\n"                                                                    /* 2 */
    "typedef simdgroup_matrix<float, 8, 8> m8; static void sync() { threadgroup_barrier(mem_flags::mem_threadgroup); }\n" /* 3 */
    "kernel void lanes_tg(device const float *in [[buffer(0)]],\n"                                /* 4 */
    "                     device float *out [[buffer(1)]],\n"                                     /* 5 */
    "                     constant uint &n [[buffer(2)]],\n"                                      /* 6 */
    "                     uint tid [[thread_index_in_threadgroup]],\n"                            /* 7 */
    "                     uint sg [[simdgroup_index_in_threadgroup]],\n"                          /* 8 */
    "                     uint lane [[thread_index_in_simdgroup]],\n"                             /* 9 */
    "                     uint3 tgp [[threadgroup_position_in_grid]]) {\n"                        /* 10 */
    "    threadgroup float tile[64 * 8];\n"                                                       /* 11 */
    "    threadgroup float sums[4];\n"                                                            /* 12 */
    "    for (uint e = tid; e < 64 * 2; e += 128) {\n"                                            /* 13 */
    "        uint row = e / 2, c4 = e % 2;\n"                                                     /* 14 */
    "        float4 x = float4(0.0f);\n"                                                          /* 15 */
    "        if (tgp.x * 64 + row < n) x = *(device const float4 *)(in + (tgp.x * 64 + row) * 8 + c4 * 4);\n" /* 16 */
    "        *(threadgroup float4 *)(tile + row * 8 + c4 * 4) = x * 2.0f;\n"                      /* 17 */
    "    }\n"                                                                                     /* 18 */
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"                                      /* 19 */
    "    m8 a, b, c = make_filled_simdgroup_matrix<float, 8, 8>(0.5f);\n"                         /* 20 */
    "    m8 acc[2];\n"                                                                            /* 21 */
    "    for (uint e = 0; e < 2; e++) acc[e] = make_filled_simdgroup_matrix<float, 8, 8>(0.25f);\n" /* 22 */
    "    for (uint i = 0; i < 2; i++) {\n"                                                        /* 23 */
    "        simdgroup_load(a, tile + (16 * sg + 8 * i) * 8, 8);\n"                               /* 24 */
    "        simdgroup_load(b, tile + 16 * ((sg + 1) % 4) * 8, 8, ulong2(0, 0), true);\n"         /* 25 */
    "        simdgroup_multiply_accumulate(acc[i], a, b, acc[i]);\n"                              /* 26 */
    "        simdgroup_multiply(c, acc[i], a);\n"                                                 /* 27 */
    "    }\n"                                                                                     /* 28 */
    "    thread auto &el = acc[1].thread_elements();\n"                                           /* 29 */
    "    el[0] *= float(lane);\n"                                                                 /* 30 */
    "    el[1] += 1.0f;\n"                                                                        /* 31 */
    "    m8 d = acc[0] + acc[1];\n"                                                               /* 32 */
    "    d = 2.0f * d;\n"                                                                         /* 33 */
    "    sync();\n"                                                                               /* 34 */
    "    simdgroup_store(d, tile + 16 * sg * 8, 8);\n"                                            /* 35 */
    "    simdgroup_store(c, tile + (16 * sg + 8) * 8, 8);\n"                                      /* 36 */
    "    float s = simd_sum(el[0]);\n"                                                            /* 37 */
    "    if (lane == 0) sums[sg] = s;\n"                                                          /* 38 */
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"                                      /* 39 */
    "    float t = sums[(sg + 1) % 4];\n"                                                         /* 40 */
    "    for (uint e = tid; e < 64 * 8; e += 128) {\n"                                            /* 41 */
    "        uint gi = tgp.x * 64 * 8 + e;\n"                                                     /* 42 */
    "        if (gi < n * 8) out[gi] = tile[e] + t;\n"                                            /* 43 */
    "    }\n"                                                                                     /* 44 */
    "}\n"                                                                                         /* 45 */
    "kernel void lanes_tg_oob(device float *out [[buffer(0)]],\n"                                 /* 46 */
    "                         uint gid [[thread_position_in_grid]],\n"                            /* 47 */
    "                         uint sg [[simdgroup_index_in_threadgroup]],\n"                      /* 48 */
    "                         uint lane [[thread_index_in_simdgroup]]) {\n"                       /* 49 */
    "    threadgroup float v[128];\n"                                                             /* 50 */
    "    v[gid % 128] = float(gid);\n"                                                            /* 51 */
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"                                      /* 52 */
    "    uint at = sg == 2 && lane == 5 ? 128 : gid;\n"                                           /* 53 */
    "    out[at] = v[127 - gid % 128];\n"                                                         /* 54 */
    "}\n";

/* 3 groups of 128 threads, n = 150 rows of 8 (the third group's rows past n stay
 * zero in the tile) */
TEST(sw_lanes_barriers_threadgroup_memory_and_matrices_match_fibers) {
    same_bytes_both_ways_src(tg_src, "lanes_tg", 150 * 8 * 4, 150 * 8 * 4, 150, 3, 3, 128);
}

TEST(sw_lanes_fault_after_a_barrier_names_the_exact_thread) {
    sw_test_env e;
    sw_test_env_open(&e, "fast", tg_src, "lanes_tg.metal");
    if (!e.lib) return;
    id out = new_buffer(&e, 128 * 4);
    uint64_t before = sw_exec_lanes_dispatches();
    id cb = sw_test_run(&e, "lanes_tg_oob", &out, 1, "dispatchThreadgroups:threadsPerThreadgroup:", (MTLSize){1, 1, 1},
                        (MTLSize){128, 1, 1});
    CHECK(sw_exec_lanes_dispatches() > before);
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
    const char *err = cb_error(cb);
    /* just past the buffer's end: the guard page (further out may be mapped) */
    CHECK_MSG(err && strstr(err, "kernel 'lanes_tg_oob'") && strstr(err, "at lanes_tg.metal:54") &&
                  strstr(err, "past its end; it has 512 bytes") &&
                  strstr(err, "thread_position_in_grid (69,0,0)"),
              "error: %s", err ? err : "(none)");
    MSG0(void, out, "release");
    sw_test_env_close(&e);
}

/* What the rewrite makes of it: the matrix array, the uniform loop's `e` and the
 * threadgroup arrays stay uniform; the staging loop's `e` is varying; the
 * varying-pointer load and store become ld/st. */
TEST(sw_lanes_rewrite_scopes_names_and_keeps_matrices_uniform) {
    char *why;
    char *out = rewrite(tg_src, &why);
    CHECK_MSG(out != NULL, "refused: %s", why ? why : "?");
    if (out) {
        CHECK(strstr(out, "m8 acc[2];") != NULL);
        CHECK(strstr(out, "for (uint e = 0; e < 2; e++)") != NULL || strstr(out, "for (::sw::lv::u(") != NULL ||
              strstr(out, "uint e = 0;") != NULL);
        CHECK(strstr(out, "::sw::lv::vary<uint> e = tid") != NULL);
        CHECK(strstr(out, "::sw::lv::vary<") && !strstr(out, "::sw::lv::vary<m8>"));
        CHECK(strstr(out, "::sw::lv::st(::sw::lv::cast<threadgroup float4 *>(") != NULL);
        CHECK(strstr(out, "::sw::lv::ld(::sw::lv::cast<device const float4 *>(") != NULL);
        CHECK(strstr(out, "thread auto &el =") != NULL);
    }
    free(out);
    free(why);
}

/* A lanes build that does not compile (here: start() returns a varying value
 * because one call passes a varying argument, so the matrix fill is judged varying
 * too) leaves the library on fibers, and the failure is remembered in the cache:
 * a second library from the same source runs without calling the compiler. */
static const char *nocompile_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "static float start(uint i) { return float(i % 7u); }\n"
    "kernel void lanes_nocompile(device float *out [[buffer(0)]], uint gid [[thread_position_in_grid]],\n"
    "                            uint sg [[simdgroup_index_in_threadgroup]]) {\n"
    "    simdgroup_matrix<float, 8, 8> m = make_filled_simdgroup_matrix<float, 8, 8>(start(sg));\n"
    "    simdgroup_store(m, out + sg * 64, 8);\n"
    "    out[128 + gid] = start(gid);\n"
    "}\n";

static void run_nocompile(uint64_t *lanes_runs) {
    sw_test_env e;
    sw_test_env_open(&e, "fast", nocompile_src, "lanes_nocompile.metal");
    if (!e.lib) return;
    id out = new_buffer(&e, 192 * 4);
    uint64_t before = sw_exec_lanes_dispatches();
    id cb = sw_test_run(&e, "lanes_nocompile", &out, 1, "dispatchThreadgroups:threadsPerThreadgroup:",
                        (MTLSize){1, 1, 1}, (MTLSize){64, 1, 1});
    *lanes_runs = sw_exec_lanes_dispatches() - before;
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 4);
    const float *o = MSG0(void *, out, "contents");
    CHECK(o[64] == 1.0f && o[128 + 9] == 2.0f);
    MSG0(void, out, "release");
    sw_test_env_close(&e);
}

TEST(sw_lanes_failed_compile_falls_back_and_is_remembered) {
    uint64_t lanes_runs = 0;
    run_nocompile(&lanes_runs);
    CHECK_EQ_INT((int)lanes_runs, 0);
    uint64_t compiles = sw_compile_invocations();
    run_nocompile(&lanes_runs);
    CHECK_EQ_INT((int)lanes_runs, 0);
    CHECK_MSG(sw_compile_invocations() == compiles, "the compiler ran %d more time(s) for the same library",
              (int)(sw_compile_invocations() - compiles));
}

/* A partial threadgroup (48 threads) with a barrier: each simdgroup is a fiber of its
 * own on one worker thread, and the lane state (execution mask, live lanes) was the
 * worker's: the partial second simdgroup set 16 live lanes, and the first came back
 * from the barrier with lanes 16..31 off (their stores lost).  The state is kept
 * across the barrier now. */
TEST(sw_lanes_partial_threadgroup_keeps_its_lanes_across_a_barrier) {
    const char *src = "#include <metal_stdlib>\nusing namespace metal;\n"
                      "kernel void k(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
                      "              uint tid [[thread_index_in_threadgroup]], uint3 tgp [[threadgroup_position_in_grid]]) {\n"
                      "    threadgroup float st[48];\n"
                      "    st[tid] = simd_prefix_exclusive_sum(in[tgp.x * 48 + tid]);\n"
                      "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
                      "    out[tgp.x * 48 + tid] = st[47 - tid] + 1.0f;\n}\n";
    same_bytes_both_ways_src(src, "k", 3 * 48 * 4, 3 * 48 * 4, 0, 2, 3, 48);
}

/* simdgroup_float8x8 (and simdgroup_matrix<...>, _half8x8, _bfloat8x8) were not type
 * names to the rewrite: `simdgroup_float8x8 m[4];` was read as the subscript of an
 * unknown name and became ld(m, 4), so the library's lanes C++ did not compile and
 * it ran on fibers.  A matrix array indexed by loop variables, with products whose
 * destination is an operand (d == a, d == b, d == c) and the operators. */
TEST(sw_lanes_matrix_arrays_of_the_library_typedefs_run_as_lanes) {
    const char *src =
        "#include <metal_stdlib>\nusing namespace metal;\n"
        "kernel void k(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
        "              uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],\n"
        "              uint3 tgp [[threadgroup_position_in_grid]]) {\n"
        "    device const float *base = in + tgp.x * 512 + sg * 128;\n"
        "    simdgroup_float8x8 m[4];\n"
        "    for (int i = 0; i < 4; i++) simdgroup_load(m[i], base + i * 16, 8);\n"
        "    for (int i = 0; i < 3; i++) simdgroup_multiply(m[i + 1], m[i], m[i + 1]);\n"
        "    simdgroup_multiply_accumulate(m[0], m[0], m[1], m[0]);\n"
        "    simdgroup_matrix<float, 8, 8> s = m[0] + m[1];\n"
        "    s = 0.5f * (s - m[2] * m[3]);\n"
        "    simdgroup_half8x8 h = make_filled_simdgroup_matrix<half, 8, 8>(half(0.75f));\n"
        "    h = half(3.0f) * (h * h);\n"
        "    device float *o = out + tgp.x * 512 + sg * 256;\n"
        "    simdgroup_store(s, o, 8);\n"
        "    simdgroup_store(h, o + 64, 8);\n"
        "    o[128 + lane] = simd_sum(float(lane));\n}\n";
    same_bytes_both_ways_src(src, "k", 3 * 512 * 4, 3 * 512 * 4, 0, 2, 3, 64);
}

/* A store into m.thread_elements() straight (no reference kept) made m itself
 * varying to the analysis (a compound store reads the varying view, and a member
 * call under varying control may change its object): vary<simdgroup_matrix> does
 * not compile, and the library ran on fibers.  The view is the lanes' storage
 * inside the uniform matrix; the store is a masked st into it. */
TEST(sw_lanes_stores_into_thread_elements_run_as_lanes) {
    const char *src =
        "#include <metal_stdlib>\nusing namespace metal;\n"
        "kernel void k(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
        "              uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],\n"
        "              uint3 tgp [[threadgroup_position_in_grid]]) {\n"
        "    device const float *base = in + tgp.x * 256 + sg * 64;\n"
        "    simdgroup_float8x8 a, c;\n"
        "    simdgroup_load(a, base, 8);\n"
        "    simdgroup_multiply(c, a, a);\n"
        "    simdgroup_float8x8 d = c;\n"
        "    d.thread_elements()[0] += 1.0f;\n"
        "    if (lane % 3 == 0) d.thread_elements()[1] = float(lane);\n"
        "    simdgroup_multiply(a, d, c);\n"
        "    device float *o = out + tgp.x * 256 + sg * 128;\n"
        "    simdgroup_store(a, o, 8);\n"
        "    o[64 + lane] = simd_sum(d.thread_elements()[0]);\n}\n";
    same_bytes_both_ways_src(src, "k", 3 * 256 * 4, 3 * 256 * 4, 0, 2, 3, 64);
}

/* simdgroup_load/store in a partial simdgroup (48 threads: the second has 16
 * lanes): on fibers each lane that exists moves its own two elements, and the
 * lanes build moved all 64 (the missing lanes' elements stored, their addresses
 * read, possibly out of bounds).  It moves the existing lanes' elements now. */
TEST(sw_lanes_matrix_load_and_store_in_a_partial_simdgroup_match_fibers) {
    const char *src =
        "#include <metal_stdlib>\nusing namespace metal;\n"
        "kernel void k(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
        "              uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],\n"
        "              uint3 tgp [[threadgroup_position_in_grid]]) {\n"
        "    simdgroup_float8x8 a;\n"
        "    simdgroup_load(a, in + tgp.x * 128 + sg * 64, 8, ulong2(0, 0), sg == 1);\n"
        "    simdgroup_store(a, out + tgp.x * 160 + sg * 64, 8);\n"
        "    out[tgp.x * 160 + 128 + lane] = simd_sum(float(a.thread_elements()[1]));\n}\n";
    same_bytes_both_ways_src(src, "k", 3 * 128 * 4, 3 * 160 * 4, 0, 2, 3, 48);
}

/* Holes a review found in this rewrite, each a kernel that compiled as lanes and
 * gave other bytes (or, for qualified simd calls, reached the fiber runtime). */
static const char *deref_store_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void store_through_deref(device const float *in [[buffer(0)]], device float4 *out [[buffer(1)]],\n"
    "                                uint lane [[thread_index_in_simdgroup]], uint3 tgp [[threadgroup_position_in_grid]]) {\n"
    "    device float4 *p = out + tgp.x;\n"
    "    (*p)[1] = simd_sum(in[lane]);\n"
    "    (*p)[2] = 3.0f;\n"
    "}\n";
static const char *view_index_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void view_in_an_index(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "                             uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {\n"
    "    simdgroup_float8x8 m = make_filled_simdgroup_matrix<float, 8, 8>(1.0f);\n"
    "    m.thread_elements()[0] = float(lane % 2);\n"
    "    float t[2] = {0.0f, 0.0f};\n"
    "    t[m.thread_elements()[0] > 0.5f ? 1 : 0] = float(lane) + in[gid];\n"
    "    out[gid] = t[1] * 2.0f + t[0] + simd_sum(1.0f);\n"
    "}\n";
static const char *qualified_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void qualified_simd(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "                           uint tid [[thread_index_in_threadgroup]], uint gid [[thread_position_in_grid]]) {\n"
    "    threadgroup float t[64];\n"
    "    t[tid] = metal::simd_prefix_exclusive_sum(in[gid]);\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "    out[gid] = t[63 - tid] + metal::simd_sum(in[gid]) + float(uint64_t(metal::simd_ballot(tid % 3 == 0)) % 7);\n"
    "}\n";

/* (*p)[1] = x read *p as a value and stored into that copy: now a compile error in
 * lanes (a store into a temporary), so the library runs on fibers. */
TEST(sw_lanes_store_through_a_dereference_is_not_lost) {
    float a[8 * 4] = {0}, b[8 * 4] = {0};
    int used = run_once(deref_store_src, 1, "store_through_deref", 32 * 4, sizeof a, 0, 2, 8, 32, a);
    if (used < 0) return;
    CHECK_EQ_INT(used, 0);
    CHECK_EQ_INT(run_once(deref_store_src, 0, "store_through_deref", 32 * 4, sizeof b, 0, 2, 8, 32, b), 0);
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(a[4 * 3 + 2] == 3.0f && a[4 * 3 + 1] != 0.0f);
}

/* the index of a store reads the matrix's lanes view; the stored-to array is varying */
TEST(sw_lanes_lanes_view_in_a_stored_index_keeps_the_target_varying) {
    same_bytes_both_ways_src(view_index_src, "view_in_an_index", 64 * 4, 64 * 4, 0, 2, 2, 32);
}

/* metal::simd_sum and friends reach the lanes versions, not the fiber runtime */
TEST(sw_lanes_qualified_simd_calls_run_as_lanes) {
    same_bytes_both_ways_src(qualified_src, "qualified_simd", 128 * 4, 128 * 4, 0, 2, 2, 64);
}

/* Stores through two subscripts: a threadgroup tile indexed [simdgroup][lane] and a
 * private [4][4] array with a varying column (st of the row ld hands out). */
static const char *tile2d_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void tile2d(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
    "                   uint gid [[thread_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]],\n"
    "                   uint lane [[thread_index_in_simdgroup]]) {\n"
    "    threadgroup float t2[4][33];\n"
    "    t2[sg][lane] = in[gid];\n"
    "    t2[sg][32] = simd_sum(in[gid]);\n"
    "    float a[4][4] = {};\n"
    "    for (uint r = 0; r < 4; r++) a[r][lane % 4] = float(r) + in[gid];\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "    out[gid] = t2[(sg + 1) % 4][31 - lane] + t2[sg][32] + a[1][lane % 4] + a[2][(lane + 1) % 4];\n"
    "}\n";

TEST(sw_lanes_stores_through_two_subscripts_match_fibers) {
    same_bytes_both_ways_src(tile2d_src, "tile2d", 256 * 4, 256 * 4, 0, 2, 2, 128);
}

/* Issue 36's casts to template parameters with varying values: T(x, ...) and (TC) h,
 * (T)(w * TC(2)) convert element by element, as lanes and as fibers.  (A comparison
 * converted by a constructor, a bool4 declared from one or a braced vector of varying
 * values keep such a library on fibers: sw_truth and sw_brace have no lanes form.) */
TEST(sw_lanes_casts_to_template_parameters_run_as_lanes) {
    const char *src =
        "#include <metal_stdlib>\nusing namespace metal;\n"
        "template <typename T, typename TC>\n"
        "kernel void tc(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],\n"
        "               uint gid [[thread_position_in_grid]]) {\n"
        "    float x = in[gid] * 100.0f;\n"
        "    T h = T(x, -x, x * 2.0f, 0.5f);\n"
        "    const TC w = (TC) h;\n"
        "    T back = (T) (w * TC(3.0f));\n"
        "    out[gid] = w.x + w.y + float(back.z) + float(back.w) + simd_sum(x);\n"
        "}\n"
        "template [[host_name(\"tc_h\")]] [[kernel]] decltype(tc<half4, float4>) tc<half4, float4>;\n";
    same_bytes_both_ways_src(src, "tc_h", 64 * 4, 64 * 4, 0, 2, 1, 64);
}
