/* sampling_opts.h — how many runs a case takes, on the command line, shared by run
 * and suite: --warmup N, --iters N (an exact count), --max-time S, --max-noise P,
 * --min-samples N (the adaptive rule of runner/sampling.h), their defaults per
 * backend, and the words the table header says about them. */
#ifndef GDN_SAMPLING_OPTS_H
#define GDN_SAMPLING_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "runner/runner.h"

/* Which of the flags were given. */
typedef struct sampling_flags {
    int warmup, iters, max_time, max_noise, min_samples;
} sampling_flags;

/* If `name` (without its dashes) is one of the flags above, parses val into o and
 * returns 1; returns 0 for another name, -1 with err set for a bad value. */
int cli_parse_sampling_option(const char *name, const char *val, run_opts *o, sampling_flags *given, char *err,
                              size_t errlen);

/* After every flag is parsed and o->backend is known: the defaults of the flags not
 * given.  Returns 0, or -1 with err set for flags that contradict each other. */
int cli_finish_sampling(run_opts *o, const sampling_flags *given, char *err, size_t errlen);

/* "warmup 1, 5 timed iterations" or "warmup 1 (none if one run is over the budget),
 * timed samples until 3 s or 1% noise, at least 3" — for the table header. */
void cli_sampling_desc(const run_opts *o, char *buf, size_t n);

/* The --help lines of the flags. */
void cli_print_sampling_help(FILE *f);

#endif
