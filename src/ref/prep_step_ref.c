/* prep_step_ref.c — fused GDN decode step references (see prep_step_ref.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "ref/prep_step_ref.h"

float prep_simd_sum_f32(const float *lanes) {
    float v[32], w[32];
    memcpy(v, lanes, sizeof v);
    for (int off = 16; off >= 1; off /= 2) {
        for (int l = 0; l < 32; l++) w[l] = v[l] + v[l ^ off];
        memcpy(v, w, sizeof v);
    }
    return v[0];
}

/* Sum of a[d]*b[d] over d < n in the kernel's order (n % 32 == 0). */
static float lane_dot_f32(const float *a, const float *b, int64_t n) {
    float lanes[32] = {0};
    for (int64_t d = 0; d < n; d++) lanes[d % 32] += a[d] * b[d];
    return prep_simd_sum_f32(lanes);
}

typedef struct prep_job {
    ref_kind kind;
    const prep_shape *s;
    const float *conv_out, *a_log, *dt_bias, *a_raw, *b_raw, *qw, *kw, *state_in;
    double *state_out, *y;
    int failed;
} prep_job;

static void prep_head_f64(const prep_job *j, int64_t b, int64_t h, double *S, double *q, double *k) {
    const prep_shape *s = j->s;
    int64_t Dk = s->Dk, Dv = s->Dv, hk = h / (s->Hv / s->Hk), C = 2 * s->Hk * Dk + s->Hv * Dv;
    for (int64_t e = 0; e < Dv * Dk; e++) S[e] = j->state_in[(b * s->Hv + h) * Dv * Dk + e];
    for (int64_t t = 0; t < s->N; t++) {
        const float *row = j->conv_out + (t * s->B + b) * C;
        double qss = 0, kss = 0;
        for (int64_t d = 0; d < Dk; d++) {
            qss += (double)row[hk * Dk + d] * row[hk * Dk + d];
            kss += (double)row[(s->Hk + hk) * Dk + d] * row[(s->Hk + hk) * Dk + d];
        }
        double qinv = 1.0 / sqrt(qss / (double)Dk + PREP_RMS_EPS), kinv = 1.0 / sqrt(kss / (double)Dk + PREP_RMS_EPS);
        for (int64_t d = 0; d < Dk; d++) {
            q[d] = row[hk * Dk + d] * qinv * j->qw[hk * Dk + d];
            k[d] = row[(s->Hk + hk) * Dk + d] * kinv * j->kw[hk * Dk + d];
        }
        double x = (double)j->a_raw[(t * s->B + b) * s->Hv + h] + j->dt_bias[h];
        double softplus = x > 20 ? x : log1p(exp(x));
        double g = exp(-exp((double)j->a_log[h]) * softplus);
        double beta = 1.0 / (1.0 + exp(-(double)j->b_raw[(t * s->B + b) * s->Hv + h]));
        for (int64_t v = 0; v < Dv; v++) {
            double *Sv = S + v * Dk, kv = 0, yv = 0;
            for (int64_t d = 0; d < Dk; d++) {
                Sv[d] *= g;
                kv += Sv[d] * k[d];
            }
            double delta = beta * ((double)row[2 * s->Hk * Dk + h * Dv + v] - kv);
            for (int64_t d = 0; d < Dk; d++) {
                Sv[d] += delta * k[d];
                yv += Sv[d] * q[d];
            }
            j->y[((t * s->B + b) * s->Hv + h) * Dv + v] = yv;
        }
    }
    for (int64_t e = 0; e < Dv * Dk; e++) j->state_out[(b * s->Hv + h) * Dv * Dk + e] = S[e];
}

static void prep_head_f32(const prep_job *j, int64_t b, int64_t h, float *S, float *q, float *k) {
    const prep_shape *s = j->s;
    int64_t Dk = s->Dk, Dv = s->Dv, hk = h / (s->Hv / s->Hk), C = 2 * s->Hk * Dk + s->Hv * Dv;
    memcpy(S, j->state_in + (b * s->Hv + h) * Dv * Dk, sizeof(float) * (size_t)(Dv * Dk));
    for (int64_t t = 0; t < s->N; t++) {
        const float *row = j->conv_out + (t * s->B + b) * C;
        const float *qraw = row + hk * Dk, *kraw = row + (s->Hk + hk) * Dk;
        float qinv = 1.0f / sqrtf(lane_dot_f32(qraw, qraw, Dk) / (float)Dk + (float)PREP_RMS_EPS);
        float kinv = 1.0f / sqrtf(lane_dot_f32(kraw, kraw, Dk) / (float)Dk + (float)PREP_RMS_EPS);
        for (int64_t d = 0; d < Dk; d++) {
            q[d] = qraw[d] * qinv * j->qw[hk * Dk + d];
            k[d] = kraw[d] * kinv * j->kw[hk * Dk + d];
        }
        float x = j->a_raw[(t * s->B + b) * s->Hv + h] + j->dt_bias[h];
        float softplus = x > 20.0f ? x : logf(1.0f + expf(x));
        float g = expf(-expf(j->a_log[h]) * softplus);
        float beta = 1.0f / (1.0f + expf(-j->b_raw[(t * s->B + b) * s->Hv + h]));
        for (int64_t v = 0; v < Dv; v++) {
            float *Sv = S + v * Dk;
            for (int64_t d = 0; d < Dk; d++) Sv[d] = g * Sv[d];
            float kv = lane_dot_f32(Sv, k, Dk);
            float delta = beta * (row[2 * s->Hk * Dk + h * Dv + v] - kv);
            for (int64_t d = 0; d < Dk; d++) Sv[d] = Sv[d] + delta * k[d];
            j->y[((t * s->B + b) * s->Hv + h) * Dv + v] = lane_dot_f32(Sv, q, Dk);
        }
    }
    for (int64_t e = 0; e < Dv * Dk; e++) j->state_out[(b * s->Hv + h) * Dv * Dk + e] = S[e];
}

static void prep_head(int64_t bh, void *arg) {
    prep_job *j = arg;
    const prep_shape *s = j->s;
    int64_t b = bh / s->Hv, h = bh % s->Hv;
    size_t elem = j->kind == REF_F64 ? sizeof(double) : sizeof(float);
    void *S = malloc(elem * (size_t)(s->Dv * s->Dk)), *q = malloc(elem * (size_t)s->Dk);
    void *k = malloc(elem * (size_t)s->Dk);
    if (!S || !q || !k) __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    else if (j->kind == REF_F64) prep_head_f64(j, b, h, S, q, k);
    else prep_head_f32(j, b, h, S, q, k);
    free(S);
    free(q);
    free(k);
}

int prep_seq_ref(ref_kind kind, const prep_shape *s, const float *conv_out, const float *a_log,
                 const float *dt_bias, const float *a_raw, const float *b_raw, const float *q_norm_weight,
                 const float *k_norm_weight, const float *state_in, double *state_out, double *y) {
    prep_job j = {kind,   s,     conv_out,      a_log,         dt_bias,  a_raw,     b_raw,
                  q_norm_weight, k_norm_weight, state_in, state_out, y,        0};
    parallel_for(s->B * s->Hv, prep_head, &j);
    return j.failed ? -1 : 0;
}
