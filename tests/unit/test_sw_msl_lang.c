/* test_sw_msl_lang.c — tests/msl/lang.metal on the software device (issue 36): the
 * MSL language features llama.cpp's ggml-metal and other projects use beyond MLX's
 * (casts to template parameters, the spec's predefined constants, simdgroup-matrix
 * factories, metal_stdlib's specialisable templates, brace initialisers, Apple's
 * attributes).  Each kernel's values are checked against values computed here, in
 * C, bit for bit where the spec fixes the bits.  Skipped without clang++ >= 17. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/objc_call.h"
#include "sw_test_env.h"
#include "test.h"

/* Compiles lang.metal into e; 0, or -1 (a failed CHECK). */
static int lang_open(sw_test_env *e) {
    memset(e, 0, sizeof *e);
    char path[1024];
    char *src = sw_test_read_repo_file("tests/msl/lang.metal", path, sizeof path);
    CHECK_MSG(src != NULL, "cannot read %s", path);
    if (!src) return -1;
    sw_test_env_open(e, "fast", src, path);
    free(src);
    return e->lib ? 0 : -1;
}

static id lang_buffer(sw_test_env *e, size_t len, const void *init) {
    id b = MSG2(id, e->dev, "newBufferWithLength:options:", NSUInteger, len, NSUInteger, 0);
    if (b && init) memcpy(MSG0(void *, b, "contents"), init, len);
    return b;
}

static void *contents(id b) { return MSG0(void *, b, "contents"); }

/* One threadgroup of `threads`; 0 when the command buffer completed. */
static int lang_run(sw_test_env *e, const char *name, id *bufs, int n, NSUInteger threads) {
    id cb = sw_test_run(e, name, bufs, n, "dispatchThreadgroups:threadsPerThreadgroup:", (MTLSize){1, 1, 1},
                        (MTLSize){threads, 1, 1});
    NSUInteger status = MSG0(NSUInteger, cb, "status");
    CHECK_MSG(status == 4, "%s: command buffer status %lu", name, (unsigned long)status);
    return status == 4 ? 0 : -1;
}

static void release_all(id *bufs, int n) {
    for (int i = 0; i < n; i++)
        if (bufs[i]) MSG0(void, bufs[i], "release");
}

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

TEST(sw_msl_lang_casts_convert_values) {
    sw_test_env e;
    if (lang_open(&e) == 0) {
        const float hv[8] = {1.5f, -2.0f, 0.25f, 65504.0f, 3.0f, -0.5f, 1024.0f, 0.0f};
        uint16_t h[8];
        for (int k = 0; k < 8; k++) h[k] = f16_from_f32(hv[k]);
        const int32_t n[8] = {3, -7, 0, 1 << 20, 5, 6, -1, 100};
        id bufs[7] = {lang_buffer(&e, sizeof h, h),  lang_buffer(&e, sizeof h, NULL), lang_buffer(&e, 32 * 4, NULL),
                      lang_buffer(&e, sizeof n, n),  lang_buffer(&e, sizeof n, NULL), lang_buffer(&e, 32 * 4, NULL),
                      lang_buffer(&e, 32 * 4, NULL)};
        if (lang_run(&e, "casts", bufs, 7, 32) == 0) {
            const uint32_t *hw = contents(bufs[2]), *nw = contents(bufs[5]);
            const uint16_t *hb = contents(bufs[1]);
            const int32_t *nb = contents(bufs[4]);
            int bad = 0;
            for (int k = 0; k < 8; k++) {
                /* (TC) half4 with TC = float4: each value, exactly (bits, not a reinterpretation) */
                if (hw[k] != bits_of(hv[k])) bad++, printf("  (float4)half4[%d]: 0x%08x\n", k, hw[k]);
                /* (TC) int4 of the same size: 3 -> 3.0f, never the int's bits as a float */
                if (nw[k] != bits_of((float)n[k])) bad++, printf("  (float4)int4[%d]: 0x%08x\n", k, nw[k]);
                /* (T)(x * 2) back: half (65504 * 2 overflows to inf), int truncation */
                uint16_t want_h = f16_from_f32(hv[k] * 2.0f);
                if (hb[k] != want_h) bad++, printf("  (half4)float4[%d]: 0x%04x want 0x%04x\n", k, hb[k], want_h);
                if (nb[k] != (int32_t)((float)n[k] * 2.0f)) bad++, printf("  (int4)float4[%d]: %d\n", k, nb[k]);
            }
            CHECK_EQ_INT(bad, 0);
            const float *m = contents(bufs[6]);
            const float sign[4] = {-1, 0, 1, 1}, ge[4] = {0, 0, 1, 1}, ints[4] = {7, -7, 0, 1};
            for (int k = 0; k < 4; k++) {
                CHECK_MSG(m[k] == sign[k], "float4(x > 0) - float4(x < 0) [%d] = %g", k, m[k]);
                CHECK_MSG(m[4 + k] == sign[k], "T(x > 0) - T(x < 0), T = half4 [%d] = %g", k, m[4 + k]);
                CHECK_MSG(m[8 + k] == ge[k], "(float4)(x >= 0.5) [%d] = %g", k, m[8 + k]);
                CHECK_MSG(m[12 + k] == ints[k], "(float4)int4 [%d] = %g", k, m[12 + k]);
                const float bools[4] = {2, 0, 1, 1}, sel[4] = {10, 10, 3, 0.5f}, votes[4] = {1, 0, 0, 1};
                CHECK_MSG(m[16 + k] == bools[k], "bool4 m = x > 0 [%d]: %g", k, m[16 + k]);
                CHECK_MSG(m[20 + k] == sel[k], "select [%d] = %g", k, m[20 + k]);
                CHECK_MSG(m[24 + k] == votes[k], "all/any [%d] = %g", k, m[24 + k]);
            }
        }
        release_all(bufs, 7);
    }
    sw_test_env_close(&e);
}

/* `bool4 m; m = a < b;` and its compound forms: 1 where true, as a declaration's. */
TEST(sw_msl_lang_bool_vector_assignment) {
    sw_test_env e;
    if (lang_open(&e) == 0) {
        const float ab[8] = {1, 2, 3, 4, 2, 2, 2, 5};
        id bufs[2] = {lang_buffer(&e, sizeof ab, ab), lang_buffer(&e, 5 * 16, NULL)};
        if (lang_run(&e, "bool_assign", bufs, 2, 32) == 0) {
            const float *o = contents(bufs[1]);
            const float want[20] = {1, 0, 0, 1,  /* m = a < b */
                                    0, 1, 1, 0,  /* n = a > b; n |= a == b */
                                    1, 0, 0, 1,  /* m &= a != 2 */
                                    1, 0, 1, 1,  /* m ^= a > b */
                                    2, 4, 6, 8}; /* the shadowing float4 m = a; m = m * 2 */
            for (int k = 0; k < 20; k++) CHECK_MSG(o[k] == want[k], "bool_assign[%d] = %g, want %g", k, o[k], want[k]);
        }
        release_all(bufs, 2);
    }
    sw_test_env_close(&e);
}

/* A later declaration of the same name (after a comma) and a function returning a
 * bool vector: their assignments stay what they are (a wrap would give 1). */
TEST(sw_msl_lang_bool_vector_names_reused) {
    sw_test_env e;
    if (lang_open(&e) == 0) {
        const float ab[8] = {1, -2, 3, 0, 0, 0, 0, 0};
        id bufs[2] = {lang_buffer(&e, sizeof ab, ab), lang_buffer(&e, 3 * 16, NULL)};
        if (lang_run(&e, "bool_assign_shadow", bufs, 2, 32) == 0) {
            const float *o = contents(bufs[1]);
            const float want[12] = {1, 0, 1, 0, 3.5f, 3.5f, 3.5f, 3.5f, 0.5f, 0.5f, 0.5f, 0.5f};
            for (int k = 0; k < 12; k++) CHECK_MSG(o[k] == want[k], "bool_assign_shadow[%d] = %g, want %g", k, o[k], want[k]);
        }
        release_all(bufs, 2);
    }
    sw_test_env_close(&e);
}

/* The spec's constants: exact bit patterns (the half/bfloat ones are the exact
 * values rounded once, computed here from double). */
TEST(sw_msl_lang_predefined_constants) {
    sw_test_env e;
    if (lang_open(&e) == 0) {
        id bufs[2] = {lang_buffer(&e, 128 * 4, NULL), lang_buffer(&e, 4 * 4, NULL)};
        if (lang_run(&e, "constants", bufs, 2, 32) == 0) {
            const uint32_t *u = contents(bufs[0]);
            CHECK_EQ_INT(u[0], 0x7bff); /* MAXHALF */
            CHECK_EQ_INT(u[1], 0x7c00); /* HUGE_VALH */
            CHECK_EQ_INT(u[2], bits_of(FLT_MAX));
            CHECK_EQ_INT(u[3], bits_of(HUGE_VALF));
            CHECK_EQ_INT(u[4], bits_of(INFINITY));
            CHECK_EQ_INT(u[5], 1);      /* isnan(NAN) */
            CHECK_EQ_INT(u[6], 0x7f7f); /* MAXBFLOAT */
            CHECK_EQ_INT(u[7], 0x7f80); /* HUGE_VALBF */
            const double c[13] = {M_E,        M_LOG2E, M_LOG10E, M_LN2,      M_LN10,  M_PI,     M_PI_2,
                                  M_PI_4,     M_1_PI,  M_2_PI,   M_2_SQRTPI, M_SQRT2, M_SQRT1_2};
            int bad = 0;
            for (int k = 0; k < 13; k++) {
                uint16_t h = f16_from_f32((float)c[k]), b = bf16_from_f32((float)c[k]);
                /* rounding through float equals rounding the exact value here: the
                 * float is within half an ulp of float, far inside a half's ulp */
                if (u[8 + k] != h) bad++, printf("  M_*_H[%d]: 0x%04x want 0x%04x\n", k, u[8 + k], h);
                if (u[21 + k] != b) bad++, printf("  M_*_BF[%d]: 0x%04x want 0x%04x\n", k, u[21 + k], b);
                if (u[34 + k] != bits_of((float)c[k])) bad++, printf("  M_*_F[%d]: 0x%08x\n", k, u[34 + k]);
            }
            CHECK_EQ_INT(bad, 0);
            const int lim[24] = {FLT_DIG, FLT_MANT_DIG, FLT_MAX_10_EXP, FLT_MAX_EXP, FLT_MIN_10_EXP, FLT_MIN_EXP,
                                 FLT_RADIX, 3, 11, 4, 16, -4, -13, 2, 2, 8, 38, 128, -37, -125, 2, 8, -128, -32768};
            for (int k = 0; k < 24; k++) CHECK_MSG((int32_t)u[47 + k] == lim[k], "limit %d = %d, want %d", k,
                                                  (int32_t)u[47 + k], lim[k]);
            CHECK_EQ_INT(u[71], bits_of(FLT_MAX));
            CHECK_EQ_INT(u[72], bits_of(FLT_MIN));
            CHECK_EQ_INT(u[73], bits_of(FLT_EPSILON));
            CHECK_EQ_INT(u[74], 0x7bff); /* HALF_MAX */
            CHECK_EQ_INT(u[75], 0x0400); /* HALF_MIN 2^-14 */
            CHECK_EQ_INT(u[76], 0x1400); /* HALF_EPSILON 2^-10 */
            CHECK_EQ_INT(u[77], 0x7f7f); /* BFLOAT_MAX */
            CHECK_EQ_INT(u[78], 0x0080); /* BFLOAT_MIN 2^-126 */
            CHECK_EQ_INT(u[79], 0x3c00); /* BFLOAT_EPSILON 2^-7 */
            CHECK_EQ_INT(u[80], 0xffffffffu);
            CHECK_EQ_INT(u[81], 0x80000000u);
            CHECK_EQ_INT(u[82], 0x7fffffffu);
            CHECK_EQ_INT(u[83], 65535);
            CHECK_EQ_INT(u[84], 255);
            CHECK(((const float *)contents(bufs[1]))[0] == -65504.0f);
        }
        release_all(bufs, 2);
    }
    sw_test_env_close(&e);
}

TEST(sw_msl_lang_simdgroup_matrix_factories) {
    sw_test_env e;
    if (lang_open(&e) == 0) {
        uint16_t src[64];
        for (int k = 0; k < 64; k++) src[k] = f16_from_f32((float)(k - 32) * 0.5f);
        id bufs[2] = {lang_buffer(&e, 448 * 4, NULL), lang_buffer(&e, sizeof src, src)};
        if (lang_run(&e, "matrix_factories", bufs, 2, 32) == 0) {
            const float *o = contents(bufs[0]);
            int bad = 0;
            for (int r = 0; r < 8; r++)
                for (int c = 0; c < 8; c++) {
                    int k = r * 8 + c;
                    float want[7] = {2.5f,
                                     -1.5f,
                                     r == c ? 3.0f : 0.0f,
                                     (float)((4 + r) * 16 + 8 + c), /* origin (col 8, row 4), stride 16 */
                                     (float)(k - 32) * 0.5f,
                                     (float)(c * 16 + r), /* transposed */
                                     r == c ? 3.0f : 0.0f};
                    for (int m = 0; m < 7; m++)
                        if (o[64 * m + k] != want[m])
                            bad++, printf("  matrix %d (%d,%d): %g want %g\n", m, r, c, o[64 * m + k], want[m]);
                }
            CHECK_EQ_INT(bad, 0);
        }
        release_all(bufs, 2);
    }
    sw_test_env_close(&e);
}

TEST(sw_msl_lang_numeric_limits_impl) {
    sw_test_env e;
    if (lang_open(&e) == 0) {
        id out = lang_buffer(&e, 8 * 4, NULL);
        if (lang_run(&e, "limits_impl", &out, 1, 32) == 0) {
            const float *o = contents(out);
            CHECK(isinf(o[0]) && o[0] < 0);
            CHECK_NEAR(o[1], -1, 0);
            CHECK_NEAR(o[2], 1 << 30, 0);
            CHECK_NEAR(o[3], 1, 0); /* _fp_numeric_limits_impl_base's members */
            CHECK_NEAR(o[4], 65504, 0);
            CHECK_NEAR(o[5], 1, 0);
        }
        release_all(&out, 1);
    }
    sw_test_env_close(&e);
}

TEST(sw_msl_lang_initialisers_and_attributes) {
    sw_test_env e;
    if (lang_open(&e) == 0) {
        id out = lang_buffer(&e, 64 * 4, NULL);
        if (lang_run(&e, "inits", &out, 1, 32) == 0) {
            const float *o = contents(out);
            const float want[] = {1, 2, 0, 0,   /* float4 v = {a, b} */
                                  1, 2, 3, 4,   /* float4 w{a, b, 3, 4} */
                                  5, 6, 5, 6,   /* float4(p, p) */
                                  7, 8, 0, 0,   /* arr[0] = {7, 8} */
                                  9, 0, 0, 0,   /* arr[1] = {9} */
                                  1, 2, 3,      /* int3 {1, 2, 3} */
                                  4.25f,        /* struct of vectors in braces */
                                  3,            /* float2x2 of columns */
                                  0,            /* float4 zero = {} */
                                  5, 6, 5, 6,   /* float4 halves = {p, p} */
                                  1, 5, 6, 2,   /* {1, p, 2} */
                                  2,            /* float3x3(2): diagonal 2, off-diagonal 0 */
                                  3,            /* float2x2(1, 2, 3, 4)[1][0] */
                                  20};          /* attributes: 2 * (3 * 3 + 1) */
            int n = (int)(sizeof want / sizeof want[0]);
            for (int k = 0; k < n; k++) CHECK_MSG(o[k] == want[k], "inits out[%d] = %g, want %g", k, o[k], want[k]);
        }
        release_all(&out, 1);
    }
    sw_test_env_close(&e);
}

/* The spec's conversion rules for normalized integers, written out here: clamp
 * (NaN is 0), scale by 2^n - 1 (unorm) or 2^(n-1) - 1 (snorm), round to nearest
 * even; back: c / (2^n - 1), snorm not below -1.  Field k at bits [n*k, n*k + n). */
static uint32_t ref_pack(const float *v, int count, int bits, int snorm) {
    uint32_t r = 0, mask = bits == 32 ? ~0u : (1u << bits) - 1;
    for (int k = 0; k < count; k++) {
        float f = v[k] != v[k] ? 0.0f : v[k], lo = snorm ? -1.0f : 0.0f;
        f = f < lo ? lo : f > 1.0f ? 1.0f : f;
        float scale = snorm ? (float)((1 << (bits - 1)) - 1) : (float)mask;
        long q = lrintf(f * scale);
        r |= ((uint32_t)q & mask) << (bits * k);
    }
    return r;
}

static float ref_unpack(uint32_t u, int k, int bits, int snorm) {
    uint32_t mask = (1u << bits) - 1, c = (u >> (bits * k)) & mask;
    if (!snorm) return (float)c / (float)mask;
    int32_t s = (c & (1u << (bits - 1))) ? (int32_t)c - (int32_t)(1u << bits) : (int32_t)c;
    float x = (float)s / (float)((1 << (bits - 1)) - 1);
    return x < -1.0f ? -1.0f : x;
}

static float h_round(float f) { return f16_to_f32(f16_from_f32(f)); }

TEST(sw_msl_lang_pack_unpack) {
    sw_test_env e;
    if (lang_open(&e) == 0) {
        float in[8][4] = {{0.0f, 1.0f, -1.0f, 0.5f},       {0.25f, -0.25f, 2.0f, -3.0f},
                          {0.1f, 0.9f, -0.1f, -0.9f},      {0.0f, NAN, -0.0f, 0.999f},
                          {0.0f, 0.3333f, -0.6667f, 0.7f}, {0.0f, 0.0f, 0.0f, 0.0f},
                          {0.0f, 0.0f, 0.0f, 0.0f},        {0.0f, 0.0f, 0.0f, 0.0f}};
        const uint32_t xbits[8] = {0x00000000u, 0x3e800000u, 0x3dcccccdu, 0x00010203u,
                                   0x80ff7f01u, 0x7f7f8081u, 0xff00ff00u, 0x12345678u};
        for (int i = 0; i < 8; i++) memcpy(&in[i][0], &xbits[i], 4);   /* x: bits to unpack */
        id bufs[3] = {lang_buffer(&e, sizeof in, in), lang_buffer(&e, 8 * 6 * 4, NULL),
                      lang_buffer(&e, 8 * 6 * 16, NULL)};
        if (lang_run(&e, "packing", bufs, 3, 32) == 0) {
            const uint32_t *p = contents(bufs[1]);
            const float *q = contents(bufs[2]);
            int bad = 0;
            for (int i = 0; i < 8; i++) {
                const float *v = in[i];
                float hv[4];
                for (int k = 0; k < 4; k++) hv[k] = h_round(v[k]);
                uint32_t want[6] = {ref_pack(v, 4, 8, 0),      ref_pack(v, 4, 8, 1),  ref_pack(v, 2, 16, 0),
                                    ref_pack(v + 2, 2, 16, 1), ref_pack(hv, 4, 8, 0), ref_pack(hv, 2, 16, 1)};
                for (int m = 0; m < 6; m++)
                    if (p[6 * i + m] != want[m])
                        bad++, printf("  pack %d of row %d: 0x%08x want 0x%08x\n", m, i, p[6 * i + m], want[m]);
                uint32_t u = xbits[i];
                float wq[6][4];
                for (int k = 0; k < 4; k++) {
                    wq[0][k] = ref_unpack(u, k, 8, 0);
                    wq[1][k] = ref_unpack(u, k, 8, 1);
                    wq[2][k] = k < 2 ? ref_unpack(u, k, 16, 0) : ref_unpack(u, k - 2, 16, 1);
                    wq[3][k] = h_round(wq[0][k]);
                    wq[4][k] = h_round(wq[1][k]);
                    wq[5][k] = h_round(wq[2][k]);
                }
                for (int m = 0; m < 6; m++)
                    for (int k = 0; k < 4; k++)
                        if (memcmp(&q[(6 * i + m) * 4 + k], &wq[m][k], 4) != 0)
                            bad++, printf("  unpack %d of 0x%08x [%d]: %a want %a\n", m, u, k,
                                          (double)q[(6 * i + m) * 4 + k], (double)wq[m][k]);
            }
            CHECK_EQ_INT(bad, 0);
        }
        release_all(bufs, 3);
    }
    sw_test_env_close(&e);
}

/* The 10a2 and 565 layouts: fields of the given widths, x in the low bits; each
 * field as the spec's conversion rules (NaN 0, clamp to [0, 1], round to nearest
 * even; back: c / (2^n - 1)), computed here independently of the prelude. */
static uint32_t ref_pack_fields(const float *v, int count, const int *bits) {
    uint32_t r = 0;
    for (int k = 0, shift = 0; k < count; shift += bits[k], k++) {
        float f = v[k] != v[k] ? 0.0f : v[k] < 0.0f ? 0.0f : v[k] > 1.0f ? 1.0f : v[k];
        r |= (uint32_t)lrintf(f * (float)((1u << bits[k]) - 1)) << shift;
    }
    return r;
}

static float ref_unorm_field(uint32_t u, int shift, int bits) {
    return (float)((u >> shift) & ((1u << bits) - 1)) / (float)((1u << bits) - 1);
}

TEST(sw_msl_lang_pack_unpack_10a2_565) {
    sw_test_env e;
    if (lang_open(&e) == 0) {
        float in[8][4] = {{0.0f, 1.0f, 0.5f, 0.5f},   {0.0f, -0.25f, 2.0f, 0.6667f}, {0.0f, 0.3f, 0.7f, 0.1667f},
                          {0.0f, NAN, 0.999f, 0.8f},  {0.0f, 0.0489f, 0.5001f, 1.0f}, {0.0f, 0.0f, 0.0f, 0.0f},
                          {0.0f, 0.0f, 0.0f, 0.0f},   {0.0f, 0.0f, 0.0f, 0.0f}};
        const uint32_t xbits[8] = {0x3f800000u, 0x00000000u, 0xffffffffu, 0x4000f81fu,
                                   0xc00ffc00u, 0x3ff003ffu, 0x07e0001fu, 0x9abcdef1u};
        for (int i = 0; i < 8; i++) memcpy(&in[i][0], &xbits[i], 4);   /* x: bits to unpack */
        id bufs[3] = {lang_buffer(&e, sizeof in, in), lang_buffer(&e, 8 * 4 * 4, NULL),
                      lang_buffer(&e, 8 * 4 * 16, NULL)};
        const int b10a2[4] = {10, 10, 10, 2}, b565[3] = {5, 6, 5};
        if (lang_run(&e, "packing_10a2_565", bufs, 3, 32) == 0) {
            const uint32_t *p = contents(bufs[1]);
            const float *q = contents(bufs[2]);
            int bad = 0;
            for (int i = 0; i < 8; i++) {
                const float *v = in[i];
                float hv[4];
                for (int k = 0; k < 4; k++) hv[k] = h_round(v[k]);
                uint32_t want[4] = {ref_pack_fields(v, 4, b10a2), ref_pack_fields(hv, 4, b10a2),
                                    ref_pack_fields(v, 3, b565), ref_pack_fields(hv + 1, 3, b565)};
                for (int m = 0; m < 4; m++)
                    if (p[4 * i + m] != want[m])
                        bad++, printf("  pack %d of row %d: 0x%08x want 0x%08x\n", m, i, p[4 * i + m], want[m]);
                uint32_t u = xbits[i];
                float wq[4][4] = {{0}};
                for (int k = 0; k < 4; k++) {
                    wq[0][k] = ref_unorm_field(u, 10 * k, b10a2[k]);
                    wq[1][k] = h_round(wq[0][k]);
                }
                for (int k = 0, shift = 0; k < 3; shift += b565[k], k++) {
                    wq[2][k] = ref_unorm_field(u & 0xffffu, shift, b565[k]);
                    wq[3][k] = h_round(ref_unorm_field(u >> 16, shift, b565[k]));
                }
                for (int m = 0; m < 4; m++)
                    for (int k = 0; k < 4; k++)
                        if (memcmp(&q[(4 * i + m) * 4 + k], &wq[m][k], 4) != 0)
                            bad++, printf("  unpack %d of 0x%08x [%d]: %a want %a\n", m, u, k,
                                          (double)q[(4 * i + m) * 4 + k], (double)wq[m][k]);
            }
            CHECK_EQ_INT(bad, 0);
        }
        release_all(bufs, 3);
    }
    sw_test_env_close(&e);
}
