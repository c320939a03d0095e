/* gdn_recurrence_ref.c — the token-by-token recurrence (the ideal reference) and its
 * f32 parity form; also the per-row L2 normalisation.
 *
 * Rows of the state (value index v) evolve independently: row v only needs k_t,
 * q_t, v_t[v], g_t and beta_t.  A job owns a block of rows of one (b, h) — all V
 * rows when there are enough (b, h) pairs to keep the threads busy, since the k/q
 * tile conversion is paid once per job — and walks the tokens in tiles of
 * REC_TOKENS: the tile's k/q rows are converted into contiguous scratch, then each
 * row pair runs through the whole tile while it sits in L1.  Rows go two at a time
 * so every k/q load serves two rows.
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

#include "core/parallel.h"
#include "ref/gdn_simd.h"

#define REC_TOKENS 32 /* tokens per k/q tile: a row pair walks them while in L1 */

typedef struct rec_job {
    ref_kind kind;
    const gdn_recurrence_args *a;
    int64_t rows, nblk;
    _Atomic int failed;
} rec_job;

/* Two rows: s_r = a s_r + d_r k; out = {s0.kn, s0.qn, s1.kn, s1.qn} of the new rows. */
static void rows2_update_dots_f64(double *restrict s0, double *restrict s1, const double *restrict k,
                                  const double *restrict kn, const double *restrict qn, double a, double d0,
                                  double d1, int64_t K, double *out) {
    vd2 av = vd2_splat(a), dv0 = vd2_splat(d0), dv1 = vd2_splat(d1), z = vd2_splat(0);
    vd2 k0a = z, k0b = z, q0a = z, q0b = z, k1a = z, k1b = z, q1a = z, q1b = z;
    int64_t i = 0;
    for (; i + 4 <= K; i += 4) {
        vd2 ka = vd2_load(k + i), kb = vd2_load(k + i + 2);
        vd2 kna = vd2_load(kn + i), knb = vd2_load(kn + i + 2), qna = vd2_load(qn + i), qnb = vd2_load(qn + i + 2);
        vd2 x0a = av * vd2_load(s0 + i) + dv0 * ka, x0b = av * vd2_load(s0 + i + 2) + dv0 * kb;
        vd2 x1a = av * vd2_load(s1 + i) + dv1 * ka, x1b = av * vd2_load(s1 + i + 2) + dv1 * kb;
        vd2_store(s0 + i, x0a);
        vd2_store(s0 + i + 2, x0b);
        vd2_store(s1 + i, x1a);
        vd2_store(s1 + i + 2, x1b);
        k0a += x0a * kna, k0b += x0b * knb, q0a += x0a * qna, q0b += x0b * qnb;
        k1a += x1a * kna, k1b += x1b * knb, q1a += x1a * qna, q1b += x1b * qnb;
    }
    vd2 k0 = k0a + k0b, q0 = q0a + q0b, k1 = k1a + k1b, q1 = q1a + q1b;
    out[0] = k0[0] + k0[1], out[1] = q0[0] + q0[1], out[2] = k1[0] + k1[1], out[3] = q1[0] + q1[1];
    for (; i < K; i++) {
        s0[i] = a * s0[i] + d0 * k[i];
        s1[i] = a * s1[i] + d1 * k[i];
        out[0] += s0[i] * kn[i], out[1] += s0[i] * qn[i], out[2] += s1[i] * kn[i], out[3] += s1[i] * qn[i];
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same two-row step on 4-wide AVX2 vectors with fused multiply-adds, for hosts
 * that have them (checked once at run time).  Only the f64 ideal uses it: fusing
 * rounds less, and the ideal has no rounding points to keep; the parity form stays
 * unfused so it rounds exactly where the kernels do. */
typedef double vd4 __attribute__((vector_size(32)));

__attribute__((target("avx2,fma"))) static void rows2_update_dots_f64_avx2(
    double *restrict s0, double *restrict s1, const double *restrict k, const double *restrict kn,
    const double *restrict qn, double a, double d0, double d1, int64_t K, double *out) {
    vd4 av = {a, a, a, a}, dv0 = {d0, d0, d0, d0}, dv1 = {d1, d1, d1, d1}, z = {0, 0, 0, 0};
    vd4 k0 = z, q0 = z, k1 = z, q1 = z;
    int64_t i = 0;
    for (; i + 4 <= K; i += 4) {
        vd4 kv, knv, qnv, x0, x1;
        memcpy(&kv, k + i, sizeof kv);
        memcpy(&knv, kn + i, sizeof knv);
        memcpy(&qnv, qn + i, sizeof qnv);
        memcpy(&x0, s0 + i, sizeof x0);
        memcpy(&x1, s1 + i, sizeof x1);
        x0 = av * x0 + dv0 * kv;
        x1 = av * x1 + dv1 * kv;
        memcpy(s0 + i, &x0, sizeof x0);
        memcpy(s1 + i, &x1, sizeof x1);
        k0 += x0 * knv, q0 += x0 * qnv, k1 += x1 * knv, q1 += x1 * qnv;
    }
    out[0] = k0[0] + k0[1] + k0[2] + k0[3], out[1] = q0[0] + q0[1] + q0[2] + q0[3];
    out[2] = k1[0] + k1[1] + k1[2] + k1[3], out[3] = q1[0] + q1[1] + q1[2] + q1[3];
    for (; i < K; i++) {
        s0[i] = a * s0[i] + d0 * k[i];
        s1[i] = a * s1[i] + d1 * k[i];
        out[0] += s0[i] * kn[i], out[1] += s0[i] * qn[i], out[2] += s1[i] * kn[i], out[3] += s1[i] * qn[i];
    }
}
#endif

typedef void (*rows2_step_fn)(double *restrict, double *restrict, const double *restrict, const double *restrict,
                              const double *restrict, double, double, double, int64_t, double *);

static rows2_step_fn pick_rows2_step_f64(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return rows2_update_dots_f64_avx2;
#endif
    return rows2_update_dots_f64;
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
    int64_t TB = REC_TOKENS, R2 = R + (R & 1); /* an odd last row pairs with a scratch row */
    int is64 = j->kind == REF_F64;
    size_t el = is64 ? sizeof(double) : sizeof(float);
    size_t sz[RC_NSCRATCH] = {el * (size_t)(R2 * K), el * (size_t)(TB * K), el * (size_t)(TB * K),
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
            double *kq = p[RC_KQ], *o = p[RC_O], dots[4];
            rows2_step_fn step = pick_rows2_step_f64();
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
            for (int64_t r = 0; r < R2; r += 2) {
                double *s0 = S + r * K, *s1 = S + (r + 1) * K;
                double sk0 = dot_f64(s0, kt, K), sq0 = dot_f64(s0, qt, K);
                double sk1 = dot_f64(s1, kt, K), sq1 = dot_f64(s1, qt, K);
                for (int64_t t = 0; t < nt; t++) {
                    double v1 = r + 1 < R ? vt[t * R + r + 1] : 0;
                    double d0 = bt[t] * (vt[t * R + r] - at[t] * sk0), d1 = bt[t] * (v1 - at[t] * sk1);
                    o[t * R + r] = a->scale * (at[t] * sq0 + d0 * kq[t]);
                    if (r + 1 < R) o[t * R + r + 1] = a->scale * (at[t] * sq1 + d1 * kq[t]);
                    /* the last token of the tile computes dots it does not need */
                    int64_t tn = t + 1 < nt ? t + 1 : t;
                    step(s0, s1, kt + t * K, kt + tn * K, qt + tn * K, at[t], d0, d1, K, dots);
                    sk0 = dots[0], sq0 = dots[1], sk1 = dots[2], sq1 = dots[3];
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
