/* gdn_recurrence_f64.c — the f64 ideal recurrence, a tile of tokens at a time.
 *
 * Rows of the state (value index v) evolve independently, so a job owns rows
 * v0..v0+R of one (b, h) and walks the tokens in tiles of F64_TOKENS.  Within a tile
 * of n tokens, with S the state before it, a_t the decay of token t, e(t,j) =
 * a_{j+1} ... a_t (e(t,t) = 1) and A_t = a_1 ... a_t, the recurrence
 *     S_t = a_t S_{t-1} + d_t k_t^T,  d_t = beta_t (v_t - a_t S_{t-1} k_t),  o_t = scale S_t q_t
 * unrolls, exactly, to
 *     d_t = beta_t (v_t - A_t S k_t) - sum_{j<t} beta_t e(t,j) (k_j . k_t) d_j
 *     o_t = scale (A_t S q_t + sum_{j<=t} e(t,j) (k_j . q_t) d_j)
 *     S_n = A_n S + sum_j e(n,j) d_j k_j^T.
 * So the state is touched three times per tile (S K^T, S Q^T, one rank-n update), as
 * dense products that keep their operands in registers, instead of once per token;
 * what ties token to token is a forward substitution of n unknowns per row, done for
 * sixteen rows at a time.  The decays are products of the a_t, as in the token loop
 * (no exp of sums that could underflow where the products do not).
 *
 * The f64 ideal has no rounding points to keep, so this file lets the compiler fuse
 * multiply-adds (the build's -ffp-contract=off holds everywhere else), and x86-64
 * hosts with AVX2/FMA or AVX-512 run the same code compiled for them, picked once at
 * run time.  Vectors are 4 doubles (two NEON or SSE registers where that is all
 * there is); they never cross a function boundary, which would change the ABI
 * between those builds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/gdn_recurrence_f64.h"
#include "ref/gdn_simd.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT ON
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=fast")
#endif

#define F64_TOKENS 32 /* tokens per tile */

typedef double vd8 __attribute__((vector_size(64)));

static inline __attribute__((always_inline)) void ld8(vd8 *v, const double *p) { memcpy(v, p, sizeof *v); }
static inline __attribute__((always_inline)) void st8(double *p, const vd8 *v) { memcpy(p, v, sizeof *v); }

/* Padded sizes and scratch of one job. */
typedef struct f64_tile {
    int64_t K, Kp, R, Rp;      /* K rounded up to 4, R to 16 */
    double *S;                 /* the state transposed, Kp x Rp (S[c * Rp + r]), padding zero */
    double *kT;                /* Kp x F64_TOKENS: the k tile transposed */
    double *k, *q;             /* F64_TOKENS x Kp each, padding columns zero */
    double *kraw;              /* F64_TOKENS x K: a tile as loaded */
    double *v, *o;             /* F64_TOKENS x R */
    double *sk, *sq, *d;       /* F64_TOKENS x Rp: S k_t, S q_t, d_t (then e(n,t) d_t) */
    double *m, *p;             /* F64_TOKENS x F64_TOKENS: beta_t e(t,j) k_j.k_t, e(t,j) k_j.q_t */
    double *a, *A, *beta;      /* F64_TOKENS: decay, cumulative decay, beta */
} f64_tile;

/* The forward substitution for d and the outputs o, sixteen rows at a time (two
 * vectors each for d and o: four independent chains of multiply-adds, so the
 * substitution's dependence from token to token does not wait on each one); then
 * d_t becomes e(n,t) d_t, the weight of k_t in the state update. */
static inline __attribute__((always_inline)) void solve_rows(const f64_tile *w, int64_t nt, double scale) {
    int64_t T = F64_TOKENS, Rp = w->Rp, R = w->R;
    for (int64_t r = 0; r < Rp; r += 16) {
        for (int64_t t = 0; t < nt; t++) {
            vd8 v0 = {0}, v1 = {0}, sk0, sk1, sq0, sq1;
            for (int i = 0; i < 8; i++) {
                v0[i] = r + i < R ? w->v[t * R + r + i] : 0;
                v1[i] = r + 8 + i < R ? w->v[t * R + r + 8 + i] : 0;
            }
            ld8(&sk0, w->sk + t * Rp + r), ld8(&sk1, w->sk + t * Rp + r + 8);
            ld8(&sq0, w->sq + t * Rp + r), ld8(&sq1, w->sq + t * Rp + r + 8);
            double bt = w->beta[t], At = w->A[t];
            vd8 x0 = bt * (v0 - At * sk0), x1 = bt * (v1 - At * sk1), y0 = At * sq0, y1 = At * sq1;
            const double *mt = w->m + t * T, *pt = w->p + t * T;
            for (int64_t j = 0; j < t; j++) {
                vd8 d0, d1;
                ld8(&d0, w->d + j * Rp + r), ld8(&d1, w->d + j * Rp + r + 8);
                x0 -= mt[j] * d0, x1 -= mt[j] * d1;
                y0 += pt[j] * d0, y1 += pt[j] * d1;
            }
            st8(w->d + t * Rp + r, &x0), st8(w->d + t * Rp + r + 8, &x1);
            y0 = scale * (y0 + pt[t] * x0), y1 = scale * (y1 + pt[t] * x1);
            for (int i = 0; i < 8 && r + i < R; i++) w->o[t * R + r + i] = y0[i];
            for (int i = 0; i < 8 && r + 8 + i < R; i++) w->o[t * R + r + 8 + i] = y1[i];
        }
    }
    /* e(n,t) = a_{t+1} ... a_n */
    double e = 1;
    for (int64_t t = nt - 1; t >= 0; t--) {
        for (int64_t r = 0; r < Rp; r += 8) {
            vd8 dt;
            ld8(&dt, w->d + t * Rp + r);
            dt *= e;
            st8(w->d + t * Rp + r, &dt);
        }
        e *= w->a[t];
    }
}

/* out[t * ldo + r] = sum_{c < n} X[t * ldx + c] B[c * ldb + r] for t < nt (step 4) and
 * r < ncols (step 16): four rows of X against sixteen columns of B at a time, each
 * element of X broadcast, so no sum across a vector is needed. */
static inline __attribute__((always_inline)) void gemm_tn(const double *X, int64_t ldx, int64_t nt, const double *B,
                                                          int64_t ldb, int64_t ncols, int64_t n, double *out,
                                                          int64_t ldo) {
    for (int64_t t = 0; t < nt; t += 4) {
        const double *x0 = X + t * ldx, *x1 = x0 + ldx, *x2 = x1 + ldx, *x3 = x2 + ldx;
        for (int64_t r = 0; r < ncols; r += 16) {
            vd8 a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0}, c0 = {0}, c1 = {0}, d0 = {0}, d1 = {0};
            for (int64_t c = 0; c < n; c++) {
                vd8 u, v;
                ld8(&u, B + c * ldb + r), ld8(&v, B + c * ldb + r + 8);
                a0 += x0[c] * u, a1 += x0[c] * v, b0 += x1[c] * u, b1 += x1[c] * v;
                c0 += x2[c] * u, c1 += x2[c] * v, d0 += x3[c] * u, d1 += x3[c] * v;
            }
            st8(out + t * ldo + r, &a0), st8(out + t * ldo + r + 8, &a1);
            st8(out + (t + 1) * ldo + r, &b0), st8(out + (t + 1) * ldo + r + 8, &b1);
            st8(out + (t + 2) * ldo + r, &c0), st8(out + (t + 2) * ldo + r + 8, &c1);
            st8(out + (t + 3) * ldo + r, &d0), st8(out + (t + 3) * ldo + r + 8, &d1);
        }
    }
}

/* The state, transposed (ST[c][r]): ST[c] = A_n ST[c] + sum_t k_t[c] w_t, with w_t
 * the weights e(n,t) d_t of the rows; four columns c by sixteen rows at a time. */
static inline __attribute__((always_inline)) void update_state(const f64_tile *w, int64_t nt) {
    int64_t Kp = w->Kp, Rp = w->Rp;
    double An = w->A[nt - 1];
    for (int64_t c = 0; c < Kp; c += 4) {
        double *s0 = w->S + c * Rp, *s1 = s0 + Rp, *s2 = s1 + Rp, *s3 = s2 + Rp;
        for (int64_t r = 0; r < Rp; r += 16) {
            vd8 a0, a1, b0, b1, c0, c1, d0, d1;
            ld8(&a0, s0 + r), ld8(&a1, s0 + r + 8), ld8(&b0, s1 + r), ld8(&b1, s1 + r + 8);
            ld8(&c0, s2 + r), ld8(&c1, s2 + r + 8), ld8(&d0, s3 + r), ld8(&d1, s3 + r + 8);
            a0 *= An, a1 *= An, b0 *= An, b1 *= An, c0 *= An, c1 *= An, d0 *= An, d1 *= An;
            for (int64_t t = 0; t < nt; t++) {
                const double *kt = w->k + t * Kp + c, *dt = w->d + t * Rp + r;
                vd8 u, v;
                ld8(&u, dt), ld8(&v, dt + 8);
                a0 += kt[0] * u, a1 += kt[0] * v, b0 += kt[1] * u, b1 += kt[1] * v;
                c0 += kt[2] * u, c1 += kt[2] * v, d0 += kt[3] * u, d1 += kt[3] * v;
            }
            st8(s0 + r, &a0), st8(s0 + r + 8, &a1), st8(s1 + r, &b0), st8(s1 + r + 8, &b1);
            st8(s2 + r, &c0), st8(s2 + r + 8, &c1), st8(s3 + r, &d0), st8(s3 + r + 8, &d1);
        }
    }
}

static void l2norm_rows(double *x, int64_t rows, int64_t d) {
    for (int64_t r = 0; r < rows; r++, x += d) {
        double inv = 1.0 / sqrt(dot_f64(x, x, d) + GDN_L2NORM_EPS);
        for (int64_t i = 0; i < d; i++) x[i] *= inv;
    }
}

/* Loads a tile of k or q rows into the padded layout (normalised when asked). */
static void load_keys(const f64_tile *w, gdn_view src, int64_t off, int64_t stride, int64_t nt, int l2norm,
                      double *dst) {
    gdn_load_f64(src, off, stride, nt, w->K, w->kraw);
    if (l2norm) l2norm_rows(w->kraw, nt, w->K);
    for (int64_t t = 0; t < nt; t++) memcpy(dst + t * w->Kp, w->kraw + t * w->K, sizeof(double) * (size_t)w->K);
}

/* The whole job, inlined into each build of it below. */
static inline __attribute__((always_inline)) int rows_job(const gdn_recurrence_args *a, int64_t b, int64_t h, int64_t v0, int64_t R) {
    gdn_shape s = a->s;
    int64_t K = s.K, V = s.V, T = F64_TOKENS;
    int64_t kh = a->gqa_tiled ? h % s.Hg : h / (s.H / s.Hg);
    f64_tile w = {.K = K, .Kp = (K + 3) & ~(int64_t)3, .R = R, .Rp = (R + 15) & ~(int64_t)15};
    enum { W_S, W_KT, W_K, W_Q, W_KRAW, W_V, W_O, W_SK, W_SQ, W_D, W_M, W_P, W_A, W_AC, W_BETA, W_N };
    size_t e = sizeof(double), sz[W_N] = {
        [W_S] = e * (size_t)(w.Rp * w.Kp), [W_KT] = e * (size_t)(T * w.Kp), [W_K] = e * (size_t)(T * w.Kp), [W_Q] = e * (size_t)(T * w.Kp),
        [W_KRAW] = e * (size_t)(T * K), [W_V] = e * (size_t)(T * R), [W_O] = e * (size_t)(T * R),
        [W_SK] = e * (size_t)(T * w.Rp), [W_SQ] = e * (size_t)(T * w.Rp), [W_D] = e * (size_t)(T * w.Rp),
        [W_M] = e * (size_t)(T * T), [W_P] = e * (size_t)(T * T), [W_A] = e * (size_t)T, [W_AC] = e * (size_t)T,
        [W_BETA] = e * (size_t)T};
    void *p[W_N];
    void *block = gdn_scratch(W_N, sz, p);
    if (!block) return -1;
    w.S = p[W_S], w.kT = p[W_KT], w.k = p[W_K], w.q = p[W_Q], w.kraw = p[W_KRAW], w.v = p[W_V], w.o = p[W_O];
    w.sk = p[W_SK], w.sq = p[W_SQ], w.d = p[W_D], w.m = p[W_M], w.p = p[W_P];
    w.a = p[W_A], w.A = p[W_AC], w.beta = p[W_BETA];

    /* the state in and out through kraw, F64_TOKENS rows at a time */
    int64_t state_off = ((b * s.H + h) * V + v0) * K;
    for (int64_t r0 = 0; r0 < R; r0 += T) {
        int64_t n = R - r0 < T ? R - r0 : T;
        gdn_load_f64(a->h0, state_off + r0 * K, K, n, K, w.kraw);
        for (int64_t r = 0; r < n; r++)
            for (int64_t c = 0; c < K; c++) w.S[c * w.Rp + r0 + r] = w.kraw[r * K + c];
    }
    for (int64_t t0 = 0; t0 < s.T; t0 += T) {
        int64_t nt = s.T - t0 < T ? s.T - t0 : T, nt4 = (nt + 3) & ~(int64_t)3;
        int64_t qoff = ((b * s.T + t0) * s.Hg + kh) * K, soff = (b * s.T + t0) * s.H + h;
        int64_t voff = ((b * s.T + t0) * s.H + h) * V + v0;
        if (t0 + T < s.T) {
            int64_t nn = s.T - t0 - T < T ? s.T - t0 - T : T;
            gdn_prefetch_rows(a->k, qoff + T * s.Hg * K, s.Hg * K, nn, K);
            gdn_prefetch_rows(a->q, qoff + T * s.Hg * K, s.Hg * K, nn, K);
            gdn_prefetch_rows(a->v, voff + T * s.H * V, s.H * V, nn, R);
        }
        if (nt < T) { /* the last tile: rows past nt join the products as zeros */
            memset(w.k + nt * w.Kp, 0, e * (size_t)((T - nt) * w.Kp));
            memset(w.q + nt * w.Kp, 0, e * (size_t)((T - nt) * w.Kp));
        }
        load_keys(&w, a->k, qoff, s.Hg * K, nt, a->l2norm, w.k);
        load_keys(&w, a->q, qoff, s.Hg * K, nt, a->l2norm, w.q);
        gdn_load_f64(a->v, voff, s.H * V, nt, R, w.v);
        gdn_load_f64(a->g, soff, s.H, nt, 1, w.a);
        gdn_load_f64(a->beta, soff, s.H, nt, 1, w.beta);
        for (int64_t t = 0; t < nt; t++) {
            w.a[t] = exp(a->g_sign * w.a[t]);
            w.A[t] = t ? w.A[t - 1] * w.a[t] : w.a[t];
        }
        /* m[t][j] = beta_t e(t,j) k_j.k_t (j < t), p[t][j] = e(t,j) k_j.q_t (j <= t),
         * from the Gram products of the tile (dense: the unused half costs less than
         * a triangle of short dot products) */
        gdn_transpose_f64(w.k, T, w.Kp, w.kT);
        gemm_tn(w.k, w.Kp, nt4, w.kT, T, T, K, w.m, T);
        gemm_tn(w.q, w.Kp, nt4, w.kT, T, T, K, w.p, T);
        for (int64_t t = 0; t < nt; t++) {
            double et = 1;
            for (int64_t j = t; j >= 0; j--) {
                w.p[t * T + j] *= et;
                w.m[t * T + j] *= w.beta[t] * et;
                et *= w.a[j];
            }
        }
        gemm_tn(w.k, w.Kp, nt4, w.S, w.Rp, w.Rp, K, w.sk, w.Rp);
        gemm_tn(w.q, w.Kp, nt4, w.S, w.Rp, w.Rp, K, w.sq, w.Rp);
        solve_rows(&w, nt, a->scale);
        update_state(&w, nt);
        gdn_store_f64(a->o, voff, s.H * V, nt, R, w.o);
    }
    for (int64_t r0 = 0; r0 < R; r0 += T) {
        int64_t n = R - r0 < T ? R - r0 : T;
        for (int64_t r = 0; r < n; r++)
            for (int64_t c = 0; c < K; c++) w.kraw[r * K + c] = w.S[c * w.Rp + r0 + r];
        gdn_store_f64(a->final, state_off + r0 * K, K, n, K, w.kraw);
    }
    free(block);
    return 0;
}

typedef int (*rows_job_fn)(const gdn_recurrence_args *a, int64_t b, int64_t h, int64_t v0, int64_t R);

static int rows_job_generic(const gdn_recurrence_args *a, int64_t b, int64_t h, int64_t v0, int64_t R) {
    return rows_job(a, b, h, v0, R);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) static int rows_job_avx2(const gdn_recurrence_args *a, int64_t b, int64_t h,
                                                              int64_t v0, int64_t R) {
    return rows_job(a, b, h, v0, R);
}

__attribute__((target("avx512f,avx512vl,fma"))) static int rows_job_avx512(const gdn_recurrence_args *a, int64_t b,
                                                                           int64_t h, int64_t v0, int64_t R) {
    return rows_job(a, b, h, v0, R);
}
#endif

int gdn_recurrence_f64_rows(const gdn_recurrence_args *a, int64_t b, int64_t h, int64_t v0, int64_t R) {
    rows_job_fn fn = rows_job_generic;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) fn = rows_job_avx512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) fn = rows_job_avx2;
#endif
    return fn(a, b, h, v0, R);
}
