/* test_sw_compile.c — MSL -> clang++ -> dlopen, calling kernel entries directly
 * from one thread (kernels here use no barrier, simd function or threadgroup
 * memory: those need the executor).  Each test uses its own temporary cache. */
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dtype.h"
#include "swmetal/sw_compile.h"
#include "swmetal/sw_files.h"
#include "test.h"

static char cache_dir[64];

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_cache(void) {
    if (cache_dir[0]) nftw(cache_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void use_temp_cache(void) {
    snprintf(cache_dir, sizeof cache_dir, "/tmp/gdnbench-swtest-XXXXXX");
    if (!mkdtemp(cache_dir)) SKIP("cannot create a temporary directory");
    setenv("GDNBENCH_CACHE_DIR", cache_dir, 1);
    atexit(remove_cache);
}

/* A library, or SKIP when no suitable clang is installed. */
static sw_library *compile_or_skip(const char *src, const char *name) {
    char *err = NULL;
    sw_library *lib = sw_library_create(src, name, &err);
    if (!lib && err && strstr(err, "clang++ >= 17")) SKIP("%s", err);
    CHECK_MSG(lib != NULL, "compile failed: %s", err ? err : "(no message)");
    free(err);
    return lib;
}

static int get_kernel(sw_library *lib, const char *name, const sw_fc_value *fcs, int n, sw_kernel *k) {
    char *err = NULL;
    int rc = sw_library_get_kernel(lib, name, fcs, n, SW_INSTR_NONE, k, &err);
    CHECK_MSG(rc == 0, "get_kernel %s: %s", name, err ? err : "");
    free(err);
    return rc;
}

/* Calls the entry for threads 0..n-1 of a 1-D grid, in order. */
static void run_1d(const sw_kernel *k, void **buffers, uint32_t n) {
    void *tg[SW_MAX_TG_PARAMS] = {0};
    void *bufs[SW_MAX_BUFFERS] = {0};
    for (int i = 0; i < SW_MAX_BUFFERS && buffers[i]; i++) bufs[i] = buffers[i];
    sw_ids ids;
    sw_thread_args args = {bufs, tg, &ids};
    for (uint32_t i = 0; i < n; i++) {
        memset(&ids, 0, sizeof ids);
        ids.thread_position_in_grid[0] = i;
        ids.thread_position_in_threadgroup[0] = i % 256;
        ids.threadgroup_position_in_grid[0] = i / 256;
        ids.threads_per_threadgroup[0] = 256;
        ids.threads_per_grid[0] = n;
        ids.threadgroups_per_grid[0] = (n + 255) / 256;
        for (int d = 1; d < 3; d++)
            ids.threads_per_threadgroup[d] = ids.threads_per_grid[d] = ids.threadgroups_per_grid[d] = 1;
        ids.thread_index_in_threadgroup = i % 256;
        ids.thread_index_in_simdgroup = i % 32;
        ids.simdgroup_index_in_threadgroup = (i % 256) / 32;
        ids.simdgroups_per_threadgroup = 8;
        ids.threads_per_simdgroup = 32;
        k->info->entry(&args);
    }
}

static const char *basic_src = "#include <metal_stdlib>\n"
                               "using namespace metal;\n"
                               "struct Params { uint n; float scale; };\n"
                               "kernel void add_scaled(device const float *a [[buffer(0)]],\n"
                               "                       device float *out [[buffer(1)]],\n"
                               "                       constant Params &p [[buffer(2)]],\n"
                               "                       uint gid [[thread_position_in_grid]],\n"
                               "                       ushort2 lid [[thread_position_in_threadgroup]]) {\n"
                               "    if (gid >= p.n) return;\n"
                               "    out[gid] = a[gid] * p.scale + float(lid.x == gid % 256);\n"
                               "}\n"
                               "#define INSTANTIATE(NAME, T) \\\n"
                               "  template [[host_name(\"scale_\" #NAME)]] [[kernel]] decltype(scale<T>) scale<T>;\n"
                               "template <typename T>\n"
                               "[[kernel]] void scale(device T *x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
                               "    x[i] = x[i] * T(2);\n"
                               "}\n"
                               "INSTANTIATE(f32, float)\n"
                               "INSTANTIATE(i32, int)\n";

TEST(sw_compile_runs_simple_kernels) {
    use_temp_cache();
    sw_library *lib = compile_or_skip(basic_src, "basic.metal");
    if (!lib) return;
    CHECK_EQ_INT(sw_library_kernel_count(lib), 3);
    CHECK(strcmp(sw_library_kernel_name(lib, 0), "add_scaled") == 0);
    CHECK(strcmp(sw_library_kernel_name(lib, 1), "scale_f32") == 0); /* host name built by a macro */
    CHECK(strcmp(sw_library_kernel_name(lib, 2), "scale_i32") == 0);
    sw_kernel k;
    if (get_kernel(lib, "add_scaled", NULL, 0, &k) == 0) {
        float a[300], out[300];
        struct {
            uint32_t n;
            float scale;
        } p = {290, 0.5f};
        for (int i = 0; i < 300; i++) a[i] = (float)i, out[i] = -1;
        void *bufs[] = {a, out, &p, NULL};
        run_1d(&k, bufs, 300);
        CHECK_NEAR(out[0], 1.0, 0);
        CHECK_NEAR(out[289], 289 * 0.5 + 1, 0);
        CHECK_NEAR(out[290], -1, 0);
        CHECK_EQ_INT(k.info->nbindings, 5);
        CHECK(strcmp(k.info->bindings[2].param, "p") == 0 && k.info->bindings[2].line == 6);
        CHECK_EQ_INT(k.info->line, 4);
    }
    if (get_kernel(lib, "scale_i32", NULL, 0, &k) == 0) {
        int x[4] = {1, -2, 3, 40};
        void *bufs[] = {x, NULL};
        run_1d(&k, bufs, 4);
        CHECK(x[0] == 2 && x[1] == -4 && x[2] == 6 && x[3] == 80);
    }
    char *err = NULL;
    CHECK(sw_library_get_kernel(lib, "nope", NULL, 0, SW_INSTR_NONE, &k, &err) == -1);
    CHECK(err && strstr(err, "no kernel named 'nope'") && strstr(err, "scale_f32"));
    free(err);
    sw_library_free(lib);
}

static const char *convert_src =
    "kernel void cvt(device const float *in [[buffer(0)]], device bfloat *ob [[buffer(1)]],\n"
    "                device half *oh [[buffer(2)]], device float *back [[buffer(3)]],\n"
    "                uint i [[thread_position_in_grid]]) {\n"
    "    ob[i] = bfloat(in[i]);\n"
    "    oh[i] = static_cast<half>(in[i]);\n"
    "    back[i] = float(ob[i]) + float(oh[i]) * 0.0f;\n"
    "}\n"
    "kernel void cvt_double(device const float2 *in [[buffer(0)]], device bfloat *o [[buffer(1)]],\n"
    "                       uint i [[thread_position_in_grid]]) {\n"
    "    o[i] = bfloat((double)in[i].x + (double)in[i].y);\n"
    "}\n"
    "kernel void half_ops(device const half *a [[buffer(0)]], device half *o [[buffer(1)]],\n"
    "                     uint i [[thread_position_in_grid]]) {\n"
    "    o[i] = a[i] * a[i] + a[i];\n"   /* rounds after the multiply, then after the add */
    "}\n";

TEST(sw_compile_bf16_half_round_to_nearest_even) {
    use_temp_cache();
    sw_library *lib = compile_or_skip(convert_src, "cvt.metal");
    if (!lib) return;
    enum { N = 65536 + 4096 + 16 };
    float *in = malloc(sizeof(float) * N), *back = malloc(sizeof(float) * N);
    uint16_t *ob = malloc(2 * N), *oh = malloc(2 * N);
    uint32_t seed = 12345;
    for (int i = 0; i < N; i++) {
        uint32_t bits;
        if (i < 65536) bits = ((uint32_t)i << 16) | (uint32_t)(i * 2654435761u >> 16); /* every exponent/mantissa top */
        else if (i < 65536 + 4096) bits = ((uint32_t)(i - 65536) << 16) | 0x8000u;     /* exact ties */
        else bits = seed = seed * 1664525u + 1013904223u;
        in[i] = f32_from_bits(bits);
    }
    in[N - 1] = 1.0f + 0x1p-8f;
    in[N - 2] = 1.0f + 3 * 0x1p-8f;
    in[N - 3] = 65520.0f;
    in[N - 4] = 1.0f + 0x1p-11f;
    sw_kernel k;
    if (get_kernel(lib, "cvt", NULL, 0, &k) == 0) {
        void *bufs[] = {in, ob, oh, back, NULL};
        run_1d(&k, bufs, N);
        int bad_bf = 0, bad_h = 0;
        for (int i = 0; i < N; i++) {
            uint16_t want = bf16_from_f32(in[i]);
            if (ob[i] != want && bad_bf++ < 5)
                test_fail(__FILE__, __LINE__, "bf16(%08x) = %04x, want %04x", f32_bits(in[i]), ob[i], want);
            uint16_t wh = f16_from_f32(in[i]);
            int both_nan = (wh & 0x7c00) == 0x7c00 && (wh & 0x3ff) && (oh[i] & 0x7c00) == 0x7c00 && (oh[i] & 0x3ff);
            if (oh[i] != wh && !both_nan && bad_h++ < 5)
                test_fail(__FILE__, __LINE__, "half(%08x) = %04x, want %04x", f32_bits(in[i]), oh[i], wh);
        }
        CHECK_EQ_INT(bad_bf, 0);
        CHECK_EQ_INT(bad_h, 0);
        CHECK_EQ_INT(ob[N - 1], 0x3f80);
        CHECK_EQ_INT(ob[N - 2], 0x3f82);
        CHECK_EQ_INT(oh[N - 3], 0x7c00);
        CHECK_EQ_INT(oh[N - 4], 0x3c00);
    }
    if (get_kernel(lib, "cvt_double", NULL, 0, &k) == 0) {
        /* 1 + 2^-8 + 2^-40 lies above the bf16 midpoint: rounds up to 0x3f81, though
         * rounding to float first would make it a tie and round down to 0x3f80. */
        float in2[6] = {1.0f + 0x1p-8f, 0x1p-40f, 1.0f + 0x1p-8f, -0x1p-40f, -3.0f, 0.0f};
        uint16_t o[3] = {0};
        void *bufs[] = {in2, o, NULL};
        run_1d(&k, bufs, 3);
        CHECK_EQ_INT(o[0], 0x3f81);
        CHECK_EQ_INT(o[1], 0x3f80);
        CHECK_EQ_INT(o[2], 0xc040);
    }
    if (get_kernel(lib, "half_ops", NULL, 0, &k) == 0) {
        uint16_t a[2] = {f16_from_f32(1.0f + 0x1p-10f), f16_from_f32(3.0f)}, o[2];
        void *bufs[] = {a, o, NULL};
        run_1d(&k, bufs, 2);
        /* (1+2^-10)^2 = 1 + 2^-9 + 2^-20 -> half 1+2^-9; + (1+2^-10) = 2 + 3*2^-10 -> tie at 2+2^-9.. -> even */
        float x = 1.0f + 0x1p-10f;
        float sq = f16_to_f32(f16_from_f32(x * x));
        CHECK_EQ_INT(o[0], f16_from_f32(sq + x));
        CHECK_EQ_INT(o[1], f16_from_f32(12.0f));
    }
    free(in);
    free(back);
    free(ob);
    free(oh);
    sw_library_free(lib);
}

static const char *vector_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void vec_ops(device float *o [[buffer(0)]], device uint *u [[buffer(1)]],\n"
    "                    uint i [[thread_position_in_grid]]) {\n"
    "    float2 a = float2(1.0f, 2.0f);\n"
    "    float4 v = float4(a.yx, 3, 4);\n"                    /* 2 1 3 4 */
    "    v.zw = v.xy * 10.0f;\n"                              /* 2 1 20 10 */
    "    float3 c = v.wzy;\n"                                 /* 10 20 1 */
    "    int4 iv = int4(v);\n"                                /* value conversion, not bits */
    "    half4 h = half4(v) + half(0.5);\n"
    "    packed_float3 p = packed_float3(c);\n"
    "    o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;\n"
    "    o[4] = c.x + c.y + c.z; o[5] = float(iv.z); o[6] = float(h.w);\n"
    "    o[7] = dot(v, float4(1)); o[8] = length(float2(3, 4)); o[9] = p.y;\n"
    "    o[10] = sizeof(packed_float3); o[11] = sizeof(float3);\n"
    "    o[12] = select(1.0f, 2.0f, v.x > 1.0f); float4 s = select(float4(0), v, v > 5.0f);\n"
    "    o[13] = s.x + s.z; o[14] = clamp(7.5f, 0.0f, 5.0f); o[15] = min(v, 1.5f).y;\n"
    "    o[16] = fma(2.0f, 3.0f, 1.0f); o[17] = exp(1.0f); o[18] = metal::fast::exp2(3.0f);\n"
    "    o[19] = precise::rsqrt(4.0f); o[20] = mix(0.0f, 10.0f, 0.25f); o[21] = abs(-3.5f);\n"
    "    o[22] = as_type<float>(0x3f800000u); o[23] = float(all(v > 0.0f)) + float(any(v > 15.0f)) * 2;\n"
    "    o[24] = tanh(0.5f); o[25] = fmax(v, float4(3)).x; o[26] = step(2.0f, 3.0f); o[27] = sign(-0.0f);\n"
    "    o[28] = floor(-1.5f) + ceil(1.2f) + round(2.5f) + trunc(-2.7f);\n"
    "    o[29] = numeric_limits<float>::max() > 1e38f; o[30] = float(numeric_limits<bfloat>::max());\n"
    "    u[0] = as_type<uint>(1.0f); u[1] = popcount(0xF0F0u); u[2] = clz(1u); u[3] = ctz(8u);\n"
    "    u[4] = mulhi(0x80000000u, 6u); u[5] = as_type<uint>(half2(1.0h, -2.0h));\n"
    "    u[6] = max(3u, 9u); u[7] = uint(abs(-5)); u[8] = as_type<ushort2>(u[5]).y;\n"
    "    uint2 w = uint2(7, 9); w.yx = w.xy; u[9] = w.x; u[10] = int4(1, 2, 3, 4).wzyx.x;\n"
    "    u[11] = reverse_bits(1u); u[12] = as_type<ushort>(bfloat(1.0f + 0x1p-8f));\n"
    "}\n";

TEST(sw_compile_vectors_math_as_type) {
    use_temp_cache();
    sw_library *lib = compile_or_skip(vector_src, "vec.metal");
    if (!lib) return;
    sw_kernel k;
    if (get_kernel(lib, "vec_ops", NULL, 0, &k) == 0) {
        float o[32] = {0};
        uint32_t u[16] = {0};
        void *bufs[] = {o, u, NULL};
        run_1d(&k, bufs, 1);
        CHECK(o[0] == 2 && o[1] == 1 && o[2] == 20 && o[3] == 10);
        CHECK_NEAR(o[4], 31, 0);
        CHECK_NEAR(o[5], 20, 0);
        CHECK_NEAR(o[6], 10.5, 0);
        CHECK_NEAR(o[7], 33, 0);
        CHECK_NEAR(o[8], 5, 0);
        CHECK_NEAR(o[9], 20, 0);
        CHECK_NEAR(o[10], 12, 0);
        CHECK_NEAR(o[11], 16, 0);
        CHECK_NEAR(o[12], 2, 0);
        CHECK_NEAR(o[13], 20, 0);
        CHECK_NEAR(o[14], 5, 0);
        CHECK_NEAR(o[15], 1, 0);
        CHECK_NEAR(o[16], 7, 0);
        CHECK_NEAR(o[17], expf(1.0f), 0);
        CHECK_NEAR(o[18], 8, 0);
        CHECK_NEAR(o[19], 0.5, 0);
        CHECK_NEAR(o[20], 2.5, 0);
        CHECK_NEAR(o[21], 3.5, 0);
        CHECK_NEAR(o[22], 1, 0);
        CHECK_NEAR(o[23], 3, 0);
        CHECK_NEAR(o[24], tanhf(0.5f), 0);
        CHECK_NEAR(o[25], 3, 0);
        CHECK_NEAR(o[26], 1, 0);
        CHECK_NEAR(o[27], 0, 0);
        CHECK(signbit(o[27]));
        CHECK_NEAR(o[28], -2 + 2 + 3 - 2, 0);
        CHECK_NEAR(o[29], 1, 0);
        CHECK_NEAR(o[30], bf16_to_f32(0x7f7f), 0);
        CHECK_EQ_INT(u[0], 0x3f800000);
        CHECK_EQ_INT(u[1], 8);
        CHECK_EQ_INT(u[2], 31);
        CHECK_EQ_INT(u[3], 3);
        CHECK_EQ_INT(u[4], 3);
        CHECK_EQ_INT(u[5], 0xc0003c00u);
        CHECK_EQ_INT(u[6], 9);
        CHECK_EQ_INT(u[7], 5);
        CHECK_EQ_INT(u[8], 0xc000);
        CHECK_EQ_INT(u[9], 9);
        CHECK_EQ_INT(u[10], 4);
        CHECK_EQ_INT(u[11], 0x80000000u);
        CHECK_EQ_INT(u[12], 0x3f80);
    }
    sw_library_free(lib);
}

static const char *atomic_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void atomics(device atomic_uint *cu [[buffer(0)]], device atomic_float *cf [[buffer(1)]],\n"
    "                    device atomic_int *ci [[buffer(2)]], device uint *old [[buffer(3)]],\n"
    "                    uint i [[thread_position_in_grid]]) {\n"
    "    old[i] = atomic_fetch_add_explicit(cu, 2u, memory_order_relaxed);\n"
    "    atomic_fetch_add_explicit(cf, 0.5f, memory_order_relaxed);\n"
    "    atomic_fetch_max_explicit(ci, int(i) - 3, memory_order_relaxed);\n"
    "    atomic_fetch_min_explicit(&ci[1], int(i) - 3, memory_order_relaxed);\n"
    "    atomic_fetch_sub_explicit(&cu[1], 1u, memory_order_relaxed);\n"
    "    if (i == 0) {\n"
    "        uint expected = 100;\n"
    "        bool ok = atomic_compare_exchange_weak_explicit(&cu[2], &expected, 7u, memory_order_relaxed,\n"
    "                                                        memory_order_relaxed);\n"
    "        old[10] = ok; old[11] = expected;\n"
    "        old[12] = atomic_exchange_explicit(&cu[3], 42u, memory_order_relaxed);\n"
    "        atomic_store_explicit(&ci[2], -9, memory_order_relaxed);\n"
    "        old[13] = atomic_load_explicit(&ci[2], memory_order_relaxed);\n"
    "    }\n"
    "}\n";

TEST(sw_compile_atomics_single_thread) {
    use_temp_cache();
    sw_library *lib = compile_or_skip(atomic_src, "atomics.metal");
    if (!lib) return;
    sw_kernel k;
    if (get_kernel(lib, "atomics", NULL, 0, &k) == 0) {
        uint32_t cu[4] = {10, 100, 5, 3};
        float cf = 1.0f;
        int32_t ci[3] = {-100, 100, 0};
        uint32_t old[16] = {0};
        void *bufs[] = {cu, &cf, ci, old, NULL};
        run_1d(&k, bufs, 8);
        CHECK_EQ_INT(cu[0], 26);
        CHECK_EQ_INT(old[0], 10);
        CHECK_EQ_INT(old[7], 24);
        CHECK_NEAR(cf, 5.0, 0);
        CHECK_EQ_INT(ci[0], 4);
        CHECK_EQ_INT(ci[1], -3);
        CHECK_EQ_INT(cu[1], 92);
        CHECK_EQ_INT(old[10], 0);    /* expected 100, found 5: fails and reports 5 */
        CHECK_EQ_INT(old[11], 5);
        CHECK_EQ_INT(cu[2], 5);
        CHECK_EQ_INT(old[12], 3);
        CHECK_EQ_INT(cu[3], 42);
        CHECK_EQ_INT((int32_t)old[13], -9);
    }
    sw_library_free(lib);
}

static const char *fc_src = "#include <metal_stdlib>\n"
                            "using namespace metal;\n"
                            "constant bool has_bias [[function_constant(300)]];\n"
                            "constant float bias [[function_constant(301)]];\n"
                            "constant uint reps [[function_constant(5)]];\n"
                            "constant bool reps_given = is_function_constant_defined(reps);\n"
                            "kernel void fc(device float *o [[buffer(0)]],\n"
                            "               device const float *b [[buffer(1), function_constant(has_bias)]],\n"
                            "               uint i [[thread_position_in_grid]]) {\n"
                            "    float x = reps_given ? float(reps) : -1.0f;\n"
                            "    if (has_bias) x += bias + b[0];\n"
                            "    o[i] = x;\n"
                            "}\n";

TEST(sw_compile_function_constants_and_cache) {
    use_temp_cache();
    uint64_t inv0 = sw_compile_invocations();
    sw_library *lib = compile_or_skip(fc_src, "fc.metal");
    if (!lib) return;
    CHECK_EQ_INT(sw_library_constant_count(lib), 3);
    int index, type;
    const char *name;
    CHECK(sw_library_constant(lib, 1, &index, &type, &name) == 0 && index == 301 && type == SW_FC_FLOAT &&
          strcmp(name, "bias") == 0);
    uint64_t inv1 = sw_compile_invocations();
    /* preprocess + a syntax check: a library with function constants builds no
     * variant until a function asks for its constants */
    CHECK_EQ_INT(inv1 - inv0, 2);

    sw_kernel k;
    float o[1], b[1] = {0.25f};
    void *bufs[] = {o, b, NULL};
    if (get_kernel(lib, "fc", NULL, 0, &k) == 0) {
        run_1d(&k, bufs, 1);
        CHECK_NEAR(o[0], -1, 0);
    }
    CHECK_EQ_INT(sw_compile_invocations(), inv1 + 1); /* the variant without constants */
    if (get_kernel(lib, "fc", NULL, 0, &k) == 0) CHECK_EQ_INT(sw_compile_invocations(), inv1 + 1);
    inv1++;

    sw_fc_value v[3] = {{.index = 300, .type = SW_FC_BOOL, .v.u = 1},
                        {.index = 301, .type = SW_FC_FLOAT, .v.f = 2.0},
                        {.index = 5, .type = SW_FC_UINT, .v.u = 3}};
    if (get_kernel(lib, "fc", v, 3, &k) == 0) {
        run_1d(&k, bufs, 1);
        CHECK_NEAR(o[0], 5.25, 0);
    }
    CHECK_EQ_INT(sw_compile_invocations(), inv1 + 1);
    uint64_t hits = sw_compile_cache_hits();
    if (get_kernel(lib, "fc", v, 3, &k) == 0) CHECK_EQ_INT(sw_compile_invocations(), inv1 + 1);
    CHECK(sw_compile_cache_hits() > hits);
    v[1].v.f = 4.0; /* a changed constant is a new variant */
    if (get_kernel(lib, "fc", v, 3, &k) == 0) {
        run_1d(&k, bufs, 1);
        CHECK_NEAR(o[0], 7.25, 0);
    }
    CHECK_EQ_INT(sw_compile_invocations(), inv1 + 2);
    sw_library_free(lib);

    /* a second library of the same source (as in a second process) comes from the disk cache */
    uint64_t inv2 = sw_compile_invocations();
    lib = compile_or_skip(fc_src, "fc.metal");
    if (!lib) return;
    if (get_kernel(lib, "fc", v, 3, &k) == 0) {
        run_1d(&k, bufs, 1);
        CHECK_NEAR(o[0], 7.25, 0);
    }
    CHECK_EQ_INT(sw_compile_invocations(), inv2);
    sw_library_free(lib);
}

TEST(sw_compile_errors_name_metal_lines) {
    use_temp_cache();
    const char *src = "#include <metal_stdlib>\n"
                      "using namespace metal;\n"
                      "\n"
                      "kernel void broken(device float *o [[buffer(0)]]) {\n"
                      "    float x = 1.0f\n"
                      "    o[0] = x;\n"
                      "}\n";
    char *err = NULL;
    sw_library *lib = sw_library_create(src, "broken.metal", &err);
    if (!lib && err && strstr(err, "clang++ >= 17")) SKIP("%s", err);
    CHECK(lib == NULL);
    CHECK_MSG(err && strncmp(err, "broken.metal:5:19: error: expected ';'", 38) == 0, "message: %s",
              err ? err : "(null)");
    free(err);
    sw_library_free(lib);

    const char *src2 = "kernel void k(device float *o [[buffer(0)]]) { o[0] = undefined_thing; }\n";
    err = NULL;
    lib = sw_library_create(src2, "undef.metal", &err);
    CHECK(lib == NULL);
    CHECK_MSG(err && strncmp(err, "undef.metal:1:55: error: use of undeclared identifier 'undefined_thing'", 71) == 0,
              "message: %s", err ? err : "(null)");
    free(err);
    sw_library_free(lib);

    /* front-end errors come through with their position too */
    err = NULL;
    lib = sw_library_create("kernel void k(device float *o [[buffer(40)]]) {}\n", "badidx.metal", &err);
    CHECK(lib == NULL);
    CHECK_MSG(err && strncmp(err, "badidx.metal:1:31: error: [[buffer(n)]] of parameter 'o'", 56) == 0,
              "message: %s", err ? err : "(null)");
    free(err);
    sw_library_free(lib);
}

TEST(sw_compile_instrumented_variant_imports_tsan_hooks) {
    use_temp_cache();
    const char *src = "kernel void k(device float *o [[buffer(0)]], device const float *a [[buffer(1)]],\n"
                      "              uint i [[thread_position_in_grid]]) { o[i] = a[i] * 2.0f; }\n";
    sw_library *lib = compile_or_skip(src, "instr.metal");
    if (!lib) return;
    char so[4096], *err = NULL;
    int rc = sw_library_compile_variant(lib, NULL, 0, SW_INSTR_FULL, so, sizeof so, &err);
    CHECK_MSG(rc == 0, "%s", err ? err : "");
    free(err);
    if (rc == 0) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "nm -D --undefined-only '%s' 2>/dev/null", so);
        FILE *p = popen(cmd, "r");
        if (!p) SKIP("cannot run nm");
        char line[512];
        int reads = 0, writes = 0, init = 0, any = 0;
        while (fgets(line, sizeof line, p)) {
            any = 1;
            reads += strstr(line, "__tsan_read4") != NULL;
            writes += strstr(line, "__tsan_write4") != NULL;
            init += strstr(line, "__tsan_init") != NULL;
        }
        pclose(p);
        if (!any) SKIP("nm (binutils) is not installed");
        CHECK(reads == 1 && writes == 1 && init == 1);
    }
    sw_library_free(lib);
}

/* ---- synchronising prelude functions, run by tests/unit/sw_mock_runtime.cpp ---- */

static const char *simd_src =
    "#include <metal_stdlib>\n"
    "#include <metal_simdgroup_matrix>\n"
    "using namespace metal;\n"
    "kernel void simd_test(device float *o [[buffer(0)]], device uint *u [[buffer(1)]],\n"
    "                      uint tid [[thread_index_in_threadgroup]],\n"
    "                      uint lane [[thread_index_in_simdgroup]],\n"
    "                      uint sg [[simdgroup_index_in_threadgroup]]) {\n"
    "    threadgroup float shared[64];\n"
    "    threadgroup float ma[64], mb[64];\n"
    "    shared[tid] = float(tid);\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "    float x = shared[63 - tid];\n"
    "    device float *r = o + tid * 16;\n"
    "    r[0] = simd_sum(x); r[1] = simd_max(x); r[2] = metal::simd_min(x);\n"
    "    r[3] = simd_prefix_inclusive_sum(1.0f); r[4] = simd_prefix_exclusive_sum(1.0f);\n"
    "    r[5] = simd_shuffle(x, 3); r[6] = simd_shuffle_xor(float(lane), 1);\n"
    "    r[7] = simd_shuffle_down(float(lane), 4); r[8] = simd_shuffle_up(float(lane), 4);\n"
    "    r[9] = simd_broadcast_first(float(lane + 100));\n"
    "    float2 v = simd_sum(float2(1, lane)); r[10] = v.y;\n"
    "    r[11] = simd_all(lane < 40) + 2 * simd_any(lane == 5); r[12] = float(simd_is_first());\n"
    "    r[13] = simd_broadcast(float(lane * 2), ushort(7));\n"
    "    u[tid] = simd_or(1u << (lane % 8)) + (uint)(ulong)simd_ballot(lane < 3);\n"
    "    ma[tid] = float(tid);\n"
    "    mb[tid] = (tid % 9 == 0 ? 2.0f : 0.0f) + (tid == 7 ? 1.0f : 0.0f);\n"
    "    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "    simdgroup_float8x8 A, B, C = make_filled_simdgroup_matrix<float, 8, 8>(0.5f), D;\n"
    "    simdgroup_load(A, ma, 8);\n"
    "    simdgroup_load(B, mb, 8);\n"
    "    simdgroup_multiply_accumulate(D, A, B, C);\n"
    "    if (sg == 0) simdgroup_store(D, o + 1024, 8);\n"
    "    simdgroup_bfloat8x8 At;\n"
    "    simdgroup_load(At, ma, 8, ulong2(0, 0), true);\n"
    "    simdgroup_float8x8 E;\n"
    "    simdgroup_multiply(E, At, B);\n"
    "    if (sg == 1) simdgroup_store(E, o + 1088, 8);\n"
    "    if (sg == 0) { o[1152 + lane * 2] = A.thread_elements()[0]; o[1153 + lane * 2] = A.thread_elements()[1]; }\n"
    /* deferred products: a chain longer than the product log, a reference from
     * thread_elements() kept across a product, a pending product overwritten */
    "    simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.5f);\n"
    "    for (int i = 0; i < 300; i++) simdgroup_multiply_accumulate(acc, A, B, acc);\n"
    "    if (sg == 0) simdgroup_store(acc, o + 1216, 8);\n"
    "    simdgroup_float8x8 P;\n"
    "    thread auto &pe = P.thread_elements();\n"
    "    simdgroup_multiply(P, A, B);\n"
    "    if (sg == 1) { o[1280 + lane * 2] = pe[0]; o[1281 + lane * 2] = pe[1]; }\n"
    "    simdgroup_float8x8 Q, R;\n"
    "    simdgroup_multiply(Q, A, B);\n"
    "    simdgroup_load(Q, mb, 8);\n"
    "    simdgroup_multiply(R, A, Q);\n"
    "    if (sg == 0) { simdgroup_store(R, o + 1408, 8); simdgroup_store(Q, o + 1344, 8); }\n"
    "}\n";

TEST(sw_compile_simd_barrier_matrix_semantics) {
    use_temp_cache();
    const char *root = getenv("GDNBENCH_ROOT");
    char mock_src[4096];
    snprintf(mock_src, sizeof mock_src, "%s/tests/unit/sw_mock_runtime.cpp", root ? root : ".");
    if (access(mock_src, R_OK) != 0) SKIP("%s not found (run from the repository root or via tests/run.sh)", mock_src);
    sw_library *lib = compile_or_skip(simd_src, "simd.metal");
    if (!lib) return;
    const char *cxx, *version;
    char so[4096], *err = NULL;
    if (sw_compiler_info(&cxx, &version, &err) != 0 ||
        sw_library_compile_variant(lib, NULL, 0, SW_INSTR_NONE, so, sizeof so, &err) != 0) {
        CHECK_MSG(0, "%s", err ? err : "");
        free(err);
        sw_library_free(lib);
        return;
    }
    /* the mock includes sw_abi.h from the prelude directory the compile step wrote;
     * GDNBENCH_TEST_EMULATOR runs it when the compiler builds for an emulated target */
    const char *emu = getenv("GDNBENCH_TEST_EMULATOR");
    char cmd[16384], exe[128], out[128];
    snprintf(exe, sizeof exe, "%s/mock", cache_dir);
    snprintf(out, sizeof out, "%s/out.bin", cache_dir);
    snprintf(cmd, sizeof cmd,
             "%s -std=c++17 -O1 -w -rdynamic -I\"$(ls -d %s/prelude-* | head -1)\" -o %s '%s' -ldl -lpthread && "
             "%s %s '%s' simd_test %s",
             cxx, cache_dir, exe, mock_src, emu ? emu : "", exe, so, out);
    int rc = system(cmd);
    CHECK_MSG(rc == 0, "mock runtime failed (status %d): %s", rc, cmd);
    float o[4096];
    uint32_t u[4096];
    FILE *f = fopen(out, "rb");
    int ok = f && fread(o, sizeof o, 1, f) == 1 && fread(u, sizeof u, 1, f) == 1;
    if (f) fclose(f);
    CHECK(ok);
    if (!ok) {
        sw_library_free(lib);
        return;
    }
    int bad = 0;
    for (int t = 0; t < 64; t++) {
        int lane = t % 32, sg = t / 32;
        const float *r = o + t * 16;
        float sum = 0, mx = -1, mn = 1e9f;
        for (int l = 0; l < 32; l++) {
            float x = (float)(63 - (sg * 32 + l));
            sum += x;
            mx = fmaxf(mx, x);
            mn = fminf(mn, x);
        }
        float want[14] = {sum, mx, mn, (float)lane + 1, (float)lane, (float)(63 - (sg * 32 + 3)), (float)(lane ^ 1),
                          (float)(lane + 4 < 32 ? lane + 4 : lane), (float)(lane >= 4 ? lane - 4 : lane), 100, 496, 3,
                          lane == 0 ? 1.0f : 0.0f, 14};
        for (int k = 0; k < 14; k++)
            if (r[k] != want[k] && bad++ < 10)
                test_fail(__FILE__, __LINE__, "thread %d result %d = %g, want %g", t, k, r[k], want[k]);
        if (u[t] != 255 + 7 && bad++ < 10) test_fail(__FILE__, __LINE__, "thread %d simd_or+ballot = %u", t, u[t]);
    }
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 8; j++) {
            float d = 0.5f, e = 0;
            for (int k = 0; k < 8; k++) {
                float b = (k == j ? 2.0f : 0.0f) + (k == 0 && j == 7 ? 1.0f : 0.0f);
                d += (float)(i * 8 + k) * b;
                e += (float)(k * 8 + i) * b; /* At = transpose(A), exact in bf16 */
            }
            if (o[1024 + i * 8 + j] != d && bad++ < 20)
                test_fail(__FILE__, __LINE__, "D[%d][%d] = %g, want %g", i, j, o[1024 + i * 8 + j], d);
            if (o[1088 + i * 8 + j] != e && bad++ < 20)
                test_fail(__FILE__, __LINE__, "E[%d][%d] = %g, want %g", i, j, o[1088 + i * 8 + j], e);
        }
    }
    /* deferred products (as the GPU computes them: k = 0..7 in order, in float) */
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 8; j++) {
            float acc = 0.5f, p = 0, b_ij = (i == j ? 2.0f : 0.0f) + (i == 0 && j == 7 ? 1.0f : 0.0f);
            for (int it = 0; it < 300; it++) /* more than twice the log (SW_MMA_ENTRIES) */
                for (int k = 0; k < 8; k++) acc += (float)(i * 8 + k) * ((k == j ? 2.0f : 0.0f) + (k == 0 && j == 7 ? 1.0f : 0.0f));
            for (int k = 0; k < 8; k++) p += (float)(i * 8 + k) * ((k == j ? 2.0f : 0.0f) + (k == 0 && j == 7 ? 1.0f : 0.0f));
            if (o[1216 + i * 8 + j] != acc && bad++ < 20)
                test_fail(__FILE__, __LINE__, "chain[%d][%d] = %g, want %g", i, j, o[1216 + i * 8 + j], acc);
            if (o[1344 + i * 8 + j] != b_ij && bad++ < 20)
                test_fail(__FILE__, __LINE__, "overwritten Q[%d][%d] = %g, want %g", i, j, o[1344 + i * 8 + j], b_ij);
            if (o[1408 + i * 8 + j] != p && bad++ < 20)
                test_fail(__FILE__, __LINE__, "R[%d][%d] = %g, want %g", i, j, o[1408 + i * 8 + j], p);
        }
    }
    for (int l = 0; l < 32; l++) {
        int q = l / 4, row = (q & 4) + (l / 2) % 4, col = (q & 2) * 2 + (l % 2) * 2;
        for (int e = 0; e < 2; e++) {
            float p = 0;
            for (int k = 0; k < 8; k++)
                p += (float)(row * 8 + k) * ((k == col + e ? 2.0f : 0.0f) + (k == 0 && col + e == 7 ? 1.0f : 0.0f));
            if (o[1280 + 2 * l + e] != p && bad++ < 30)
                test_fail(__FILE__, __LINE__, "kept reference: lane %d element %d = %g, want %g", l, e,
                          o[1280 + 2 * l + e], p);
        }
    }
    /* Apple's lane layout: lane l holds row (q&4) + (l/2)%4, columns (q&2)*2 + (l%2)*2 and +1, q = l/4 */
    for (int l = 0; l < 32; l++) {
        int q = l / 4, row = (q & 4) + (l / 2) % 4, col = (q & 2) * 2 + (l % 2) * 2;
        if ((o[1152 + 2 * l] != row * 8 + col || o[1153 + 2 * l] != row * 8 + col + 1) && bad++ < 30)
            test_fail(__FILE__, __LINE__, "lane %d holds %g %g", l, o[1152 + 2 * l], o[1153 + 2 * l]);
    }
    CHECK_EQ_INT(bad, 0);
    sw_library_free(lib);
}

/* ---- MLX / mlx-native style source: macros, templates, traits, matrices ---- */

static const char *mlx_style_src =
    "#include <metal_stdlib>\n"
    "#include <metal_simdgroup>\n"
    "#include <metal_simdgroup_matrix>\n"
    "using namespace metal;\n"
    "\n"
    "#define STEEL_CONST static constant constexpr const\n"
    "#define STEEL_PRAGMA_UNROLL _Pragma(\"clang loop unroll(full)\")\n"
    "\n"
    "typedef bfloat bfloat16_t;\n"
    "STEEL_CONST int BQ = 32;\n"
    "constant constexpr uint BT = 64;\n"
    "\n"
    "struct AttnParams {\n"
    "  int B, H, D, qL, kL, gqa_factor;\n"
    "  float scale, softcapping;\n"
    "  int NQ, NK, NQ_aligned, NK_aligned, qL_rem, kL_rem, qL_off, _pad;\n"
    "  int64_t Q_strides[3], K_strides[3], V_strides[3], O_strides[3];\n"
    "};\n"
    "static_assert(sizeof(AttnParams) == 160, \"AttnParams layout\");\n"
    "\n"
    "constant bool align_Q [[function_constant(200)]];\n"
    "constant bool has_mask [[function_constant(300)]];\n"
    "constant bool do_causal [[function_constant(301)]];\n"
    "\n"
    "template <typename T> struct Limits { static constexpr constant T max = metal::numeric_limits<T>::max(); };\n"
    "\n"
    "template <typename T, typename = metal::enable_if_t<metal::is_floating_point_v<T> || metal::is_same_v<T, bfloat>>>\n"
    "METAL_FUNC T neg_inf() { return T(-metal::numeric_limits<float>::infinity()); }\n"
    "\n"
    "template <typename T, int D>\n"
    "[[kernel, max_total_threads_per_threadgroup(128)]] void attention_bwd(\n"
    "    const device T* Q [[buffer(0)]],\n"
    "    const device T* K [[buffer(1)]],\n"
    "    device float* dK [[buffer(8)]],\n"
    "    const constant AttnParams* params [[buffer(10)]],\n"
    "    const device bool* mask [[buffer(11), function_constant(has_mask)]],\n"
    "    uint simd_lane_id [[thread_index_in_simdgroup]],\n"
    "    uint simd_group_id [[simdgroup_index_in_threadgroup]],\n"
    "    uint3 tid [[threadgroup_position_in_grid]],\n"
    "    uint3 lid [[thread_position_in_threadgroup]]) {\n"
    "  threadgroup T Qs[BQ * (D + 8)];\n"
    "  threadgroup float scores[BQ][BQ + 1];\n"
    "  using frag = typename metal::vec<float, 2>;\n"
    "  simdgroup_matrix<float, 8, 8> acc = make_filled_simdgroup_matrix<float, 8, 8>(0.f);\n"
    "  frag *f = reinterpret_cast<thread frag*>(&acc.thread_elements());\n"
    "  float m = neg_inf<float>();\n"
    "  STEEL_PRAGMA_UNROLL\n"
    "  for (short i = 0; i < 4; i++) {\n"
    "    Qs[lid.x + i] = Q[tid.x * D + i];\n"
    "  }\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  #pragma unroll\n"
    "  for (int k = 0; k < D; k += 8) {\n"
    "    simdgroup_matrix<T, 8, 8> a;\n"
    "    simdgroup_load(a, Qs + k, D + 8, ulong2(0, 0), false);\n"
    "    simdgroup_multiply_accumulate(acc, a, a, acc);\n"
    "  }\n"
    "  float s = metal::precise::exp(params->scale) + fast::exp2(m) + metal::max(f->x, 0.0);\n"
    "  if (has_mask && mask[0]) s = 0;\n"
    "  s = simd_sum(s);\n"
    "  if (do_causal) s += simd_shuffle_xor(s, 1);\n"
    "  scores[lid.x % BQ][0] = s;\n"
    "  atomic_fetch_add_explicit((device atomic<float>*)&dK[lid.x], s * params->scale, memory_order_relaxed);\n"
    "}\n"
    "\n"
    "#define instantiate_kernel(name, func, ...) \\\n"
    "  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;\n"
    "#define instantiate_bwd(tname, dtype, d) \\\n"
    "  instantiate_kernel(\"flash_attn_train_bwd_\" #tname \"_d\" #d, attention_bwd, dtype, d)\n"
    "\n"
    "instantiate_bwd(bf16, bfloat16_t, 64)\n"
    "instantiate_bwd(bf16, bfloat16_t, 256)\n"
    "\n"
    "[[kernel]] void f32_to_bf16_cast(const device float* in [[buffer(0)]], device bfloat* out [[buffer(1)]],\n"
    "                                 constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n"
    "  if (i < n) out[i] = static_cast<bfloat>(in[i]);\n"
    "}\n"
    "\n"
    "kernel void gated_delta_net_kkt_bf16(\n"
    "    device const bfloat *k [[buffer(0)]], device const float *beta [[buffer(1)]],\n"
    "    device const float *g [[buffer(2)]], device float *A [[buffer(3)]],\n"
    "    constant uint *params [[buffer(4)]],\n"
    "    threadgroup bfloat *k_tile [[threadgroup(0)]], threadgroup float *a_tile [[threadgroup(1)]],\n"
    "    uint3 tgid [[threadgroup_position_in_grid]], uint tid [[thread_index_in_threadgroup]],\n"
    "    uint sgid [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {\n"
    "  const uint T = params[1], K = params[4];\n"
    "  for (uint i = tid; i < BT * 64; i += 256) k_tile[i] = k[i % (T * K)] * bfloat(beta[0]);\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);\n"
    "  simdgroup_bfloat8x8 ka, kb; simdgroup_float8x8 c(0.0f);\n"
    "  simdgroup_load(ka, k_tile, 64, ulong2(0, sgid * 8));\n"
    "  simdgroup_load(kb, k_tile, 64, ulong2(0, sgid * 8), true);\n"
    "  simdgroup_multiply(c, ka, kb);\n"
    "  simdgroup_store(c, a_tile + sgid * 8 * BT, BT);\n"
    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    "  float gi = g[tgid.x], gj = g[tgid.y];\n"
    "  A[tid] = a_tile[tid] * exp(gi - gj) * (tid % BT > tid / BT ? 1.0f : 0.0f);\n"
    "}\n";

TEST(sw_compile_mlx_style_source) {
    use_temp_cache();
    sw_library *lib = compile_or_skip(mlx_style_src, "attn_bwd.metal");
    if (!lib) return;
    CHECK_EQ_INT(sw_library_kernel_count(lib), 4);
    CHECK(strcmp(sw_library_kernel_name(lib, 0), "flash_attn_train_bwd_bf16_d64") == 0);
    CHECK(strcmp(sw_library_kernel_name(lib, 1), "flash_attn_train_bwd_bf16_d256") == 0);
    CHECK_EQ_INT(sw_library_constant_count(lib), 3);
    sw_fc_value fcs[3] = {{.index = 200, .type = SW_FC_BOOL, .v.u = 1},
                          {.index = 300, .type = SW_FC_BOOL, .v.u = 0},
                          {.index = 301, .type = SW_FC_BOOL, .v.u = 1}};
    sw_kernel k;
    if (get_kernel(lib, "flash_attn_train_bwd_bf16_d64", fcs, 3, &k) == 0) {
        CHECK_EQ_INT(k.info->nbindings, 9);
        CHECK(k.info->bindings[4].kind == SW_BIND_BUFFER && k.info->bindings[4].index == 11 &&
              strcmp(k.info->bindings[4].param, "mask") == 0);
        CHECK(k.info->bindings[7].kind == SW_BIND_ATTR &&
              k.info->bindings[7].index == SW_ATTR_THREADGROUP_POSITION_IN_GRID);
    }
    if (get_kernel(lib, "gated_delta_net_kkt_bf16", NULL, 0, &k) == 0)
        CHECK(k.info->nbindings == 11 && k.info->bindings[6].kind == SW_BIND_THREADGROUP &&
              k.info->bindings[6].index == 1);
    if (get_kernel(lib, "f32_to_bf16_cast", NULL, 0, &k) == 0) {
        float in[3] = {1.0f + 0x1p-8f, -2.5f, 3.0f};
        uint16_t out[3] = {0};
        uint32_t n = 2;
        void *bufs[] = {in, out, &n, NULL};
        run_1d(&k, bufs, 3);
        CHECK(out[0] == 0x3f80 && out[1] == 0xc020 && out[2] == 0);
    }
    sw_library_free(lib);
}

/* MSL's char is a signed 8-bit integer on every GPU; plain C++ char is unsigned on
 * arm64 Linux, so the kernel build has to say so (-fsigned-char). */
static const char *char_src = "kernel void widen(device const uchar *in [[buffer(0)]], device int *out [[buffer(1)]],\n"
                              "                  uint i [[thread_position_in_grid]]) {\n"
                              "    char c = (char)in[i];\n"
                              "    char2 v = char2(c, (char)(c >> 1));\n"
                              "    out[3 * i] = int(c);\n"
                              "    out[3 * i + 1] = int(v.y);\n"
                              "    out[3 * i + 2] = c < 0;\n"
                              "}\n";

TEST(sw_compile_char_is_signed) {
    use_temp_cache();
    sw_library *lib = compile_or_skip(char_src, "char.metal");
    if (!lib) return;
    sw_kernel k;
    if (get_kernel(lib, "widen", NULL, 0, &k) == 0) {
        uint8_t in[3] = {200, 127, 128};
        int out[9];
        memset(out, 0x55, sizeof out);
        void *bufs[] = {in, out, NULL};
        run_1d(&k, bufs, 3);
        CHECK_EQ_INT(out[0], -56);
        CHECK_EQ_INT(out[1], -28);
        CHECK_EQ_INT(out[2], 1);
        CHECK_EQ_INT(out[3], 127);
        CHECK_EQ_INT(out[4], 63);
        CHECK_EQ_INT(out[5], 0);
        CHECK_EQ_INT(out[6], -128);
        CHECK_EQ_INT(out[7], -64);
        CHECK_EQ_INT(out[8], 1);
    }
    sw_library_free(lib);
}

/* A library of more kernels than GDNBENCH_SW_WHOLE_LIBRARY_MAX (set to 0 here) is
 * checked whole at creation and compiled one kernel at a time: the C++ of one
 * kernel leaves the other explicit instantiations out (blanked, line for line). */
static const char *many_src = "template <typename T, int N>\n"                                  /* 1 */
                              "[[kernel]] void fill(device T *x [[buffer(0)]],\n"                 /* 2 */
                              "                     uint i [[thread_position_in_grid]]) {\n"      /* 3 */
                              "    x[i] = T(N) + T(i);\n"                                          /* 4 */
                              "}\n"                                                                /* 5 */
                              "template [[host_name(\"fill_3\")]]\n"                              /* 6 */
                              "[[kernel]] decltype(fill<float, 3>)\n"                             /* 7 */
                              "    fill<float, 3>;\n"                                              /* 8 */
                              "template [[host_name(\"fill_5\")]] [[kernel]] void fill<int, 5>(\n" /* 9 */
                              "    device int *x [[buffer(0)]],\n"                                 /* 10 */
                              "    uint i [[thread_position_in_grid]]);\n"                         /* 11 */
                              "kernel void where(device int *x [[buffer(0)]]) {\n"                /* 12 */
                              "    x[0] = __LINE__;\n"                                             /* 13 */
                              "}\n";

static const char *many_bad_src = "template <typename T>\n"
                                  "[[kernel]] void twice(device T *x [[buffer(0)]]) {\n"
                                  "    x[0] = x[0].no_such_member;\n"
                                  "}\n"
                                  "template [[host_name(\"twice_f\")]] [[kernel]] decltype(twice<float>) twice<float>;\n";

/* many_src created in a fresh cache that keeps each built kernel's C++ in `keep`
 * (GDNBENCH_SW_KEEP_CPP); *before is the compile count before it.  NULL: skipped. */
static sw_library *create_many_keeping_cpp(char *keep, size_t n, uint64_t *before) {
    use_temp_cache();
    snprintf(keep, n, "%s/keep", cache_dir);
    setenv("GDNBENCH_SW_KEEP_CPP", keep, 1);
    *before = sw_compile_invocations();
    return compile_or_skip(many_src, "many.metal");
}

/* Runs many_src's fill_5 (its values checked) as the library's first built kernel:
 * one more clang run than `before` counted the two of creation, and the only C++
 * kept in `keep` so far is fill_5's (fill<float, 3> is not in it at all). */
static void run_fill_5_alone(sw_library *lib, const char *keep, uint64_t before) {
    sw_kernel k;
    if (get_kernel(lib, "fill_5", NULL, 0, &k) == 0) {
        CHECK(k.info[1].name == NULL); /* the variant holds this kernel alone */
        int x[3] = {0};
        void *bufs[] = {x, NULL};
        run_1d(&k, bufs, 3);
        CHECK(x[0] == 5 && x[1] == 6 && x[2] == 7);
    }
    CHECK_EQ_INT((int)(sw_compile_invocations() - before), 3);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "cat %s/*.cpp", keep);
    FILE *p = popen(cmd, "r");
    char line[4096];
    int has_other = 0, has_own = 0;
    while (p && fgets(line, sizeof line, p)) {
        has_other |= strstr(line, "fill<float, 3>") != NULL;
        has_own |= strstr(line, "fill<int, 5>") != NULL;
    }
    if (p) pclose(p);
    CHECK(has_own && !has_other);
}

TEST(sw_compile_large_library_compiles_one_kernel_at_a_time) {
    setenv("GDNBENCH_SW_WHOLE_LIBRARY_MAX", "0", 1);
    char keep[128];
    uint64_t before;
    sw_library *lib = create_many_keeping_cpp(keep, sizeof keep, &before);
    if (!lib) return;
    CHECK_EQ_INT(sw_library_is_per_kernel(lib), 1);
    CHECK_EQ_INT(sw_library_kernel_count(lib), 3);
    /* preprocessing and one syntax check; no kernel is built yet */
    CHECK_EQ_INT((int)(sw_compile_invocations() - before), 2);
    sw_kernel k;
    run_fill_5_alone(lib, keep, before);
    if (get_kernel(lib, "fill_3", NULL, 0, &k) == 0) {
        CHECK(k.info[1].name == NULL && strcmp(k.info[0].name, "fill_3") == 0);
        float x[2] = {0};
        void *bufs[] = {x, NULL};
        run_1d(&k, bufs, 2);
        CHECK(x[0] == 3.0f && x[1] == 4.0f);
    }
    if (get_kernel(lib, "where", NULL, 0, &k) == 0) {
        int x[1] = {0};
        void *bufs[] = {x, NULL};
        run_1d(&k, bufs, 1);
        CHECK_EQ_INT(x[0], 13); /* the blanked instantiations above kept their lines */
        CHECK_EQ_INT(k.info->line, 12);
    }
    CHECK_EQ_INT((int)(sw_compile_invocations() - before), 5);
    if (get_kernel(lib, "fill_5", NULL, 0, &k) == 0) CHECK_EQ_INT((int)(sw_compile_invocations() - before), 5);
    /* the compile command's view: every kernel in one unoptimised build */
    char *err = NULL;
    sw_kernel d;
    CHECK(sw_library_describe_kernel(lib, "fill_3", &d, &err) == 0);
    CHECK(d.info && d.info->nbindings == 2 && d.info[1].name != NULL);
    free(err);
    err = NULL;
    CHECK(sw_library_describe_kernel(lib, "where", &d, &err) == 0 && strcmp(d.info->name, "where") == 0);
    free(err);
    CHECK_EQ_INT((int)(sw_compile_invocations() - before), 6);
    sw_library_free(lib);

    /* an error inside an instantiated template body surfaces at creation, at its line */
    err = NULL;
    lib = sw_library_create(many_bad_src, "many_bad.metal", &err);
    CHECK(lib == NULL);
    CHECK_MSG(err && strstr(err, "many_bad.metal:3:") && strstr(err, "no_such_member"), "got: %s", err ? err : "");
    free(err);
    sw_library_free(lib);
    unsetenv("GDNBENCH_SW_WHOLE_LIBRARY_MAX");
    unsetenv("GDNBENCH_SW_KEEP_CPP");
}

/* A small library (issue 35): creating one of several kernels only checks it, and a
 * run builds the kernel it asks for alone, never its siblings; a library of one
 * kernel without constants is built at creation, and its run loads that build. */
TEST(sw_compile_small_library_builds_only_the_asked_kernel) {
    char keep[128];
    uint64_t before;
    sw_library *lib = create_many_keeping_cpp(keep, sizeof keep, &before);
    if (!lib) return;
    CHECK_EQ_INT(sw_library_is_per_kernel(lib), 0);
    CHECK_EQ_INT((int)(sw_compile_invocations() - before), 2); /* preprocessing and the syntax check */
    sw_kernel k;
    run_fill_5_alone(lib, keep, before);
    if (get_kernel(lib, "where", NULL, 0, &k) == 0) {
        int x[1] = {0};
        void *bufs[] = {x, NULL};
        run_1d(&k, bufs, 1);
        CHECK_EQ_INT(x[0], 13); /* the blanked instantiations kept their lines */
    }
    CHECK_EQ_INT((int)(sw_compile_invocations() - before), 4);
    sw_library_free(lib);
    unsetenv("GDNBENCH_SW_KEEP_CPP");

    static const char *one_src = "kernel void one(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
                                 "    x[i] = 1.0f;\n}\n";
    before = sw_compile_invocations();
    lib = compile_or_skip(one_src, "one.metal");
    if (!lib) return;
    CHECK_EQ_INT(sw_library_kernel_count(lib), 1);
    CHECK_EQ_INT((int)(sw_compile_invocations() - before), 2); /* preprocessing and the build */
    CHECK(get_kernel(lib, sw_library_kernel_name(lib, 0), NULL, 0, &k) == 0);
    CHECK_EQ_INT((int)(sw_compile_invocations() - before), 2);
    sw_library_free(lib);
}

/* A library that also runs as lanes builds its lanes variant on a thread of its own
 * while the fibers variant builds (issue 35): both are there when creation returns,
 * and the run's function builds nothing more.  GDNBENCH_SW_PARALLEL_BUILDS=0: the
 * lanes variant is built when the function is made, as before. */
TEST(sw_compile_lanes_variant_builds_beside_the_fibers_variant) {
    use_temp_cache();
    const char *srcs[2] = {
        "kernel void ssum(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
        "    x[i] = simd_sum(x[i]);\n}\n",
        "kernel void ssum(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
        "    x[i] = simd_sum(x[i]) + 1.0f;\n}\n"};
    for (int serial = 0; serial < 2; serial++) {
        if (serial) setenv("GDNBENCH_SW_PARALLEL_BUILDS", "0", 1);
        uint64_t before = sw_compile_invocations();
        sw_library *lib = compile_or_skip(srcs[serial], "ssum.metal");
        if (!lib) return;
        /* preprocessing, fibers and (in parallel) lanes; serially the lanes come later */
        CHECK_EQ_INT((int)(sw_compile_invocations() - before), serial ? 2 : 3);
        sw_kernel k;
        if (get_kernel(lib, "ssum", NULL, 0, &k) == 0) CHECK_MSG(k.lanes != NULL, "no lanes entry (serial=%d)", serial);
        CHECK_EQ_INT((int)(sw_compile_invocations() - before), 3);
        sw_library_free(lib);
    }
    unsetenv("GDNBENCH_SW_PARALLEL_BUILDS");
}

/* MLX's unary.metal, unchanged from ../shared/msl_corpus/mlx (877 kernels from a
 * few templates, MLX's headers included): a large library, checked whole and each
 * kernel compiled alone; two of them run and compute exactly rounded square roots. */
TEST(sw_compile_mlx_unary_library_runs_its_kernels) {
    const char *root = getenv("GDNBENCH_ROOT");
    char corpus[1024], path[1200];
    snprintf(corpus, sizeof corpus, "%s/../shared/msl_corpus/mlx", root ? root : ".");
    snprintf(path, sizeof path, "%s/mlx/backend/metal/kernels/unary.metal", corpus);
    char *src = sw_read_file(path, NULL);
    if (!src) SKIP("MLX's kernels not found at %s (../shared/msl_corpus/mlx, repo-root relative)", corpus);
    use_temp_cache();
    msl_source_opts so = {.include_dirs = {corpus}, .ninclude_dirs = 1};
    char *err = NULL;
    sw_library *lib = sw_library_create_opts(src, path, &so, &err);
    free(src);
    if (!lib && err && strstr(err, "clang++ >= 17")) SKIP("%s", err);
    CHECK_MSG(lib != NULL, "unary.metal: %s", err ? err : "");
    free(err);
    if (!lib) return;
    CHECK(sw_library_kernel_count(lib) > 800);
    CHECK_EQ_INT(sw_library_is_per_kernel(lib), 1);
    enum { N = 1000 };
    float in[N], out[N + 8];
    uint32_t n = N;
    for (int i = 0; i < N; i++) in[i] = (float)i * 0.37f + 1e-3f;
    const char *names[] = {"v_Sqrtfloat32float32", "vn_Sqrtfloat32float32"};
    uint32_t threads[] = {N, (N + 1) / 2}; /* vn_: WorkPerThread<float>::n = 2 elements a thread */
    for (int v = 0; v < 2; v++) {
        sw_kernel k;
        if (get_kernel(lib, names[v], NULL, 0, &k) != 0) continue;
        CHECK(k.info[1].name == NULL);
        for (int i = 0; i < N + 8; i++) out[i] = -1.0f;
        void *bufs[] = {in, out, &n, NULL};
        run_1d(&k, bufs, threads[v]);
        int bad = 0;
        for (int i = 0; i < N; i++) bad += out[i] != sqrtf(in[i]);
        CHECK_MSG(bad == 0, "%s: %d of %d square roots differ", names[v], bad, N);
        CHECK_MSG(out[N] == -1.0f, "%s wrote past the end", names[v]);
    }
    sw_library_free(lib);
}
