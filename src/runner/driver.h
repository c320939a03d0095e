/* driver.h — the one run driver: how every command that runs cases (`gdnbench <op>`
 * over shapes, `suite`, `validate`, and `kernel` for case files) turns a plan into
 * outcomes.
 *
 * A case is a thing to run on a backend at a shape, checked and timed: an op
 * descriptor and its dimensions (a case file brings its own descriptor).  The
 * command makes the plan (which cases, in which order, on which opened backend) and
 * refuses a bad one before anything runs (driver_check_shapes; the kernel choice);
 * the driver then takes every case through the same steps —
 *
 *     make its inputs -> before -> run (runner_run_case: describe the device,
 *     prepare, warm up, sample until the stopping rule, summarise, check)
 *     -> release the backend's buffers -> after -> print -> count
 *
 * and the verdict of the whole plan follows from the counts.  The command's hooks
 * supply what differs: where inputs come from (generated, a fixture, a case file),
 * checks and files of its own (expected outputs, --dump), and how it prints.  A
 * command whose run of a case is more than one runner_run_case (validate: every
 * schedule and the verdict on the first run) supplies `run` and keeps the loop,
 * the counting and the stopping rule. */
#ifndef GDN_DRIVER_H
#define GDN_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "ops/op.h"
#include "runner/backend.h"
#include "runner/record.h"
#include "runner/runner.h"

typedef struct driver_case {
    const op_desc *op;
    int64_t dim[OP_MAX_DIMS];
} driver_case;

/* How one case ended. */
typedef enum driver_outcome {
    DRIVER_PASS = 0,
    DRIVER_FAIL,          /* ran; a check failed */
    DRIVER_ERROR,         /* could not run */
    DRIVER_SKIPPED        /* not run: the kernel does not support the shape (validate) */
} driver_outcome;

typedef struct driver_tally {
    int npass, nfail, nerror, nskipped;
} driver_tally;

/* Every hook may be NULL (the default named beside it).  k is the case's index in
 * the plan; the hooks keep their results in the command's own storage. */
typedef struct driver_hooks {
    void *user;
    /* Case k's inputs; default op_case_new with the options' seed.  NULL with err
     * set: the case could not run (an error record; the plan goes on), or with
     * *stop set, the plan stops there (err is the command's error). */
    op_case *(*make_case)(void *user, int k, const driver_case *dc, char *err, size_t errlen, int *stop);
    /* Before case k runs; c is NULL when it could not be made.  May adjust o, this
     * case's copy of the options (capture path, checks). */
    void (*before)(void *user, int k, const op_case *c, run_opts *o);
    /* After case k ran and the backend let go of its buffers (c's tensors hold the
     * outputs): the command's own checks and files.  -1 with err set stops the plan. */
    int (*after)(void *user, int k, op_case *c, run_record *rec, char *err, size_t errlen);
    /* Prints case k's outcome. */
    void (*print)(void *user, int k, driver_outcome out);
    /* Runs case k the command's own way instead of the steps above (make_case,
     * before and after are then not called). */
    driver_outcome (*run)(void *user, int k);
} driver_hooks;

typedef struct driver_plan {
    backend *b;
    const run_opts *o;
    const driver_case *cases;
    int ncases;
    run_record **recs;     /* recs[k]: case k's record (default run); freed by the command */
    int stop_on_error;     /* 1: the first case that cannot run ends the plan (validate:
                              every later case would fail the same way) */
} driver_plan;

/* Every case's dimensions within its op's ranges and accepted by op->validate:
 * 0, or -1 with err naming the first that is not (nothing has run yet). */
int driver_check_shapes(const driver_case *cases, int n, char *err, size_t errlen);

/* Takes the plan's cases through their steps in order, counting outcomes into *t.
 * Returns the number of cases run (a stop_on_error plan may end early), or -1 with
 * err set when a hook stopped the plan. */
int driver_run(const driver_plan *p, const driver_hooks *h, driver_tally *t, char *err, size_t errlen);

/* The verdict of the plan: error when a case could not run, fail when one failed
 * or when every case that ran was skipped, pass otherwise. */
run_status driver_verdict(const driver_tally *t);

#endif
