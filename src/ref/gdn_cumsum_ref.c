/* gdn_cumsum_ref.c — chunk-local cumulative sum of the log decay (pipeline step 1). */
#include <stdlib.h>

#include "core/parallel.h"
#include "ref/gdn_simd.h"

typedef struct cumsum_job {
    ref_kind kind;
    const float *g;
    double *gc;
    int64_t T, H, BT;
} cumsum_job;

/* One (b, h) column: tokens are strided by H in memory. */
static void cumsum_one(int64_t bh, void *arg) {
    const cumsum_job *j = arg;
    int64_t b = bh / j->H, h = bh % j->H;
    const float *g = j->g + b * j->T * j->H + h;
    double *gc = j->gc + b * j->T * j->H + h;
    double acc64 = 0;
    float acc32 = 0;
    for (int64_t t = 0; t < j->T; t++) {
        if (t % j->BT == 0) acc64 = 0, acc32 = 0;
        acc64 += g[t * j->H];
        acc32 += g[t * j->H];
        gc[t * j->H] = j->kind == REF_F64 ? acc64 : (double)acc32;
    }
}

void gdn_cumsum_ref(ref_kind kind, const float *g, double *gc, int64_t B, int64_t T, int64_t H, int64_t BT) {
    cumsum_job j = {kind, g, gc, T, H, BT};
    parallel_for(B * H, cumsum_one, &j);
}

/* The view form for stage chains: loads g through a double array. */
int gdn_cumsum_view_ref(ref_kind kind, gdn_shape s, gdn_view g, gdn_sink gc) {
    int64_t n = s.B * s.T * s.H;
    double *gd = malloc((size_t)n * sizeof(double));
    double *out = malloc((size_t)n * sizeof(double));
    float *g32 = malloc((size_t)n * sizeof(float));
    int rc = -1;
    if (gd && out && g32) {
        gdn_load_f64(g, 0, 0, 1, n, gd);
        for (int64_t i = 0; i < n; i++) g32[i] = (float)gd[i];
        gdn_cumsum_ref(kind, g32, out, s.B, s.T, s.H, s.BT);
        gdn_store_f64(gc, 0, 0, 1, n, out);
        rc = 0;
    }
    free(gd);
    free(out);
    free(g32);
    return rc;
}
