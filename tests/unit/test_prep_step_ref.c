/* test_prep_step_ref.c — the fused decode references (prep_step, decode_seq) against
 * a straightforward f64 implementation written from kernels.md, the parity reference
 * against f64, and the three op descriptors against each other (a decode_seq of N
 * tokens equals N chained prep_steps; the per-token launches bind token slices). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "ops/op.h"
#include "ref/prep_step_ref.h"
#include "test.h"

/* kernels.md, literally: per token and head, normalise, gate, one delta-rule step.
 * Written over whole vectors/matrices with its own indexing helpers. */
static void naive_decode(const prep_shape *s, const float *conv, const float *a_log, const float *dt_bias,
                         const float *a_raw, const float *b_raw, const float *qw, const float *kw,
                         const float *state_in, double *state, double *y) {
    int64_t C = 2 * s->Hk * s->Dk + s->Hv * s->Dv, ratio = s->Hv / s->Hk;
    for (int64_t e = 0; e < s->B * s->Hv * s->Dv * s->Dk; e++) state[e] = state_in[e];
    double *q = malloc(sizeof(double) * (size_t)s->Dk), *k = malloc(sizeof(double) * (size_t)s->Dk);
    double *Sk = malloc(sizeof(double) * (size_t)s->Dv);
    for (int64_t t = 0; t < s->N; t++)
        for (int64_t b = 0; b < s->B; b++)
            for (int64_t h = 0; h < s->Hv; h++) {
                const float *x = conv + (t * s->B + b) * C;
                int64_t hk = h / ratio;
                double mq = 0, mk = 0;
                for (int64_t d = 0; d < s->Dk; d++) {
                    mq += pow(x[hk * s->Dk + d], 2) / (double)s->Dk;
                    mk += pow(x[s->Hk * s->Dk + hk * s->Dk + d], 2) / (double)s->Dk;
                }
                for (int64_t d = 0; d < s->Dk; d++) {
                    q[d] = x[hk * s->Dk + d] / sqrt(mq + 1e-6) * qw[hk * s->Dk + d];
                    k[d] = x[s->Hk * s->Dk + hk * s->Dk + d] / sqrt(mk + 1e-6) * kw[hk * s->Dk + d];
                }
                double z = (double)a_raw[(t * s->B + b) * s->Hv + h] + dt_bias[h];
                double g = exp(-exp((double)a_log[h]) * log(1 + exp(z)));
                double beta = 1 / (1 + exp(-(double)b_raw[(t * s->B + b) * s->Hv + h]));
                double *S = state + (b * s->Hv + h) * s->Dv * s->Dk;
                /* S' = g S + beta (v - g S k) k^T */
                for (int64_t v = 0; v < s->Dv; v++) {
                    Sk[v] = 0;
                    for (int64_t d = 0; d < s->Dk; d++) Sk[v] += g * S[v * s->Dk + d] * k[d];
                }
                for (int64_t v = 0; v < s->Dv; v++) {
                    double vv = x[2 * s->Hk * s->Dk + h * s->Dv + v], out = 0;
                    for (int64_t d = 0; d < s->Dk; d++) {
                        S[v * s->Dk + d] = g * S[v * s->Dk + d] + beta * (vv - Sk[v]) * k[d];
                        out += S[v * s->Dk + d] * q[d];
                    }
                    y[((t * s->B + b) * s->Hv + h) * s->Dv + v] = out;
                }
            }
    free(q);
    free(k);
    free(Sk);
}

typedef struct prep_data {
    prep_shape s;
    float *conv, *a_log, *dt_bias, *a_raw, *b_raw, *qw, *kw, *state;
    int64_t nstate, ny;
} prep_data;

static float *normal_f32(int64_t n, rng *r, double mean, double sd) {
    float *x = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) x[i] = (float)(mean + sd * rng_normal(r));
    return x;
}

static prep_data make_prep(int64_t B, int64_t Hk, int64_t Hv, int64_t Dk, int64_t Dv, int64_t N) {
    prep_data p;
    rng r;
    rng_seed(&r, (uint64_t)(B * 1000 + N));
    p.s = (prep_shape){B, Hk, Hv, Dk, Dv, N};
    p.conv = normal_f32(N * B * (2 * Hk * Dk + Hv * Dv), &r, 0, 1);
    p.a_log = normal_f32(Hv, &r, 1.0, 0.5);
    p.dt_bias = normal_f32(Hv, &r, -4.0, 1.0);
    p.a_raw = normal_f32(N * B * Hv, &r, 0, 1);
    p.b_raw = normal_f32(N * B * Hv, &r, 0, 1);
    p.qw = normal_f32(Hk * Dk, &r, 1.0 / (double)Dk, 0.05 / (double)Dk);
    p.kw = normal_f32(Hk * Dk, &r, 1.0 / sqrt((double)Dk), 0.05 / sqrt((double)Dk));
    p.nstate = B * Hv * Dv * Dk;
    p.ny = N * B * Hv * Dv;
    p.state = normal_f32(p.nstate, &r, 0, 0.1);
    return p;
}

static void free_prep(prep_data *p) {
    free(p->conv);
    free(p->a_log);
    free(p->dt_bias);
    free(p->a_raw);
    free(p->b_raw);
    free(p->qw);
    free(p->kw);
    free(p->state);
}

static double rel_err(const double *x, const double *ref, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += (x[i] - ref[i]) * (x[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

static void check_prep_shape(int64_t B, int64_t Hk, int64_t Hv, int64_t Dk, int64_t Dv, int64_t N) {
    prep_data p = make_prep(B, Hk, Hv, Dk, Dv, N);
    double *ns = malloc(sizeof(double) * (size_t)p.nstate), *ny = malloc(sizeof(double) * (size_t)p.ny);
    double *rs = malloc(sizeof(double) * (size_t)p.nstate), *ry = malloc(sizeof(double) * (size_t)p.ny);
    double *ps = malloc(sizeof(double) * (size_t)p.nstate), *py = malloc(sizeof(double) * (size_t)p.ny);
    naive_decode(&p.s, p.conv, p.a_log, p.dt_bias, p.a_raw, p.b_raw, p.qw, p.kw, p.state, ns, ny);
    CHECK(prep_seq_ref(REF_F64, &p.s, p.conv, p.a_log, p.dt_bias, p.a_raw, p.b_raw, p.qw, p.kw, p.state, rs, ry) ==
          0);
    CHECK(prep_seq_ref(REF_PARITY, &p.s, p.conv, p.a_log, p.dt_bias, p.a_raw, p.b_raw, p.qw, p.kw, p.state, ps,
                       py) == 0);
    double e_s = rel_err(rs, ns, p.nstate), e_y = rel_err(ry, ny, p.ny);
    double p_s = rel_err(ps, ns, p.nstate), p_y = rel_err(py, ny, p.ny);
    CHECK_MSG(e_s < 1e-13 && e_y < 1e-13, "B=%lld N=%lld: f64 reference vs naive: state %.3g y %.3g", (long long)B,
              (long long)N, e_s, e_y);
    CHECK_MSG(p_s < 3e-6 && p_y < 3e-6 && p_s > 0, "B=%lld N=%lld: parity vs naive: state %.3g y %.3g", (long long)B,
              (long long)N, p_s, p_y);
    free(ns);
    free(ny);
    free(rs);
    free(ry);
    free(ps);
    free(py);
    free_prep(&p);
}

TEST(prep_step_ref_matches_naive_f64) {
    static const int64_t batches[] = {1, 2, 8};
    for (int i = 0; i < 3; i++) {
        check_prep_shape(batches[i], 2, 4, 64, 32, 1);
        check_prep_shape(batches[i], 1, 3, 32, 16, 5);
    }
    check_prep_shape(1, 16, 32, 128, 128, 1); /* the Qwen3.5 decode shape */
}

TEST(prep_step_simd_sum_is_a_butterfly) {
    float lanes[32];
    for (int l = 0; l < 32; l++) lanes[l] = (float)(l + 1);
    CHECK(prep_simd_sum_f32(lanes) == 528.0f);
    /* Association matters in f32: lane 0 = 2^24, the rest 1.  A sequential sum loses
     * every 1 (2^24 + 1 rounds to 2^24).  The butterfly loses only lane 16's 1 in its
     * first step (2^24 + 1 -> 2^24), then adds 2 + 4 + 8 + 16 exactly: 2^24 + 30. */
    for (int l = 0; l < 32; l++) lanes[l] = l == 0 ? 16777216.0f : 1.0f;
    float seq = 0;
    for (int l = 0; l < 32; l++) seq += lanes[l];
    CHECK(seq == 16777216.0f);
    CHECK(prep_simd_sum_f32(lanes) == 16777246.0f);
}

/* decode_seq over N tokens == N chained prep_step cases on the same per-token data;
 * decode_seq_steps binds token t's slices at the right offsets. */
TEST(decode_seq_ops_agree_with_chained_prep_steps) {
    const op_desc *seq = op_find("decode_seq"), *step = op_find("prep_step"), *steps = op_find("decode_seq_steps");
    CHECK(seq && step && steps);
    if (!seq || !step || !steps) return;
    const int64_t B = 2, Hk = 1, Hv = 2, Dk = 32, Dv = 8, N = 3;
    int64_t dseq[6] = {B, Hk, Hv, Dk, Dv, N}, dstep[5] = {B, Hk, Hv, Dk, Dv};
    char err[256];
    op_case *cs = op_case_new(seq, dseq, 7, err, sizeof err);
    op_case *c1 = op_case_new(step, dstep, 7, err, sizeof err);
    CHECK(cs && c1);
    if (!cs || !c1) goto out;
    int64_t C = 2 * Hk * Dk + Hv * Dv;
    double *seq_out[10] = {0}, *step_out[10] = {0};
    seq_out[8] = malloc(sizeof(double) * (size_t)(B * Hv * Dv * Dk));
    seq_out[9] = malloc(sizeof(double) * (size_t)(N * B * Hv * Dv));
    step_out[8] = malloc(sizeof(double) * (size_t)(B * Hv * Dv * Dk));
    step_out[9] = malloc(sizeof(double) * (size_t)(B * Hv * Dv));
    CHECK(seq->reference(cs, REF_F64, seq_out) == 0);
    /* the per-token inputs: same a_log/dt_bias/weights, token t's slices */
    for (int i = 1; i < 7; i++)
        if (i != 3 && i != 4) memcpy(c1->t[i]->data, cs->t[i]->data, tensor_nbytes(cs->t[i]));
    memcpy(c1->t[7]->data, cs->t[7]->data, tensor_nbytes(cs->t[7]));
    for (int64_t t = 0; t < N; t++) {
        memcpy(c1->t[0]->data, (float *)cs->t[0]->data + t * B * C, sizeof(float) * (size_t)(B * C));
        memcpy(c1->t[3]->data, (float *)cs->t[3]->data + t * B * Hv, sizeof(float) * (size_t)(B * Hv));
        memcpy(c1->t[4]->data, (float *)cs->t[4]->data + t * B * Hv, sizeof(float) * (size_t)(B * Hv));
        CHECK(step->reference(c1, REF_F64, step_out) == 0);
        for (int64_t i = 0; i < B * Hv * Dv; i++)
            CHECK_NEAR(step_out[9][i], seq_out[9][t * B * Hv * Dv + i], 1e-6 * fabs(step_out[9][i]) + 1e-8);
        /* the state goes on in f32, as a chain of kernels would carry it */
        for (int64_t i = 0; i < B * Hv * Dv * Dk; i++) tensor_set(c1->t[7], i, step_out[8][i]);
    }
    for (int64_t i = 0; i < B * Hv * Dv * Dk; i++)
        CHECK_NEAR(step_out[8][i], seq_out[8][i], 1e-6 * fabs(seq_out[8][i]) + 1e-7);

    op_case *cst = op_case_new(steps, dseq, 7, err, sizeof err);
    CHECK(cst != NULL);
    if (cst) {
        op_launch l;
        CHECK(steps->nstages(cst) == N);
        CHECK(steps->launch(cst, 2, &l) == 0);
        CHECK(strcmp(l.function, "mt_gated_delta_prep_step") == 0);
        CHECK(l.binds[0].offset == (uint64_t)(2 * B * C * 4));
        CHECK(l.binds[3].offset == (uint64_t)(2 * B * Hv * 4));
        CHECK(l.binds[9].offset == (uint64_t)(2 * B * Hv * Dv * 4));
        CHECK(l.binds[7].buf == 8); /* reads the state the previous token wrote */
        CHECK(l.grid[0] == Dv && l.grid[1] == B * Hv && l.tg[0] == 32 && l.params_index == 10);
        CHECK(seq->launch(cs, 0, &l) == 0 && l.nparams == 6 && l.params[5] == N);
        op_case_free(cst);
    }
    for (int i = 8; i < 10; i++) {
        free(seq_out[i]);
        free(step_out[i]);
    }
    int64_t bad[5] = {1, 3, 4, 64, 64};
    CHECK(op_case_new(step, bad, 1, err, sizeof err) == NULL && strstr(err, "--Hv"));
    int64_t bad_dk[5] = {1, 1, 1, 48, 64};
    CHECK(op_case_new(step, bad_dk, 1, err, sizeof err) == NULL && strstr(err, "--Dk 48"));
out:
    op_case_free(cs);
    op_case_free(c1);
}
