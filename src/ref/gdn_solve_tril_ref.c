/* gdn_solve_tril_ref.c — pipeline step 3: Ai = (I + A)^-1 per chunk (A strictly lower).
 *
 * Forward substitution, row by row: X[i,:] = e_i - sum_{m<i} A[i,m] X[m,:], each
 * element summed in ascending m — the order of mlx-native's chunk_tri_solve_invert_f32.
 * X[m,:] is zero past column m, so row i only touches columns < i.  One job per
 * (b, h, chunk); a partial last chunk is an n x n block. */
#include <stdlib.h>

#include "core/parallel.h"
#include "ref/gdn_simd.h"

typedef struct tril_job {
    ref_kind kind;
    gdn_shape s;
    gdn_view A;
    gdn_sink Ai;
    _Atomic int failed;
} tril_job;

static void tril_one(int64_t job, void *arg) {
    tril_job *j = arg;
    gdn_shape s = j->s;
    int64_t c = job % s.NT, h = (job / s.NT) % s.H, b = job / (s.NT * s.H);
    int64_t t0 = c * s.BT, n = s.T - t0 < s.BT ? s.T - t0 : s.BT, BT = s.BT;
    int64_t off = ((b * s.T + t0) * s.H + h) * BT, stride = s.H * BT;
    size_t el = j->kind == REF_F64 ? sizeof(double) : sizeof(float);
    size_t sz[2] = {el * (size_t)(n * BT), el * (size_t)(n * BT)};
    void *p[2];
    void *block = gdn_scratch(2, sz, p);
    if (!block) {
        j->failed = 1;
        return;
    }
    if (j->kind == REF_F64) {
        double *L = p[0], *X = p[1];
        gdn_load_f64(j->A, off, stride, n, BT, L);
        for (int64_t i = 0; i < n; i++) {
            X[i * BT + i] = 1.0;
            for (int64_t m = 0; m < i; m++) axpy_f64(X + i * BT, -L[i * BT + m], X + m * BT, m + 1);
        }
        gdn_store_f64(j->Ai, off, stride, n, BT, X);
    } else {
        float *L = p[0], *X = p[1];
        gdn_load_f32(j->A, off, stride, n, BT, L);
        for (int64_t i = 0; i < n; i++) {
            X[i * BT + i] = 1.0f;
            for (int64_t m = 0; m < i; m++) axpy_f32(X + i * BT, -L[i * BT + m], X + m * BT, m + 1);
        }
        gdn_store_f32(j->Ai, off, stride, n, BT, X);
    }
    free(block);
}

int gdn_solve_tril_ref(ref_kind kind, gdn_shape s, gdn_view A, gdn_sink Ai) {
    tril_job j = {.kind = kind, .s = s, .A = A, .Ai = Ai};
    parallel_for(s.B * s.H * s.NT, tril_one, &j);
    return j.failed ? -1 : 0;
}
