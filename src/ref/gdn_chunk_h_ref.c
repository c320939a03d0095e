/* gdn_chunk_h_ref.c — pipeline step 5: the state carried across chunks.
 *
 * Per (b, h) the state S [V,K] enters chunk c as h[c]; then
 *   v_new_t = u_t - S w_t
 *   S = exp(gl) S + sum_t (exp(gl - gc_t) v_new_t) k_t^T        (gl = gc of the chunk's last token)
 * Rows of S (value index v) evolve independently, so one job owns a block of rows of
 * one (b, h) for all chunks — the same split as mlx-native's V tiles.
 *
 * Parity (FLA chunk_gated_delta_rule_fwd_kernel_h as ported by mlx-native):
 * h = bf16(S); the w.S product reads the f32 S; v_new stored bf16; the gated value
 * bf16(v_new_f32 * exp(gl - gc_t)) feeds the update; S *= exp(gl) then S += the
 * update sum (ascending t).  Checked against mlx-native's FLA fixtures
 * (tests/unit/test_ref_fixtures.c): h and v_new bit-exact, final within f32 noise;
 * reading bf16(S) in the w.S product instead (as upstream FLA's Triton source
 * does) leaves 8% of v_new 1 ulp off and final at rel_l2 1e-3 from the fixture. */
#include <math.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "ref/gdn_simd.h"

/* Rows of S per job: enough work per job, and a [rows, K] tile stays in L1/L2. */
#define CHUNK_H_ROWS 32

typedef struct chunk_h_job {
    ref_kind kind;
    gdn_shape s;
    int64_t rows, nblk;
    gdn_view k, w, u, gc, h0;
    gdn_sink h, v_new, final;
    _Atomic int failed;
} chunk_h_job;

enum { CH_S, CH_HT, CH_W, CH_U, CH_K, CH_GC, CH_VN, CH_ACC, CH_VNB, CH_NSCRATCH };

static void chunk_h_one(int64_t job, void *arg) {
    chunk_h_job *j = arg;
    gdn_shape s = j->s;
    int64_t blk = job % j->nblk, h = (job / j->nblk) % s.H, b = job / (j->nblk * s.H);
    int64_t K = s.K, V = s.V, BT = s.BT, v0 = blk * j->rows;
    int64_t R = V - v0 < j->rows ? V - v0 : j->rows, kh = h / (s.H / s.Hg);
    size_t el = j->kind == REF_F64 ? sizeof(double) : sizeof(float);
    size_t sz[CH_NSCRATCH] = {el * (size_t)(R * K),  el * (size_t)(K * R), el * (size_t)(BT * K),
                              el * (size_t)(BT * R), el * (size_t)(BT * K), el * (size_t)BT,
                              el * (size_t)(BT * R), el * (size_t)(R * K), el * (size_t)(BT * R)};
    void *p[CH_NSCRATCH];
    void *block = gdn_scratch(CH_NSCRATCH, sz, p);
    if (!block) {
        j->failed = 1;
        return;
    }
    int64_t state_off = ((b * s.H + h) * V + v0) * K;
    int is64 = j->kind == REF_F64;
    if (is64)
        gdn_load_f64(j->h0, state_off, K, R, K, p[CH_S]);
    else
        gdn_load_f32(j->h0, state_off, K, R, K, p[CH_S]);

    for (int64_t c = 0; c < s.NT; c++) {
        int64_t t0 = c * BT, n = s.T - t0 < BT ? s.T - t0 : BT;
        int64_t hoff = (((b * s.NT + c) * s.H + h) * V + v0) * K;
        int64_t woff = ((b * s.T + t0) * s.H + h) * K, uoff = ((b * s.T + t0) * s.H + h) * V + v0;
        int64_t koff = ((b * s.T + t0) * s.Hg + kh) * K, goff = (b * s.T + t0) * s.H + h;
        if (is64) {
            double *S = p[CH_S], *hT = p[CH_HT], *w = p[CH_W], *u = p[CH_U], *kt = p[CH_K], *gc = p[CH_GC];
            double *vn = p[CH_VN], *acc = p[CH_ACC];
            gdn_store_f64(j->h, hoff, K, R, K, S);
            gdn_load_f64(j->w, woff, s.H * K, n, K, w);
            gdn_load_f64(j->u, uoff, s.H * V, n, R, u);
            gdn_load_f64(j->k, koff, s.Hg * K, n, K, kt);
            gdn_load_f64(j->gc, goff, s.H, n, 1, gc);
            gdn_transpose_f64(S, R, K, hT);
            for (int64_t t = 0; t < n; t++) {
                double *row = vn + t * R;
                for (int64_t x = 0; x < R; x++) row[x] = 0;
                for (int64_t x = 0; x < K; x++) axpy_f64(row, w[t * K + x], hT + x * R, R);
                for (int64_t x = 0; x < R; x++) row[x] = u[t * R + x] - row[x];
            }
            gdn_store_f64(j->v_new, uoff, s.H * V, n, R, vn);
            double gl = gc[n - 1], egl = exp(gl);
            for (int64_t t = 0; t < n; t++) {
                double e = exp(gl - gc[t]);
                for (int64_t x = 0; x < R; x++) vn[t * R + x] *= e;
            }
            for (int64_t r = 0; r < R; r++) {
                double *a = acc + r * K, *srow = S + r * K;
                for (int64_t x = 0; x < K; x++) a[x] = 0;
                for (int64_t t = 0; t < n; t++) axpy_f64(a, vn[t * R + r], kt + t * K, K);
                for (int64_t x = 0; x < K; x++) srow[x] = srow[x] * egl + a[x];
            }
        } else {
            float *S = p[CH_S], *hT = p[CH_HT], *w = p[CH_W], *u = p[CH_U], *kt = p[CH_K], *gc = p[CH_GC];
            float *vn = p[CH_VN], *acc = p[CH_ACC], *vnb = p[CH_VNB];
            memcpy(acc, S, sizeof(float) * (size_t)(R * K));
            gdn_round_bf16(acc, R * K);
            gdn_store_f32(j->h, hoff, K, R, K, acc);
            gdn_load_f32(j->w, woff, s.H * K, n, K, w);
            gdn_load_f32(j->u, uoff, s.H * V, n, R, u);
            gdn_load_f32(j->k, koff, s.Hg * K, n, K, kt);
            gdn_load_f32(j->gc, goff, s.H, n, 1, gc);
            gdn_transpose_f32(S, R, K, hT);
            for (int64_t t = 0; t < n; t++) {
                float *row = vn + t * R;
                for (int64_t x = 0; x < R; x++) row[x] = 0;
                for (int64_t x = 0; x < K; x++) axpy_f32(row, w[t * K + x], hT + x * R, R);
                for (int64_t x = 0; x < R; x++) row[x] = u[t * R + x] - row[x];
            }
            memcpy(vnb, vn, sizeof(float) * (size_t)(n * R));
            gdn_round_bf16(vnb, n * R);
            gdn_store_f32(j->v_new, uoff, s.H * V, n, R, vnb);
            float gl = gc[n - 1], egl = expf(gl);
            for (int64_t t = 0; t < n; t++) {
                float e = expf(gl - gc[t]);
                for (int64_t x = 0; x < R; x++) vn[t * R + x] = bf16_round(vn[t * R + x] * e);
            }
            for (int64_t r = 0; r < R; r++) {
                float *a = acc + r * K, *srow = S + r * K;
                for (int64_t x = 0; x < K; x++) a[x] = 0;
                for (int64_t t = 0; t < n; t++) axpy_f32(a, vn[t * R + r], kt + t * K, K);
                for (int64_t x = 0; x < K; x++) srow[x] = srow[x] * egl + a[x];
            }
        }
    }
    if (is64)
        gdn_store_f64(j->final, state_off, K, R, K, p[CH_S]);
    else
        gdn_store_f32(j->final, state_off, K, R, K, p[CH_S]);
    free(block);
}

int gdn_chunk_h_ref(ref_kind kind, gdn_shape s, gdn_view k, gdn_view w, gdn_view u, gdn_view gc, gdn_view h0,
                    gdn_sink h, gdn_sink v_new, gdn_sink final) {
    chunk_h_job j = {.kind = kind, .s = s, .k = k, .w = w, .u = u, .gc = gc, .h0 = h0,
                     .h = h, .v_new = v_new, .final = final};
    j.rows = s.V < CHUNK_H_ROWS ? s.V : CHUNK_H_ROWS;
    j.nblk = (s.V + j.rows - 1) / j.rows;
    parallel_for(s.B * s.H * j.nblk, chunk_h_one, &j);
    return j.failed ? -1 : 0;
}
