/* gdn_recurrence_ref.c — the token-by-token recurrence (the ideal reference) and its
 * f32 parity form; also the per-row L2 normalisation.
 *
 * Rows of the state (value index v) evolve independently: row v only needs k_t,
 * q_t, v_t[v], g_t and beta_t.  A job owns a block of rows of one (b, h) — all V
 * rows when there are enough (b, h) pairs to keep the threads busy, since the k/q
 * tile conversion is paid once per job — and walks the tokens in tiles of
 * REC_TOKENS: the tile's k/q rows are converted into contiguous scratch, then each
 * group of rows runs through the whole tile while it sits in L1.  Rows go four at a
 * time in the f64 form (two in the parity form) so every k/q load serves several rows.
 *
 * F64 form, one pass over the state per token: with sk = S k_t and sq = S q_t taken
 * on the state before token t,
 *     d = beta_t (v_t - a_t sk);   o_t = scale (a_t sq + d (k_t . q_t));
 *     S = a_t S + d k_t^T,  and in the same pass the next token's S k_{t+1}, S q_{t+1}.
 * This is the recurrence rearranged exactly (S_new q = a S q + d (k.q)).
 *
 * PARITY form, in mlx-native decode-kernel order: S *= a; sk = S.k;
 * d = (v - sk) beta; S += d k; y = S.q (q pre-scaled in f32).  Dots use 4-lane
 * partial sums (a kernel's simd_sum order differs anyway). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "core/parallel.h"
#include "ref/gdn_simd.h"

#define REC_TOKENS 32 /* tokens per k/q tile: a row pair walks them while in L1 */

typedef struct rec_job {
    ref_kind kind;
    const gdn_recurrence_args *a;
    int64_t rows, nblk;
    _Atomic int failed;
} rec_job;

/* The f64 step for four state rows s + r*ld (r = 0..3), one pass over them:
 *     s_r = a s_r + d_r k;   out[2r] = s_r . kn, out[2r+1] = s_r . qn  (the new rows)
 * where kn, qn are the next token's k and q.  Four rows give eight independent dot
 * chains, enough to hide the multiply-add latency, and every k/kn/qn load serves four
 * rows.  The portable form is written on 16-byte vectors (SSE2, NEON) with explicit
 * fused multiply-adds where the target has them (the f64 ideal may fuse: it has no
 * rounding points to keep); x86-64 hosts with AVX2 or AVX-512 take a wider form,
 * picked once at run time. */
typedef void (*rows4_step_fn)(double *restrict s, int64_t ld, const double *restrict k, const double *restrict kn,
                              const double *restrict qn, double a, const double *d, int64_t K, double *out);

static void rows4_tail_f64(double *restrict s, int64_t ld, const double *restrict k, const double *restrict kn,
                           const double *restrict qn, double a, const double *d, int64_t i, int64_t K, double *out) {
    for (int r = 0; r < 4; r++) {
        double *sr = s + r * ld;
        for (int64_t c = i; c < K; c++) {
            sr[c] = a * sr[c] + d[r] * k[c];
            out[2 * r] += sr[c] * kn[c], out[2 * r + 1] += sr[c] * qn[c];
        }
    }
}

/* One row's share of a 2-wide column step: x = a s + d k, then the two dots. */
static inline void row_step_vd2(double *restrict sr, vd2 av, vd2 dv, vd2 kv, vd2 knv, vd2 qnv, vd2 *ks, vd2 *qs) {
    vd2 x = vd2_fma(av, vd2_load(sr), dv * kv);
    vd2_store(sr, x);
    *ks = vd2_fma(x, knv, *ks);
    *qs = vd2_fma(x, qnv, *qs);
}

static void rows4_update_dots_f64(double *restrict s, int64_t ld, const double *restrict k, const double *restrict kn,
                                  const double *restrict qn, double a, const double *d, int64_t K, double *out) {
    vd2 av = vd2_splat(a), z = vd2_splat(0);
    vd2 d0 = vd2_splat(d[0]), d1 = vd2_splat(d[1]), d2 = vd2_splat(d[2]), d3 = vd2_splat(d[3]);
    vd2 k0 = z, q0 = z, k1 = z, q1 = z, k2 = z, q2 = z, k3 = z, q3 = z;
    double *s0 = s, *s1 = s + ld, *s2 = s + 2 * ld, *s3 = s + 3 * ld;
    int64_t i = 0;
    for (; i + 2 <= K; i += 2) {
        vd2 kv = vd2_load(k + i), knv = vd2_load(kn + i), qnv = vd2_load(qn + i);
        row_step_vd2(s0 + i, av, d0, kv, knv, qnv, &k0, &q0);
        row_step_vd2(s1 + i, av, d1, kv, knv, qnv, &k1, &q1);
        row_step_vd2(s2 + i, av, d2, kv, knv, qnv, &k2, &q2);
        row_step_vd2(s3 + i, av, d3, kv, knv, qnv, &k3, &q3);
    }
    out[0] = k0[0] + k0[1], out[1] = q0[0] + q0[1], out[2] = k1[0] + k1[1], out[3] = q1[0] + q1[1];
    out[4] = k2[0] + k2[1], out[5] = q2[0] + q2[1], out[6] = k3[0] + k3[1], out[7] = q3[0] + q3[1];
    rows4_tail_f64(s, ld, k, kn, qn, a, d, i, K, out);
}

#if defined(__x86_64__) && defined(__GNUC__)
static inline __attribute__((target("avx2,fma"), always_inline)) void row_step_avx2(double *restrict sr, __m256d av,
                                                                                   __m256d dv, __m256d kv,
                                                                                   __m256d knv, __m256d qnv,
                                                                                   __m256d *ks, __m256d *qs) {
    __m256d x = _mm256_fmadd_pd(av, _mm256_loadu_pd(sr), _mm256_mul_pd(dv, kv));
    _mm256_storeu_pd(sr, x);
    *ks = _mm256_fmadd_pd(x, knv, *ks);
    *qs = _mm256_fmadd_pd(x, qnv, *qs);
}

__attribute__((target("avx2,fma"))) static double hsum_avx2(__m256d v) {
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

__attribute__((target("avx2,fma"))) static void rows4_update_dots_f64_avx2(
    double *restrict s, int64_t ld, const double *restrict k, const double *restrict kn, const double *restrict qn,
    double a, const double *d, int64_t K, double *out) {
    __m256d av = _mm256_set1_pd(a), z = _mm256_setzero_pd();
    __m256d d0 = _mm256_set1_pd(d[0]), d1 = _mm256_set1_pd(d[1]), d2 = _mm256_set1_pd(d[2]), d3 = _mm256_set1_pd(d[3]);
    __m256d k0 = z, q0 = z, k1 = z, q1 = z, k2 = z, q2 = z, k3 = z, q3 = z;
    double *s0 = s, *s1 = s + ld, *s2 = s + 2 * ld, *s3 = s + 3 * ld;
    int64_t i = 0;
    for (; i + 4 <= K; i += 4) {
        __m256d kv = _mm256_loadu_pd(k + i), knv = _mm256_loadu_pd(kn + i), qnv = _mm256_loadu_pd(qn + i);
        row_step_avx2(s0 + i, av, d0, kv, knv, qnv, &k0, &q0);
        row_step_avx2(s1 + i, av, d1, kv, knv, qnv, &k1, &q1);
        row_step_avx2(s2 + i, av, d2, kv, knv, qnv, &k2, &q2);
        row_step_avx2(s3 + i, av, d3, kv, knv, qnv, &k3, &q3);
    }
    out[0] = hsum_avx2(k0), out[1] = hsum_avx2(q0), out[2] = hsum_avx2(k1), out[3] = hsum_avx2(q1);
    out[4] = hsum_avx2(k2), out[5] = hsum_avx2(q2), out[6] = hsum_avx2(k3), out[7] = hsum_avx2(q3);
    rows4_tail_f64(s, ld, k, kn, qn, a, d, i, K, out);
}

static inline __attribute__((target("avx512f"), always_inline)) void row_step_avx512(double *restrict sr, __m512d av,
                                                                                    __m512d dv, __m512d kv,
                                                                                    __m512d knv, __m512d qnv,
                                                                                    __m512d *ks, __m512d *qs) {
    __m512d x = _mm512_fmadd_pd(av, _mm512_loadu_pd(sr), _mm512_mul_pd(dv, kv));
    _mm512_storeu_pd(sr, x);
    *ks = _mm512_fmadd_pd(x, knv, *ks);
    *qs = _mm512_fmadd_pd(x, qnv, *qs);
}

__attribute__((target("avx512f"))) static void rows4_update_dots_f64_avx512(
    double *restrict s, int64_t ld, const double *restrict k, const double *restrict kn, const double *restrict qn,
    double a, const double *d, int64_t K, double *out) {
    __m512d av = _mm512_set1_pd(a), z = _mm512_setzero_pd();
    __m512d d0 = _mm512_set1_pd(d[0]), d1 = _mm512_set1_pd(d[1]), d2 = _mm512_set1_pd(d[2]), d3 = _mm512_set1_pd(d[3]);
    __m512d k0 = z, q0 = z, k1 = z, q1 = z, k2 = z, q2 = z, k3 = z, q3 = z;
    double *s0 = s, *s1 = s + ld, *s2 = s + 2 * ld, *s3 = s + 3 * ld;
    int64_t i = 0;
    for (; i + 8 <= K; i += 8) {
        __m512d kv = _mm512_loadu_pd(k + i), knv = _mm512_loadu_pd(kn + i), qnv = _mm512_loadu_pd(qn + i);
        row_step_avx512(s0 + i, av, d0, kv, knv, qnv, &k0, &q0);
        row_step_avx512(s1 + i, av, d1, kv, knv, qnv, &k1, &q1);
        row_step_avx512(s2 + i, av, d2, kv, knv, qnv, &k2, &q2);
        row_step_avx512(s3 + i, av, d3, kv, knv, qnv, &k3, &q3);
    }
    out[0] = _mm512_reduce_add_pd(k0), out[1] = _mm512_reduce_add_pd(q0);
    out[2] = _mm512_reduce_add_pd(k1), out[3] = _mm512_reduce_add_pd(q1);
    out[4] = _mm512_reduce_add_pd(k2), out[5] = _mm512_reduce_add_pd(q2);
    out[6] = _mm512_reduce_add_pd(k3), out[7] = _mm512_reduce_add_pd(q3);
    rows4_tail_f64(s, ld, k, kn, qn, a, d, i, K, out);
}
#endif

static rows4_step_fn pick_rows4_step_f64(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return rows4_update_dots_f64_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return rows4_update_dots_f64_avx2;
#endif
    return rows4_update_dots_f64;
}

/* Parity pass 1 for two rows: s_r *= a; return s_r . k in out[r]. */
static void rows2_decay_dot_f32(float *restrict s0, float *restrict s1, const float *restrict k, float a, int64_t K,
                                float *out) {
    vf4 av = vf4_splat(a), z = vf4_splat(0), d0 = z, d1 = z;
    int64_t i = 0;
    for (; i + 4 <= K; i += 4) {
        vf4 kv = vf4_load(k + i), x0 = vf4_load(s0 + i) * av, x1 = vf4_load(s1 + i) * av;
        vf4_store(s0 + i, x0);
        vf4_store(s1 + i, x1);
        d0 += x0 * kv, d1 += x1 * kv;
    }
    out[0] = (d0[0] + d0[1]) + (d0[2] + d0[3]);
    out[1] = (d1[0] + d1[1]) + (d1[2] + d1[3]);
    for (; i < K; i++) {
        s0[i] *= a, s1[i] *= a;
        out[0] += s0[i] * k[i], out[1] += s1[i] * k[i];
    }
}

/* Parity pass 2 for two rows: s_r += d_r k; return s_r . q in out[r]. */
static void rows2_update_dot_f32(float *restrict s0, float *restrict s1, const float *restrict k,
                                 const float *restrict q, float dr0, float dr1, int64_t K, float *out) {
    vf4 e0 = vf4_splat(dr0), e1 = vf4_splat(dr1), z = vf4_splat(0), y0 = z, y1 = z;
    int64_t i = 0;
    for (; i + 4 <= K; i += 4) {
        vf4 kv = vf4_load(k + i), qv = vf4_load(q + i);
        vf4 x0 = vf4_load(s0 + i) + e0 * kv, x1 = vf4_load(s1 + i) + e1 * kv;
        vf4_store(s0 + i, x0);
        vf4_store(s1 + i, x1);
        y0 += x0 * qv, y1 += x1 * qv;
    }
    out[0] = (y0[0] + y0[1]) + (y0[2] + y0[3]);
    out[1] = (y1[0] + y1[1]) + (y1[2] + y1[3]);
    for (; i < K; i++) {
        s0[i] += dr0 * k[i], s1[i] += dr1 * k[i];
        out[0] += s0[i] * q[i], out[1] += s1[i] * q[i];
    }
}

static void l2norm_rows_f64(double *x, int64_t rows, int64_t d) {
    for (int64_t r = 0; r < rows; r++, x += d) {
        double inv = 1.0 / sqrt(dot_f64(x, x, d) + GDN_L2NORM_EPS);
        for (int64_t i = 0; i < d; i++) x[i] *= inv;
    }
}

static void l2norm_rows_f32(float *x, int64_t rows, int64_t d) {
    for (int64_t r = 0; r < rows; r++, x += d) {
        float ss = 0;
        for (int64_t i = 0; i < d; i++) ss += x[i] * x[i];
        float inv = 1.0f / sqrtf(ss + (float)GDN_L2NORM_EPS);
        for (int64_t i = 0; i < d; i++) x[i] *= inv;
    }
}

enum { RC_S, RC_K, RC_Q, RC_V, RC_A, RC_BETA, RC_KQ, RC_O, RC_NSCRATCH };

static void rec_one(int64_t job, void *arg) {
    rec_job *j = arg;
    const gdn_recurrence_args *a = j->a;
    gdn_shape s = a->s;
    int64_t blk = job % j->nblk, h = (job / j->nblk) % s.H, b = job / (j->nblk * s.H);
    int64_t K = s.K, V = s.V, v0 = blk * j->rows, R = V - v0 < j->rows ? V - v0 : j->rows;
    int64_t kh = a->gqa_tiled ? h % s.Hg : h / (s.H / s.Hg);
    /* rows past R are scratch: the f32 form pairs rows, the f64 form takes four at a time */
    int64_t TB = REC_TOKENS, R2 = R + (R & 1), R4 = (R + 3) & ~(int64_t)3;
    int is64 = j->kind == REF_F64;
    size_t el = is64 ? sizeof(double) : sizeof(float);
    size_t sz[RC_NSCRATCH] = {el * (size_t)(R4 * K), el * (size_t)(TB * K), el * (size_t)(TB * K),
                              el * (size_t)(TB * R), el * (size_t)TB,      el * (size_t)TB,
                              el * (size_t)TB,       el * (size_t)(TB * R)};
    void *p[RC_NSCRATCH];
    void *block = gdn_scratch(RC_NSCRATCH, sz, p);
    if (!block) {
        j->failed = 1;
        return;
    }
    int64_t state_off = ((b * s.H + h) * V + v0) * K;
    if (is64)
        gdn_load_f64(a->h0, state_off, K, R, K, p[RC_S]);
    else
        gdn_load_f32(a->h0, state_off, K, R, K, p[RC_S]);

    for (int64_t t0 = 0; t0 < s.T; t0 += TB) {
        int64_t nt = s.T - t0 < TB ? s.T - t0 : TB;
        int64_t qoff = ((b * s.T + t0) * s.Hg + kh) * K, soff = (b * s.T + t0) * s.H + h;
        int64_t voff = ((b * s.T + t0) * s.H + h) * V + v0;
        if (t0 + TB < s.T) {
            int64_t nn = s.T - t0 - TB < TB ? s.T - t0 - TB : TB;
            gdn_prefetch_rows(a->k, qoff + TB * s.Hg * K, s.Hg * K, nn, K);
            gdn_prefetch_rows(a->q, qoff + TB * s.Hg * K, s.Hg * K, nn, K);
            gdn_prefetch_rows(a->v, voff + TB * s.H * V, s.H * V, nn, R);
        }
        if (is64) {
            double *S = p[RC_S], *kt = p[RC_K], *qt = p[RC_Q], *vt = p[RC_V], *at = p[RC_A], *bt = p[RC_BETA];
            double *kq = p[RC_KQ], *o = p[RC_O];
            rows4_step_fn step = pick_rows4_step_f64();
            gdn_load_f64(a->k, qoff, s.Hg * K, nt, K, kt);
            gdn_load_f64(a->q, qoff, s.Hg * K, nt, K, qt);
            gdn_load_f64(a->v, voff, s.H * V, nt, R, vt);
            gdn_load_f64(a->g, soff, s.H, nt, 1, at);
            gdn_load_f64(a->beta, soff, s.H, nt, 1, bt);
            if (a->l2norm) {
                l2norm_rows_f64(kt, nt, K);
                l2norm_rows_f64(qt, nt, K);
            }
            for (int64_t t = 0; t < nt; t++) {
                at[t] = exp(a->g_sign * at[t]);
                kq[t] = dot_f64(kt + t * K, qt + t * K, K);
            }
            for (int64_t r = 0; r < R4; r += 4) {
                double *sr = S + r * K, dots[8], d[4];
                for (int q4 = 0; q4 < 4; q4++) {
                    dots[2 * q4] = dot_f64(sr + q4 * K, kt, K);
                    dots[2 * q4 + 1] = dot_f64(sr + q4 * K, qt, K);
                }
                for (int64_t t = 0; t < nt; t++) {
                    for (int q4 = 0; q4 < 4; q4++) {
                        double vr = r + q4 < R ? vt[t * R + r + q4] : 0;
                        d[q4] = bt[t] * (vr - at[t] * dots[2 * q4]);
                        if (r + q4 < R) o[t * R + r + q4] = a->scale * (at[t] * dots[2 * q4 + 1] + d[q4] * kq[t]);
                    }
                    /* the last token of the tile computes dots it does not need */
                    int64_t tn = t + 1 < nt ? t + 1 : t;
                    step(sr, K, kt + t * K, kt + tn * K, qt + tn * K, at[t], d, K, dots);
                }
            }
            gdn_store_f64(a->o, voff, s.H * V, nt, R, o);
        } else {
            float *S = p[RC_S], *kt = p[RC_K], *qt = p[RC_Q], *vt = p[RC_V], *at = p[RC_A], *bt = p[RC_BETA];
            float *o = p[RC_O], sk[2], y[2], scale = (float)a->scale;
            gdn_load_f32(a->k, qoff, s.Hg * K, nt, K, kt);
            gdn_load_f32(a->q, qoff, s.Hg * K, nt, K, qt);
            gdn_load_f32(a->v, voff, s.H * V, nt, R, vt);
            gdn_load_f32(a->g, soff, s.H, nt, 1, at);
            gdn_load_f32(a->beta, soff, s.H, nt, 1, bt);
            if (a->l2norm) {
                l2norm_rows_f32(kt, nt, K);
                l2norm_rows_f32(qt, nt, K);
            }
            for (int64_t i = 0; i < nt * K; i++) qt[i] *= scale;
            for (int64_t t = 0; t < nt; t++) at[t] = expf((float)a->g_sign * at[t]);
            for (int64_t r = 0; r < R2; r += 2) {
                float *s0 = S + r * K, *s1 = S + (r + 1) * K;
                for (int64_t t = 0; t < nt; t++) {
                    rows2_decay_dot_f32(s0, s1, kt + t * K, at[t], K, sk);
                    float v1 = r + 1 < R ? vt[t * R + r + 1] : 0;
                    float d0 = (vt[t * R + r] - sk[0]) * bt[t], d1 = (v1 - sk[1]) * bt[t];
                    rows2_update_dot_f32(s0, s1, kt + t * K, qt + t * K, d0, d1, K, y);
                    o[t * R + r] = a->o_bf16 ? bf16_round(y[0]) : y[0];
                    if (r + 1 < R) o[t * R + r + 1] = a->o_bf16 ? bf16_round(y[1]) : y[1];
                }
            }
            gdn_store_f32(a->o, voff, s.H * V, nt, R, o);
        }
    }
    if (is64)
        gdn_store_f64(a->final, state_off, K, R, K, p[RC_S]);
    else
        gdn_store_f32(a->final, state_off, K, R, K, p[RC_S]);
    free(block);
}

int gdn_recurrence_ref(ref_kind kind, const gdn_recurrence_args *a) {
    rec_job j = {.kind = kind, .a = a};
    /* split V only as far as needed for ~2 jobs per thread */
    int64_t bh = a->s.B * a->s.H, want = 2 * (int64_t)parallel_threads();
    int64_t split = bh >= want ? 1 : (want + bh - 1) / bh;
    if (split > a->s.V / 2) split = a->s.V / 2 > 0 ? a->s.V / 2 : 1;
    j.rows = (a->s.V + split - 1) / split;
    j.rows += j.rows & 1;
    j.nblk = (a->s.V + j.rows - 1) / j.rows;
    parallel_for(a->s.B * a->s.H * j.nblk, rec_one, &j);
    return j.failed ? -1 : 0;
}

typedef struct l2_job {
    ref_kind kind;
    gdn_view x;
    gdn_sink y;
    int64_t rows, d, per_job;
    _Atomic int failed;
} l2_job;

static void l2_one(int64_t job, void *arg) {
    l2_job *j = arg;
    int64_t r0 = job * j->per_job, n = j->rows - r0 < j->per_job ? j->rows - r0 : j->per_job;
    size_t sz = (size_t)(n * j->d) * (j->kind == REF_F64 ? sizeof(double) : sizeof(float));
    void *p;
    void *block = gdn_scratch(1, &sz, &p);
    if (!block) {
        j->failed = 1;
        return;
    }
    if (j->kind == REF_F64) {
        gdn_load_f64(j->x, r0 * j->d, j->d, n, j->d, p);
        l2norm_rows_f64(p, n, j->d);
        gdn_store_f64(j->y, r0 * j->d, j->d, n, j->d, p);
    } else {
        gdn_load_f32(j->x, r0 * j->d, j->d, n, j->d, p);
        l2norm_rows_f32(p, n, j->d);
        gdn_round_bf16(p, n * j->d);
        gdn_store_f32(j->y, r0 * j->d, j->d, n, j->d, p);
    }
    free(block);
}

int gdn_l2norm_ref(ref_kind kind, gdn_view x, gdn_sink y, int64_t rows, int64_t d) {
    l2_job j = {.kind = kind, .x = x, .y = y, .rows = rows, .d = d, .per_job = 1024};
    parallel_for((rows + j.per_job - 1) / j.per_job, l2_one, &j);
    return j.failed ? -1 : 0;
}
