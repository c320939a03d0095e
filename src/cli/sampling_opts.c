/* sampling_opts.c — --warmup, --iters, --max-time, --max-noise, --min-samples (see
 * sampling_opts.h). */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/sampling_opts.h"
#include "runner/backend.h"
#include "runner/sampling.h"

void cli_print_sampling_help(FILE *f) {
    fprintf(f,
    "  --max-time S             time budget per shape for the timed samples, seconds (default %g on sw and cpu,\n"
    "                           %g on metal): samples stop when one more would pass it; at least --min-samples\n"
    "                           where the budget allows, never fewer than 1\n"
    "  --max-noise P            stop sooner once the median's relative standard error is at most P percent\n"
    "                           (default %g on sw and cpu, %g on metal), with at least --min-samples samples\n"
    "  --min-samples N          samples before the noise target may stop them (default %d on sw and cpu, %d on metal)\n"
    "  --iters N                exactly N timed samples instead (no budget, no noise target)\n"
    "  --warmup N               untimed runs first (default 1, 3 on metal; without --warmup, a first run that\n"
    "                           costs more than the whole budget is the one sample, taken cold, and says so)\n",
            SAMPLING_SW_MAX_TIME_S, SAMPLING_GPU_MAX_TIME_S, 100 * SAMPLING_SW_MAX_NOISE, 100 * SAMPLING_GPU_MAX_NOISE,
            SAMPLING_SW_MIN_SAMPLES, SAMPLING_GPU_MIN_SAMPLES);
}

int cli_parse_sampling_option(const char *name, const char *val, run_opts *o, sampling_flags *given, char *err,
                              size_t errlen) {
    int64_t v;
    double d;
    if (strcmp(name, "warmup") == 0 || strcmp(name, "iters") == 0 || strcmp(name, "min-samples") == 0) {
        if (args_parse_int(name, val, &v, err, errlen)) return -1;
        int lo = strcmp(name, "warmup") == 0 ? 0 : 1;
        if (v < lo || v > SAMPLING_MAX_SAMPLES) {
            snprintf(err, errlen, "--%s %lld is out of range: accepted %d..%d", name, (long long)v, lo,
                     SAMPLING_MAX_SAMPLES);
            return -1;
        }
        if (name[0] == 'w') o->warmup = (int)v, given->warmup = 1;
        else if (name[0] == 'i') o->iters = (int)v, given->iters = 1;
        else o->min_samples = (int)v, given->min_samples = 1;
        return 1;
    }
    if (strcmp(name, "max-time") == 0 || strcmp(name, "max-noise") == 0) {
        if (args_parse_double(name, val, &d, err, errlen)) return -1;
        int is_time = name[4] == 't';
        double hi = is_time ? 86400 : 100;
        if (!(d > 0) || d > hi) {
            snprintf(err, errlen, "--%s %s is out of range: give a number above 0 and at most %g (%s)", name, val, hi,
                     is_time ? "seconds" : "percent");
            return -1;
        }
        if (is_time) o->max_time_s = d, given->max_time = 1;
        else o->max_noise = d / 100, given->max_noise = 1;
        return 1;
    }
    return 0;
}

int cli_finish_sampling(run_opts *o, const sampling_flags *given, char *err, size_t errlen) {
    const backend_desc *d = backend_desc_find(o->backend);
    int metal = d && (d->caps & BACKEND_GPU);
    if (given->iters && (given->max_time || given->max_noise || given->min_samples)) {
        snprintf(err, errlen, "--iters N takes exactly N samples, so --%s has nothing to do: give one or the other",
                 given->max_time ? "max-time" : given->max_noise ? "max-noise" : "min-samples");
        return -1;
    }
    o->adaptive = !given->iters;
    if (!given->warmup) o->warmup = metal ? 3 : 1;
    o->warmup_auto = o->adaptive && !given->warmup;
    if (!given->max_time) o->max_time_s = metal ? SAMPLING_GPU_MAX_TIME_S : SAMPLING_SW_MAX_TIME_S;
    if (!given->max_noise) o->max_noise = metal ? SAMPLING_GPU_MAX_NOISE : SAMPLING_SW_MAX_NOISE;
    if (!given->min_samples) o->min_samples = metal ? SAMPLING_GPU_MIN_SAMPLES : SAMPLING_SW_MIN_SAMPLES;
    return 0;
}

void cli_sampling_desc(const run_opts *o, char *buf, size_t n) {
    if (!o->adaptive) {
        snprintf(buf, n, "warmup %d, %d timed iterations", o->warmup, o->iters);
        return;
    }
    snprintf(buf, n, "warmup %d%s, timed samples until %g s or %g%% noise (at least %d where the budget allows)",
             o->warmup, o->warmup_auto && o->warmup > 0 ? " (none when one run costs more than the budget)" : "",
             o->max_time_s, 100 * o->max_noise, o->min_samples);
}
