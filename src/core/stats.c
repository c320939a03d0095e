/* stats.c — timing summaries and the Mann-Whitney U test (see stats.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stats_quantile_sorted(const double *sorted, int n, double q) {
    if (n <= 0) return NAN;
    if (q <= 0) return sorted[0];
    if (q >= 1) return sorted[n - 1];
    double pos = q * (double)(n - 1);
    int lo = (int)floor(pos);
    double frac = pos - (double)lo;
    if (lo + 1 >= n) return sorted[n - 1];
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

void stats_compute(rec_stats *s) {
    s->min = s->median = s->mean = s->p90 = s->max = s->stddev = s->cv = 0;
    int n = s->n;
    if (n <= 0 || !s->samples) return;
    double *sorted = malloc(sizeof(double) * (size_t)n);
    if (!sorted) {
        s->min = s->median = s->mean = s->p90 = s->max = s->stddev = s->cv = NAN;
        return;
    }
    memcpy(sorted, s->samples, sizeof(double) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(double), cmp_double);
    s->min = sorted[0];
    s->max = sorted[n - 1];
    s->median = stats_quantile_sorted(sorted, n, 0.5);
    s->p90 = stats_quantile_sorted(sorted, n, 0.9);
    free(sorted);

    /* Two passes: the mean first, then squared deviations from it, so a large
     * common offset (microseconds of launch overhead) does not cancel digits. */
    double sum = 0;
    for (int i = 0; i < n; i++) sum += s->samples[i];
    s->mean = sum / n;
    double ss = 0;
    for (int i = 0; i < n; i++) {
        double d = s->samples[i] - s->mean;
        ss += d * d;
    }
    s->stddev = n > 1 ? sqrt(ss / (n - 1)) : 0;
    s->cv = s->mean != 0 ? s->stddev / s->mean : 0;
}

typedef struct ranked {
    double v;
    int from_a;
} ranked;

static int cmp_ranked(const void *x, const void *y) { return cmp_double(&((const ranked *)x)->v, &((const ranked *)y)->v); }

/* P(U <= u) under H0 for sample sizes m, n without ties, or -1 when the number of
 * arrangements C(m+n, m) is too large for exact integer counts in doubles.
 * The counts of U are the coefficients of the Gaussian binomial [m+n choose m](q)
 * = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), built one factor at a time; every
 * intermediate is an integer below the total, so the arithmetic is exact. */
static double mwu_exact_cdf(int m, int n, double u) {
    if (m > n) {
        int t = m;
        m = n;
        n = t;
    }
    double total = 1;
    for (int i = 1; i <= m; i++) total = total * (double)(n + i) / (double)i;
    if (total > 9.0e15) return -1;
    int top = m * n;
    double *c = calloc((size_t)top + 1, sizeof(double));
    if (!c) return -1;
    c[0] = 1;
    for (int i = 1; i <= m; i++) {
        for (int k = top; k >= n + i; k--) c[k] -= c[k - (n + i)];
        for (int k = i; k <= top; k++) c[k] += c[k - i];
    }
    double below = 0;
    for (int k = 0; k <= top && k <= u; k++) below += c[k];
    free(c);
    return below / total;
}

double mann_whitney_p(const double *a, int na, const double *b, int nb, double *u_out) {
    if (u_out) *u_out = 0;
    if (na <= 0 || nb <= 0) return 1.0;
    int n = na + nb;
    ranked *all = malloc(sizeof(ranked) * (size_t)n);
    if (!all) return NAN;
    for (int i = 0; i < na; i++) all[i] = (ranked){a[i], 1};
    for (int i = 0; i < nb; i++) all[na + i] = (ranked){b[i], 0};
    qsort(all, (size_t)n, sizeof(ranked), cmp_ranked);

    /* Average ranks over runs of equal values; tie_term = sum(t^3 - t). */
    double rank_sum_a = 0, tie_term = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && all[j + 1].v == all[i].v) j++;
        double avg_rank = 0.5 * (double)(i + j) + 1.0;
        double t = (double)(j - i + 1);
        tie_term += t * t * t - t;
        for (int k = i; k <= j; k++)
            if (all[k].from_a) rank_sum_a += avg_rank;
        i = j + 1;
    }
    free(all);

    double n1 = na, n2 = nb;
    double u1 = rank_sum_a - n1 * (n1 + 1) / 2;
    double u2 = n1 * n2 - u1;
    double u_big = u1 > u2 ? u1 : u2;
    if (u_out) *u_out = u1;

    double p = -1;
    if (tie_term == 0 && (na <= 8 || nb <= 8)) {
        /* P(U >= u_big) = P(U <= n1*n2 - u_big) by symmetry of U's distribution. */
        double tail = mwu_exact_cdf(na, nb, n1 * n2 - u_big);
        if (tail >= 0) p = 2 * tail;
    }
    if (p < 0) {
        double mu = n1 * n2 / 2;
        double var = n1 * n2 / 12 * ((n + 1) - tie_term / ((double)n * (n - 1)));
        if (var <= 0) return 1.0; /* every value equal: no evidence of a difference */
        double z = (u_big - mu - 0.5) / sqrt(var);
        p = erfc(z / sqrt(2.0));
    }
    return p > 1 ? 1 : p;
}
