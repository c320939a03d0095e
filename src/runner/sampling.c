/* sampling.c — the stopping rule of timed samples (see sampling.h). */
#include <math.h>

#include "runner/sampling.h"

void sampling_add(sampling_state *st, double sample_us, double cost_us) {
    st->n++;
    double d = sample_us - st->mean;
    st->mean += d / st->n;
    st->m2 += d * (sample_us - st->mean);
    st->elapsed_us += cost_us;
}

double sampling_noise(const sampling_state *st) {
    if (st->n < 2 || !(st->mean > 0)) return INFINITY;
    double sd = sqrt(st->m2 / (st->n - 1));
    return sqrt(M_PI / 2) * sd / (sqrt((double)st->n) * st->mean);
}

sampling_stop sampling_next(const sampling_rule *r, const sampling_state *st) {
    if (r->exact) return st->n >= r->iters ? SAMPLING_ITERS : SAMPLING_GO;
    if (st->n >= r->min_samples && sampling_noise(st) <= r->max_noise) return SAMPLING_NOISE;
    if (st->n >= r->max_samples) return SAMPLING_CAP;
    /* the next sample is expected to cost what the ones so far did on average */
    if (st->n > 0 && st->elapsed_us + st->elapsed_us / st->n > r->max_time_us) return SAMPLING_BUDGET;
    return SAMPLING_GO;
}

const char *sampling_stop_name(sampling_stop s) {
    switch (s) {
    case SAMPLING_ITERS: return "iters";
    case SAMPLING_NOISE: return "noise target";
    case SAMPLING_BUDGET: return "budget";
    case SAMPLING_CAP: return "sample cap";
    case SAMPLING_GO: break;
    }
    return "";
}
