/* gdn_recurrence_ref.c — the token-by-token recurrence (the ideal reference) and its
 * f32 parity form; also the per-row L2 normalisation.
 *
 * Rows of the state (value index v) evolve independently: row v only needs k_t,
 * q_t, v_t[v], g_t and beta_t.  A parity job owns a block of rows of one (b, h) —
 * all V rows when there are enough (b, h) pairs to keep the threads busy, since the
 * k/q tile conversion is paid once per job.
 *
 * F64 form: gdn_recurrence_f64.c, a tile of tokens at a time (the recurrence
 * unrolled exactly over the tile, so the state is touched a few times per tile
 * rather than once per token), with its own jobs (the value heads of a key head
 * together, sharing the tile's k/q work).
 *
 * The parity form walks the tokens in tiles of REC_TOKENS: the tile's k/q rows are
 * converted into contiguous scratch, then each pair of rows runs through the whole
 * tile while it sits in L1, so every k/q load serves two rows.
 *
 * PARITY form, in mlx-native decode-kernel order: S *= a; sk = S.k;
 * d = (v - sk) beta; S += d k; y = S.q (q pre-scaled in f32).  Dots use 4-lane
 * partial sums (a kernel's simd_sum order differs anyway). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "ref/gdn_recurrence_f64.h"
#include "ref/gdn_simd.h"

#define REC_TOKENS 32 /* tokens per k/q tile: a row pair walks them while in L1 */

typedef struct rec_job { /* the parity form's jobs */
    const gdn_recurrence_args *a;
    int64_t rows, nblk;
    _Atomic int failed;
} rec_job;

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
    /* rows past R are scratch: the f32 form pairs rows */
    int64_t TB = REC_TOKENS, R2 = R + (R & 1);
    size_t el = sizeof(float);
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
    gdn_store_f32(a->final, state_off, K, R, K, p[RC_S]);
    free(block);
}

int gdn_recurrence_ref(ref_kind kind, const gdn_recurrence_args *a) {
    if (kind == REF_F64) return gdn_recurrence_f64(a);
    rec_job j = {.a = a};
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
