/* gdn_chunk_o_ref.c — pipeline step 6: the output.
 *
 *   o_t = scale ( exp(gc_t) h[c] q_t + sum_{j<=t} (q_t . k_j) exp(gc_t - gc_j) v_new_j )
 *
 * One job per (b, h, chunk).  q.h and q.k are computed as row updates over the
 * transposed h [K][V] and k [K][n] tiles (each element summed in ascending kk).
 * Parity (FLA chunk_fwd_kernel_o / mlx-native chunk_o): f32 accumulations, the gated
 * and causally masked (j <= t) q.k matrix rounded to bf16 before the product with
 * v_new, o = bf16(bo*scale + (A.v_new)*scale). */
#include <math.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "ref/gdn_simd.h"

typedef struct chunk_o_job {
    ref_kind kind;
    gdn_shape s;
    double scale;
    gdn_view q, k, v_new, h, gc;
    gdn_sink o;
    _Atomic int failed;
} chunk_o_job;

enum { CO_Q, CO_K, CO_KT, CO_H, CO_HT, CO_VN, CO_GC, CO_BO, CO_A, CO_VD, CO_NSCRATCH };

static void chunk_o_one(int64_t job, void *arg) {
    chunk_o_job *j = arg;
    gdn_shape s = j->s;
    int64_t c = job % s.NT, h = (job / s.NT) % s.H, b = job / (s.NT * s.H);
    int64_t t0 = c * s.BT, n = s.T - t0 < s.BT ? s.T - t0 : s.BT;
    int64_t K = s.K, V = s.V, BT = s.BT, kh = h / (s.H / s.Hg);
    int64_t qoff = ((b * s.T + t0) * s.Hg + kh) * K, voff = ((b * s.T + t0) * s.H + h) * V;
    int64_t hoff = ((b * s.NT + c) * s.H + h) * V * K, goff = (b * s.T + t0) * s.H + h;
    size_t el = j->kind == REF_F64 ? sizeof(double) : sizeof(float);
    size_t sz[CO_NSCRATCH] = {el * (size_t)(n * K), el * (size_t)(n * K), el * (size_t)(K * n),
                              el * (size_t)(V * K), el * (size_t)(K * V), el * (size_t)(n * V),
                              el * (size_t)n,       el * (size_t)(n * V), el * (size_t)(n * BT),
                              el * (size_t)(n * V)};
    void *p[CO_NSCRATCH];
    void *block = gdn_scratch(CO_NSCRATCH, sz, p);
    if (!block) {
        j->failed = 1;
        return;
    }
    if (j->kind == REF_F64) {
        double *q = p[CO_Q], *kt = p[CO_K], *kT = p[CO_KT], *hm = p[CO_H], *hT = p[CO_HT], *vn = p[CO_VN];
        double *gc = p[CO_GC], *bo = p[CO_BO], *A = p[CO_A];
        gdn_load_f64(j->q, qoff, s.Hg * K, n, K, q);
        gdn_load_f64(j->k, qoff, s.Hg * K, n, K, kt);
        gdn_load_f64(j->h, hoff, K, V, K, hm);
        gdn_load_f64(j->v_new, voff, s.H * V, n, V, vn);
        gdn_load_f64(j->gc, goff, s.H, n, 1, gc);
        gdn_transpose_f64(kt, n, K, kT);
        gdn_transpose_f64(hm, V, K, hT);
        for (int64_t i = 0; i < n; i++) {
            double *orow = bo + i * V, *arow = A + i * BT;
            for (int64_t x = 0; x < K; x++) {
                axpy_f64(orow, q[i * K + x], hT + x * V, V);
                axpy_f64(arow, q[i * K + x], kT + x * n, i + 1);
            }
            double eg = exp(gc[i]);
            for (int64_t x = 0; x < V; x++) orow[x] *= eg;
            for (int64_t m = 0; m <= i; m++) axpy_f64(orow, arow[m] * exp(gc[i] - gc[m]), vn + m * V, V);
            for (int64_t x = 0; x < V; x++) orow[x] *= j->scale;
        }
        gdn_store_f64(j->o, voff, s.H * V, n, V, bo);
    } else {
        float *q = p[CO_Q], *kt = p[CO_K], *kT = p[CO_KT], *hm = p[CO_H], *hT = p[CO_HT], *vn = p[CO_VN];
        float *gc = p[CO_GC], *bo = p[CO_BO], *A = p[CO_A], *vd = p[CO_VD];
        float scale = (float)j->scale;
        gdn_load_f32(j->q, qoff, s.Hg * K, n, K, q);
        gdn_load_f32(j->k, qoff, s.Hg * K, n, K, kt);
        gdn_load_f32(j->h, hoff, K, V, K, hm);
        gdn_load_f32(j->v_new, voff, s.H * V, n, V, vn);
        gdn_load_f32(j->gc, goff, s.H, n, 1, gc);
        gdn_transpose_f32(kt, n, K, kT);
        gdn_transpose_f32(hm, V, K, hT);
        for (int64_t i = 0; i < n; i++) {
            float *orow = bo + i * V, *arow = A + i * BT, *drow = vd + i * V;
            for (int64_t x = 0; x < K; x++) {
                axpy_f32(orow, q[i * K + x], hT + x * V, V);
                axpy_f32(arow, q[i * K + x], kT + x * n, i + 1);
            }
            float eg = expf(gc[i]);
            for (int64_t x = 0; x < V; x++) orow[x] *= eg;
            for (int64_t m = 0; m <= i; m++) arow[m] = bf16_round(arow[m] * expf(gc[i] - gc[m]));
            for (int64_t m = 0; m <= i; m++) axpy_f32(drow, arow[m], vn + m * V, V);
            for (int64_t x = 0; x < V; x++) orow[x] = bf16_round(orow[x] * scale + drow[x] * scale);
        }
        gdn_store_f32(j->o, voff, s.H * V, n, V, bo);
    }
    free(block);
}

int gdn_chunk_o_ref(ref_kind kind, gdn_shape s, gdn_view q, gdn_view k, gdn_view v_new, gdn_view h, gdn_view gc,
                    double scale, gdn_sink o) {
    chunk_o_job j = {.kind = kind, .s = s, .scale = scale, .q = q, .k = k, .v_new = v_new, .h = h, .gc = gc, .o = o};
    parallel_for(s.B * s.H * s.NT, chunk_o_one, &j);
    return j.failed ? -1 : 0;
}
