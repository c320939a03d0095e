/* attn_ref.c — flash attention references (see attn_ref.h for the math and layouts).
 *
 * The f64 path is the textbook two-pass softmax in double.  The parity path mirrors
 * shaders/flash_attn.metal: scores as f32 dot products split over 4 lanes (each lane
 * sums 4-element groups d = 16*i + 4*lane .. +3, then the lanes are added pairwise),
 * softmax in base 2 with scale*log2(e) folded into the scores, f32 accumulation, O
 * rounded to bf16.  Work is spread over (batch, head) with parallel_for. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/parallel.h"
#include "ref/attn_ref.h"

#define LOG2E 1.4426950408889634
#define LN2 0.6931471805599453

/* Dot product of two length-D rows in the kernel's f32 order (see file comment). */
static float dot_f32_kernel_order(const double *a, const double *b, int64_t D) {
    float part[4] = {0, 0, 0, 0};
    for (int64_t base = 0; base < D; base += 16)
        for (int lane = 0; lane < 4; lane++)
            for (int e = 0; e < 4; e++) {
                int64_t d = base + 4 * lane + e;
                if (d < D) part[lane] += (float)a[d] * (float)b[d];
            }
    /* simd_shuffle_xor 1 then 2: (p0+p1) + (p2+p3) */
    return (part[0] + part[1]) + (part[2] + part[3]);
}

static double dot_f64(const double *a, const double *b, int64_t D) {
    double acc = 0;
    for (int64_t d = 0; d < D; d++) acc += a[d] * b[d];
    return acc;
}

typedef struct fwd_job {
    ref_kind kind;
    const attn_shape *s;
    const double *Q, *K, *V;
    double *O, *L;
    int failed; /* set (atomically) when a job could not allocate its scratch */
} fwd_job;

/* One (b, hq): every query row of that head. */
static void fwd_head(int64_t bh, void *arg) {
    const fwd_job *j = arg;
    const attn_shape *s = j->s;
    int64_t b = bh / s->Hq, h = bh % s->Hq, hk = h / (s->Hq / s->Hkv), D = s->D;
    const double *Q = j->Q + bh * s->qL * D;
    const double *K = j->K + (b * s->Hkv + hk) * s->kL * D;
    const double *V = j->V + (b * s->Hkv + hk) * s->kL * D;
    double *O = j->O + bh * s->qL * D, *L = j->L + bh * s->qL;
    double *score = malloc(sizeof(double) * (size_t)(s->kL > 0 ? s->kL : 1));
    double *acc = malloc(sizeof(double) * (size_t)D);
    float *acc32 = malloc(sizeof(float) * (size_t)D);
    if (!score || !acc || !acc32) {
        __atomic_store_n(&((fwd_job *)arg)->failed, 1, __ATOMIC_RELAXED);
        goto out;
    }
    const float scale_log2 = (float)s->scale * (float)LOG2E; /* as the kernel forms it */
    for (int64_t i = 0; i < s->qL; i++) {
        const double *q = Q + i * D;
        double m = -INFINITY;
        for (int64_t k = 0; k < s->kL; k++) {
            if (!attn_visible(s, i, k)) {
                score[k] = -INFINITY;
                continue;
            }
            if (j->kind == REF_F64) score[k] = s->scale * dot_f64(q, K + k * D, D);
            else score[k] = (double)(dot_f32_kernel_order(q, K + k * D, D) * scale_log2);
            if (score[k] > m) m = score[k];
        }
        if (m == -INFINITY) {
            for (int64_t d = 0; d < D; d++) O[i * D + d] = 0;
            L[i] = -INFINITY;
            continue;
        }
        if (j->kind == REF_F64) {
            double l = 0;
            memset(acc, 0, sizeof(double) * (size_t)D);
            for (int64_t k = 0; k < s->kL; k++) {
                if (score[k] == -INFINITY) continue;
                double p = exp(score[k] - m);
                l += p;
                for (int64_t d = 0; d < D; d++) acc[d] += p * V[k * D + d];
            }
            for (int64_t d = 0; d < D; d++) O[i * D + d] = acc[d] / l;
            L[i] = m + log(l);
        } else {
            float l = 0, m32 = (float)m;
            memset(acc32, 0, sizeof(float) * (size_t)D);
            for (int64_t k = 0; k < s->kL; k++) {
                if (score[k] == -INFINITY) continue;
                float p = exp2f((float)score[k] - m32);
                l += p;
                for (int64_t d = 0; d < D; d++) acc32[d] += p * (float)V[k * D + d];
            }
            float inv = 1.0f / l;
            for (int64_t d = 0; d < D; d++) O[i * D + d] = bf16_round(acc32[d] * inv);
            L[i] = (double)((m32 + log2f(l)) * (float)LN2);
        }
    }
out:
    free(score);
    free(acc);
    free(acc32);
}

int attn_fwd_ref(ref_kind kind, const attn_shape *s, const double *Q, const double *K, const double *V, double *O,
                 double *L) {
    fwd_job j = {kind, s, Q, K, V, O, L, 0};
    parallel_for(s->B * s->Hq, fwd_head, &j);
    return j.failed ? -1 : 0;
}

void attn_dvec_ref(const attn_shape *s, const double *O, const double *dO, double *Dvec) {
    int64_t rows = s->B * s->Hq * s->qL;
    for (int64_t r = 0; r < rows; r++) Dvec[r] = dot_f64(O + r * s->D, dO + r * s->D, s->D);
}

typedef struct bwd_job {
    ref_kind kind;
    const attn_shape *s;
    const double *Q, *K, *V, *dO, *L, *Dvec;
    double *dQ, *dK, *dV;
    int failed; /* set (atomically) when a job could not allocate its scratch */
} bwd_job;

/* f64: one (b, hkv) and every query head of its GQA group, so dK/dV of that kv head
 * are owned by this job. */
static void bwd_group_f64(const bwd_job *j, int64_t b, int64_t hk) {
    const attn_shape *s = j->s;
    int64_t D = s->D, group = s->Hq / s->Hkv;
    const double *K = j->K + (b * s->Hkv + hk) * s->kL * D;
    const double *V = j->V + (b * s->Hkv + hk) * s->kL * D;
    double *dK = j->dK + (b * s->Hkv + hk) * s->kL * D;
    double *dV = j->dV + (b * s->Hkv + hk) * s->kL * D;
    memset(dK, 0, sizeof(double) * (size_t)(s->kL * D));
    memset(dV, 0, sizeof(double) * (size_t)(s->kL * D));
    for (int64_t h = hk * group; h < (hk + 1) * group; h++) {
        int64_t bh = b * s->Hq + h;
        for (int64_t i = 0; i < s->qL; i++) {
            const double *q = j->Q + (bh * s->qL + i) * D, *dO = j->dO + (bh * s->qL + i) * D;
            double Li = j->L[bh * s->qL + i], Di = j->Dvec[bh * s->qL + i];
            double *dQ = j->dQ + (bh * s->qL + i) * D;
            memset(dQ, 0, sizeof(double) * (size_t)D);
            for (int64_t k = 0; k < s->kL; k++) {
                if (!attn_visible(s, i, k)) continue;
                double p = exp(s->scale * dot_f64(q, K + k * D, D) - Li);
                double dp = dot_f64(dO, V + k * D, D);
                double ds = p * (dp - Di);
                for (int64_t d = 0; d < D; d++) {
                    dQ[d] += s->scale * ds * K[k * D + d];
                    dK[k * D + d] += s->scale * ds * q[d];
                    dV[k * D + d] += p * dO[d];
                }
            }
        }
    }
}

/* Parity: f32 like the kernel — P = exp2(dot*scale*log2e - L*log2e), dQ accumulated
 * per row and scaled at the end, dK/dV accumulated per key and scaled (dK) per add. */
static void bwd_group_f32(const bwd_job *j, int64_t b, int64_t hk) {
    const attn_shape *s = j->s;
    int64_t D = s->D, group = s->Hq / s->Hkv;
    const double *K = j->K + (b * s->Hkv + hk) * s->kL * D;
    const double *V = j->V + (b * s->Hkv + hk) * s->kL * D;
    float *dK = calloc((size_t)(s->kL * D), sizeof(float));
    float *dV = calloc((size_t)(s->kL * D), sizeof(float));
    float *dQ = malloc(sizeof(float) * (size_t)D);
    if (!dK || !dV || !dQ) {
        __atomic_store_n(&((bwd_job *)j)->failed, 1, __ATOMIC_RELAXED);
        goto out;
    }
    const float scale = (float)s->scale, scale_log2 = (float)s->scale * (float)LOG2E;
    for (int64_t h = hk * group; h < (hk + 1) * group; h++) {
        int64_t bh = b * s->Hq + h;
        for (int64_t i = 0; i < s->qL; i++) {
            const double *q = j->Q + (bh * s->qL + i) * D, *dO = j->dO + (bh * s->qL + i) * D;
            float Li2 = (float)j->L[bh * s->qL + i] * (float)LOG2E, Di = (float)j->Dvec[bh * s->qL + i];
            memset(dQ, 0, sizeof(float) * (size_t)D);
            for (int64_t k = 0; k < s->kL; k++) {
                if (!attn_visible(s, i, k)) continue;
                float p = exp2f(dot_f32_kernel_order(q, K + k * D, D) * scale_log2 - Li2);
                float dp = dot_f32_kernel_order(dO, V + k * D, D);
                float ds = p * (dp - Di);
                for (int64_t d = 0; d < D; d++) {
                    dQ[d] += ds * (float)K[k * D + d];
                    dK[k * D + d] += ds * (float)q[d] * scale;
                    dV[k * D + d] += p * (float)dO[d];
                }
            }
            for (int64_t d = 0; d < D; d++) j->dQ[(bh * s->qL + i) * D + d] = dQ[d] * scale;
        }
    }
    int64_t off = (b * s->Hkv + hk) * s->kL * D;
    for (int64_t e = 0; e < s->kL * D; e++) {
        j->dK[off + e] = dK[e];
        j->dV[off + e] = dV[e];
    }
out:
    free(dK);
    free(dV);
    free(dQ);
}

static void bwd_group(int64_t bhk, void *arg) {
    const bwd_job *j = arg;
    int64_t b = bhk / j->s->Hkv, hk = bhk % j->s->Hkv;
    if (j->kind == REF_F64) bwd_group_f64(j, b, hk);
    else bwd_group_f32(j, b, hk);
}

int attn_bwd_ref(ref_kind kind, const attn_shape *s, const double *Q, const double *K, const double *V,
                 const double *dO, const double *L, const double *Dvec, double *dQ, double *dK, double *dV) {
    bwd_job j = {kind, s, Q, K, V, dO, L, Dvec, dQ, dK, dV, 0};
    parallel_for(s->B * s->Hkv, bwd_group, &j);
    return j.failed ? -1 : 0;
}
