/* runner.h — runs one op case on one backend: warmup, timed iterations, checks.
 *
 * The CLI builds run_opts from flags; the run driver (runner/driver.h) calls
 * runner_run_case once per case of its plan; the result is a run_record for the
 * table and the JSON report.  runner.c takes the steps in order: describe the
 * device, prepare, describe the stages, allocate the sample buffers, warm up and
 * sample until the stopping rule (runner/sampling.h), summarise, check. */
#ifndef GDN_RUNNER_H
#define GDN_RUNNER_H

#include <stdint.h>

#include "ops/op.h"
#include "runner/backend.h"
#include "runner/record.h"
#include "msl/msl_include.h"

#define RUN_MAX_CONSTANTS 16
#define RUN_MAX_STAGE_CHOICES 16

/* --stage NAME=FILE[:FUNCTION]: the kernel of one stage (or role) from a file. */
typedef struct run_stage_choice {
    char stage[48];            /* a stage or role name of the op */
    char file[1024];
    char function[128];        /* "" = the stage's default name */
} run_stage_choice;

enum { CHECK_NONE = 0, CHECK_F64 = 1, CHECK_PARITY = 2, CHECK_BOTH = 3 };

struct run_opts {
    const char *backend;       /* "cpu" | "sw" | "metal" */
    uint64_t seed;
    /* Untimed runs, then timed samples: exactly `iters` of them, or with adaptive set,
     * as many as runner/sampling.h's rule takes within max_time_s (budget for the
     * timed samples, seconds) and max_noise (target relative standard error of the
     * median), at least min_samples where the budget allows.  warmup_auto (adaptive
     * only): when the first run alone costs more than the budget it is the one
     * sample, cold, and no warmup follows (the report says so). */
    int warmup, iters;
    int adaptive, warmup_auto;
    double max_time_s, max_noise;
    int min_samples;
    /* the host clock the budget is counted on, in us; NULL = the monotonic clock
     * (tests pass a fake one) */
    double (*clock_us)(void);
    int check;                 /* CHECK_* mask */
    int has_atol, has_rtol;
    double atol, rtol;         /* overrides of every output's tolerances */
    const char *shader;        /* --shader FILE, or NULL for ours */
    const char *function;      /* --function NAME: the main stage's kernel in FILE */
    int nstage_choices;        /* --stage, in the order given (a later one wins) */
    run_stage_choice stage_choices[RUN_MAX_STAGE_CHOICES];
    int nconstants;
    struct {
        int index;
        char value[32];
    } constants[RUN_MAX_CONSTANTS];
    msl_source_opts source;    /* --include / --define for the --shader file */
    const char *sw_checks;     /* none|fast|numerics|full, NULL = default */
    const char *sw_schedule;   /* inorder|reverse|random:SEED */
    /* GPU trace of the first timed iteration (--capture; set per case by the CLI) */
    const char *capture_path;
    int fast_math;             /* --fast-math: compile kernels with Metal's fast math */
    int has_sw_timeout;        /* --sw-timeout given */
    double sw_timeout;         /* the software device's watchdog, seconds per dispatch (0 = never) */
    int has_sw_max_findings;   /* --sw-max-findings given */
    int sw_max_findings;       /* distinct findings of the device's checks shown per case in tables */
    int counters;              /* --counters: one counted run after the timed ones (record.counters) */
    int all_floors;            /* --all-floors: the table prints every chip's floor (record.all_floors) */
    int quiet;
    int verbose;               /* --verbose / -v: what compiling cost, on stderr */
};

#define RUN_DEFAULT_MAX_FINDINGS 5

/* The --sw-max-findings value in effect. */
static inline int run_max_findings(const run_opts *o) {
    return o->has_sw_max_findings ? o->sw_max_findings : RUN_DEFAULT_MAX_FINDINGS;
}

/* Runs c on b.  Always fills *rec (status "error" with rec->error on failure).
 * Returns 0 if everything ran (checks may still have failed: see rec->status), -1 if
 * the run could not happen. */
int runner_run_case(backend *b, op_case *c, const run_opts *o, run_record *rec);
/* Charges rec (compile.present, compile.kinds) with what the software device
 * compiled since the previous case ended, the first case since the process
 * started; runner_run_case does it for the software device's cases, and a command
 * that fills its record itself (kernel cases) calls it. */
void runner_note_compile(run_record *rec);

#endif
