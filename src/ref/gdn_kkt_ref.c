/* gdn_kkt_ref.c — pipeline step 2: A[i,j] = beta_i (k_i . k_j) exp(gc_i - gc_j), j < i.
 *
 * One job per (b, h, chunk).  The chunk's key rows are loaded once, transposed to
 * [K][n] so the j-loop of A[i, :] += kb[i,kk] * k^T[kk, :] runs over contiguous
 * memory; every A[i,j] still sums over kk in ascending order.  Rows past the end of
 * a partial last chunk do not exist in A ([B,T,H,BT]); columns j >= n stay 0. */
#include <math.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "ref/gdn_simd.h"

typedef struct kkt_job {
    ref_kind kind;
    gdn_shape s;
    gdn_view k, beta, gc;
    gdn_sink A;
    _Atomic int failed;
} kkt_job;

static void kkt_chunk_f32(const kkt_job *j, int64_t n, const float *kt, const float *beta, const float *gc,
                          float *kb, float *kT, float *A) {
    int64_t K = j->s.K, BT = j->s.BT;
    for (int64_t i = 0; i < n; i++)
        for (int64_t x = 0; x < K; x++) kb[i * K + x] = bf16_round(kt[i * K + x] * beta[i]);
    gdn_transpose_f32(kt, n, K, kT);
    for (int64_t i = 1; i < n; i++) {
        float *row = A + i * BT;
        for (int64_t x = 0; x < K; x++) axpy_f32(row, kb[i * K + x], kT + x * n, i);
        for (int64_t c = 0; c < i; c++) row[c] *= expf(gc[i] - gc[c]);
    }
}

static void kkt_chunk_f64(const kkt_job *j, int64_t n, const double *kt, const double *beta, const double *gc,
                          double *kT, double *A) {
    int64_t K = j->s.K, BT = j->s.BT;
    gdn_transpose_f64(kt, n, K, kT);
    for (int64_t i = 1; i < n; i++) {
        double *row = A + i * BT;
        for (int64_t x = 0; x < K; x++) axpy_f64(row, kt[i * K + x], kT + x * n, i);
        for (int64_t c = 0; c < i; c++) row[c] *= beta[i] * exp(gc[i] - gc[c]);
    }
}

static void kkt_one(int64_t job, void *arg) {
    kkt_job *j = arg;
    gdn_shape s = j->s;
    int64_t c = job % s.NT, h = (job / s.NT) % s.H, b = job / (s.NT * s.H);
    int64_t t0 = c * s.BT, n = s.T - t0 < s.BT ? s.T - t0 : s.BT;
    int64_t kh = h / (s.H / s.Hg);
    int64_t koff = ((b * s.T + t0) * s.Hg + kh) * s.K, soff = (b * s.T + t0) * s.H + h;
    int64_t aoff = ((b * s.T + t0) * s.H + h) * s.BT;
    size_t el = j->kind == REF_F64 ? sizeof(double) : sizeof(float);
    size_t sz[6] = {el * (size_t)(n * s.K), el * (size_t)n, el * (size_t)n, el * (size_t)(n * s.K),
                    el * (size_t)(n * s.K), el * (size_t)(n * s.BT)};
    void *p[6];
    void *block = gdn_scratch(6, sz, p);
    if (!block) {
        j->failed = 1;
        return;
    }
    if (j->kind == REF_F64) {
        gdn_load_f64(j->k, koff, s.Hg * s.K, n, s.K, p[0]);
        gdn_load_f64(j->beta, soff, s.H, n, 1, p[1]);
        gdn_load_f64(j->gc, soff, s.H, n, 1, p[2]);
        kkt_chunk_f64(j, n, p[0], p[1], p[2], p[3], p[5]);
        gdn_store_f64(j->A, aoff, s.H * s.BT, n, s.BT, p[5]);
    } else {
        gdn_load_f32(j->k, koff, s.Hg * s.K, n, s.K, p[0]);
        gdn_load_f32(j->beta, soff, s.H, n, 1, p[1]);
        gdn_load_f32(j->gc, soff, s.H, n, 1, p[2]);
        kkt_chunk_f32(j, n, p[0], p[1], p[2], p[3], p[4], p[5]);
        gdn_store_f32(j->A, aoff, s.H * s.BT, n, s.BT, p[5]);
    }
    free(block);
}

int gdn_kkt_ref(ref_kind kind, gdn_shape s, gdn_view k, gdn_view beta, gdn_view gc, gdn_sink A) {
    kkt_job j = {.kind = kind, .s = s, .k = k, .beta = beta, .gc = gc, .A = A};
    parallel_for(s.B * s.H * s.NT, kkt_one, &j);
    return j.failed ? -1 : 0;
}
