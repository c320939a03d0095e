/* test_report_stats.c — stats_compute and the Mann-Whitney U test on samples with
 * known answers (worked by hand / by brute-force enumeration of rank arrangements
 * in python3, see the comments). */
#include <stdlib.h>

#include "core/stats.h"
#include "test.h"

TEST(report_stats_known_samples) {
    double x[10] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
    rec_stats s = {.n = 10, .samples = x};
    stats_compute(&s);
    CHECK_NEAR(s.min, 1, 0);
    CHECK_NEAR(s.max, 9, 0);
    CHECK_NEAR(s.median, 3.5, 1e-15);        /* mean of the middle two of 1 1 2 3 3 4 5 5 6 9 */
    CHECK_NEAR(s.mean, 3.9, 1e-15);
    CHECK_NEAR(s.p90, 6.3, 1e-12);           /* position 0.9*9 = 8.1: 6 + 0.1*(9-6) */
    CHECK_NEAR(s.stddev, 2.4698178070456938, 1e-12); /* sample stddev, n-1 */
    CHECK_NEAR(s.cv, 2.4698178070456938 / 3.9, 1e-12);
    CHECK_NEAR(x[0], 3, 0); /* samples stay in measured order */
    CHECK_NEAR(x[5], 9, 0);
}

TEST(report_stats_odd_single_empty) {
    double odd[5] = {10, 50, 20, 40, 30};
    rec_stats s = {.n = 5, .samples = odd};
    stats_compute(&s);
    CHECK_NEAR(s.median, 30, 0);
    CHECK_NEAR(s.p90, 46, 1e-12); /* 0.9*4 = 3.6: 40 + 0.6*10 */

    double one = 7;
    rec_stats s1 = {.n = 1, .samples = &one};
    stats_compute(&s1);
    CHECK_NEAR(s1.min, 7, 0);
    CHECK_NEAR(s1.median, 7, 0);
    CHECK_NEAR(s1.p90, 7, 0);
    CHECK_NEAR(s1.stddev, 0, 0);
    CHECK_NEAR(s1.cv, 0, 0);

    rec_stats s0 = {.n = 0, .samples = NULL, .min = 5, .median = 5};
    stats_compute(&s0);
    CHECK_NEAR(s0.min, 0, 0);
    CHECK_NEAR(s0.median, 0, 0);
}

TEST(report_stats_large_offset_keeps_stddev) {
    /* 1e9 + {0, 1, 2}: a one-pass sum of squares would lose the spread. */
    double x[3] = {1e9, 1e9 + 1, 1e9 + 2};
    rec_stats s = {.n = 3, .samples = x};
    stats_compute(&s);
    CHECK_NEAR(s.stddev, 1.0, 1e-9);
}

TEST(report_mann_whitney_exact_small) {
    /* Complete separation, 5 vs 5: only 1 of C(10,5)=252 arrangements is as
     * extreme on each side: p = 2/252. */
    double a[5] = {1, 2, 3, 4, 5}, b[5] = {6, 7, 8, 9, 10};
    double u = -1;
    CHECK_NEAR(mann_whitney_p(a, 5, b, 5, &u), 2.0 / 252.0, 1e-15);
    CHECK_NEAR(u, 0, 0);
    CHECK_NEAR(mann_whitney_p(b, 5, a, 5, &u), 2.0 / 252.0, 1e-15);
    CHECK_NEAR(u, 25, 0);

    /* Interleaved 1 3 5 7 9 / 2 4 6 8 10: U = 10, P(U <= 10) = 87/252. */
    double c[5] = {1, 3, 5, 7, 9}, d[5] = {2, 4, 6, 8, 10};
    CHECK_NEAR(mann_whitney_p(c, 5, d, 5, NULL), 0.6904761904761905, 1e-12);

    /* 3 vs 3 separated: 2/C(6,3) = 0.1. */
    CHECK_NEAR(mann_whitney_p(a, 3, b, 3, NULL), 0.1, 1e-15);

    /* Unequal sizes 7 vs 6 (enumerated over all 1716 arrangements): 0.013986... */
    double e[7] = {1.0, 2.5, 3.1, 7.2, 8.0, 9.9, 10.5}, f[6] = {4.0, 11.0, 12.0, 13.5, 14.0, 15.0};
    CHECK_NEAR(mann_whitney_p(e, 7, f, 6, NULL), 0.013986013986013986, 1e-12);
}

TEST(report_mann_whitney_normal_approximation) {
    /* 20 vs 20 separated: z = (400 - 200 - 0.5)/sqrt(400*41/12). */
    double a[20], b[20];
    for (int i = 0; i < 20; i++) a[i] = i + 1, b[i] = i + 21;
    CHECK_NEAR(mann_whitney_p(a, 20, b, 20, NULL), 6.795615128173387e-08, 1e-15);

    /* 12 vs 12 overlapping, no ties (both > 8: asymptotic): p = 0.12602... */
    double c[12], d[12];
    for (int i = 0; i < 12; i++) c[i] = i + 1, d[i] = i + 3.5;
    double u;
    CHECK_NEAR(mann_whitney_p(c, 12, d, 12, &u), 0.12602212177037314, 1e-12);
    CHECK_NEAR(u, 45, 0);
}

TEST(report_mann_whitney_ties) {
    /* Ties force the normal approximation with the tie-corrected variance. */
    double a[10] = {1, 2, 2, 3, 3, 3, 4, 4, 4, 4}, b[10] = {3, 4, 4, 5, 5, 5, 6, 6, 6, 6};
    double u;
    CHECK_NEAR(mann_whitney_p(a, 10, b, 10, &u), 0.001972660030195866, 1e-12);
    CHECK_NEAR(u, 9.5, 0);

    double same[6] = {5, 5, 5, 5, 5, 5};
    CHECK_NEAR(mann_whitney_p(same, 6, same, 6, NULL), 1.0, 0);
    CHECK_NEAR(mann_whitney_p(same, 0, same, 6, NULL), 1.0, 0);
}

TEST(report_mann_whitney_exact_large_other_side) {
    /* 5 vs 300, fully separated: exact p = 2/C(305,5) — the Gaussian binomial
     * counts stay exact integers (C(305,5) ~ 2.1e10). */
    double a[5], *b = malloc(300 * sizeof(double));
    CHECK(b != NULL);
    if (!b) return;
    for (int i = 0; i < 5; i++) a[i] = i;
    for (int i = 0; i < 300; i++) b[i] = 100 + i;
    double total = 1;
    for (int i = 1; i <= 5; i++) total = total * (300 + i) / i;
    double p = mann_whitney_p(a, 5, b, 300, NULL);
    CHECK_NEAR(p / (2.0 / total), 1.0, 1e-9);
    free(b);
}
