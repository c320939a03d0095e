/* gdn_simd.h — small vector kernels and tile loaders shared by the GDN references.
 *
 * gcc -O2 (very-cheap vectoriser cost model) does not vectorise loops of unknown trip
 * count, so the hot loops here use GCC/Clang vector types explicitly (16-byte vectors:
 * SSE2 on x86-64, NEON on arm64) with a scalar tail, so every length works.
 * The axpy-style kernels keep each output element's summation order sequential
 * (ascending index), which is the order the parity references document.
 * Internal to src/ref/. */
#ifndef GDN_REF_GDN_SIMD_H
#define GDN_REF_GDN_SIMD_H

#include <stdint.h>
#include <string.h>

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#include "ref/gdn_ref.h"

#if defined(__clang__)
/* Parity must round every f32 multiply and add separately, as the references
 * document; clang would otherwise fuse a*b+c into FMA on arm64. */
#pragma STDC FP_CONTRACT OFF
#endif

typedef float vf4 __attribute__((vector_size(16)));
typedef double vd2 __attribute__((vector_size(16)));

static inline vf4 vf4_load(const float *p) {
    vf4 v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void vf4_store(float *p, vf4 v) { memcpy(p, &v, sizeof v); }
static inline vf4 vf4_splat(float a) { return (vf4){a, a, a, a}; }
static inline vd2 vd2_load(const double *p) {
    vd2 v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void vd2_store(double *p, vd2 v) { memcpy(p, &v, sizeof v); }
static inline vd2 vd2_splat(double a) { return (vd2){a, a}; }

/* a * b + c, fused where the target has a 2-wide f64 FMA (arm64); for the f64 ideal
 * reference only, where fusing is allowed and the build's -ffp-contract=off would
 * otherwise keep the multiply and the add apart.  Parity code never calls this. */
static inline vd2 vd2_fma(vd2 a, vd2 b, vd2 c) {
#if defined(__aarch64__) && defined(__ARM_NEON)
    return (vd2)vfmaq_f64((float64x2_t)c, (float64x2_t)a, (float64x2_t)b);
#else
    return a * b + c;
#endif
}

/* y[i] += a * x[i] */
static inline void axpy_f32(float *restrict y, float a, const float *restrict x, int64_t n) {
    int64_t i = 0;
    vf4 av = vf4_splat(a);
    for (; i + 8 <= n; i += 8) {
        vf4_store(y + i, vf4_load(y + i) + av * vf4_load(x + i));
        vf4_store(y + i + 4, vf4_load(y + i + 4) + av * vf4_load(x + i + 4));
    }
    for (; i < n; i++) y[i] += a * x[i];
}

static inline void axpy_f64(double *restrict y, double a, const double *restrict x, int64_t n) {
    int64_t i = 0;
    vd2 av = vd2_splat(a);
    for (; i + 4 <= n; i += 4) {
        vd2_store(y + i, vd2_load(y + i) + av * vd2_load(x + i));
        vd2_store(y + i + 2, vd2_load(y + i + 2) + av * vd2_load(x + i + 2));
    }
    for (; i < n; i++) y[i] += a * x[i];
}

/* f64 dot with 4 partial sums (the ideal reference does not care about order). */
static inline double dot_f64(const double *restrict a, const double *restrict b, int64_t n) {
    vd2 s0 = vd2_splat(0), s1 = vd2_splat(0);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += vd2_load(a + i) * vd2_load(b + i);
        s1 += vd2_load(a + i + 2) * vd2_load(b + i + 2);
    }
    vd2 s = s0 + s1;
    double r = s[0] + s[1];
    for (; i < n; i++) r += a[i] * b[i];
    return r;
}

/* Tile movement between views/sinks and contiguous scratch: `rows` rows of `n`
 * elements, source row r at off + r*stride. */
void gdn_load_f32(gdn_view v, int64_t off, int64_t stride, int64_t rows, int64_t n, float *dst);
void gdn_load_f64(gdn_view v, int64_t off, int64_t stride, int64_t rows, int64_t n, double *dst);
void gdn_store_f32(gdn_sink s, int64_t off, int64_t stride, int64_t rows, int64_t n, const float *src);
void gdn_store_f64(gdn_sink s, int64_t off, int64_t stride, int64_t rows, int64_t n, const double *src);

/* Asks the cache to fetch `rows` rows of `n` elements (row r at off + r*stride).
 * Per-head rows of [B,T,H,D] tensors sit one page apart, where hardware prefetchers
 * give up; the references call this for their next tile while computing one. */
void gdn_prefetch_rows(gdn_view v, int64_t off, int64_t stride, int64_t rows, int64_t n);

/* dst[c][r] = src[r][c] for a rows x cols tile. */
void gdn_transpose_f32(const float *src, int64_t rows, int64_t cols, float *dst);
void gdn_transpose_f64(const double *src, int64_t rows, int64_t cols, double *dst);

/* Round every element to bf16 (RNE), in place. */
void gdn_round_bf16(float *x, int64_t n);

/* A job's scratch: one zeroed allocation split into n pieces of the given byte sizes
 * (each 64-byte aligned).  Returns the block to free(), or NULL. */
void *gdn_scratch(int n, const size_t *bytes, void **out);

#endif
