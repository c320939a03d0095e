/* stats.h — summary statistics of timing samples and the Mann-Whitney U test.
 *
 * stats_compute fills a rec_stats from its samples; a run record (runner/record.h)
 * holds one per timing and the JSON report writes those figures.  Quantiles use
 * linear interpolation between order statistics (Hyndman-Fan type 7, numpy's
 * default): q at position q*(n-1) of the sorted samples.  So median is the middle sample (mean of the two middle ones for
 * even n) and p90 interpolates between neighbours.  stddev is the sample standard
 * deviation (divisor n-1; 0 for n < 2), cv = stddev/mean (0 when mean is 0).
 *
 * mann_whitney_p is the two-sided p-value of the Mann-Whitney U test that samples
 * a and b come from the same distribution, as `gdnbench compare` uses it (and as
 * Google Benchmark's compare.py uses scipy's): exact when there are no ties and
 * the smaller sample has at most 8 values, otherwise the normal approximation
 * with tie correction and continuity correction — scipy.stats.mannwhitneyu's
 * method='auto'.  (One difference: when the exact count C(n1+n2, n1) would exceed
 * 2^53, e.g. 8 vs 1000 samples, the normal approximation is used instead.) */
#ifndef GDN_STATS_H
#define GDN_STATS_H

/* The summary of one series of timings (defined here so core needs nothing above it). */
typedef struct rec_stats {
    int n;                 /* samples */
    double *samples;       /* us, in the order measured (warmup excluded), owned */
    double min, median, mean, p90, max, stddev, cv;
} rec_stats;

/* From s->samples[0..s->n) (left in measured order); with n == 0 every figure is
 * 0.  If memory for the sorted copy runs out the figures are NaN (the JSON writer
 * then writes null). */
void stats_compute(rec_stats *s);

/* Quantile q in [0,1] of n >= 1 ascending values, type 7. */
double stats_quantile_sorted(const double *sorted, int n, double q);

/* Two-sided p-value; u_out (may be NULL) gets U of sample a.  Returns 1.0 when
 * either sample is empty, and NaN when memory runs out. */
double mann_whitney_p(const double *a, int na, const double *b, int nb, double *u_out);

#endif
