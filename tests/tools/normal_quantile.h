/* normal_quantile.h — the inverse of the standard normal CDF, for test fixtures whose
 * timing samples are evenly spaced normal quantiles (tests/tools/report_fixtures.c). */
#ifndef GDN_NORMAL_QUANTILE_H
#define GDN_NORMAL_QUANTILE_H

/* x with P(Z <= x) = p for a standard normal Z, to about 1e-15 relative; -inf at
 * p = 0, +inf at p = 1, NaN outside [0, 1]. */
double normal_quantile(double p);

#endif
