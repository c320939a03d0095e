/* test_check.c — check_output's verdict, in particular the rel_l2 bound.
 *
 * An elementwise atol + rtol*|ref| bound lets every element drift by up to rtol in
 * the same direction; only the relative L2 error of the whole tensor sees such a
 * systematic bias (a kernel that scales, offsets or rounds everything the same
 * wrong way).  These tests make sure that bound is computed and enforced, and that
 * the same data passes when it is within it (negative controls). */
#include <math.h>
#include <stdlib.h>

#include "runner/check.h"
#include "test.h"

#define N 4096

/* A reference in [-2, 2] with no zeros near the elementwise floor, and an f32 output
 * equal to ref * (1 + bias) — every element off by the same relative amount. */
static tensor *biased_output(double bias, double **ref_out) {
    int64_t shape[2] = {64, N / 64};
    tensor *t = tensor_new("x", DT_F32, 2, shape);
    double *ref = malloc(sizeof *ref * N);
    if (!t || !ref) {
        tensor_free(t);
        free(ref);
        return NULL;
    }
    for (int i = 0; i < N; i++) {
        double r = 2.0 * sin(0.37 * i + 0.1);
        if (fabs(r) < 0.05) r = 0.05; /* keep |ref| away from 0: the bias stays relative */
        ref[i] = r;
        tensor_set(t, i, r * (1.0 + bias));
    }
    *ref_out = ref;
    return t;
}

TEST(check_rel_l2_catches_a_uniform_bias_within_atol_rtol) {
    double *ref = NULL;
    tensor *t = biased_output(5e-4, &ref);
    CHECK(t != NULL);
    if (!t) return;
    op_tol tol = {1e-3, 1e-3, 1e-4};
    rec_check rc;
    check_output(t, ref, "f64", tol, &rc);
    /* Every element is within atol + rtol*|ref| ... */
    CHECK_EQ_INT(rc.n_bad, 0);
    CHECK_EQ_INT(rc.first_bad_index, -1);
    CHECK_MSG(rc.max_rel < tol.rtol, "max_rel %.3g", rc.max_rel);
    /* ... but the whole tensor is 5e-4 off, five times the rel_l2 bound. */
    CHECK_NEAR(rc.rel_l2, 5e-4, 1e-6);
    CHECK_NEAR(rc.rel_l2_max, 1e-4, 0);
    CHECK_MSG(!rc.pass, "a uniform bias of 5e-4 passed a rel_l2 bound of 1e-4 (rel_l2 %.3g)", rc.rel_l2);
    tensor_free(t);
    free(ref);
}

/* Negative controls: the same data passes when rel_l2 is not checked, and a bias
 * below the bound passes — so the failure above is the bound's doing. */
TEST(check_rel_l2_passes_within_the_bound_and_when_unchecked) {
    double *ref = NULL;
    tensor *t = biased_output(5e-4, &ref);
    CHECK(t != NULL);
    if (!t) return;
    rec_check rc;
    check_output(t, ref, "f64", (op_tol){1e-3, 1e-3, 0}, &rc);
    CHECK_MSG(rc.pass, "rel_l2 not checked (0) but the check failed: n_bad %lld", (long long)rc.n_bad);
    CHECK_NEAR(rc.rel_l2, 5e-4, 1e-6);
    tensor_free(t);
    free(ref);

    t = biased_output(5e-5, &ref);
    CHECK(t != NULL);
    if (!t) return;
    check_output(t, ref, "f64", (op_tol){1e-3, 1e-3, 1e-4}, &rc);
    CHECK_MSG(rc.pass, "a bias of 5e-5 failed a rel_l2 bound of 1e-4 (rel_l2 %.3g)", rc.rel_l2);
    CHECK_NEAR(rc.rel_l2, 5e-5, 1e-6);
    tensor_free(t);
    free(ref);
}

/* The elementwise bound on its own: one element beyond it fails with its coordinates,
 * an unwritten (poisoned) element fails as unwritten. */
TEST(check_elementwise_bound_names_the_first_bad_element) {
    double *ref = NULL;
    tensor *t = biased_output(0, &ref);
    CHECK(t != NULL);
    if (!t) return;
    op_tol tol = {1e-3, 1e-3, 1e-2};
    rec_check rc;
    check_output(t, ref, "bf16-parity", tol, &rc);
    CHECK(rc.pass);
    tensor_set(t, 130, ref[130] + 0.01);
    check_output(t, ref, "bf16-parity", tol, &rc);
    CHECK(!rc.pass);
    CHECK_EQ_INT(rc.n_bad, 1);
    CHECK_EQ_INT(rc.first_bad_index, 130);
    CHECK_EQ_INT(rc.first_bad_coord[0], 2);
    CHECK_EQ_INT(rc.first_bad_coord[1], 2);
    tensor_set(t, 130, ref[130]);
    poison_tensor(t);
    for (int i = 1; i < N; i++) tensor_set(t, i, ref[i]);
    check_output(t, ref, "bf16-parity", tol, &rc);
    CHECK(!rc.pass);
    CHECK_EQ_INT(rc.unwritten, 1);
    CHECK_EQ_INT(rc.first_bad_index, 0);
    tensor_free(t);
    free(ref);
}
