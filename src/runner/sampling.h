/* sampling.h — how many timed samples a case takes: an exact count (--iters N), or
 * adaptively, as nvbench does, until a time budget is spent or the median is known
 * to a target relative noise.
 *
 * The adaptive rule, asked after every timed sample (the first is always taken):
 *   1. noise target: at least min_samples samples and the relative standard error
 *      of the median (sampling_noise) at or under max_noise  -> stop "noise target";
 *   2. sample cap: max_samples samples taken                  -> stop "sample cap";
 *   3. budget: the time spent on timed samples so far plus one more sample (their
 *      mean host cost so far) would pass max_time             -> stop "budget".
 * So a case whose single run costs more than the budget gets 1 sample, one whose
 * three runs fit gets at least 3 (min_samples), and a cheap, quiet one stops as soon
 * as its median is known well enough.  The budget covers the timed samples only;
 * the warmup runs before it and is reported on its own (runner.c).
 *
 * The rule is a pure function of the samples and the host time they cost, so tests
 * drive it with made-up numbers instead of a clock. */
#ifndef GDN_SAMPLING_H
#define GDN_SAMPLING_H

typedef enum sampling_stop {
    SAMPLING_GO = 0,          /* take another sample */
    SAMPLING_ITERS,           /* --iters N samples taken */
    SAMPLING_NOISE,           /* the noise target was met */
    SAMPLING_BUDGET,          /* one more sample would pass the time budget */
    SAMPLING_CAP,             /* max_samples taken */
} sampling_stop;

typedef struct sampling_rule {
    int exact;                /* 1: take exactly `iters` samples, nothing else applies */
    int iters;
    double max_time_us;       /* budget for the timed samples */
    double max_noise;         /* relative standard error of the median, e.g. 0.005 */
    int min_samples;          /* before the noise target may stop sampling */
    int max_samples;
} sampling_rule;

/* Defaults of an adaptive run on a backend: on the software device a few seconds
 * (its runs take seconds; its timings are not a GPU's anyway), on a GPU nvbench's
 * numbers (0.5% noise, at least 10 samples, a timeout in the tens of seconds). */
#define SAMPLING_SW_MAX_TIME_S 3.0
#define SAMPLING_SW_MAX_NOISE 0.01
#define SAMPLING_SW_MIN_SAMPLES 3
#define SAMPLING_GPU_MAX_TIME_S 15.0
#define SAMPLING_GPU_MAX_NOISE 0.005
#define SAMPLING_GPU_MIN_SAMPLES 10
#define SAMPLING_MAX_SAMPLES 100000

/* Running figures of the timed samples so far (Welford's mean and sum of squared
 * deviations: O(1) per sample, however many samples a cheap kernel gets). */
typedef struct sampling_state {
    int n;
    double mean, m2;          /* of the samples */
    double elapsed_us;        /* host time spent on timed samples, bookkeeping included */
} sampling_state;

/* Adds one sample (us) and the host time it cost (its run and bookkeeping). */
void sampling_add(sampling_state *st, double sample_us, double cost_us);

/* Relative standard error of the median: sqrt(pi/2) * stddev / (sqrt(n) * mean),
 * the large-sample value for a normal distribution, with the mean standing in for
 * the median so that it needs no sort.  Infinite for n < 2 or a zero mean: nothing
 * is known about the noise yet. */
double sampling_noise(const sampling_state *st);

/* What to do after st->n >= 1 timed samples. */
sampling_stop sampling_next(const sampling_rule *r, const sampling_state *st);

/* "iters", "noise target", "budget", "sample cap"; "" for SAMPLING_GO. */
const char *sampling_stop_name(sampling_stop s);

#endif
