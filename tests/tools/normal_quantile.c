/* normal_quantile.c — inverse standard normal CDF: Peter Acklam's rational
 * approximation (relative error below 1.15e-9) refined by one Halley step against
 * erfc, which brings it to the precision of erfc itself.
 *
 * Only p <= 0.5 is computed directly; for p > 0.5 the answer is -quantile(1 - p),
 * and 1 - p is exact there (Sterbenz), so the upper tail loses nothing to the
 * subtraction and the result is exactly antisymmetric. */
#include <math.h>

#include "tools/normal_quantile.h"

static const double acklam_a[6] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                   1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
static const double acklam_b[5] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                   6.680131188771972e+01, -1.328068155288572e+01};
static const double acklam_c[6] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                   -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
static const double acklam_d[4] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                   3.754408661907416e+00};

/* Acklam's first guess for 0 < p <= 0.5. */
static double acklam_guess(double p) {
    const double *a = acklam_a, *b = acklam_b, *c = acklam_c, *d = acklam_d;
    if (p < 0.02425) {
        double q = sqrt(-2.0 * log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    }
    double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

double normal_quantile(double p) {
    if (isnan(p) || p < 0.0 || p > 1.0) return NAN;
    if (p == 0.0) return -INFINITY;
    if (p == 1.0) return INFINITY;
    if (p > 0.5) return -normal_quantile(1.0 - p);
    double x = acklam_guess(p);
    /* Halley's step on f(x) = Phi(x) - p, with Phi(x) = erfc(-x/sqrt 2)/2, which is
     * accurate for the x <= 0 used here (no cancellation in the tail). */
    double e = 0.5 * erfc(-x / sqrt(2.0)) - p;
    double u = e * sqrt(2.0 * M_PI) * exp(x * x / 2.0);
    return x - u / (1.0 + x * u / 2.0);
}
