/* gdn_recurrence_f64.c — the f64 ideal recurrence, a tile of tokens at a time.
 *
 * Rows of the state (value index v) evolve independently, so a job owns rows
 * v0..v0+R of the value heads that share one key head (GQA) of one batch, and walks
 * the tokens in tiles of F64_TOKENS.  Within a tile of n tokens, with S the state
 * before it, a_t the decay of token t, e(t,j) = a_{j+1} ... a_t (e(t,t) = 1) and
 * A_t = a_1 ... a_t, the recurrence
 *     S_t = a_t S_{t-1} + d_t k_t^T,  d_t = beta_t (v_t - a_t S_{t-1} k_t),  o_t = scale S_t q_t
 * unrolls, exactly, to
 *     d_t = beta_t v_t - beta_t A_t S k_t - sum_{j<t} m(t,j) d_j,  m(t,j) = beta_t e(t,j) k_j.k_t
 *     o_t = scale A_t S q_t + sum_{j<=t} p(t,j) d_j,              p(t,j) = scale e(t,j) k_j.q_t
 *     S_n = A_n S + sum_j e(n,j) d_j k_j^T.
 * So each row of the state sees three dense products per tile (S K^T, S Q^T, one
 * rank-n update) instead of a pass per token; what ties token to token is a forward
 * substitution of n unknowns per row.  The decays are products of the a_t, as in the
 * token loop (no exp of sums that could underflow where the products do not).
 *
 * The tile's k and q, their conversion to double and the Gram products k_j.k_t and
 * k_j.q_t depend on the key head only, so they are done once per tile for all the
 * job's value heads; only m and p (decays, beta) are per head.
 *
 * The state is kept in blocks of two vectors of rows, each block K x rows
 * contiguous, and a block goes through all three steps of a tile (d with its
 * substitution, o, the update) before the next, so it stays in L1 while the
 * products stream k and q from L2.  Each step is a register block: a few tokens (or
 * state columns) times the block's two vectors, accumulated in registers, the other
 * operand broadcast, so no sum across a vector is needed and the substitution runs
 * as many independent chains as the register block has tokens.  That body,
 * gdn_recurrence_f64_body.h, is compiled once per vector width: x86-64 hosts with
 * AVX-512 or AVX2/FMA run a build for them, picked once at run time, and the rest
 * (NEON, SSE2) one on two-double vectors.  On one AVX-512 core the three products
 * run at about 80% of the FMA peak; most of what is left is moving the inputs in
 * and the outputs out.
 *
 * A tile past the end of the sequence is padded to a multiple of 8 tokens with
 * k = q = v = 0, beta = 0 and a = 1: those tokens get d = 0 and change neither the
 * state nor any output, so the last tile runs the same code as the others and the
 * outputs of a token do not depend on how many tokens follow it.
 *
 * The f64 ideal has no rounding points to keep, so this file lets the compiler fuse
 * multiply-adds (the build's -ffp-contract=off holds everywhere else).  Vectors
 * never cross a function boundary, which would change the ABI between the builds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "ref/gdn_recurrence_f64.h"
#include "ref/gdn_simd.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT ON
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=fast")
#endif

#define F64_TOKENS 32 /* tokens per tile */

#define F64_INLINE static inline __attribute__((always_inline))

/* Scratch of one job. */
typedef struct f64_tile {
    int64_t K, R, Rp;     /* R rounded up to a whole block of rows */
    double *S;            /* per head, the state in row blocks: S[(rb K + c) rows + i] = row rb rows + i, column c */
    double *k, *q;        /* F64_TOKENS x K: the tile (padding tokens zero) */
    double *kT;           /* K x F64_TOKENS: k transposed, for the Gram products */
    double *bv, *o;       /* F64_TOKENS x Rp: beta_t v_t, o_t (padding rows zero) */
    double *d, *de;       /* F64_TOKENS x rows: d_t of the block in hand, e(n,t) d_t */
    double *gk, *gq;      /* F64_TOKENS x F64_TOKENS: k_j.k_t, k_j.q_t (j <= t) */
    double *m, *p;        /* F64_TOKENS x F64_TOKENS: m(t,j) (j < t), p(t,j) (zero for j > t) */
    double *a, *A, *beta; /* F64_TOKENS: decay, cumulative decay, beta */
    double *ka, *qa, *e;  /* F64_TOKENS: beta_t A_t, scale A_t, e(n,t) */
} f64_tile;

/* The job's scratch for nh heads, w->K and w->Rp set; the block to free(), or NULL. */
static void *f64_scratch(f64_tile *w, int64_t nh) {
    enum { W_S, W_K, W_Q, W_KT, W_BV, W_O, W_D, W_DE, W_GK, W_GQ, W_M, W_P, W_A, W_AC, W_BETA, W_KA, W_QA, W_E, W_N };
    size_t e = sizeof(double), T = F64_TOKENS, tk = e * T * (size_t)w->K, tt = e * T * T, tr = e * T * (size_t)w->Rp;
    size_t sz[W_N] = {[W_S] = e * (size_t)(nh * w->Rp * w->K), [W_K] = tk, [W_Q] = tk, [W_KT] = tk, [W_BV] = tr,
                      [W_O] = tr, [W_D] = tr, [W_DE] = tr, [W_GK] = tt, [W_GQ] = tt, [W_M] = tt, [W_P] = tt};
    for (int i = W_A; i < W_N; i++) sz[i] = e * T;
    void *p[W_N];
    void *block = gdn_scratch(W_N, sz, p);
    if (!block) return NULL;
    w->S = p[W_S], w->k = p[W_K], w->q = p[W_Q], w->kT = p[W_KT], w->bv = p[W_BV], w->o = p[W_O], w->d = p[W_D];
    w->de = p[W_DE];
    w->gk = p[W_GK], w->gq = p[W_GQ], w->m = p[W_M], w->p = p[W_P], w->a = p[W_A], w->A = p[W_AC];
    w->beta = p[W_BETA], w->ka = p[W_KA], w->qa = p[W_QA], w->e = p[W_E];
    return block;
}

static void l2norm_rows(double *x, int64_t rows, int64_t d) {
    for (int64_t r = 0; r < rows; r++, x += d) {
        double inv = 1.0 / sqrt(dot_f64(x, x, d) + GDN_L2NORM_EPS);
        for (int64_t i = 0; i < d; i++) x[i] *= inv;
    }
}

/* The tile's k and q as loaded (nt rows): padding rows, normalisation, k transposed. */
static void f64_tile_keys(const gdn_recurrence_args *a, f64_tile *w, int64_t nt, int64_t nt8) {
    int64_t K = w->K, T = F64_TOKENS;
    if (nt < nt8) {
        memset(w->k + nt * K, 0, sizeof(double) * (size_t)((nt8 - nt) * K));
        memset(w->q + nt * K, 0, sizeof(double) * (size_t)((nt8 - nt) * K));
    }
    if (a->l2norm) l2norm_rows(w->k, nt, K), l2norm_rows(w->q, nt, K);
    for (int64_t c = 0; c < K; c++)
        for (int64_t t = 0; t < nt8; t++) w->kT[c * T + t] = w->k[t * K + c];
}

/* One head's scalars of the tile at soff (nt tokens, padded to nt8): a, A, beta,
 * beta A, scale A, e(n,t); and m, p from the Gram products.  Row t of e(t,j) is row
 * t-1 times a_t, so the rows do not wait on one long chain of products. */
static void f64_decays(const gdn_recurrence_args *a, f64_tile *w, int64_t soff, int64_t nt, int64_t nt8) {
    int64_t H = a->s.H, T = F64_TOKENS;
    gdn_load_f64(a->g, soff, H, nt, 1, w->a);
    gdn_load_f64(a->beta, soff, H, nt, 1, w->beta);
    for (int64_t t = 0; t < nt8; t++) {
        w->a[t] = t < nt ? exp(a->g_sign * w->a[t]) : 1;
        w->beta[t] = t < nt ? w->beta[t] : 0;
        w->A[t] = t ? w->A[t - 1] * w->a[t] : w->a[t];
        w->ka[t] = w->beta[t] * w->A[t];
        w->qa[t] = a->scale * w->A[t];
    }
    double en = 1, erow[F64_TOKENS];
    for (int64_t t = nt8 - 1; t >= 0; t--) { /* e(n,t) = a_{t+1} ... a_n */
        w->e[t] = en;
        en *= w->a[t];
    }
    /* m(t,j) = beta_t e(t,j) k_j.k_t (j < t), p(t,j) = scale e(t,j) k_j.q_t (j <= t) */
    for (int64_t t = 0; t < nt8; t++) {
        double *mrow = w->m + t * T, *prow = w->p + t * T, bt = w->beta[t], at = w->a[t];
        const double *gkt = w->gk + t * T, *gqt = w->gq + t * T;
        for (int64_t j = 0; j < t; j++) {
            erow[j] *= at;
            mrow[j] = bt * erow[j] * gkt[j];
            prow[j] = a->scale * erow[j] * gqt[j];
        }
        erow[t] = 1;
        prow[t] = a->scale * gqt[t];
        for (int64_t j = t + 1; j < nt8; j++) prow[j] = 0;
    }
}

/* One job: batch b, the nh value heads heads[] that share key head kh, rows
 * v0..v0+R.  0, or -1 out of memory. */
typedef int (*rows_job_fn)(const gdn_recurrence_args *a, int64_t b, int64_t kh, const int64_t *heads, int64_t nh,
                           int64_t v0, int64_t R);

/* The builds of the body.  Register budget: 2 F64_MT + 3 vectors in d and o,
 * 2 F64_MC + 3 in the update, 4 F64_GT + 5 in the Gram products; AVX-512 and NEON
 * have 32 registers, AVX2 and SSE2 16. */
#define F64_SFX generic
#define F64_VL 2
#if defined(__aarch64__)
#define F64_MT 8
#define F64_MC 8
#define F64_GT 4
#else
#define F64_MT 4
#define F64_MC 4
#define F64_GT 2
#endif
#define F64_ATTR
#include "ref/gdn_recurrence_f64_body.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define F64_SFX avx2
#define F64_VL 4
#define F64_MT 4
#define F64_MC 4
#define F64_GT 2
#define F64_ATTR __attribute__((target("avx2,fma")))
#include "ref/gdn_recurrence_f64_body.h"

#define F64_SFX avx512
#define F64_VL 8
#define F64_MT 8
#define F64_MC 8
#define F64_GT 4
#define F64_ATTR __attribute__((target("avx512f,avx512vl,fma")))
#include "ref/gdn_recurrence_f64_body.h"
#endif

/* The jobs: (batch, key head, a share of its value heads, a block of rows). */
typedef struct f64_jobs {
    const gdn_recurrence_args *a;
    rows_job_fn fn;
    int64_t group, hper, nhc, rows, nblk;
    _Atomic int failed;
} f64_jobs;

static void f64_one(int64_t job, void *arg) {
    f64_jobs *j = arg;
    gdn_shape s = j->a->s;
    int64_t blk = job % j->nblk, hc = (job / j->nblk) % j->nhc, kh = (job / (j->nblk * j->nhc)) % s.Hg;
    int64_t b = job / (j->nblk * j->nhc * s.Hg);
    int64_t v0 = blk * j->rows, R = s.V - v0 < j->rows ? s.V - v0 : j->rows;
    int64_t heads[64], nh = 0;
    for (int64_t i = hc * j->hper; i < (hc + 1) * j->hper && i < j->group; i++)
        heads[nh++] = j->a->gqa_tiled ? kh + i * s.Hg : kh * j->group + i;
    if (j->fn(j->a, b, kh, heads, nh, v0, R) != 0) j->failed = 1;
}

int gdn_recurrence_f64(const gdn_recurrence_args *a) {
    gdn_shape s = a->s;
    f64_jobs j = {.a = a, .fn = rows_job_generic, .group = s.H / s.Hg};
    int64_t block = 4; /* rows per block of the build */
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) j.fn = rows_job_avx512, block = 16;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) j.fn = rows_job_avx2, block = 8;
#endif
    /* A job shares its tile conversion and Gram products among all its value heads,
     * so split the heads of a group, then the rows (in whole blocks), only as far
     * as needed for ~2 jobs per thread. */
    int64_t want = 2 * (int64_t)parallel_threads(), units = s.B * s.Hg;
    j.hper = j.group < 64 ? j.group : 64;
    while (j.hper > 1 && units * ((j.group + j.hper - 1) / j.hper) < want) j.hper = (j.hper + 1) / 2;
    j.nhc = (j.group + j.hper - 1) / j.hper;
    int64_t have = units * j.nhc, split = have >= want ? 1 : (want + have - 1) / have;
    j.rows = (s.V + split - 1) / split;
    j.rows = j.rows > block ? (j.rows + block - 1) / block * block : j.rows;
    j.nblk = (s.V + j.rows - 1) / j.rows;
    parallel_for(s.B * s.Hg * j.nhc * j.nblk, f64_one, &j);
    return j.failed ? -1 : 0;
}
