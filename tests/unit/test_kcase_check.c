/* test_kcase_check.c — a kernel case's output against its expectation
 * (src/runner/kcase_check.c): float defaults, the ulp escape in the output's own
 * type, integers exact by default, NaN matching NaN, rel_l2 over the buffer. */
#include <string.h>

#include "runner/kcase_run.h"
#include "test.h"

static kc_buf_result check(const kc_buffer *b, kc_dtype dt, const double *out_vals, const double *ref, int n) {
    unsigned char out[64];
    for (int i = 0; i < n; i++) kc_store(dt, out, (size_t)i, out_vals[i]);
    kc_buf_result r;
    memset(&r, 0, sizeof r);
    kc_check_expect(b, dt, out, ref, n, &r);
    return r;
}

TEST(kcase_check_tolerances) {
    kc_buffer b;
    memset(&b, 0, sizeof b);
    b.expect.kind = KC_EXPECT_VALUE;
    double ref[4] = {1, 2, 3, NAN};
    /* float32 defaults: 1e-5 relative passes, 1e-3 does not */
    kc_buf_result r = check(&b, KC_F32, (double[]){1.000001, 2, 3, NAN}, ref, 4);
    CHECK(r.pass && r.bad == 0 && r.atol == 1e-5);
    r = check(&b, KC_F32, (double[]){1.001, 2, 3, NAN}, ref, 4);
    CHECK(!r.pass && r.bad == 1 && r.first_bad == 0);
    /* integers: exact by default */
    r = check(&b, KC_I32, (double[]){1, 2, 4}, ref, 3);
    CHECK(!r.pass && r.bad == 1 && r.first_bad == 2 && r.atol == 0);
    r = check(&b, KC_I32, (double[]){1, 2, 3}, ref, 3);
    CHECK(r.pass);
    /* bfloat16 with atol 0, rtol 0 but ulp 1: one ulp off passes, two do not */
    b.expect.has = KC_TOL_ATOL | KC_TOL_RTOL | KC_TOL_ULP;
    b.expect.ulp = 1;
    double one_ulp = 1.0 + 1.0 / 128, two_ulp = 1.0 + 2.0 / 128;
    r = check(&b, KC_BF16, (double[]){one_ulp}, ref, 1);
    CHECK_MSG(r.pass && r.ulp == 1, "ulp %g", r.ulp);
    r = check(&b, KC_BF16, (double[]){two_ulp}, ref, 1);
    CHECK(!r.pass && r.ulp == 2);
    /* rel_l2 bounds the whole buffer even when every element is within atol */
    b.expect.has = KC_TOL_ATOL | KC_TOL_REL_L2;
    b.expect.atol = 0.5;
    b.expect.rel_l2 = 0.01;
    r = check(&b, KC_F32, (double[]){1.2, 2.2, 3.2}, ref, 3);
    CHECK(r.bad == 0 && !r.pass && r.rel_l2 > 0.01);
}
