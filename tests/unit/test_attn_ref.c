/* test_attn_ref.c — the flash attention references against an independent naive
 * f64 implementation (whole score matrices, mask written from its definition), the
 * gradients against finite differences of sum(O*dO), GQA sums, tail shapes, and the
 * attn_fwd/attn_bwd op descriptors (AttnParams, function constants, launches). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "ops/attn_common.h"
#include "ref/attn_ref.h"
#include "test.h"

/* ---- a naive implementation, written from the formulas (not from attn_ref.c) ---- */

typedef struct naive_out {
    double *O, *L, *dQ, *dK, *dV;
} naive_out;

/* Key j is visible to query i iff the causal mask is off or j - (kL - qL) <= i. */
static int naive_visible(const attn_shape *s, int64_t i, int64_t j) {
    return !s->causal || j - (s->kL - s->qL) <= i;
}

/* Forward and (when dO != NULL) backward, matrix by matrix, per (b, hq); dK/dV are
 * accumulated into the kv head the query head maps to. */
static void naive_attention(const attn_shape *s, const double *Q, const double *K, const double *V,
                            const double *dO, naive_out *r) {
    int64_t qL = s->qL, kL = s->kL, D = s->D;
    double *P = calloc((size_t)(qL * kL), sizeof(double)), *dP = calloc((size_t)(qL * kL), sizeof(double));
    if (dO) {
        memset(r->dK, 0, sizeof(double) * (size_t)(s->B * s->Hkv * kL * D));
        memset(r->dV, 0, sizeof(double) * (size_t)(s->B * s->Hkv * kL * D));
    }
    for (int64_t b = 0; b < s->B; b++)
        for (int64_t h = 0; h < s->Hq; h++) {
            int64_t kvh = h * s->Hkv / s->Hq; /* == h / (Hq/Hkv) */
            const double *q = Q + (b * s->Hq + h) * qL * D, *k = K + (b * s->Hkv + kvh) * kL * D,
                         *v = V + (b * s->Hkv + kvh) * kL * D;
            double *O = r->O + (b * s->Hq + h) * qL * D, *L = r->L + (b * s->Hq + h) * qL;
            for (int64_t i = 0; i < qL; i++) {
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < kL; j++) {
                    double sc = 0;
                    for (int64_t d = 0; d < D; d++) sc += q[i * D + d] * k[j * D + d];
                    P[i * kL + j] = naive_visible(s, i, j) ? sc * s->scale : -INFINITY;
                    if (P[i * kL + j] > mx) mx = P[i * kL + j];
                }
                for (int64_t j = 0; j < kL; j++) sum += exp(P[i * kL + j] - mx);
                L[i] = mx + log(sum);
                for (int64_t j = 0; j < kL; j++) P[i * kL + j] = exp(P[i * kL + j] - L[i]);
                for (int64_t d = 0; d < D; d++) {
                    double o = 0;
                    for (int64_t j = 0; j < kL; j++) o += P[i * kL + j] * v[j * D + d];
                    O[i * D + d] = o;
                }
            }
            if (!dO) continue;
            const double *g = dO + (b * s->Hq + h) * qL * D;
            double *dQ = r->dQ + (b * s->Hq + h) * qL * D, *dK = r->dK + (b * s->Hkv + kvh) * kL * D,
                   *dV = r->dV + (b * s->Hkv + kvh) * kL * D;
            for (int64_t i = 0; i < qL; i++)
                for (int64_t j = 0; j < kL; j++) {
                    double t = 0;
                    for (int64_t d = 0; d < D; d++) t += g[i * D + d] * v[j * D + d];
                    dP[i * kL + j] = t;
                }
            /* softmax backward: dS = P * (dP - rowsum(P * dP)) */
            for (int64_t i = 0; i < qL; i++) {
                double rs = 0;
                for (int64_t j = 0; j < kL; j++) rs += P[i * kL + j] * dP[i * kL + j];
                for (int64_t j = 0; j < kL; j++) dP[i * kL + j] = P[i * kL + j] * (dP[i * kL + j] - rs);
            }
            for (int64_t i = 0; i < qL; i++)
                for (int64_t d = 0; d < D; d++) {
                    double t = 0;
                    for (int64_t j = 0; j < kL; j++) t += dP[i * kL + j] * k[j * D + d];
                    dQ[i * D + d] = s->scale * t;
                }
            for (int64_t j = 0; j < kL; j++)
                for (int64_t d = 0; d < D; d++) {
                    double tk = 0, tv = 0;
                    for (int64_t i = 0; i < qL; i++) {
                        tk += dP[i * kL + j] * q[i * D + d];
                        tv += P[i * kL + j] * g[i * D + d];
                    }
                    dK[j * D + d] += s->scale * tk;
                    dV[j * D + d] += tv;
                }
        }
    free(P);
    free(dP);
}

/* ---- helpers ---- */

typedef struct attn_data {
    attn_shape s;
    int64_t nq, nk, nrow;
    double *Q, *K, *V, *dO;
} attn_data;

/* bf16-representable N(0,1) inputs, as the ops generate them. */
static void fill_bf16_normal(double *x, int64_t n, uint64_t seed, const char *tag) {
    rng r;
    rng_stream(&r, seed, tag);
    for (int64_t i = 0; i < n; i++) x[i] = bf16_round((float)rng_normal(&r));
}

static attn_data make_data(int64_t B, int64_t Hq, int64_t Hkv, int64_t qL, int64_t kL, int64_t D, int causal,
                           uint64_t seed) {
    attn_data a;
    a.s = (attn_shape){B, Hq, Hkv, qL, kL, D, causal, 1.0 / sqrt((double)D)};
    a.nq = B * Hq * qL * D;
    a.nk = B * Hkv * kL * D;
    a.nrow = B * Hq * qL;
    a.Q = malloc(sizeof(double) * (size_t)a.nq);
    a.dO = malloc(sizeof(double) * (size_t)a.nq);
    a.K = malloc(sizeof(double) * (size_t)a.nk);
    a.V = malloc(sizeof(double) * (size_t)a.nk);
    fill_bf16_normal(a.Q, a.nq, seed, "Q");
    fill_bf16_normal(a.dO, a.nq, seed, "dO");
    fill_bf16_normal(a.K, a.nk, seed, "K");
    fill_bf16_normal(a.V, a.nk, seed, "V");
    return a;
}

static void free_data(attn_data *a) {
    free(a->Q);
    free(a->K);
    free(a->V);
    free(a->dO);
}

static double max_abs_diff(const double *x, const double *y, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(x[i] - y[i]);
        if (!(d <= m)) m = d; /* NaN propagates as a failure */
    }
    return m;
}

static double max_abs(const double *x, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        if (fabs(x[i]) > m) m = fabs(x[i]);
    return m;
}

/* Runs the references (f64 and parity) and the naive implementation on one shape
 * and compares everything.  Returns the number of failed comparisons. */
static int compare_with_naive(int64_t B, int64_t Hq, int64_t Hkv, int64_t qL, int64_t kL, int64_t D, int causal) {
    attn_data a = make_data(B, Hq, Hkv, qL, kL, D, causal, (uint64_t)(qL * 131 + kL * 7 + D + causal));
    naive_out n = {malloc(sizeof(double) * (size_t)a.nq), malloc(sizeof(double) * (size_t)a.nrow),
                   malloc(sizeof(double) * (size_t)a.nq), malloc(sizeof(double) * (size_t)a.nk),
                   malloc(sizeof(double) * (size_t)a.nk)};
    naive_out r = {malloc(sizeof(double) * (size_t)a.nq), malloc(sizeof(double) * (size_t)a.nrow),
                   malloc(sizeof(double) * (size_t)a.nq), malloc(sizeof(double) * (size_t)a.nk),
                   malloc(sizeof(double) * (size_t)a.nk)};
    double *p_O = malloc(sizeof(double) * (size_t)a.nq), *p_L = malloc(sizeof(double) * (size_t)a.nrow);
    double *Dvec = malloc(sizeof(double) * (size_t)a.nrow);
    int fails = 0;
    naive_attention(&a.s, a.Q, a.K, a.V, a.dO, &n);
    CHECK(attn_fwd_ref(REF_F64, &a.s, a.Q, a.K, a.V, r.O, r.L) == 0);
    CHECK(attn_fwd_ref(REF_PARITY, &a.s, a.Q, a.K, a.V, p_O, p_L) == 0);
    attn_dvec_ref(&a.s, r.O, a.dO, Dvec);
    CHECK(attn_bwd_ref(REF_F64, &a.s, a.Q, a.K, a.V, a.dO, r.L, Dvec, r.dQ, r.dK, r.dV) == 0);
    struct {
        const char *name;
        const double *got, *want;
        int64_t n;
        double tol;
    } cmp[] = {
        {"O", r.O, n.O, a.nq, 1e-12},      {"L", r.L, n.L, a.nrow, 1e-12},    {"dQ", r.dQ, n.dQ, a.nq, 1e-11},
        {"dK", r.dK, n.dK, a.nk, 1e-11},   {"dV", r.dV, n.dV, a.nk, 1e-11},
        /* parity: O is bf16-rounded (half an ulp = 2^-9 relative, |O| <= max|V| ~ 4.5) */
        {"O parity", p_O, n.O, a.nq, 1e-2}, {"L parity", p_L, n.L, a.nrow, 2e-5},
    };
    for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++) {
        double scale = fmax(1.0, max_abs(cmp[i].want, cmp[i].n));
        double err = max_abs_diff(cmp[i].got, cmp[i].want, cmp[i].n);
        if (!(err <= cmp[i].tol * scale)) {
            test_fail(__FILE__, __LINE__,
                      "B=%lld Hq=%lld Hkv=%lld qL=%lld kL=%lld D=%lld causal=%d: %s max error %.3g > %.3g",
                      (long long)B, (long long)Hq, (long long)Hkv, (long long)qL, (long long)kL, (long long)D,
                      causal, cmp[i].name, err, cmp[i].tol * scale);
            fails++;
        }
    }
    /* Parity gradients: f32 sums, within ~1e-5 of the largest gradient. */
    naive_out pg = {NULL, NULL, malloc(sizeof(double) * (size_t)a.nq), malloc(sizeof(double) * (size_t)a.nk),
                    malloc(sizeof(double) * (size_t)a.nk)};
    CHECK(attn_bwd_ref(REF_PARITY, &a.s, a.Q, a.K, a.V, a.dO, r.L, Dvec, pg.dQ, pg.dK, pg.dV) == 0);
    double eq = max_abs_diff(pg.dQ, n.dQ, a.nq), ek = max_abs_diff(pg.dK, n.dK, a.nk),
           ev = max_abs_diff(pg.dV, n.dV, a.nk);
    if (!(eq <= 1e-5 * fmax(1, max_abs(n.dQ, a.nq)) && ek <= 1e-5 * fmax(1, max_abs(n.dK, a.nk)) &&
          ev <= 1e-5 * fmax(1, max_abs(n.dV, a.nk)))) {
        test_fail(__FILE__, __LINE__, "qL=%lld kL=%lld D=%lld: parity gradients off: dQ %.3g dK %.3g dV %.3g",
                  (long long)qL, (long long)kL, (long long)D, eq, ek, ev);
        fails++;
    }
    free(pg.dQ);
    free(pg.dK);
    free(pg.dV);
    naive_out *all[] = {&n, &r};
    for (int k = 0; k < 2; k++) {
        free(all[k]->O);
        free(all[k]->L);
        free(all[k]->dQ);
        free(all[k]->dK);
        free(all[k]->dV);
    }
    free(p_O);
    free(p_L);
    free(Dvec);
    free_data(&a);
    return fails;
}

/* ---- tests ---- */

TEST(attn_ref_tail_shapes_match_naive) {
    static const int64_t lens[] = {1, 17, 32, 33, 160};
    static const int64_t heads[][2] = {{1, 1}, {2, 1}, {4, 2}, {4, 4}, {2, 2}};
    int k = 0;
    for (int li = 0; li < 5; li++)
        for (int causal = 0; causal <= 1; causal++)
            for (int64_t D = 64; D <= 256; D *= 4, k++) {
                /* the largest shape only at D=64 to keep the test to about a second */
                if (lens[li] == 160 && D == 256 && causal == 0) continue;
                compare_with_naive(1, heads[k % 5][0], heads[k % 5][1], lens[li], lens[li], D, causal);
            }
}

TEST(attn_ref_qL_ne_kL_and_batches_match_naive) {
    compare_with_naive(1, 4, 2, 96, 160, 64, 1);
    compare_with_naive(1, 4, 2, 96, 160, 64, 0);
    compare_with_naive(2, 2, 1, 33, 47, 256, 1);
    compare_with_naive(1, 4, 1, 17, 5, 64, 0); /* qL > kL without the mask */
    compare_with_naive(3, 2, 2, 1, 160, 128, 1);
}

/* loss(Q, K, V) = sum(O * dO) with dO fixed; its gradient is (dQ, dK, dV). */
static double loss_f64(const attn_data *a, const double *Q, const double *K, const double *V) {
    double *O = malloc(sizeof(double) * (size_t)a->nq), *L = malloc(sizeof(double) * (size_t)a->nrow);
    attn_fwd_ref(REF_F64, &a->s, Q, K, V, O, L);
    double l = 0;
    for (int64_t i = 0; i < a->nq; i++) l += O[i] * a->dO[i];
    free(O);
    free(L);
    return l;
}

static void check_fd(int64_t B, int64_t Hq, int64_t Hkv, int64_t qL, int64_t kL, int64_t D, int causal) {
    attn_data a = make_data(B, Hq, Hkv, qL, kL, D, causal, 99);
    double *O = malloc(sizeof(double) * (size_t)a.nq), *L = malloc(sizeof(double) * (size_t)a.nrow);
    double *Dvec = malloc(sizeof(double) * (size_t)a.nrow), *dQ = malloc(sizeof(double) * (size_t)a.nq);
    double *dK = malloc(sizeof(double) * (size_t)a.nk), *dV = malloc(sizeof(double) * (size_t)a.nk);
    attn_fwd_ref(REF_F64, &a.s, a.Q, a.K, a.V, O, L);
    attn_dvec_ref(&a.s, O, a.dO, Dvec);
    attn_bwd_ref(REF_F64, &a.s, a.Q, a.K, a.V, a.dO, L, Dvec, dQ, dK, dV);
    struct {
        const char *name;
        double *x, *grad;
        int64_t n;
    } wrt[] = {{"Q", a.Q, dQ, a.nq}, {"K", a.K, dK, a.nk}, {"V", a.V, dV, a.nk}};
    const double h = 1e-5;
    for (int w = 0; w < 3 && !test_failed(); w++)
        for (int64_t e = 0; e < wrt[w].n && !test_failed(); e++) {
            double keep = wrt[w].x[e];
            wrt[w].x[e] = keep + h;
            double up = loss_f64(&a, a.Q, a.K, a.V);
            wrt[w].x[e] = keep - h;
            double down = loss_f64(&a, a.Q, a.K, a.V);
            wrt[w].x[e] = keep;
            double fd = (up - down) / (2 * h);
            CHECK_MSG(fabs(fd - wrt[w].grad[e]) <= 1e-7 + 1e-6 * fabs(fd),
                      "qL=%lld kL=%lld D=%lld causal=%d Hq=%lld Hkv=%lld: d%s[%lld] = %.10g, finite difference %.10g",
                      (long long)qL, (long long)kL, (long long)D, causal, (long long)Hq, (long long)Hkv, wrt[w].name,
                      (long long)e, wrt[w].grad[e], fd);
        }
    free(O);
    free(L);
    free(Dvec);
    free(dQ);
    free(dK);
    free(dV);
    free_data(&a);
}

TEST(attn_ref_gradients_match_finite_differences) {
    check_fd(1, 2, 1, 3, 5, 4, 1); /* GQA, causal, qL < kL */
    check_fd(1, 2, 2, 4, 4, 8, 0);
    check_fd(2, 4, 2, 5, 3, 5, 0); /* qL > kL, odd D, batch */
    check_fd(1, 1, 1, 6, 6, 6, 1);
}

/* dK/dV of a GQA group equal the sums of the per-head gradients computed with the
 * kv heads replicated (Hkv = Hq). */
TEST(attn_ref_gqa_gradients_are_group_sums) {
    const int64_t Hq = 4, Hkv = 2, qL = 17, kL = 33, D = 64, group = Hq / Hkv;
    attn_data g = make_data(1, Hq, Hkv, qL, kL, D, 1, 5);
    attn_data rep = make_data(1, Hq, Hq, qL, kL, D, 1, 5);
    memcpy(rep.Q, g.Q, sizeof(double) * (size_t)g.nq);
    memcpy(rep.dO, g.dO, sizeof(double) * (size_t)g.nq);
    for (int64_t h = 0; h < Hq; h++) {
        memcpy(rep.K + h * kL * D, g.K + (h / group) * kL * D, sizeof(double) * (size_t)(kL * D));
        memcpy(rep.V + h * kL * D, g.V + (h / group) * kL * D, sizeof(double) * (size_t)(kL * D));
    }
    attn_data *both[2] = {&g, &rep};
    double *dQ[2], *dK[2], *dV[2];
    for (int k = 0; k < 2; k++) {
        attn_data *a = both[k];
        double *O = malloc(sizeof(double) * (size_t)a->nq), *L = malloc(sizeof(double) * (size_t)a->nrow);
        double *Dvec = malloc(sizeof(double) * (size_t)a->nrow);
        dQ[k] = malloc(sizeof(double) * (size_t)a->nq);
        dK[k] = malloc(sizeof(double) * (size_t)a->nk);
        dV[k] = malloc(sizeof(double) * (size_t)a->nk);
        attn_fwd_ref(REF_F64, &a->s, a->Q, a->K, a->V, O, L);
        attn_dvec_ref(&a->s, O, a->dO, Dvec);
        attn_bwd_ref(REF_F64, &a->s, a->Q, a->K, a->V, a->dO, L, Dvec, dQ[k], dK[k], dV[k]);
        free(O);
        free(L);
        free(Dvec);
    }
    CHECK(max_abs_diff(dQ[0], dQ[1], g.nq) < 1e-12);
    for (int64_t e = 0; e < g.nk; e++) {
        int64_t kvh = e / (kL * D), within = e % (kL * D);
        double sk = 0, sv = 0;
        for (int64_t h = kvh * group; h < (kvh + 1) * group; h++) {
            sk += dK[1][h * kL * D + within];
            sv += dV[1][h * kL * D + within];
        }
        CHECK_NEAR(dK[0][e], sk, 1e-12);
        CHECK_NEAR(dV[0][e], sv, 1e-12);
        if (test_failed()) break;
    }
    for (int k = 0; k < 2; k++) {
        free(dQ[k]);
        free(dK[k]);
        free(dV[k]);
        free_data(both[k]);
    }
}

/* The first query of a causal qL < kL case sees exactly kL - qL + 1 keys: changing
 * a later key or value must not move its output. */
TEST(attn_ref_causal_mask_is_bottom_right_aligned) {
    attn_data a = make_data(1, 1, 1, 3, 8, 64, 1, 11);
    double O0[3 * 64], L0[3], O1[3 * 64], L1[3];
    attn_fwd_ref(REF_F64, &a.s, a.Q, a.K, a.V, O0, L0);
    for (int64_t d = 0; d < 64; d++) {
        a.K[6 * 64 + d] += 1.0; /* key 6 is visible to queries 1 and 2 only */
        a.V[6 * 64 + d] -= 2.0;
    }
    attn_fwd_ref(REF_F64, &a.s, a.Q, a.K, a.V, O1, L1);
    CHECK(L0[0] == L1[0]);
    CHECK(memcmp(O0, O1, sizeof(double) * 64) == 0);
    CHECK(L0[1] != L1[1]);
    CHECK(L0[2] != L1[2]);
    free_data(&a);
}

/* ---- descriptors ---- */

TEST(attn_params_layout_and_values) {
    attn_shape s = {2, 8, 2, 96, 161, 64, 1, 0.125};
    attn_params p = attn_params_of(&s);
    unsigned char raw[160];
    memcpy(raw, &p, sizeof raw);
    int32_t i32;
    int64_t i64;
    float f;
    memcpy(&i32, raw + 4, 4);
    CHECK_EQ_INT(i32, 8); /* H */
    memcpy(&i32, raw + 20, 4);
    CHECK_EQ_INT(i32, 4); /* gqa_factor */
    memcpy(&f, raw + 24, 4);
    CHECK(f == 0.125f);
    memcpy(&i32, raw + 32, 4);
    CHECK_EQ_INT(i32, 3); /* NQ */
    memcpy(&i32, raw + 36, 4);
    CHECK_EQ_INT(i32, 11); /* NK = ceil(161/16) */
    memcpy(&i32, raw + 44, 4);
    CHECK_EQ_INT(i32, 10); /* NK_aligned */
    memcpy(&i32, raw + 52, 4);
    CHECK_EQ_INT(i32, 1); /* kL_rem */
    memcpy(&i32, raw + 56, 4);
    CHECK_EQ_INT(i32, 65); /* qL_off = kL - qL */
    memcpy(&i64, raw + 64, 8);
    CHECK_EQ_INT(i64, 8 * 96 * 64); /* Q batch stride */
    memcpy(&i64, raw + 64 + 24 + 8, 8);
    CHECK_EQ_INT(i64, 161 * 64); /* K head stride */
    memcpy(&i64, raw + 64 + 72 + 16, 8);
    CHECK_EQ_INT(i64, 64); /* O row stride */
}

TEST(attn_ops_launch_constants_and_validation) {
    const op_desc *fwd = op_find("attn_fwd"), *bwd = op_find("attn_bwd");
    CHECK(fwd && bwd);
    if (!fwd || !bwd) return;
    int64_t dim[ATTN_NDIMS] = {1, 4, 2, 33, 48, 64, 1};
    char err[256];
    op_case *c = op_case_new(bwd, dim, 1, err, sizeof err);
    CHECK_MSG(c != NULL, "%s", err);
    if (!c) return;
    op_launch l;
    CHECK(bwd->launch(c, 0, &l) == 0);
    CHECK(strcmp(l.function, "flash_attn_train_bwd_bf16_d64") == 0);
    CHECK(l.grid[0] == 2 && l.grid[1] == 4 && l.grid[2] == 1 && l.tg[0] == 128);
    CHECK(l.params_index == 10 && l.nparams == 40);
    CHECK(l.nconstants == 4);
    CHECK(l.constants[0].index == 200 && strcmp(l.constants[0].value, "false") == 0); /* 33 % 32 */
    CHECK(l.constants[1].index == 201 && strcmp(l.constants[1].value, "true") == 0);  /* 48 % 16 */
    CHECK(l.constants[3].index == 301 && strcmp(l.constants[3].value, "true") == 0);
    CHECK(bwd->nstages(c) == 3);
    CHECK(bwd->launch(c, 2, &l) == 0);
    CHECK(strcmp(l.function, "f32_to_bf16_cast") == 0 && l.params[0] == 2 * 48 * 64);
    CHECK(bwd->zero_init_bufs != 0 && bwd->nondeterministic);
    /* setup's L is the f64 logsumexp: the first query sees kL - qL + 1 = 16 keys */
    CHECK(c->t[3]->ndim == 3 && isfinite(tensor_get(c->t[3], 0)));
    op_case_free(c);

    int64_t bad_gqa[ATTN_NDIMS] = {1, 3, 2, 8, 8, 64, 0};
    CHECK(op_case_new(fwd, bad_gqa, 1, err, sizeof err) == NULL && strstr(err, "--Hkv"));
    int64_t bad_d[ATTN_NDIMS] = {1, 2, 2, 8, 8, 96, 0};
    CHECK(op_case_new(fwd, bad_d, 1, err, sizeof err) == NULL && strstr(err, "--D 96"));
    int64_t bad_causal[ATTN_NDIMS] = {1, 2, 2, 9, 8, 64, 1};
    CHECK(op_case_new(fwd, bad_causal, 1, err, sizeof err) == NULL && strstr(err, "--causal"));
}
