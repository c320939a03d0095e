/* validate_profile.c — the input profiles of `gdnbench validate`: the realistic
 * inputs plus stresses of the numerics (issue 7 point 3).
 *
 * A stress is set on the GDN generators (gdn_set_stress, gdn_common.h) while the
 * case is built, so it reaches the raw inputs and, through the parity input chain,
 * every derived input of a single-stage op consistently (kkt's g is the cumsum of
 * the stressed log decay; wy's Ai is solve(kkt(stressed k, beta, g))).  Ops that do
 * not use the GDN generators (attention) only get the realistic profile: the
 * applies-test below finds their inputs unchanged.
 *
 * check_f64: whether a stressed case is also judged against the f64 reference with
 * the op's measured pipeline budget.  That budget was measured on realistic inputs;
 * `gdnbench validate OP --backend cpu` judges the parity reference itself (what a
 * kernel with parity's rounding outputs) against f64 over the same sweep.  Measured
 * for every GDN op (seed 0): the worst rel_l2 / budget under any stress below is 0.5
 * (chunk_fwd o; realistic 0.53), so every profile keeps the f64 check.  k_large: at
 * row norm 2 chunk_fwd's o stays at 0.45 of its budget; at norm 4 (beta |k|^2 up to
 * 16, far outside the delta rule's stable range) parity itself leaves the budget
 * (1.09), so 2 is the largest norm the f64 check stays meaningful for. */
#include <stdio.h>
#include <string.h>

#include "ops/gdn_common.h"
#include "runner/validate.h"

const validate_profile validate_profiles[] = {
    {"realistic", "inputs as the model makes them (kernels.md)", GDN_STRESS_NONE, 1},
    {"g_near_zero", "log decay in [-1e-4, 0): the state barely forgets", GDN_STRESS_G_NEAR_ZERO, 1},
    {"g_very_neg", "log decay around -20: gates underflow; exp(-gc) alone overflows", GDN_STRESS_G_VERY_NEG, 1},
    {"beta_near_zero", "beta in (0, 1e-3]: the delta rule barely writes", GDN_STRESS_BETA_NEAR_ZERO, 1},
    {"beta_near_one", "beta in [0.999, 1): full overwrite", GDN_STRESS_BETA_NEAR_ONE, 1},
    {"k_large", "k rows of norm 2, not unit (raw k x32 when the op L2-normalises)", GDN_STRESS_K_LARGE, 1},
    {"h0_zero", "initial state exactly zero", GDN_STRESS_H0_ZERO, 1},
    {"h0_large", "initial state N(0, 10), 100x the realistic one", GDN_STRESS_H0_LARGE, 1},
};
const int validate_nprofiles = (int)(sizeof validate_profiles / sizeof validate_profiles[0]);

const validate_profile *validate_profile_find(const char *name) {
    for (int i = 0; i < validate_nprofiles; i++)
        if (strcmp(validate_profiles[i].name, name) == 0) return &validate_profiles[i];
    return NULL;
}

op_case *validate_case_new(const op_desc *op, const int64_t *dim, uint64_t seed, const validate_profile *p,
                           char *err, size_t errlen) {
    gdn_set_stress((gdn_stress)p->stress);
    op_case *c = op_case_new(op, dim, seed, err, errlen);
    gdn_set_stress(GDN_STRESS_NONE);
    return c;
}

int validate_profile_applies(const op_desc *op, const int64_t *dim, uint64_t seed, const validate_profile *p) {
    if (p->stress == GDN_STRESS_NONE) return 1;
    char err[256];
    op_case *plain = op_case_new(op, dim, seed, err, sizeof err);
    op_case *stressed = validate_case_new(op, dim, seed, p, err, sizeof err);
    int applies = -1;
    if (plain && stressed) {
        applies = 0;
        for (int i = 0; i < op->nbufs && !applies; i++) {
            if (op->bufs[i].role != BUF_IN) continue;
            size_t n = tensor_nbytes(plain->t[i]);
            applies = n != tensor_nbytes(stressed->t[i]) || memcmp(plain->t[i]->data, stressed->t[i]->data, n) != 0;
        }
    }
    op_case_free(plain);
    op_case_free(stressed);
    return applies;
}
