/* gdn_wy_ref.c — pipeline step 4 (recompute w/u): w = Ai (beta exp(gc) k), u = Ai (beta v).
 *
 * One job per (b, h, chunk).  Ai is lower triangular with unit diagonal, so row i
 * sums j = 0..i.  Parity: the scaled operands are rounded to bf16 before the
 * products (FLA wy_fast / mlx-native recompute_wu: bf16(v*beta),
 * bf16((k*beta)*exp(gc))), products accumulate in f32 in ascending j, w and u are
 * rounded to bf16 on store. */
#include <math.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "ref/gdn_simd.h"

typedef struct wy_job {
    ref_kind kind;
    gdn_shape s;
    gdn_view k, v, beta, gc, Ai;
    gdn_sink w, u;
    _Atomic int failed;
} wy_job;

enum { WY_K, WY_V, WY_BETA, WY_GC, WY_AI, WY_W, WY_U, WY_NSCRATCH };

static void wy_one(int64_t job, void *arg) {
    wy_job *j = arg;
    gdn_shape s = j->s;
    int64_t c = job % s.NT, h = (job / s.NT) % s.H, b = job / (s.NT * s.H);
    int64_t t0 = c * s.BT, n = s.T - t0 < s.BT ? s.T - t0 : s.BT;
    int64_t K = s.K, V = s.V, BT = s.BT, kh = h / (s.H / s.Hg);
    int64_t koff = ((b * s.T + t0) * s.Hg + kh) * K, voff = ((b * s.T + t0) * s.H + h) * V;
    int64_t woff = ((b * s.T + t0) * s.H + h) * K, soff = (b * s.T + t0) * s.H + h;
    int64_t aoff = ((b * s.T + t0) * s.H + h) * BT;
    size_t el = j->kind == REF_F64 ? sizeof(double) : sizeof(float);
    size_t sz[WY_NSCRATCH] = {el * (size_t)(n * K), el * (size_t)(n * V), el * (size_t)n, el * (size_t)n,
                              el * (size_t)(n * BT), el * (size_t)(n * K), el * (size_t)(n * V)};
    void *p[WY_NSCRATCH];
    void *block = gdn_scratch(WY_NSCRATCH, sz, p);
    if (!block) {
        j->failed = 1;
        return;
    }
    if (j->kind == REF_F64) {
        double *kt = p[WY_K], *vt = p[WY_V], *beta = p[WY_BETA], *gc = p[WY_GC], *A = p[WY_AI];
        double *w = p[WY_W], *u = p[WY_U];
        gdn_load_f64(j->k, koff, s.Hg * K, n, K, kt);
        gdn_load_f64(j->v, voff, s.H * V, n, V, vt);
        gdn_load_f64(j->beta, soff, s.H, n, 1, beta);
        gdn_load_f64(j->gc, soff, s.H, n, 1, gc);
        gdn_load_f64(j->Ai, aoff, s.H * BT, n, BT, A);
        for (int64_t t = 0; t < n; t++) {
            double kscale = beta[t] * exp(gc[t]);
            for (int64_t x = 0; x < K; x++) kt[t * K + x] *= kscale;
            for (int64_t x = 0; x < V; x++) vt[t * V + x] *= beta[t];
        }
        for (int64_t i = 0; i < n; i++) {
            for (int64_t m = 0; m <= i; m++) {
                axpy_f64(w + i * K, A[i * BT + m], kt + m * K, K);
                axpy_f64(u + i * V, A[i * BT + m], vt + m * V, V);
            }
        }
        gdn_store_f64(j->w, woff, s.H * K, n, K, w);
        gdn_store_f64(j->u, voff, s.H * V, n, V, u);
    } else {
        float *kt = p[WY_K], *vt = p[WY_V], *beta = p[WY_BETA], *gc = p[WY_GC], *A = p[WY_AI];
        float *w = p[WY_W], *u = p[WY_U];
        gdn_load_f32(j->k, koff, s.Hg * K, n, K, kt);
        gdn_load_f32(j->v, voff, s.H * V, n, V, vt);
        gdn_load_f32(j->beta, soff, s.H, n, 1, beta);
        gdn_load_f32(j->gc, soff, s.H, n, 1, gc);
        gdn_load_f32(j->Ai, aoff, s.H * BT, n, BT, A);
        for (int64_t t = 0; t < n; t++) {
            float eg = expf(gc[t]);
            for (int64_t x = 0; x < K; x++) kt[t * K + x] = bf16_round(kt[t * K + x] * beta[t] * eg);
            for (int64_t x = 0; x < V; x++) vt[t * V + x] = bf16_round(vt[t * V + x] * beta[t]);
        }
        for (int64_t i = 0; i < n; i++) {
            for (int64_t m = 0; m <= i; m++) {
                axpy_f32(w + i * K, A[i * BT + m], kt + m * K, K);
                axpy_f32(u + i * V, A[i * BT + m], vt + m * V, V);
            }
        }
        gdn_round_bf16(w, n * K);
        gdn_round_bf16(u, n * V);
        gdn_store_f32(j->w, woff, s.H * K, n, K, w);
        gdn_store_f32(j->u, voff, s.H * V, n, V, u);
    }
    free(block);
}

int gdn_wy_ref(ref_kind kind, gdn_shape s, gdn_view k, gdn_view v, gdn_view beta, gdn_view gc, gdn_view Ai,
               gdn_sink w, gdn_sink u) {
    wy_job j = {.kind = kind, .s = s, .k = k, .v = v, .beta = beta, .gc = gc, .Ai = Ai, .w = w, .u = u};
    parallel_for(s.B * s.H * s.NT, wy_one, &j);
    return j.failed ? -1 : 0;
}
