/* test_normal_quantile.c — tests/tools/normal_quantile.c (the inverse normal CDF of the
 * report fixtures) against values computed with mpmath at 60 digits (the root of
 * log(erfc(-x/sqrt 2)/2) = log(p) for the exact double p, by mpmath.findroot), and
 * Phi(quantile(p)) = p over a grid of both tails and the centre. */
#include <float.h>
#include <math.h>

#include "test.h"
#include "tools/normal_quantile.h"

TEST(normal_quantile_known_values) {
    static const struct {
        double p, x;
    } known[] = {
        {0.5, 0.0},
        {0.975, 1.9599639845400538},
        {0.025, -1.9599639845400543},
        {0.8413447460685429, 0.9999999999999999}, /* Phi(1), rounded to a double */
        {0.02425, -1.972961051311885},            /* Acklam's tail/centre boundary */
        {0.97575, 1.972961051311885},
        {0.999, 3.090232306167813},
        {1e-4, -3.7190164854556804},
        {1e-10, -6.361340902404057},
        {1e-300, -37.0470962993612},
        {0.5 / 21, -1.980752396647279},           /* the first z of the 21-sample fixtures */
        {11.5 / 21, 0.11964811303984216},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        double x = normal_quantile(known[i].p);
        double tol = 4 * DBL_EPSILON * (fabs(known[i].x) > 1 ? fabs(known[i].x) : 1);
        CHECK_MSG(fabs(x - known[i].x) <= tol, "quantile(%.17g) = %.17g, want %.17g", known[i].p, x, known[i].x);
    }
}

TEST(normal_quantile_inverts_cdf) {
    /* Phi(x) back to p within a few ulps of p over both tails and the centre. */
    for (int i = 1; i < 2000; i++) {
        double p = i / 2000.0;
        double x = normal_quantile(p);
        double back = x <= 0 ? 0.5 * erfc(-x / sqrt(2.0)) : 1.0 - 0.5 * erfc(x / sqrt(2.0));
        CHECK_MSG(fabs(back - p) <= 8 * DBL_EPSILON * p, "Phi(quantile(%.17g)) = %.17g", p, back);
    }
    /* Exactly antisymmetric where 1 - p is exact (p >= 0.5). */
    for (int i = 0; i < 2000; i++) {
        double p = 0.5 + i / 4000.0;
        CHECK_MSG(normal_quantile(p) == -normal_quantile(1.0 - p), "quantile(p) != -quantile(1 - p) at p = %.17g", p);
    }
}

TEST(normal_quantile_edges) {
    CHECK(isinf(normal_quantile(0.0)) && normal_quantile(0.0) < 0);
    CHECK(isinf(normal_quantile(1.0)) && normal_quantile(1.0) > 0);
    CHECK(isnan(normal_quantile(-0.1)));
    CHECK(isnan(normal_quantile(1.5)));
    CHECK(isnan(normal_quantile(NAN)));
}
